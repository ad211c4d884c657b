"""The doors rule, read from source: which lines of a module write, copy or delete files (lock files
included), read a whole file without a bound, start a process, parse TOML or build an HTTP or OpenAI client
themselves, or copy the person's whole environment (os.environ: a child's is built by the process door),
instead of through tools/io/ (DESIGN.md, "One door per effect"). tests/test_doors.py holds agent/ and tools/
to it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

DOORS = "tools.io."
# module -> functions of it that start a process, change files or open an HTTP connection
_MODULE_CALLS = {
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "remove", "unlink", "rmdir",
           "removedirs", "rename", "renames", "replace", "mkdir", "makedirs", "symlink", "link", "chmod",
           "truncate", "mkfifo"} | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
          | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "move", "rmtree"},
    "tempfile": {"mkstemp", "mkdtemp", "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile",
                 "SpooledTemporaryFile"},
    "httpx": {"Client", "AsyncClient", "get", "post", "put", "patch", "delete", "head", "options", "request",
              "stream", "HTTPTransport", "AsyncHTTPTransport"},
    "openai": {"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"},
    "urllib.request": {"urlopen", "build_opener", "urlretrieve", "Request"},
    "http.client": {"HTTPConnection", "HTTPSConnection"},
    "filelock": {"FileLock", "SoftFileLock", "UnixFileLock", "AsyncFileLock"},  # creates its lock file, 0644
}
# Modules that exist only to do one of these: importing one at all is the offence. tomllib among them: TOML
# comes from outside (a config, a pyproject.toml, a scenario), and its parser's tables swell past a GiB on a few
# MiB built for it, so the files door's reader (files.read_toml, files.parse_toml) parses it once its bounds
# and shape are checked.
_MODULES = {"subprocess", "pty", "requests", "aiohttp", "urllib3", "tomllib"}
# Methods no other type in rlpilot has under these names (pathlib's; `.replace` is left out: str has one).
_PATH_METHODS = {"write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "rename", "symlink_to",
                 "hardlink_to", "chmod", "lchmod"}
# Reads of a whole file with no bound: a FIFO hangs them, a data file or /dev/zero fills memory. The files door
# reads with a bound in bytes (files.read_text_bounded, read_bytes_bounded, read_json_if_present, last_lines,
# BoundedLines); rlpilot's own package data, which ships with it, through files.package_data.
_WHOLE_READS = {"read_text", "read_bytes"}
_OPENS = {"open", "io.open"}
_OPENAI_NAMES = {"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}


@dataclass(frozen=True, order=True)
class Offence:
    path: str
    line: int
    what: str

    def text(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _writes_mode(node: ast.Call, position: int) -> bool:
    """Whether an `open` call's mode (argument `position`, or `mode=`) writes."""
    mode = node.args[position] if len(node.args) > position else next(
        (k.value for k in node.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # a mode computed at run time may write: the door decides that


def _is_environ(node: ast.AST | None, aliases: dict[str, str]) -> bool:
    name = _dotted(node) if node is not None else None
    if name is None:
        return False
    head, _, rest = name.partition(".")
    return (f"{aliases[head]}.{rest}" if head in aliases and rest else aliases.get(head, name)) == "os.environ"


def _copies_environ(node: ast.AST, aliases: dict[str, str]) -> bool:
    """`dict(os.environ)`, `dict(**os.environ)`, `os.environ.copy()`, `{**os.environ}`: a child's whole
    environment in the making, whatever the variable is called after."""
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return any(key is None and _is_environ(value, aliases) for key, value in pairs)
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
        return _is_environ(node.func.value, aliases)
    return _dotted(node.func) == "dict" and (
        any(_is_environ(arg, aliases) for arg in node.args)
        or any(k.arg is None and _is_environ(k.value, aliases) for k in node.keywords))


def _opens(node: ast.AST) -> bool:
    """`open(...)`, `io.open(...)` or `PATH.open(...)`: what `.read()` with no size reads whole."""
    return isinstance(node, ast.Call) and (_dotted(node.func) in _OPENS or isinstance(node.func, ast.Attribute)
                                           and node.func.attr == "open")


def offences(source: str, path: str) -> list[Offence]:
    """Every line of `source` that does a door's work itself."""
    tree = ast.parse(source, filename=path)
    aliases: dict[str, str] = {}  # local name -> what it stands for ("sp" -> "subprocess", "OpenAI" -> "openai.OpenAI")
    found: list[Offence] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
                if alias.name.split(".")[0] in _MODULES:
                    found.append(Offence(path, node.lineno, f"imports {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            if node.module.split(".")[0] in _MODULES:
                found.append(Offence(path, node.lineno, f"imports from {node.module}"))
    for node in ast.walk(tree):
        if _copies_environ(node, aliases):
            found.append(Offence(path, node.lineno, "copies os.environ"))
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is not None:
            head, _, rest = name.partition(".")
            name = f"{aliases[head]}.{rest}" if head in aliases and rest else aliases.get(head, name)
            if name.startswith(DOORS):
                continue  # the door itself, called as it should be
            module, _, function = name.rpartition(".")
            if function in _MODULE_CALLS.get(module, ()) or module.split(".")[0] in _MODULES:
                found.append(Offence(path, node.lineno, f"calls {name}"))
                continue
            if name in ("open", "io.open") and _writes_mode(node, 1):
                found.append(Offence(path, node.lineno, "opens a file for writing"))
                continue
            if name == "os.open" and len(node.args) > 1 and _dotted(node.args[0]) != "os.devnull" and _WRITE_FLAGS & {
                    n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}:
                found.append(Offence(path, node.lineno, "opens a file for writing (os.open)"))
                continue
            if function in _OPENAI_NAMES:
                found.append(Offence(path, node.lineno, f"builds an OpenAI client ({name})"))
                continue
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in _PATH_METHODS:
                found.append(Offence(path, node.lineno, f"calls .{node.func.attr}()"))
            elif node.func.attr in _WHOLE_READS:
                found.append(Offence(path, node.lineno, f"reads a whole file unbounded (.{node.func.attr}())"))
            elif node.func.attr == "read" and not node.args and not node.keywords and _opens(node.func.value):
                found.append(Offence(path, node.lineno, "reads a whole file unbounded (open(...).read())"))
            elif node.func.attr == "open" and node.args and isinstance(node.args[0], ast.Constant) \
                    and _writes_mode(node, 0):  # Path.open's mode; `store.open(id)` opens no file
                found.append(Offence(path, node.lineno, "opens a file for writing (.open)"))
    return sorted(set(found))


def scan(root: Path, folders: tuple[str, ...], doors: str) -> list[Offence]:
    """The offences of every module under `folders` (relative to `root`), the doors' own folder left out."""
    found: list[Offence] = []
    for folder in folders:
        for file in sorted((root / folder).rglob("*.py")):
            relative = file.relative_to(root).as_posix()
            if not relative.startswith(doors):
                found += offences(file.read_text(), relative)
    return found
