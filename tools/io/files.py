"""The files door: every read, write, copy and delete of rlpilot's goes through here.

Reads (docs/architecture.md, "The doors: one module per effect") are bounded. Regular files only: a device
(`/dev/zero`), a FIFO or a socket is refused before anything is read from it, and opened without
blocking, so a FIFO with no writer cannot hang a check. A config (or a record, a metadata file, a
script) is read whole up to `CONFIG_LIMIT`, a Python module up to `SOURCE_LIMIT`, a picture up to
`PICTURE_LIMIT`; a log's last lines come from its last `LOG_TAIL_LIMIT` bytes; metrics, logs and
traces are streamed line by line, with `LINE_LIMIT` on one line's length, and a compressed one
inflates at most `INFLATION_LIMIT` times its size. rlpilot's own package data (`package_data`) is
the one thing read whole without a bound: it ships with rlpilot.

Writes are atomic (a temporary file beside the target, then a rename) and never go through a
symlink: a target that is a symlink, dangling or not, is refused, and so is one whose folder
resolves outside `root` when a root is given. A copy takes folders and regular files only, and
refuses a symlink anywhere in the source. rlpilot's own state (`private=True`: sessions, run
records, runtimes) is made 0700 for folders and 0600 for files whatever the umask, so another
user of the machine reads none of it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import shutil
import stat
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tools.framework.errors import BadInput

if TYPE_CHECKING:
    from filelock import FileLock

MiB = 1 << 20
# Real training configs are a few KiB; the largest in the corpus of published prime-rl configs is
# under 20 KiB. 8 MiB keeps any hand-written config readable while refusing a data file.
CONFIG_LIMIT = 8 * MiB
_CONFIG_HINT = "pass the config file itself, not a data file"  # what to do about a file past the bound, unless told
# A Python module read whole, to be parsed (an environment's source) or searched (prime-rl's config source).
# Python's parser builds some 400 bytes of tree per byte of dense code, so 1 MiB can take 400 MiB; the largest
# module of prime-rl or of a published environment is under 200 KiB, and a larger one holds data, not code.
SOURCE_LIMIT = 1 * MiB
# A picture read whole: a plot sent to an MCP client, or kept before it is drawn again. rlpilot's plots are
# 460x200 panels, a few hundred KiB as PNG and a few MiB as an uncompressed TIFF of every series.
PICTURE_LIMIT = 32 * MiB
# The end of a log read for its last lines (`train logs --tail`, at most 5000 of them; a failed server's last
# three): 8 MiB holds 5000 lines of 1.6 KiB, however long the log itself has grown.
LOG_TAIL_LIMIT = 8 * MiB
# A TOML's shape, read before any parser builds it (a parser's tables for a few MiB of `[a.a.a...]` fill
# gigabytes). The deepest prime-rl key is six parts (inference.deployment.kv_cache_offload.cpu_bytes); its
# configs hold a few hundred keys and a few dozen headers.
TOML_KEY_DEPTH = 32
TOML_KEYS = 200_000
TOML_HEADERS = 200_000
# A dotted key squeezed to its dots: the bytes of a key's parts (and the blanks beside its dots) are deleted,
# every other byte but `.` becomes `|`, so `a . b.c` reads `..` and a key too deep is a run of dots.
_PART_BYTES = bytes(b for b in range(256) if chr(b).isalnum() or b in b"_-\"' \t" or b >= 0x80)
_SQUEEZE = bytes.maketrans(bytes(range(256)), bytes(b if b == ord(".") else ord("|") for b in range(256)))
# One eval episode with its whole message graph, or one metrics row; a longer line is not data.
LINE_LIMIT = 64 * MiB
# A compressed file may inflate to this many times its size on disk, and to INFLATED_FLOOR whatever its size:
# prime-rl's sealed trace chunks are JSON lines (zstd takes those to a tenth, rarely a fiftieth), while a
# few KiB built to inflate reach gigabytes.
INFLATION_LIMIT = 100
INFLATED_FLOOR = 64 * MiB


def real_path(path: Path) -> Path:
    """`path` with its symlinks resolved; a symlink loop is bad input, not a crash."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as error:  # Python 3.11-3.12 raise RuntimeError on a loop, 3.13 OSError
        raise BadInput("symlink-loop", f"{path}: cannot be resolved ({error})",
                       "the path is a symlink that points back at itself; fix or remove the link") from None


