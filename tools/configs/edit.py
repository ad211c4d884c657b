"""`rlpilot config set` and `config restore`: edit a config without disturbing the rest of it.

Python API (for the tools that write through it; `config_set`/`config_restore` are the entries):
`set_keys(path, changes, reasons=None, dry_run=False, force=False, *, workspace, installed) ->
SetResult`, and `restore(path, workspace) -> RestoreResult`.
`write_config(path, old_text, new_text, workspace)` is the one way the config tools write a
file: a backup of the previous version under rlpilot's state folder, then an atomic replace
through the files door (temp file in the same folder, fsync, rename, the config's mode kept), so
a crash leaves either the old file or the new one, never half of each.

Two rlpilot processes never lose each other's edits: an edit holds the file's lock (`filelock`,
kept under rlpilot's state folder) from reading the file to writing it, and waits a few seconds
for another edit to finish; past that it fails saying the file is busy. `write_config` writes
only over the text the edit started from, so the backup is always the version just before it.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import tomlkit
from filelock import FileLock, Timeout
from pydantic import BaseModel, Field

from tools.configs.detect import detect_file
from tools.configs.dialects import INT, KEY_TYPES
from tools.configs.document import check_types, load, split_key
from tools.configs.lint import check_data
from tools.configs.toml_edit import dumps, get_item, parse, set_item, spaced, splice
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.deltas import Delta
from tools.framework.eras import Dialect
from tools.framework.errors import BadInput, ToolError
from tools.framework.findings import Finding
from tools.framework.findings import render as render_finding
from tools.framework.workspace import rlpilot_home
from tools.io import files
from tools.stack.installed import Installed, installed_stack


class SetInput(BaseModel):
    path: Annotated[Path, Arg(positional=True), Field(description="The training config (TOML).")]
    changes: Annotated[dict[str, Any], Arg(positional=True), Field(
        description="Dotted keys and new values, e.g. orchestrator.batch_size=256; a source takes an index: "
                    "orchestrator.train.source[0].ratio=0.5.")]
    reasons: Annotated[dict[str, str], Arg(flag="--why", metavar="KEY=REASON"), Field(
        description="Why each key changes (the report shows it).")] = {}
    dry_run: Annotated[bool, Field(description="Show the diff without writing.")] = False
    force: Annotated[bool, Arg(user_decision=True), Field(
        description="Write even when the edit introduces an error finding.")] = False


class SetResult(ToolResult):
    path: str
    dialect: Dialect
    deltas: list[Delta]
    diff: str
    written: bool
    backup: str | None = Field(None, description="Where the previous version was saved.")
    findings: list[Finding] = Field(description="What `config check` says about the edited config.")

    def render(self) -> str:
        lines = [self.diff.rstrip("\n")] if self.diff else ["no change"]
        state = "written" if self.written else "not written (dry run)" if self.diff else "unchanged"
        lines.append(f"{self.path}: {state}" + (f"; previous version saved to {self.backup}" if self.backup else ""))
        lines += [render_finding(f) for f in self.findings]
        return "\n".join(lines)


class RestoreInput(BaseModel):
    path: Annotated[Path, Arg(positional=True), Field(description="The config rlpilot edited.")]


class RestoreResult(ToolResult):
    path: str
    backup: str
    diff: str

    def render(self) -> str:
        return "\n".join([self.diff.rstrip("\n") or "no difference",
                          f"{self.path}: restored the version saved at {self.backup}"])


def config_set(args: SetInput, ctx: Context) -> SetResult:
    return set_keys(ctx.resolve(args.path), args.changes, reasons=args.reasons,
                    dry_run=args.dry_run, force=args.force,
                    workspace=ctx.workspace,
                    installed=installed_stack(ctx.workspace))


def config_restore(args: RestoreInput, ctx: Context) -> RestoreResult:
    return restore(ctx.resolve(args.path), ctx.workspace)


def set_keys(path: Path, changes: dict[str, Any], reasons: dict[str, str] | None = None, dry_run: bool = False,
             force: bool = False, *, workspace: Path, installed: Installed) -> SetResult:
    """Set dotted keys to values; refuse an edit that adds an error finding unless `force`."""
    if not changes:
        raise BadInput("bad-argument", "no changes given", "write KEY=VALUE, e.g. orchestrator.batch_size=256")
    load(Path(path))  # a file that cannot be a config is refused before any state (the lock) is made
    with locked(Path(path), workspace):
        return _set_keys(Path(path), changes, reasons, dry_run, force, workspace, installed)


def _set_keys(path: Path, changes: dict[str, Any], reasons: dict[str, str] | None, dry_run: bool, force: bool,
              workspace: Path, installed: Installed) -> SetResult:
    config = load(path)
    detection = detect_file(config.data, config.path)
    before = check_data(config.data, config.text, detection, installed, config.path).findings
    doc = parse(config)
    deltas, spliced = [], config.text
    for key, value in changes.items():
        parts = split_key(key)
        old = get_item(doc, parts)
        old_value = old.unwrap() if hasattr(old, "unwrap") else old
        judged = any(f.severity == "error" and f.key == key for f in before)  # no example to give then
        _check_value(config.path, key, value, None if judged else old_value)
        _check_same_kind(config.path, key, old_value, value)
        set_item(doc, parts, value)
        spliced = splice(spliced, parts, value) if spliced is not None else None
        deltas.append(Delta(file=str(config.path), key=key, from_=old_value, to=value,
                            why=(reasons or {}).get(key, "")))
    new_text = spaced(config.text, spliced if spliced is not None and _means(spliced, doc.unwrap()) else dumps(doc))
    check_types(doc.unwrap(), config.path, new_text)
    after = check_data(doc.unwrap(), new_text, detection, installed, config.path).findings
    introduced = _introduced(before, after)
    if introduced and not force:
        raise ToolError("edit-introduces-error", f"{config.path}: not written, the edit would add "
                        + "; ".join(f"{f.code} ({f.key}): {f.message}" for f in introduced),
                        "fix the values, or pass --force to write anyway")
    diff = unified_diff(config.path, config.text, new_text)
    backup = None
    if diff and not dry_run:
        backup = write_config(config.path, config.text, new_text, workspace)
    return SetResult(path=str(config.path), dialect=detection.dialect, deltas=deltas, diff=diff,
                     written=bool(diff) and not dry_run, backup=str(backup) if backup else None, findings=after)


def _means(text: str, data: dict[str, Any]) -> bool:
    try:
        return files.parse_toml(text, "the spliced config") == data
    except BadInput:
        return False


# TOML integers are 64-bit; prime-rl's counts (steps, batch and group sizes, lengths, GPUs) are at
# least 1, but for those where 0 means something (no async lag, no inference GPUs of its own).
_INT64 = range(-(1 << 63), 1 << 63)
_ZERO_MEANS_SOMETHING = ("max_async_level", "max_off_policy_steps", "num_infer_gpus")


def _check_value(path: Path, key: str, value: Any, old: Any) -> None:
    """Refuse what no config may hold: NaN and infinities, integers TOML cannot store, counts below 1,
    an empty value. The example a refusal gives is the file's own value (`old`), when every rule passes it."""
    keep = f", e.g. {key}={tomlkit.item(old).as_string()} (its value now)" if old is not None and old != "" else ""
    for scalar in _scalars(value):
        if isinstance(scalar, str) and not scalar.strip():
            raise BadInput("bad-value", f"{path}: {key} is given an empty value; nothing was written",
                           f"give {key} a value{keep}, or remove the line to leave it unset")
        if isinstance(scalar, float) and not math.isfinite(scalar):
            raise BadInput("bad-value", f"{path}: {key} = {scalar} is not a finite number; nothing was written",
                           f"give {key} a number, e.g. {key}=3e-6")
        if isinstance(scalar, int) and scalar not in _INT64:
            raise BadInput("bad-value", f"{path}: {key} is given a {scalar.bit_length()}-bit integer; TOML "
                           "integers are 64-bit (below 2^63); nothing was written", f"give {key} a smaller value")
    least = 0 if key.rpartition(".")[2] in _ZERO_MEANS_SOMETHING else 1
    if KEY_TYPES.get(key) == INT and isinstance(value, int) and not isinstance(value, bool) and value < least:
        raise BadInput("bad-value", f"{path}: {key} = {value}, but it counts something and must be at least "
                       f"{least}; nothing was written", f"give {key} a count of {least} or more{keep}")


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


