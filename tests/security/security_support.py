"""Helpers for the security tests: the real CLI, in-process and as a process, and file snapshots."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

RLPILOT = Path(sys.executable).parent / "rlpilot"


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = "", timeout: float = 120) -> Done:
    """`rlpilot ARGS` as a real process in `cwd`."""
    done = subprocess.run([str(RLPILOT), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    return Done(done.returncode, done.stdout, done.stderr)


def cli_in_process(*args: str, cwd: Path, timeout: float = 60) -> Done:
    """`agent.cli.main.main(ARGS)` in a forked copy of this process (no interpreter start, so a matrix of
    inputs stays fast), killed after `timeout` seconds: a read that hangs fails instead of hanging the
    suite. What escapes `main` is printed as the traceback a user would see."""
    _preload()
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        pid = os.fork()
        if pid == 0:
            os._exit(_child(list(args), cwd, out, err))
        deadline = time.monotonic() + timeout
        while True:
            finished, status = os.waitpid(pid, os.WNOHANG)
            if finished:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return Done(124, "", f"rlpilot {' '.join(args)[:80]} still running after {timeout:g} s")
            time.sleep(0.02)
        return Done(code, out.read_text(errors="replace"), err.read_text(errors="replace"))


@functools.cache
def _preload() -> Path:
    """Every tool's module imported once here, so each forked child starts with them; and a bare
    workspace Python (no prime CLI beside it), so no child spends seconds on `prime --version`."""
    from agent.chat.catalog import CATALOG
    from tools.framework.contract import load

    for entry in CATALOG:
        load(entry)
    bare = Path(tempfile.mkdtemp(prefix="bare-venv-")) / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    return bare.parent


def _child(argv: list[str], cwd: Path, out: Path, err: Path) -> int:
    from agent.cli.main import main

    os.environ.update(VIRTUAL_ENV=str(_preload()), PATH="/usr/bin:/bin")
    os.environ.pop("UV_PROJECT_ENVIRONMENT", None)
    os.chdir(cwd)
    with out.open("w") as stdout, err.open("w") as stderr:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main(argv)
            except SystemExit as stop:
                return stop.code if isinstance(stop.code, int) else 1
            except BaseException:  # noqa: B036 - what a user would get: a traceback
                stderr.write(traceback.format_exc())
                return 1
    return 0


def snapshot(folder: Path) -> dict[str, bytes]:
    """The bytes of every regular file under `folder`, rlpilot's own state left out."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if ".rlpilot" in path.parts or path.is_symlink() or not path.is_file():
            continue
        files[str(path.relative_to(folder))] = path.read_bytes()
    return files


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


MiB = 1 << 20


def peak_growth(work, timeout: float = 120) -> tuple[int, str]:
    """How far the peak resident memory of a forked copy of this process grew while it ran `work()`, in
    bytes, and what `work` returned or raised (its repr). A copy, so that what an attack makes cannot stay
    in the test process; killed after `timeout` s (a hang is the fault then: reported as growth -1)."""
    import resource

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        before = pages * os.sysconf("SC_PAGE_SIZE")
        try:
            said = repr(work())
        except BaseException as error:  # the attack's end, whatever it is, is the answer
            said = f"{type(error).__name__}: {error}"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        # The kernel counts resident pages in per-thread batches, so the two reads may disagree by a few pages
        # where nothing grew (CI saw -4096): that is no growth, and never the -1 that says a hang.
        os.write(write, f"{max(0, peak - before)}\n{said[:2000]}".encode())
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + timeout
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return -1, f"still running after {timeout:g} s"
        time.sleep(0.05)
    with os.fdopen(read) as pipe:
        growth, _, said = pipe.read().partition("\n")
    return int(growth), said
