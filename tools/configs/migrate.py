"""`rlpilot config migrate`: rewrite a config for another dialect, showing every change.

Python API (`config_migrate` is the entry): `migrate(path, to, output=None, dry_run=False, *,
workspace, installed, in_place=False) -> MigrateResult`.

Each era boundary applies the `CHANGES` of `tools.configs.dialects` in order: renames and moves
keep the item (so its comment and the comments inside a moved table survive), structural
rewrites are `tools.configs.migrations`', one module per era. Going back an era inverts the renames that have an exact
inverse. Whatever the target still rejects afterwards is taken out and listed as `manual` with
what to use instead, so nothing disappears silently. Inside prime-rl-current the output uses
main's spellings, unless a prime-rl v0.8.0 checkout pins the older ones.
"""

from __future__ import annotations

from enum import StrEnum
from itertools import takewhile
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field
from tomlkit.items import Table

from tools.configs import dialects as schema
from tools.configs.detect import Detection, detect_file, refuse_kind
from tools.configs.dialects import CLASSIC, CURRENT, LAB, TRANSITION, V09, KeyChange
from tools.configs.document import load, read_text
from tools.configs.edit import atomic_write, unified_diff, write_config
from tools.configs.lint import check_data
from tools.configs.migrations import apply, invert
from tools.configs.migrations.current import main_requirements
from tools.configs.migrations.run import Run, Step
from tools.configs.rules.naming import NAME_CODES
from tools.configs.toml_edit import dumps, nest, parse, rename_in_place, tidy, unnest
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.deltas import Delta
from tools.framework.eras import Dialect, Kind, Variant
from tools.framework.errors import BadInput
from tools.framework.findings import Finding
from tools.framework.findings import render as render_finding
from tools.io import files
from tools.stack.installed import Installed, installed_stack

# What a config can be migrated to: every dialect but the lab era's, which `prime train` no longer takes.
MigrationTarget = StrEnum("MigrationTarget", {d.name: d.value for d in Dialect if d != LAB})


class MigrateInput(BaseModel):
    path: Annotated[Path, Arg(positional=True), Field(description="The training config (TOML).")]
    to: Annotated[MigrationTarget, Field(description="The dialect to write.")]
    output: Annotated[Path | None, Arg(short="-o", metavar="OUT"), Field(
        description="Default: NAME.DIALECT.toml beside it.")] = None
    in_place: Annotated[bool, Field(description="Rewrite the file (backed up).")] = False
    dry_run: Annotated[bool, Field(description="Show the result without writing it.")] = False


class MigrateResult(ToolResult):
    path: str
    output: str
    source: Dialect
    to: Dialect
    changes: list[Step]
    manual: list[Step] = Field(description="Keys the target has no exact successor for: kept in the output as "
                                           "commented lines, with the reason and what to use instead.")
    deltas: list[Delta] = Field(description="`changes` in the shared delta shape, keyed by the new names.")
    findings: list[Finding] = Field(description="What `config check` says about the output in the target dialect.")
    diff: str
    written: bool
    backup: str | None = None

    def render(self) -> str:
        lines = [self.diff.rstrip("\n") or "no change", f"{self.path}: {self.source} -> {self.to}"]
        lines += [f"  {s.key}" + (f" -> {s.new_key}" if s.new_key and s.new_key != s.key else "") + f": {s.why}"
                  for s in self.changes]
        if self.manual:
            lines.append("kept as comments, for you to redo:")
            lines += [f"  {s.key}: {s.why}" + (f"\n      instead: {s.suggestion}" if s.suggestion else "")
                      for s in self.manual]
        lines += [render_finding(f) for f in self.findings]
        if self.written:
            lines.append(f"written to {self.output}" + (f"; previous version saved to {self.backup}"
                                                         if self.backup else ""))
        else:
            lines.append(f"dry run: nothing written (it would go to {self.output})")
        return "\n".join(lines)