def _check_same_kind(path: Path, key: str, old: Any, new: Any) -> None:
    if old is None or _kind(old) == _kind(new):
        return
    raise BadInput("wrong-type", f"{path}: {key} is {_kind(old)} ({old!r}); {new!r} is {_kind(new)}",
                   f"give {key} {_kind(old)}, e.g. {key}={tomlkit.item(old).as_string()}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _introduced(before: list[Finding], after: list[Finding]) -> list[Finding]:
    seen = {(f.code, f.key) for f in before}
    return [f for f in after if f.severity == "error" and (f.code, f.key) not in seen]


def unified_diff(path: Path, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{path.name}", tofile=f"b/{path.name}"))


# --- writing and backups ----------------------------------------------------------------------


# How long an edit waits for another rlpilot process to finish its edit of the same file.
LOCK_WAIT_S = 15.0


@contextmanager
def locked(path: Path, workspace: Path) -> Iterator[None]:
    """Hold `path`'s edit lock; ToolError `config-busy` when another edit keeps it past LOCK_WAIT_S."""
    real, home = str(files.real_path(path)), str(rlpilot_home(workspace))
    try:
        lock = _lock_of(real, home)  # makes the locks folder, which may be another user's
        lock.acquire(timeout=LOCK_WAIT_S)
    except Timeout:
        raise ToolError("config-busy", f"{path} is busy: another rlpilot process has been editing it for "
                        f"{LOCK_WAIT_S:g} s; nothing was written", "try again when that edit has finished") from None
    except OSError as error:  # the lock file is a symlink, or its folder is not writable
        raise ToolError("write-failed", f"{path} was not written: its edit lock {error.filename or home} could not "
                        f"be taken ({error.strerror or error})", "remove that lock file if it is a link, or fix the "
                        "folder's permissions, then run the command again") from None
    try:
        yield
    finally:
        lock.release()


@functools.lru_cache(maxsize=256)
def _lock_of(real: str, home: str) -> FileLock:
    """One lock object per file, so a holder may take it again (set_keys, then write_config)."""
    folder = files.make_dirs(Path(home) / "locks", private=True)
    return files.lock(folder / f"{hashlib.sha256(real.encode()).hexdigest()[:16]}.lock")


def write_config(path: Path, old_text: str, new_text: str, workspace: Path) -> Path:
    """Save `old_text` as the latest backup of `path`, then replace `path` atomically.

    Under the file's lock, and only while the file still holds `old_text`: an edit computed from
    a version another process has since replaced would silently undo that process's edit."""
    with locked(path, workspace):
        current = files.read_bytes_if_present(path)
        if current is not None and current != old_text.encode("utf-8"):
            raise ToolError("config-changed", f"{path} changed while this edit was being prepared; nothing was "
                            "written", "run the command again: it will start from the file as it is now")
        refuse_read_only(path)  # before a backup is made of an edit that cannot happen
        now = time.time_ns()  # one reading of the clock: two could straddle a second and sort out of order
        stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now // 10**9))
        backup = _backup_dir(path, workspace) / f"{stamp}-{now % 10**9:09d}.toml"
        files.make_dirs(backup.parent, private=True)
        files.write_text(backup.parent / "origin", str(files.real_path(path)) + "\n", private=True)
        atomic_write(backup, old_text, private=True)
        atomic_write(path, new_text)
        return backup


def refuse_read_only(path: Path) -> None:
    """A file its owner made read-only is not replaced (a rename would do it, whatever the mode says)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not mode & 0o222 or not os.access(path, os.W_OK):
        raise BadInput("read-only", f"{path} is read-only; nothing was written",
                       f"make it writable (`chmod u+w {path}`) if it should change, or write somewhere else")


def atomic_write(path: Path, text: str | bytes, *, private: bool = False) -> None:
    """Replace `path` whole or not at all (a full disk leaves the old file), keeping its mode; with
    `private` (rlpilot's own copies), 0600."""
    if path.is_dir():
        raise BadInput("is-a-directory", f"{path} is a directory; nothing was written", "name a file to write")
    refuse_read_only(path)
    if not path.parent.is_dir():
        raise BadInput("no-such-folder", f"{path.parent} does not exist; nothing was written",
                       "create the folder first, or name a file in a folder that exists")
    try:
        files.write_bytes(path, text.encode("utf-8") if isinstance(text, str) else text, private=private)
    except OSError as error:
        raise _not_written(path, error) from None


def _not_written(path: Path, error: OSError) -> ToolError:
    return ToolError("write-failed", f"{path} was not written ({error.strerror or error}); it is as it was",
                     "free some space or fix the folder's permissions, then run the command again")


def _backup_dir(path: Path, workspace: Path) -> Path:
    resolved = str(files.real_path(path))
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    return rlpilot_home(workspace) / "config-backups" / f"{path.name}-{digest}"


def backups_of(path: Path, workspace: Path) -> list[Path]:
    """The saved versions of `path`, oldest first."""
    folder = _backup_dir(path, workspace)
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def restore(path: Path, workspace: Path) -> RestoreResult:
    """Put back the version before the last rlpilot edit; each restore steps one edit further back."""
    path = Path(path)
    if not backups_of(path, workspace):  # checked before the lock, so asking makes no state
        raise _no_backup(path, workspace)
    with locked(path, workspace):
        return _restore(path, workspace)


def _no_backup(path: Path, workspace: Path) -> ToolError:
    return ToolError("no-backup", f"{path}: rlpilot has no saved version of this file",
                     f"backups live in {_backup_dir(path, workspace).parent}; only files rlpilot edited have one")


def _restore(path: Path, workspace: Path) -> RestoreResult:
    saved = backups_of(path, workspace)
    if not saved:  # another process restored the last one meanwhile
        raise _no_backup(path, workspace)
    latest = saved[-1]
    old_text = files.read_text_bounded(latest)
    current = files.read_text_if_present(path) or ""
    atomic_write(path, old_text)
    files.remove(latest)
    return RestoreResult(path=str(path), backup=str(latest), diff=unified_diff(path, current, old_text))