def describe_size(size: int) -> str:
    """A size as a person reads it: 812 bytes, 3.4 KiB, 8 MiB, 2.1 GiB (at most one decimal, never 79.0491)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def inside(path: Path, root: Path) -> Path:
    """`path` with every symlink resolved, checked to lie inside `root`: a file named `../x`, an absolute
    path or a link out of the folder is refused."""
    resolved, top = real_path(Path(path)), real_path(Path(root))
    if resolved != top and top not in resolved.parents:
        raise BadInput("outside-root", f"{path} is outside {root} (it resolves to {resolved})",
                       f"name a file inside {root}; symlinks out of it are not followed")
    return resolved


def open_regular(path: Path, root: Path | None = None) -> IO[bytes]:
    """`path` opened for binary reading, once it is known to be a regular file (inside `root`, if given)."""
    if root is not None:
        path = inside(path, root)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):  # a path through a file (`.git/HEAD` where .git is a file)
        raise BadInput("no-such-file", f"{path}: no such file", "check the path") from None
    except IsADirectoryError:
        raise BadInput("is-a-directory", f"{path} is a directory, not a file", "pass the file itself") from None
    except OSError as error:
        raise BadInput("unreadable", f"{path}: cannot be read ({error.strerror})",
                       "check the path and its permissions") from None
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISDIR(mode):  # Linux opens a folder for reading without an error: said here, as for other systems
        os.close(descriptor)
        raise BadInput("is-a-directory", f"{path} is a directory, not a file", "pass the file itself")
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        kind = ("a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file")
        raise BadInput("not-a-regular-file", f"{path} is {kind}, not a regular file",
                       "rlpilot reads regular files only; pass the file itself")
    return os.fdopen(descriptor, "rb")


def read_bytes_bounded(path: Path, limit: int = CONFIG_LIMIT, root: Path | None = None, *,
                       hint: str = _CONFIG_HINT) -> bytes:
    """The whole of a regular file of at most `limit` bytes; a larger one is refused, naming its size, the limit
    and, in `hint`, what to do about a file of its kind that big."""
    with open_regular(path, root) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        raise BadInput("file-too-large", f"{path} is {describe_size(max(size, len(data)))}, over the "
                       f"{describe_size(limit)} rlpilot reads whole", hint)
    return data


def read_text_bounded(path: Path, limit: int = CONFIG_LIMIT, root: Path | None = None, *,
                      hint: str = _CONFIG_HINT) -> str:
    """Like `read_bytes_bounded`, decoded as UTF-8 (undecodable bytes replaced)."""
    return read_bytes_bounded(path, limit, root, hint=hint).decode("utf-8", errors="replace")


def check_toml_shape(text: str, path: Path) -> None:
    """BadInput when `text` holds a key deeper than TOML_KEY_DEPTH parts, more than TOML_KEYS keys or more than
    TOML_HEADERS table headers. A scan at the speed of str.count that over-counts (every `=` counts as a key,
    every `[` as a header, a dotted word in a string as a key), generous enough that a config never meets it."""
    keys, headers = text.count("="), text.count("[")
    too_deep = b"." * TOML_KEY_DEPTH
    if too_deep in text.encode().translate(_SQUEEZE, _PART_BYTES):
        line = next(n for n, row in enumerate(text.splitlines(), 1)
                    if too_deep in row.encode().translate(_SQUEEZE, _PART_BYTES))
        raise BadInput("toml-too-deep", f"{path}:{line}: a key of more than {TOML_KEY_DEPTH} parts",
                       "a training config's keys are a few parts deep; check the file is the config you meant")
    if keys > TOML_KEYS or headers > TOML_HEADERS:
        what = f"{keys} keys, over {TOML_KEYS}" if keys > TOML_KEYS else f"{headers} table headers, over {TOML_HEADERS}"
        raise BadInput("toml-too-large", f"{path}: {what}, the most rlpilot reads in one TOML file",
                       "a training config holds a few hundred keys; check the file is the config you meant")


# What `open_regular` says of a path with no file to read: a caller looking for an optional file (a folder's
# pyproject.toml) takes these as "none there", and every other refusal as an error to show.
ABSENT = frozenset({"no-such-file", "is-a-directory"})
# What the TOML reader says of a file that is there but holds no TOML; a probe that only hopes for one (is this
# folder a prime-rl checkout?) takes these as "not one", while a bound passed is still an error to show.
NOT_TOML = frozenset({"not-toml", "invalid-toml"})


def read_bytes_if_present(path: Path, limit: int = CONFIG_LIMIT, *,
                          hint: str = _CONFIG_HINT) -> bytes | None:
    """`read_bytes_bounded` of a file that may not be there: None where there is none to read (ABSENT). A file
    that is there but refused (a FIFO, past `limit`, unreadable) is no missing file: that is raised."""
    try:
        return read_bytes_bounded(path, limit, hint=hint)
    except BadInput as refused:
        if refused.code in ABSENT:
            return None
        raise


def read_text_if_present(path: Path, limit: int = CONFIG_LIMIT, *,
                         hint: str = _CONFIG_HINT) -> str | None:
    """`read_bytes_if_present`, decoded as UTF-8 (undecodable bytes replaced)."""
    data = read_bytes_if_present(path, limit, hint=hint)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_json_if_present(path: Path, limit: int = CONFIG_LIMIT) -> Any:
    """The JSON value of a small file another program writes (a run's exit status, a login, a push's metadata),
    or None where it says nothing: no file (ABSENT), or one that holds no JSON (half written, damaged). A file
    that is there but refused (a FIFO, past `limit`, unreadable) is raised, naming it."""
    import json

    data = read_bytes_if_present(path, limit, hint="it is not the small JSON file rlpilot expects there; move it "
                                                   "aside")
    try:
        return None if data is None else json.loads(data)
    except (ValueError, RecursionError):
        return None


def last_lines(path: Path, count: int, limit: int = LOG_TAIL_LIMIT) -> list[str]:
    """The last `count` lines of a log, read from its last `limit` bytes only, so a log of gigabytes costs no
    more than a short one (a line cut by the bound is left out); [] where there is no log yet (ABSENT)."""
    try:
        with open_regular(path) as handle:
            start = max(0, os.fstat(handle.fileno()).st_size - limit)
            handle.seek(max(0, start - 1))  # the byte before, to tell whether `start` begins a line
            data = handle.read(limit + 1 if start else limit)
    except BadInput as refused:
        if refused.code in ABSENT:
            return []
        raise
    if start:
        data = data.partition(b"\n")[2]
    return data.decode("utf-8", errors="replace").splitlines()[-count:]


def package_data(package: str, name: str) -> bytes:
    """The data file `name` shipped inside rlpilot's own package `package` (a key table, the prime-rl history):
    ours, built with rlpilot and its size known then, so read whole without a bound. A package's own files only:
    callers name them by literals, never by a path from outside."""
    from importlib import resources  # only the few commands that read a table load it

    return resources.files(package).joinpath(name).read_bytes()


def read_toml_text(path: Path, limit: int = CONFIG_LIMIT, root: Path | None = None) -> str:
    """The text of a TOML file from outside, read through the bounds (a regular file, at most `limit` bytes):
    BadInput `not-toml` for a binary file or one that is not UTF-8, which TOML requires."""
    raw = read_bytes_bounded(path, limit, root)
    if b"\0" in raw:
        raise BadInput("not-toml", f"{path} is a binary file, not TOML", "pass the .toml file itself")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput("not-toml", f"{path} is not UTF-8 text (byte {error.start})",
                       "TOML files are UTF-8; re-save it as UTF-8") from None


def parse_toml(text: str, path: Path | str) -> dict[str, Any]:
    """`text` parsed as TOML once its shape is known to be within the bounds (`check_toml_shape`); every way it
    can fail is a BadInput naming `path` (a file, or where the text came from) and, where known, the line."""
    check_toml_shape(text, Path(path))
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise toml_error(path, text, str(error)) from None
    except ValueError:  # an integer longer than Python converts from text (4300 digits)
        line = next((n for n, row in enumerate(text.splitlines(), 1) if re.search(r"\d{4300}", row)), None)
        raise BadInput("toml-too-large", f"{path}:{line}: a number at line {line} has thousands of digits",
                       "no setting takes a number that long; fix the value on that line") from None
    except RecursionError:
        raise BadInput("toml-too-deep", f"{path}: nested too deeply to be a config",
                       "tables and arrays in a config go a few levels deep; check it is the file you meant") from None


def read_toml(path: Path, limit: int = CONFIG_LIMIT, root: Path | None = None) -> dict[str, Any]:
    """The one reader of a TOML file from outside (a config, a pyproject.toml, a scenario, an endpoints file):
    `read_toml_text` then `parse_toml`, so a FIFO, a data file, a binary file or a TOML built to swell is a
    one-line BadInput naming the file, never a hang, a traceback or gigabytes of tables."""
    return parse_toml(read_toml_text(path, limit, root), path)


def toml_error(path: Path | str, text: str, reason: str) -> BadInput:
    """Invalid TOML, with the line and column the parser (tomllib or tomlkit) named; the end of the file counts."""
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)|\s*at line (\d+) col (\d+)$", reason)
    if found:
        line, column = found.group(1) or found.group(3), found.group(2) or found.group(4)
    elif "(at end of document)" in reason:
        lines = text.splitlines() or [""]
        line, column = str(len(lines)), str(len(lines[-1]) + 1)
        found = re.search(r"\s*\(at end of document\)", reason)
    else:
        return BadInput("invalid-toml", f"{path}: invalid TOML: {reason}", "fix the syntax")
    reason = reason.replace(found.group(0), "").strip().replace("'\\x00'", "the end of the file")
    return BadInput("invalid-toml", f"{path}:{line}: invalid TOML at line {line}, column {column}: {reason}",
                    "fix the syntax on that line (TOML allows each key and table once)")


class _Inflated(io.RawIOBase):
    """A decompressing reader that refuses to give more than `limit` bytes in all, naming the file."""

    def __init__(self, inner: IO[bytes], limit: int, path: Path):
        self._inner, self._limit, self._path, self._given = inner, limit, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._inner.read(min(len(buffer), self._limit + 1 - self._given))
        self._given += len(data)
        if self._given > self._limit:
            raise BadInput("inflates-too-far", f"{self._path} inflates past {describe_size(self._limit)}, "
                           f"over {INFLATION_LIMIT} times its size: not a trace chunk prime-rl sealed",
                           "move it aside and read the rest")
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


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
            limit = max(INFLATED_FLOOR, INFLATION_LIMIT * os.fstat(raw.fileno()).st_size)
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            raw = io.BufferedReader(_Inflated(reader, limit, path))
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
            raise BadInput("line-too-long",
                           f"{self.path}:{self.number}: a line longer than {describe_size(self.limit)}",
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


# -- writes, copies, deletes ------------------------------------------------------------------

PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def confined(path: Path, root: Path | None) -> Path:
    """`path` with its folder's symlinks resolved, checked to lie inside `root` (when one is given).

    The last part is not resolved: a symlink there is refused where it would be written through.
    """
    path = Path(path)
    resolved = real_path(path.parent) / path.name
    if root is not None:
        top = real_path(Path(root))
        if resolved != top and top not in resolved.parents:
            raise BadInput("outside-root", f"{path} is outside {root} (it resolves to {resolved})",
                          f"name a path inside {root}; symlinks out of it are not followed")
    return resolved


def no_link(path: Path) -> None:
    if _is_link(path):
        raise BadInput("symlink-refused", f"{path} is a symlink (to {os.readlink(path)}); rlpilot does not write "
                      "through symlinks", "remove the link, or name the file it points to")


def own_private_dir(path: Path) -> Path:
    """The folder `path`, made 0700 whatever the umask if missing, and checked to be a real folder (no
    link) of this user's that nobody else may open; BadInput `not-private` otherwise. For what other users
    must not reach at all (a socket that runs what it is sent)."""
    path = Path(path)
    try:
        path.mkdir(mode=PRIVATE_DIR)
        os.chmod(path, PRIVATE_DIR)  # mkdir's mode is masked by the umask
    except FileExistsError:
        pass  # made before, by us or by someone else: checked below either way
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() \
            or info.st_mode & 0o077:
        raise BadInput("not-private", f"{path} is not a private folder of yours (owner uid {info.st_uid}, mode "
                       f"{stat.filemode(info.st_mode)})", f"remove {path} (rlpilot makes it again, 0700), or point "
                       "rlpilot at another folder")
    return path


def make_dirs(path: Path, *, root: Path | None = None, private: bool = False) -> Path:
    """The folder `path` and its missing parents (inside `root`, links resolved, when one is given); with
    `private`, each folder made here, and `path` itself, is 0700."""
    path = Path(path)
    if root is not None:
        inside(path, root)
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR if private else 0o777)
        except FileExistsError:
            pass  # made meanwhile by another rlpilot
        if private:
            os.chmod(folder, PRIVATE_DIR)  # mkdir's mode is masked by the umask
    if private:
        os.chmod(path, PRIVATE_DIR)
    return path


def write_bytes(path: Path, data: bytes, *, root: Path | None = None, private: bool = False) -> Path:
    """`data` written atomically to `path`, never through a symlink; a file it replaces keeps its mode.
    Synced to disk before and after the rename, so a crash or a power cut leaves the old file or the new
    one, never an empty one."""
    path = confined(Path(path), root)
    make_dirs(path.parent, private=private)
    no_link(path)
    try:
        kept = None if private else stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        kept = None  # a new file: the umask decides, as it does for any program's
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(temp, flags, PRIVATE_FILE if private else 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if private or kept is not None:
                os.fchmod(out.fileno(), PRIVATE_FILE if private else kept)
            out.flush()
            os.fsync(out.fileno())
        no_link(path)  # a link put there meanwhile: the rename would replace it, never write through it
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)
    return path


def _sync_folder(folder: Path) -> None:
    """The rename itself made durable: it lives in the folder's entry."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # platforms without folder handles (Windows) persist the rename anyway
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_text(path: Path, text: str, *, root: Path | None = None, private: bool = False) -> Path:
    return write_bytes(path, text.encode("utf-8"), root=root, private=private)


