"""Bounded reads of user files (DESIGN.md, "Where tools may read and write").

Regular files only: a device (`/dev/zero`), a FIFO or a socket is refused before anything is
read from it, and opened without blocking, so a FIFO with no writer cannot hang a check.
A config is read whole up to `CONFIG_LIMIT`; metrics, logs and traces are streamed line by
line, with `LINE_LIMIT` on one line's length.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import IO

from tools.errors import BadInput

MiB = 1 << 20
# Real training configs are a few KiB; the largest in the corpus of published prime-rl configs is
# under 20 KiB. 8 MiB keeps any hand-written config readable while refusing a data file.
CONFIG_LIMIT = 8 * MiB
# One eval episode with its whole message graph, or one metrics row; a longer line is not data.
LINE_LIMIT = 64 * MiB


def real_path(path: Path) -> Path:
    """`path` with its symlinks resolved; a symlink loop is bad input, not a crash."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as error:  # Python 3.11-3.12 raise RuntimeError on a loop, 3.13 OSError
        raise BadInput("symlink-loop", f"{path}: cannot be resolved ({error})",
                       "the path is a symlink that points back at itself; fix or remove the link") from None


def _describe(size: int) -> str:
    return f"{size / MiB:g} MiB" if size >= MiB else f"{size} bytes"


def open_regular(path: Path) -> IO[bytes]:
    """`path` opened for binary reading, once it is known to be a regular file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise BadInput("no-such-file", f"{path}: no such file", "check the path") from None
    except IsADirectoryError:
        raise BadInput("is-a-directory", f"{path} is a directory, not a file", "pass the file itself") from None
    except OSError as error:
        raise BadInput("unreadable", f"{path}: cannot be read ({error.strerror})",
                       "check the path and its permissions") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file")
        raise BadInput("not-a-regular-file", f"{path} is {kind}, not a regular file",
                       "rlpilot reads regular files only; pass the file itself")
    return os.fdopen(descriptor, "rb")


def read_bytes_bounded(path: Path, limit: int = CONFIG_LIMIT) -> bytes:
    """The whole of a regular file of at most `limit` bytes; a larger one is refused, naming the limit."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        raise BadInput("file-too-large", f"{path} is {_describe(max(size, len(data)))}, over the "
                       f"{_describe(limit)} rlpilot reads whole", "pass the config file itself, not a data file")
    return data


def read_text_bounded(path: Path, limit: int = CONFIG_LIMIT) -> str:
    """Like `read_bytes_bounded`, decoded as UTF-8 (undecodable bytes replaced)."""
    return read_bytes_bounded(path, limit).decode("utf-8", errors="replace")


class BoundedLines:
    """A regular file read line by line, refusing a line longer than `limit` (naming file and line).

    Iterating gives the lines (bytes, or text with `text=True`); `read(n)` reads on as a file would,
    for readers that look at the head first or decode a stream in chunks.
    """

    def __init__(self, path: Path, *, text: bool = False, limit: int = LINE_LIMIT):
        self.path = path
        self.limit = limit
        self.number = 0
        raw: IO[bytes] = open_regular(path)
        self._damage: type[Exception] | None = None
        if path.name.endswith(".zst"):
            import zstandard  # only runs with sealed chunks need it

            # Across frames: a sealed chunk is many frames and a skippable seek table.
            raw = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
            self._damage = zstandard.ZstdError
        self._handle: IO = (io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
                            if text else raw)

    def __iter__(self) -> BoundedLines:
        return self

    def __next__(self):
        try:
            line = self._handle.readline(self.limit + 1)
        except Exception as error:
            if self._damage is None or not isinstance(error, self._damage):
                raise
            raise BadInput("bad-zstd-file", f"{self.path}: not a whole zstd file after line {self.number} ({error})",
                           "it was cut short or damaged (`zstd -t` on it tells); move it aside and read the "
                           "rest") from None
        # Sealing writes whole lines, and never an empty file; one cut short may decode without error.
        torn = self._damage is not None and (not line and not self.number or line and line[-1:] not in ("\n", b"\n"))
        if torn:
            raise BadInput("bad-zstd-file", f"{self.path}: not a whole zstd file: "
                           + (f"it ends inside line {self.number + 1}" if line else "it holds no line"),
                           "it was cut short or damaged (`zstd -t` on it tells); move it aside and read the rest")
        if not line:
            raise StopIteration
        self.number += 1
        if len(line) > self.limit:
            raise BadInput("line-too-long", f"{self.path}:{self.number}: a line longer than {_describe(self.limit)}",
                           "that is not a metrics, log or traces line; pass the run's own files")
        return line

    def read(self, size: int = -1):
        return self._handle.read(size)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> BoundedLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
