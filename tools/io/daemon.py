"""The daemons door: what rlpilot's own background programs do to the machine.

Two programs outlive the rlpilot call that starts them: the schema worker
(tools/configs/schema_worker.py, one per prime-rl schema, answering on a Unix socket) and the
supervisor of a local training run (tools/io/supervise.py). Each detaches, keeps a log, and
leaves files behind (a pid file, a socket, an exit status) that others read.

The standard library only: the schema worker runs in a prime-rl environment, where rlpilot is
not installed, and loads this file by its path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from collections.abc import Callable

PRIVATE_FILE = 0o600


def detach(announce: Callable[[int], object], log: str, *, append: bool = False) -> None:
    """Go on as a daemon. The parent prints `announce(the child's pid)` and exits at once, so whoever
    started it reads that line and reaps it; the child returns, leading a new session (its own process
    group, no terminal: it outlives its starter), with stdin /dev/null and stdout and stderr in `log`
    (made 0600; emptied first unless `append`), where a crash says why."""
    child = os.fork()
    if child:
        print(announce(child), flush=True)
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | getattr(os, "O_NOFOLLOW", 0)
    output = os.open(log, flags, PRIVATE_FILE)
    for descriptor, target in ((0, devnull), (1, output), (2, output)):
        os.dup2(target, descriptor)
    os.close(devnull)
    os.close(output)


def write_private(path: str, text: str) -> None:
    """`text` in `path`, whole or not at all (a reader never sees half of it), 0600 whatever the umask,
    never through a symlink."""
    partial = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                         PRIVATE_FILE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE)  # one left by a crash may have had another mode
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def listen(path: str) -> socket.socket | None:
    """A listening Unix socket at `path` (0600), or None when a live daemon already listens there. A
    socket file left by one that died is replaced."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            listener.close()
            raise
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            listener.close()
            return None
        except OSError:
            os.unlink(path)
            listener.bind(path)
        finally:
            probe.close()
    os.chmod(path, PRIVATE_FILE)
    listener.listen(16)
    return listener


def receive_all(connection: socket.socket) -> bytes:
    """Everything the other side sends until it ends its half (the daemon and its clients both use this)."""
    chunks = []
    while chunk := connection.recv(1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def retire(path: str, inode: int | None = None) -> None:
    """A daemon's socket `path` and its pid file (`path.pid`) removed, so the next client starts a fresh
    one; with `inode`, only while the socket there is still that one (a successor's stays)."""
    if inode is not None:
        try:
            if os.stat(path).st_ino != inode:
                return
        except FileNotFoundError:
            return
    for name in (path, f"{path}.pid"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