def write_json(path: Path, value: Any, *, root: Path | None = None, private: bool = False) -> Path:
    import json

    return write_text(path, json.dumps(value, indent=2) + "\n", root=root, private=private)


def regular_tree(source: Path) -> Path:
    """`source`, checked to be a folder of folders and regular files only: a symlink anywhere in it (or a
    device, a FIFO) is refused, naming it."""
    source = Path(source)
    if _is_link(source) or not source.is_dir():
        raise BadInput("not-a-folder", f"{source} is not a folder (or is a symlink)", "name a real folder")
    for folder, folders, names in os.walk(source):
        for name in folders + names:
            entry = Path(folder) / name
            mode = os.lstat(entry).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
                raise BadInput("symlink-refused" if stat.S_ISLNK(mode) else "not-a-regular-file",
                              f"{entry} is {kind}; rlpilot copies folders and regular files only",
                              "replace it with the file itself")
    return source


def copy_tree(source: Path, target: Path, *, root: Path | None = None) -> Path:
    """A copy of the folder `source` at `target`, once `regular_tree` has found nothing but folders and
    regular files in it."""
    source = regular_tree(source)
    target = confined(Path(target), root)
    no_link(target)
    shutil.copytree(source, target, symlinks=True)  # nothing to follow: checked above
    return target


