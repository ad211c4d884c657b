"""The daemons door (tools/io/daemon.py): what the schema worker and the training supervisor do to the
machine, with real forks, files and sockets."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.io import daemon

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "tools" / "configs" / "schema_worker.py"


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def short(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder short enough for a Unix socket's path (108 bytes)."""
    return tmp_path_factory.mktemp("d")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_private_write_is_whole_and_0600_under_a_umask_of_022(tmp_path: Path, umask_022) -> None:
    target = tmp_path / "exit.json"
    daemon.write_private(str(target), '{"returncode": 0}')
    assert target.read_text() == '{"returncode": 0}' and _mode(target) == 0o600
    target.chmod(0o644)
    daemon.write_private(str(target), "again")
    assert target.read_text() == "again" and _mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["exit.json"]  # no partial file left


def test_one_daemon_listens_per_socket_and_a_dead_ones_socket_is_taken_over(short: Path, umask_022) -> None:
    path = str(short / "w.sock")
    first = daemon.listen(path)
    assert first is not None and _mode(Path(path)) == 0o600
    assert daemon.listen(path) is None  # a live one answers there
    first.close()  # it died, leaving its socket file
    second = daemon.listen(path)
    assert second is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(path)
        client.sendall(b"a request")
        client.shutdown(socket.SHUT_WR)
        connection, _ = second.accept()
        with connection:
            assert daemon.receive_all(connection) == b"a request"
    second.close()


def test_retiring_removes_socket_and_pid_file_but_never_a_successors(short: Path) -> None:
    path = str(short / "w.sock")
    old = daemon.listen(path)
    assert old is not None
    inode = os.stat(path).st_ino
    os.rename(path, path + ".old")  # kept, so that the successor's socket cannot get its inode
    successor = daemon.listen(path)  # a fresh daemon took the name meanwhile
    assert successor is not None
    daemon.write_private(path + ".pid", "1\n")
    daemon.retire(path, inode)
    assert Path(path).exists() and Path(path + ".pid").exists()
    daemon.retire(path)
    assert not Path(path).exists() and not Path(path + ".pid").exists()
    daemon.retire(path)  # nothing there: nothing to do
    old.close()
    successor.close()


DETACHED = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from tools.io import daemon
daemon.detach(lambda pid: f"child {pid}", sys.argv[2], append=True)
print(f"session {os.getsid(0)} pid {os.getpid()}", flush=True)
print("to stderr", file=sys.stderr, flush=True)
time.sleep(30)
"""


def test_a_detached_daemon_leads_its_own_session_and_writes_only_to_its_private_log(tmp_path: Path,
                                                                                    umask_022) -> None:
    log = tmp_path / "output.log"
    log.write_text("an earlier line\n")
    log.chmod(0o600)
    started = subprocess.run([sys.executable, "-c", DETACHED, str(REPO), str(log)], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
    assert started.returncode == 0 and started.stdout.startswith("child ")
    pid = int(started.stdout.split()[1])
    try:
        deadline = time.monotonic() + 10
        while "to stderr" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert log.read_text() == f"an earlier line\nsession {pid} pid {pid}\nto stderr\n"
        assert _mode(log) == 0o600 and started.stderr == ""
    finally:
        os.kill(pid, signal.SIGKILL)
    assert _gone(pid)


def test_the_schema_worker_starts_where_rlpilot_is_not_installed(short: Path, umask_022) -> None:
    # -S: no site-packages, as in a prime-rl environment without rlpilot; the door is loaded by its path.
    path = short / "schema.sock"
    started = subprocess.run([sys.executable, "-S", str(WORKER), str(path), "30"], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL, cwd=short)
    assert (started.returncode, started.stdout) == (0, "started\n"), started.stderr
    deadline = time.monotonic() + 10
    while not Path(f"{path}.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(Path(f"{path}.pid").read_text())
    try:
        assert _mode(path) == _mode(Path(f"{path}.pid")) == _mode(Path(f"{path}.log")) == 0o600
        again = subprocess.run([sys.executable, "-S", str(WORKER), str(path), "30"], capture_output=True, text=True,
                               timeout=30, stdin=subprocess.DEVNULL, cwd=short)
        assert again.stdout == "running\n"  # one worker per socket
    finally:
        os.kill(pid, signal.SIGKILL)
        daemon.retire(str(path))
    assert _gone(pid)