def config_migrate(args: MigrateInput, ctx: Context) -> MigrateResult:
    output = ctx.resolve(args.output) if args.output else None
    return migrate(ctx.resolve(args.path), args.to, output, args.dry_run, workspace=ctx.workspace,
                   installed=installed_stack(ctx.workspace), in_place=args.in_place)


def beside(path: Path, to: Dialect) -> Path:
    """Where a migration goes by default: `rl.toml` -> `rl.prime-rl-current.toml`, and a migrated
    file's own era is replaced, not added to (`rl.prime-rl-current.toml` -> `rl.prime-rl-v0.9.toml`)."""
    stem = next((path.name[:-len(f".{d}.toml")] for d in Dialect if path.name.endswith(f".{d}.toml")), path.stem)
    return path.with_name(f"{stem}.{to}.toml")


def migrate(path: Path, to: Dialect | str, output: Path | None = None, dry_run: bool = False,
            *, workspace: Path, installed: Installed, in_place: bool = False) -> MigrateResult:
    config = load(Path(path))
    target = Dialect(to)
    detection = detect_file(config.data, config.path)
    refuse_kind(detection, config.path, "migrate")
    source, kind = detection.dialect, detection.kind
    # A component file is migrated as its table of a full config, and stays a component file.
    table = _COMPONENT_TABLES.get(kind)
    variant = installed.variant or Variant.MAIN
    doc = parse(config, nest(config.text, table) if table else None)
    run = Run(doc, variant)
    run.workspace = workspace  # where an environment's source tells its roles (`migrations.current`)
    for alias in [c for c in schema.CHANGES if c.alias and c.target == source]:
        apply(run, alias)  # old names this era still took: renamed, never dropped
    _snake_case(run, doc, "")
    out = Path(output) if output else config.path if in_place else beside(config.path, target)
    judged = Kind.RL if table else kind
    for origin, destination, forward in _route(source, target, variant):
        if (origin, destination, forward) == (CURRENT, V09, True):
            main_requirements(run)  # v0.9 validates all main did
        changes = _changes(origin, destination)
        for change in changes if forward else reversed(changes):
            (apply if forward else invert)(run, change)
        if (origin, destination, forward) == (CURRENT, V09, False):
            # What v0.9 added has no place below it: set aside now, before an older era's table
            # of the same name (transition's `[[orchestrator.train.env]]`) is written over it.
            _set_aside(run, CURRENT, judged, installed, out, Variant.MAIN)
    if target == CURRENT and variant == Variant.MAIN:
        main_requirements(run)
    pinned = variant if target == CURRENT else None
    _set_aside(run, target, judged, installed, out, pinned)
    if table:
        run.steps = [step.unnested(table) for step in run.steps]
    text = unnest(tidy(dumps(doc)), table) + run.kept(target) if run.steps else config.text  # else: as it is
    if run.steps:
        text = _retitled(text, config.path, source, target)
    findings = check_data(files.parse_toml(text, out), text, Detection(target, "the migration target", kind=kind),
                          installed, out, variant=pinned).findings
    backup = None
    if not dry_run:
        if out.exists():
            backup = write_config(out, read_text(out) if out != config.path else config.text, text,
                                  workspace)
        else:
            atomic_write(out, text)
    changes = [s for s in run.steps if not s.manual]
    return MigrateResult(path=str(config.path), output=str(out), source=source, to=target, changes=changes,
                         manual=[s for s in run.steps if s.manual],
                         deltas=[Delta(file=str(out), key=s.new_key or s.key, from_=s.from_, to=s.to, why=s.why)
                                 for s in changes],
                         findings=findings, diff=unified_diff(out, config.text, text), written=not dry_run,
                         backup=str(backup) if backup else None)