def remove(path: Path, *, root: Path | None = None, best_effort: bool = False) -> None:
    """`path` deleted: a file or a link itself (never what it points to), or a folder with all it holds
    (links inside it removed, never followed). Nothing there is no error; with `best_effort`, nor is
    what could not be removed (a cache that may go later)."""
    path = confined(Path(path), root)
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=best_effort)  # unlinks links inside, never follows them
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        if not best_effort:
            raise


def remove_empty_dir(path: Path) -> bool:
    """`path` removed if it is an empty folder (it is gone either way: True); False when it holds something,
    which stays untouched."""
    try:
        Path(path).rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def open_write(path: Path, *, root: Path | None = None, private: bool = False) -> IO[str]:
    """`path` opened for writing text as it comes (a long command's output), created or emptied; never
    through a symlink. Not atomic: write to a `.partial` name and rename it when whole."""
    path = confined(Path(path), root)
    make_dirs(path.parent, private=private)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(path, flags, PRIVATE_FILE if private else 0o666)
    except OSError as error:
        if _is_link(path):
            no_link(path)
        raise BadInput("unwritable", f"{path}: cannot be written ({error.strerror})",
                       "check the folder and its permissions") from None
    if private:
        os.fchmod(handle, PRIVATE_FILE)
    return os.fdopen(handle, "w", encoding="utf-8")


def touch(path: Path, *, root: Path | None = None, private: bool = False) -> Path:
    """`path` created empty if missing (its time set if present), never through a symlink."""
    path = confined(Path(path), root)
    no_link(path)
    if path.exists():
        os.utime(path)
        return path
    return write_bytes(path, b"", private=private)


def private_file(path: Path) -> Path:
    """A file of rlpilot's state created by another library (SQLite), made 0600 once it exists."""
    if path.exists() and not _is_link(path):
        os.chmod(path, PRIVATE_FILE)
    return path


def lock(path: Path, *, timeout: float = -1) -> FileLock:
    """An inter-process lock whose file is 0600 whatever the umask. A lock file that is a symlink is
    refused when taken (filelock opens it with O_NOFOLLOW): an OSError, as for any unwritable lock."""
    from filelock import FileLock  # edits take locks; a check, which reads only, never loads it

    return FileLock(Path(path), timeout=timeout, mode=PRIVATE_FILE)


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """A private folder (0700) of the system's temp space, removed with all it holds at the end; its path
    as text, as tempfile gives it (callers put it into command lines and replace it in output)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield folder
