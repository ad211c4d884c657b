"""Ask a warm schema worker (`schema_worker.py`) for upstream's verdict: find it, or start it.

One worker per schema (its interpreter, its source and their state on disk), listening on a
Unix socket in a private runtime folder (`$XDG_RUNTIME_DIR`, else the temp folder, then
`rlpilot-UID`, mode 0700). Every rlpilot process that checks with that schema shares it, so
only the first check pays for importing upstream's classes. A schema whose files change gets a
new worker; the old one exits when idle. The folder must be the user's own and private: a
worker imports whatever taskset a request names, so nobody else may talk to it. It outlives the
call that started it and serves every workspace, so it gets no secrets and nothing of one
workspace's environment: only what an interpreter needs to run, and the schema on PYTHONPATH.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

from filelock import Timeout

from tools.framework.errors import BadInput
from tools.io import daemon, files
from tools.io.process import run

WORKER = Path(__file__).with_name("schema_worker.py")
DAEMON = Path(daemon.__file__)  # the worker's helpers: a worker runs the versions it started with
# Checks minutes apart in one chat still find the worker warm; an idle one gives its memory back.
IDLE_S = 600.0
START_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 600.0  # the first import of verifiers and renderers is slow on a busy machine


PASSED_ON = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME")


class WorkerError(Exception):
    """The worker could not be reached or gave no answer; the message says why."""


def runtime_folder() -> Path:
    # A relative XDG_RUNTIME_DIR is to be ignored (the XDG spec); a long one would not hold a
    # socket path (108 bytes with the name).
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = runtime if runtime.startswith("/") and len(runtime) <= 60 else tempfile.gettempdir()
    try:
        return files.own_private_dir(Path(base) / f"rlpilot-{os.getuid()}")
    except BadInput as error:
        raise WorkerError(f"{error.message}: remove it, or set XDG_RUNTIME_DIR") from None


def socket_path(python: str, source: Path) -> Path:
    """Where the worker for this schema listens: named by what its answers depend on."""
    state = [python, str(source), str(WORKER.stat().st_mtime_ns), str(DAEMON.stat().st_mtime_ns)]
    state += sorted(f"{p}:{p.stat().st_mtime_ns}" for p in (source / "prime_rl").rglob("*.py"))
    # What is installed, by name and version: the folder's own mtime also moves when the worker's first
    # import writes site-packages/__pycache__, which made the second check start a second worker.
    state += sorted(p.name for p in Path(python).parent.parent.glob("lib/python*/site-packages/*.dist-info"))
    return runtime_folder() / f"schema-{hashlib.sha256(chr(0).join(state).encode()).hexdigest()[:16]}.sock"


def ask(python: str, source: Path, request: list[dict[str, Any]]) -> Any:
    """The worker's answer to `request`. A worker that went idle or stale between finding it and
    asking is started again; one that gives no answer in time is stopped, so the next check
    starts a fresh one instead of waiting behind it."""
    path = socket_path(python, source)
    env = {key: os.environ[key] for key in PASSED_ON if key in os.environ} | {"PYTHONPATH": str(source)}
    payload = json.dumps(request, default=_to_wire).encode()
    for _ in range(3):
        with _connected(path, python, env) as connection:
            connection.settimeout(ANSWER_TIMEOUT_S)
            try:
                connection.sendall(payload)
                connection.shutdown(socket.SHUT_WR)
                reply = daemon.receive_all(connection)
            except TimeoutError:
                _stop(path)
                raise WorkerError(f"the schema worker gave no answer in {ANSWER_TIMEOUT_S:.0f} s, so it was "
                                  f"stopped (its log: {path}.log); an import that hangs, such as a download "
                                  "without network, does this") from None
            except (BrokenPipeError, ConnectionResetError):  # it went idle with this request in its backlog
                reply = b""
        if not reply:
            continue
        try:
            answer = json.loads(reply)
        except ValueError:  # cut off: the worker died while it answered
            continue
        if answer != {"stale": True}:
            return answer
    raise WorkerError(f"the schema worker ended without an answer; its log is {path}.log")


def _to_wire(value: Any) -> Any:
    """TOML's dates and times, which JSON has no type for, tagged so the worker rebuilds them."""
    for kind, cls in (("datetime", datetime.datetime), ("date", datetime.date), ("time", datetime.time)):
        if isinstance(value, cls):
            return {"__toml__": kind, "value": value.isoformat()}
    return str(value)


def _stop(path: Path) -> None:
    try:
        os.kill(int(files.read_text_bounded(Path(f"{path}.pid"))), signal.SIGKILL)
    except (OSError, ValueError, BadInput):  # no worker's pid to read: nothing to kill, the socket still goes
        pass
    daemon.retire(str(path))


def _connected(path: Path, python: str, env: dict[str, str]) -> socket.socket:
    try:
        with files.lock(Path(f"{path}.lock"), timeout=START_TIMEOUT_S):  # one starter per schema
            connection = _connect(path)
            if connection is None:
                done = run([python, str(WORKER), str(path), str(IDLE_S)], cwd=path.parent, env=env,
                           timeout=START_TIMEOUT_S)
                if not done.ok:
                    raise WorkerError(f"the schema worker did not start: {done.said(3) or done.returncode}")
                connection = _connect(path)
    except Timeout:
        raise WorkerError(f"another rlpilot held {path}.lock for {START_TIMEOUT_S:.0f} s") from None
    if connection is None:
        raise WorkerError(f"the schema worker started but does not listen on {path}")
    return connection


def _connect(path: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(START_TIMEOUT_S)  # a worker whose backlog is full does not accept
    try:
        connection.connect(str(path))
        return connection
    except OSError:
        connection.close()
        return None