def _retitled(text: str, path: Path, source: Dialect, target: Dialect) -> str:
    """The file's header comment (its leading comment lines, then a blank line; a comment right above
    a key is that key's) described it in its old era: one line saying where the file came from
    replaces it."""
    lines = text.splitlines(keepends=True)
    header = len(list(takewhile(lambda line: line.lstrip().startswith("#"), lines)))
    if not header or header == len(lines) or lines[header].strip():
        return text
    return f"# Migrated from {path.name} ({source}) to {target} by `rlpilot config migrate`.\n" + "".join(
        lines[header:])


_COMPONENT_TABLES = {Kind.ORCHESTRATOR: "orchestrator", Kind.TRAINER: "trainer", Kind.INFERENCE: "inference"}


# A migration's stops along prime-rl's releases; inside prime-rl-current, v0.8.0's spelling comes
# before main's (the `variant` changes, origin and target both prime-rl-current).
_STOPS = ((CLASSIC, None), (TRANSITION, None), (CURRENT, Variant.V080), (CURRENT, Variant.MAIN), (V09, None))


def _stop(dialect: Dialect, variant: Variant) -> int:
    return _STOPS.index((dialect, variant if dialect == CURRENT else None))


def _route(source: Dialect, target: Dialect, variant: Variant) -> list[tuple[Dialect, Dialect, bool]]:
    """The boundaries between two dialects, as (origin, destination, forward). A prime-rl-current
    file counts as main's spelling going down (older eras spell it the v0.8.0 way) and as v0.8.0's
    going up (so what main renamed is renamed on the way)."""
    if target == LAB and source != LAB:
        raise BadInput("no-migration", f"nothing migrates to {LAB}: `prime train` no longer accepts it",
                       f"use --to {CURRENT}")
    if source == LAB:
        if target not in (LAB, CURRENT, V09):
            raise BadInput("no-migration", f"a {LAB} config migrates only to {CURRENT} (what `prime train` takes) "
                           f"or {V09}", f"use --to {CURRENT}")
        if target == LAB:
            return []
    end = _stop(target, variant)
    if source == target == V09:  # main's spellings still in a v0.9 file move to their place
        return [(CURRENT, V09, True)]
    if source == LAB:
        start, steps = _stop(CURRENT, Variant.V080), [(LAB, CURRENT, True)]
    else:
        going_up = end >= _stop(CURRENT, Variant.MAIN)
        start, steps = _stop(source, Variant.V080 if going_up else Variant.MAIN), []
    if start <= end:
        return steps + [(_STOPS[i][0], _STOPS[i + 1][0], True) for i in range(start, end)]
    return steps + [(_STOPS[i - 1][0], _STOPS[i][0], False) for i in range(start, end, -1)]


def _changes(origin: Dialect, destination: Dialect) -> list[KeyChange]:
    inside = origin == destination
    return [c for c in schema.CHANGES if c.origin == origin and c.target == destination and bool(c.variant) == inside]


def _set_aside(run: Run, dialect: Dialect, kind: Kind, installed: Installed, out: Path,
               variant: Variant | None) -> None:
    """Take out, as kept lines, what `dialect` has no key for."""
    found = check_data(run.doc.unwrap(), tidy(dumps(run.doc)), Detection(dialect, "the migration target", kind=kind),
                       installed, out, variant=variant).findings
    for problem in [f for f in found if f.code in NAME_CODES and f.key]:
        run.take_out(problem)


def _snake_case(run: Run, table: Any, where: str) -> None:
    """`micro-batch-size` -> `micro_batch_size`: older loaders took either, pydantic takes the field name."""
    for key in list(table.keys()):
        path = f"{where}.{key}" if where else key
        if "-" in key and key.replace("-", "_") not in table:
            rename_in_place(table, key, key.replace("-", "_"))
            run.record(path, "prime-rl's fields are snake_case", path.replace("-", "_"), None, None)
            key = key.replace("-", "_")
        value = table[key]
        if isinstance(value, Table):
            _snake_case(run, value, f"{where}.{key}" if where else key)
