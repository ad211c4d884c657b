"""`rlpilot config set` and `config restore`: edit a config without disturbing the rest of it.

Python API (for the tools that write through it; `config_set`/`config_restore` are the entries):
`set_keys(path, changes, reasons=None, dry_run=False, force=False, *, workspace, installed) ->
SetResult`, and `restore(path, workspace) -> RestoreResult`.
`write_config(path, old_text, new_text, workspace)` is the one way the config tools write a
file: a backup of the previous version under rlpilot's state folder, then an atomic replace
(temp file in the same folder, fsync, rename), so a crash leaves either the old file or the new
one, never half of each.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Annotated, Any

import tomlkit
from pydantic import BaseModel, Field

from tools.configs.detect import Installed, detect_file, installed_stack
from tools.configs.document import (
    check_types,
    dumps,
    get_item,
    load,
    parse,
    set_item,
    splice,
    split_key,
)
from tools.configs.lint import check_data
from tools.contract import Arg, Context, ToolResult
from tools.deltas import Delta
from tools.eras import Dialect
from tools.errors import BadInput, ToolError
from tools.findings import Finding
from tools.findings import render as render_finding
from tools.workspace import rlpilot_home


class SetInput(BaseModel):
    path: Annotated[Path, Arg(positional=True), Field(description="The training config (TOML).")]
    changes: Annotated[dict[str, Any], Arg(positional=True), Field(
        description="Dotted keys and new values, e.g. orchestrator.batch_size=256; a source takes an index: "
                    "orchestrator.train.source[0].ratio=0.5.")]
    reasons: Annotated[dict[str, str], Arg(flag="--why", metavar="KEY=REASON"), Field(
        description="Why each key changes; the session report shows it beside the delta.")] = {}
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
    config = load(Path(path))
    detection = detect_file(config.data, config.path)
    before = check_data(config.data, config.text, detection, installed, config.path).findings
    doc = parse(config.text, config.path)
    deltas, spliced = [], config.text
    for key, value in changes.items():
        parts = split_key(key)
        old = get_item(doc, parts)
        old_value = old.unwrap() if hasattr(old, "unwrap") else old
        _check_same_kind(config.path, key, old_value, value)
        set_item(doc, parts, value)
        spliced = splice(spliced, parts, value) if spliced is not None else None
        deltas.append(Delta(file=str(config.path), key=key, from_=old_value, to=value,
                            why=(reasons or {}).get(key, "")))
    new_text = spliced if spliced is not None and _means(spliced, doc.unwrap()) else dumps(doc)
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
        return tomllib.loads(text) == data
    except tomllib.TOMLDecodeError:
        return False


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


def write_config(path: Path, old_text: str, new_text: str, workspace: Path) -> Path:
    """Save `old_text` as the latest backup of `path`, then replace `path` atomically."""
    backup = _backup_dir(path, workspace) / f"{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9:09d}.toml"
    backup.parent.mkdir(parents=True, exist_ok=True)
    (backup.parent / "origin").write_text(str(path.resolve()) + "\n")
    atomic_write(backup, old_text)
    atomic_write(path, new_text)
    return backup


def atomic_write(path: Path, text: str) -> None:
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # platforms without directory handles (Windows) persist the rename anyway
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _backup_dir(path: Path, workspace: Path) -> Path:
    resolved = str(path.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    return rlpilot_home(workspace) / "config-backups" / f"{path.name}-{digest}"


def backups_of(path: Path, workspace: Path) -> list[Path]:
    """The saved versions of `path`, oldest first."""
    folder = _backup_dir(path, workspace)
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def restore(path: Path, workspace: Path) -> RestoreResult:
    """Put back the version before the last rlpilot edit; each restore steps one edit further back."""
    path = Path(path)
    saved = backups_of(path, workspace)
    if not saved:
        raise ToolError("no-backup", f"{path}: rlpilot has no saved version of this file",
                        f"backups live in {_backup_dir(path, workspace).parent}; only files rlpilot edited have one")
    latest = saved[-1]
    old_text = latest.read_text()
    current = path.read_text() if path.is_file() else ""
    atomic_write(path, old_text)
    latest.unlink()
    return RestoreResult(path=str(path), backup=str(latest), diff=unified_diff(path, current, old_text))
