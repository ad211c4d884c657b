"""Which program would load a TOML, read from how its own repository passes it: a launcher, a
script, a Makefile or a README that runs `uv run orchestrator @ FILE`, `uv run rl --trainer @ a.toml
--orchestrator @ b.toml`, `prime train FILE` or `vf-eval ... --config FILE`. prime-rl's own
docs/configuration.md shows the forms (`@ base.toml @ overlay.toml` left to right, `--trainer @`
per section); its README runs each component as `uv run trainer|orchestrator|inference @ FILE`.

Reads are bounded: the repository is the nearest folder above the file with a `.git` (else the
file's own folder); read are the files of the file's folder and those above it, and the root's
launcher folders (`scripts/`, `docs/`, ...) to `_DEPTH` folders down, at most `_FILES` files of
`_BYTES` each. An argument names the file only where it resolves to it (or matches it around a
variable), so a generic `uv run rl @ rl.toml` in a doc names no file elsewhere.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tools.framework.eras import Kind
from tools.framework.errors import BadInput
from tools.io.files import read_text_bounded

_DEPTH = 6
_FILES = 400
_BYTES = 256 * 1024
_UP = 6  # folders above the file looked at for a `.git`
# Files that run or show commands; TOMLs too (task runners such as poe keep commands in them).
_SUFFIXES = {".sh", ".bash", ".md", ".mk", ".toml", ".yaml", ".yml", ".txt"}
_NAMES = {"Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", "Taskfile"}
_SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", "outputs", "wandb", "site-packages"}
_LAUNCHERS = ("scripts", "bin", "launch", "launchers", "slurm", "k8s", "docs", ".github")
# prime-rl's entry points (its pyproject's `[project.scripts]`) and the module paths older scripts ran.
_ENTRY = {"rl": Kind.RL, "sft": Kind.SFT, "trainer": Kind.TRAINER, "orchestrator": Kind.ORCHESTRATOR,
          "inference": Kind.INFERENCE, "eval": Kind.EVAL, "env-server": Kind.ENV_SERVER}
_MODULE = re.compile(r"prime_rl[./](trainer|orchestrator|inference|eval)\b")
_SECTION_FLAG = {"--trainer": Kind.TRAINER, "--orchestrator": Kind.ORCHESTRATOR, "--inference": Kind.INFERENCE}


@dataclass(frozen=True)
class Launch:
    """How a file is passed: the program, the kind it reads the file as, and where that is said."""

    program: str  # `uv run orchestrator`, `uv run rl --orchestrator`, `prime train`, `vf-eval`
    kind: Kind  # OTHER for a program that is no prime-rl one (`vf-eval`)
    where: str  # `scripts/run.sh:12`
    base: Path | None = None  # an overlay's base, where the command stacks the file on another

    @property
    def evidence(self) -> str:
        return f"passed to `{self.program}` in {self.where}"


def find_launch(path: Path) -> Launch | None:
    """The first command in the file's repository that passes it to a program; None when none does."""
    root = _root(path.resolve())
    for file in _candidates(path.resolve(), root):
        try:
            text = read_text_bounded(file, _BYTES)
        except (BadInput, OSError, UnicodeDecodeError):
            continue
        if path.name not in text:
            continue
        for number, line in _commands(text):
            # Only a line with the name (an escape aside) can name the file: shlex is slow on long prose.
            if path.name not in line.replace("\\", ""):
                continue
            found = _launch_in(line, path, file.parent, root)
            if found:
                program, kind, base = found
                return Launch(program, kind, f"{file.relative_to(root)}:{number}", base)
    return None


def _root(path: Path) -> Path:
    for folder in list(path.parents)[:_UP]:
        if (folder / ".git").exists():
            return folder
    return path.parent


def _candidates(path: Path, root: Path) -> list[Path]:
    """The files of the file's folder and of each folder above it up to the root, then the root's
    launcher folders walked down: where a repository keeps what runs its configs."""
    folders = [path.parent, *[p for p in path.parent.parents if p.is_relative_to(root)]]
    found = [f for folder in folders for f in sorted(folder.iterdir()) if _runs(f)]
    for name in _LAUNCHERS:
        for folder, dirs, files in os.walk(root / name):
            depth = len(Path(folder).relative_to(root).parts)
            dirs[:] = sorted(d for d in dirs if d not in _SKIP and depth < _DEPTH)
            found += [Path(folder) / f for f in sorted(files) if _runs(Path(folder) / f)]
    return list(dict.fromkeys(found))[:_FILES]


def _runs(file: Path) -> bool:
    name = file.name
    return (name in _NAMES or file.suffix in _SUFFIXES or name.startswith("README")) and file.is_file() \
        and not file.is_symlink()


def _commands(text: str) -> list[tuple[int, str]]:
    """Each command line with its line number, a `\\` continuation joined to it."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def _tokens(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote in prose: split on spaces
        return line.split()


def _names(token: str, path: Path, here: Path, root: Path) -> bool:
    """Whether a command's argument names the file: it resolves to it from the command's folder
    or the repository's root, or its literal parts match the file's where others are variables
    or placeholders (`${DIR}/orch.toml`, `configs/<env>/rl.toml`) or a container's root."""
    token = token.strip("\"'`")
    parts = [p for p in token.split("/") if p not in ("", ".")]
    if not parts or parts[-1] != path.name:
        return False
    found = _resolve(token, here, root)
    if found is not None:
        return found.resolve() == path.resolve()
    wild = [any(c in part for c in "$<>{}*") for part in parts]
    if token.startswith("/") and len(parts) >= 3:
        # A path inside a container (`/app/examples/x/rl/orch.toml`): its last three parts are the file's.
        wild = [True] * (len(parts) - 3) + wild[-3:]
    if not any(wild) or ".." in parts:
        return False
    mine = path.resolve().parts
    return all(w or (i < len(mine) and mine[-1 - i] == part)
               for i, (part, w) in enumerate(zip(reversed(parts), reversed(wild), strict=True)))


def _resolve(token: str, here: Path, root: Path) -> Path | None:
    token = token.strip("\"'`")
    for folder in (here, root):
        candidate = folder / token
        if candidate.is_file():
            return candidate
    return None


def _launch_in(line: str, path: Path, here: Path, root: Path) -> tuple[str, Kind, Path | None] | None:
    tokens = _tokens(line)
    for index, token in enumerate(tokens):
        if not _names(token, path, here, root):
            continue
        before = tokens[:index]
        flag = before[-2] if len(before) >= 2 and before[-1] == "@" else before[-1] if before else ""
        if flag in _SECTION_FLAG:
            return f"{_program(before) or 'uv run rl'} {flag} @", _SECTION_FLAG[flag], None
        if before and before[-1] == "@":
            program = _program(before)
            if program is None:
                continue
            kind = _kind_of(program)
            earlier = [tokens[i + 1] for i in range(len(before) - 1) if tokens[i] == "@"]
            if earlier and kind in (Kind.RL, Kind.SFT):
                # `uv run rl @ base.toml @ this.toml`: stacked on the first, left to right.
                return program, Kind.OVERLAY, _resolve(earlier[0], here, root)
            return program, kind, None
        joined = " ".join(before)
        if re.search(r"\bprime\s+(train|rl\s+run|rl)(\s+\S+)*$", joined) and "eval" not in joined:
            return "prime train", Kind.RL, None
        if re.search(r"\b(vf-eval|prime\s+eval(\s+run)?)\b", joined):
            return ("vf-eval" if "vf-eval" in joined else "prime eval run"), Kind.OTHER, None
    return None


def _program(before: list[str]) -> str | None:
    """The prime-rl program a command runs: the entry point after `uv run`/`rl`, or a module path."""
    for index in range(len(before) - 1, -1, -1):
        token = before[index]
        if token in _ENTRY and (index == 0 or before[index - 1] in ("run", "exec", "uvx") or
                                 before[index - 1].endswith("/bin")):
            return f"uv run {token}"
        if match := _MODULE.search(token):
            return f"prime-rl's {match.group(1)} ({token})"
        if token in ("vf-eval",):
            return None
    return None


def _kind_of(program: str) -> Kind:
    if program.startswith("uv run "):
        return _ENTRY[program.removeprefix("uv run ")]
    match = _MODULE.search(program)
    return _ENTRY[match.group(1)] if match else Kind.RL
