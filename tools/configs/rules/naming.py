"""Key names, judged in the file's own era: its tables (`key_findings`, with what an old name
became), the dates it fits (`dated_findings`), and the era the installed stack or a target
expects (`outdated_findings`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tools.configs import dialects as schema
from tools.configs import history, keytables
from tools.configs.dialects import CURRENT, LAB, LAB_SECTIONS, V09, current_or_later
from tools.configs.document import is_table_array
from tools.configs.keytables import misfit, snake
from tools.configs.rules import Rule
from tools.configs.view import ConfigView
from tools.framework.eras import Dialect, Kind, Target, Variant
from tools.framework.findings import Finding
from tools.stack.installed import Installed

# A key's name against its era's tables, the dates the file fits, and what the stack reads.
UNKNOWN_KEY = Rule("unknown-key", "error")
RENAMED_KEY = Rule("renamed-key", "error")
REMOVED_KEY = Rule("removed-key", "error")
KEY_OF_OTHER_DATE = Rule("key-of-other-date", "warning")
# Info in a plain check: a file is judged in its own era (`outdated_findings` raises it).
DIALECT_OUTDATED = Rule("dialect-outdated", "info")

# The findings about a key's name, which the dates a file fits can overrule.
NAME_CODES = (UNKNOWN_KEY.code, RENAMED_KEY.code, REMOVED_KEY.code)


def dated_findings(found: list[Finding], data: dict[str, Any], kind: Kind, era: history.Era) -> list[Finding]:
    """Judge key names by the dates the file fits (prime-rl's history, `tools.configs.history`):
    a key that existed then gets no finding; one of other dates is a warning saying when it
    existed and what replaced it; only a key no commit ever had stays an error."""
    spelled = history.spellings(kind, data)
    judged, valid = [], []
    for item in found:
        table_path = spelled.get(item.key or "")
        if item.code not in NAME_CODES or table_path is None:
            judged.append(item)
        elif history.existed(kind, table_path, era.first, era.last):
            valid.append(f"{item.key}.")  # valid on the dates this file fits; its tables' keys are judged below
        elif table_path in history.keys(kind):
            successor = history.successor(kind, table_path)
            then = f"; it became `{successor}`" if successor else ""
            said = f"{item.key} is a key of prime-rl {history.when(kind, table_path)}, not of the dates this " \
                f"file fits ({era.dates()}){then}"
            judged.append(_of_other_date(item, kind, data, table_path, era, said, RENAMED_KEY if successor else
                                         REMOVED_KEY, item.fix))
        elif (now := history.moved(kind, table_path)) is not None:
            # Under a table that was renamed: the key is its new table's, so it is told where it belongs.
            then = "valid then under its new table" if history.existed(kind, now, era.first, era.last) else \
                f"a key there {history.when(kind, now)}"
            judged.append(_of_other_date(item, kind, data, table_path, era, f"{item.key} sits under a table "
                                         f"that was renamed: it is `{now}` ({then})", RENAMED_KEY,
                                         f"move it to {now} (`rlpilot config migrate` does this)"))
        else:
            close = history.nearest(kind, table_path, era)
            if close and "did you mean" not in item.message and item.code == UNKNOWN_KEY.code:
                item.message += f"; the nearest key of the dates it fits is `{close}`"
            judged.append(item)
    # Keys inside a table the era's release tables lacked were never looked at: a name no commit had is an error.
    for shown, table_path in spelled.items():
        if shown.startswith(tuple(valid)) and table_path not in history.keys(kind):
            close = history.nearest(kind, table_path, era)
            judged.append(UNKNOWN_KEY.finding(shown, f"{shown} is a key prime-rl never had" + (
                            f"; the nearest real key is `{close}`" if close else ""),
                            f"rename it to {close.rsplit('.', 1)[-1]}, or remove it" if close else "remove it"))
    return judged


def _of_other_date(item: Finding, kind: Kind, data: dict[str, Any], table_path: str, era: history.Era, said: str,
                   refused: Rule, fix: str) -> Finding:
    """A key prime-rl did not have on the dates the file fits: its classes of those dates refuse it
    (extra keys are forbidden), so the run stops at start, an error. Only where the file fits the
    key's own dates as well (its era is uncertain) is it a warning: which prime-rl runs it decides."""
    if history.fits_as_well(kind, data, table_path, era):
        return KEY_OF_OTHER_DATE.finding(item.key, f"{said}; the file's keys fit the key's dates as well, so "
                                         "its era is uncertain", fix)
    return refused.finding(item.key, f"{said}: prime-rl of those dates refuses it, so the run stops at "
                           "start", fix)


# Where a component kind's keys sit in a full rl config, which `CHANGES` is written against.
_RL_PREFIX = {Kind.ORCHESTRATOR: "orchestrator.", Kind.TRAINER: "trainer.", Kind.INFERENCE: "inference."}


class _LabTables:
    """The lab-era tables (no prime-rl schema): closed where `LAB_SECTIONS` lists them."""

    def __init__(self, path: str = ""):
        self.path = path
        self.open = path not in LAB_SECTIONS

    def keys(self) -> frozenset[str]:
        return LAB_SECTIONS.get(self.path, frozenset())

    def child(self, key: str) -> _LabTables:
        return _LabTables(f"{self.path}.{key}" if self.path else key)

    def is_map(self, key: str) -> bool:
        return False


def key_findings(view: ConfigView) -> list[Finding]:
    if view.dialect == LAB:
        tables: Any = _LabTables()
        other = None
    else:
        tables = keytables.root(view.kind, keytables.releases(view.dialect, view.variant))
        if tables is None:
            return []  # no schema of this kind in this era to hold it against
        other = None
        if view.variant:
            pinned = keytables.VARIANT_RELEASE[view.variant]
            other = keytables.root(view.kind, tuple(r for r in keytables.RELEASES[CURRENT] if r != pinned))
    found: list[Finding] = []
    _walk_keys(view, tables, other, view.data, "", "", found)
    return found + _older_current_spellings(view, found)


def _older_current_spellings(view: ConfigView, found: list[Finding]) -> list[Finding]:
    """Unpinned, prime-rl-current takes v0.8.0's spellings and main's; one that main renamed
    (such as `[wandb]`) is right for a v0.8.0 checkout only, so it is said as info."""
    if view.dialect != CURRENT or view.variant:
        return []
    judged = {f.key for f in found}
    on_main = key_findings(replace(view, variant=Variant.MAIN))
    # Main's own finding, whatever its code (renamed, removed, unknown), said as main's view.
    return [DIALECT_OUTDATED.finding(f.key, f"{f.key} is prime-rl v0.8.0's spelling; on main: {f.message}", f.fix)
            for f in on_main if f.key not in judged]


def _walk_keys(view: ConfigView, tables: Any, other: Any, table: dict[str, Any], path: str, display: str,
               found: list[Finding], was: tuple[str, ...] = ()) -> None:
    """`was`: the older names of this table, when it sits under a renamed one (`CHANGES` names the
    keys inside it as their own era spelled them)."""
    if tables is None or tables.open:
        return
    known = tables.keys()
    if not path and current_or_later(view.dialect) and view.kind == Kind.RL:
        known = known | schema.PRIME_TRAIN_KEYS
    for written, value in table.items():
        key = snake(written)
        child = f"{path}.{key}" if path else key
        shown = f"{display}.{written}" if display else written
        # A lab-era `model = "..."` string is the one old spelling whose key name survived.
        misshapen = child == "model" and isinstance(value, str) and view.prime_rl and view.kind == Kind.RL
        older = tuple(f"{name}.{key}" for name in was)
        if key not in known or misshapen:
            looked = next((name for name in (child, *older) if _change_of(view, name)), child)
            other_knows = other is not None and not other.open and key in other.keys()
            problem = _wrong_variant(view, child, shown) if other_knows and not misshapen else \
                _unknown(view, looked, shown, known, is_table_array(value))
            if problem:
                found.append(problem)
            names = _renamed_chain(view, looked) if problem and problem.code == RENAMED_KEY.code else None
            if names and isinstance(value, dict) and view.dialect != LAB:
                # Check what the old table holds as its new name's table (its keys may have moved too).
                below = keytables.table_at(view.kind, keytables.releases(view.dialect, view.variant), names[-1])
                _walk_keys(view, below, None, value, names[-1], shown, found, tuple(names[:-1]))
            continue
        below = tables.child(key)
        beside = other.child(key) if other is not None and not other.open and key in other.keys() else None
        if isinstance(value, dict) and tables.is_map(key):
            for name, entry in value.items():
                if isinstance(entry, dict):
                    _walk_keys(view, below, beside, entry, f"{child}.{name}", f"{shown}.{name}", found,
                               tuple(f"{o}.{name}" for o in older))
        elif isinstance(value, dict):
            _walk_keys(view, below, beside, value, child, shown, found, older)
        elif is_table_array(value):
            for index, entry in enumerate(value):
                _walk_keys(view, below, beside, entry, child + "[]", f"{shown}[{index}]", found,
                           tuple(f"{o}[]" for o in older))


def _rl_path(view: ConfigView, path: str) -> str:
    return _RL_PREFIX.get(view.kind, "") + path


def _applies(change: schema.KeyChange, view: ConfigView) -> bool:
    if change.variant:
        return view.dialect == V09 or (view.dialect == CURRENT and view.variant == Variant.MAIN)
    if change.origin == LAB:
        return current_or_later(view.dialect) and view.kind == Kind.RL
    return view.prime_rl and schema.RANK[change.origin] < schema.RANK[view.dialect]


def _change_of(view: ConfigView, path: str) -> schema.KeyChange | None:
    rl_path = _rl_path(view, path)
    return next((c for c in schema.CHANGES if c.old == rl_path and _applies(c, view)), None)


def _renamed_chain(view: ConfigView, old: str) -> list[str] | None:
    """Every name `old` had from its own era to the view's dialect, in the file's own terms (the
    last is its name now); None when it has no change or was removed."""
    names, removal = _history(view, old)
    return names if names and removal is None else None


def _history(view: ConfigView, old: str) -> tuple[list[str], schema.KeyChange | None]:
    """The names `old` had up to the view's dialect (file terms), and the change that removed it
    when one did; no names when it never changed."""
    change = _change_of(view, old)
    if change is None:
        return [], None
    prefix = _RL_PREFIX.get(view.kind, "")
    names = [_rl_path(view, old)]
    removal = change if change.new is None else None
    if change.new is not None:
        names.append(change.new)
    for later in schema.CHANGES if removal is None else ():
        name = names[-1]
        if later.origin == LAB or not (name == later.old or name.startswith(later.old + ".")):
            continue
        if later.variant and (not current_or_later(view.dialect) or view.variant == Variant.V080):
            continue
        if schema.RANK[later.target] > schema.RANK[view.dialect]:
            continue
        if later.new is None:
            removal = later
            break
        names.append(later.new + name[len(later.old):])
    return [name[len(prefix):] if prefix and name.startswith(prefix) else name for name in names], removal


def _unknown(view: ConfigView, path: str, shown: str, known: frozenset[str], array: bool = False) -> Finding | None:
    """`array`: the key holds an array of tables, which a name a later era reused for a table
    (v0.9's group `[orchestrator.train.env]`, transition's `[[orchestrator.train.env]]`) is not."""
    newer = None if array else _newer_dialect_of(view, path)
    what = f"{view.kind} config" if view.kind != Kind.RL else "config"
    if newer:
        return UNKNOWN_KEY.finding(shown, f"{shown} is a {newer} key; a {view.dialect} {what} has none",
                                   f"remove it, or write the file as {newer} "
                                   f"(`rlpilot config migrate {view.path or 'CONFIG'} --to {newer}`)")
    change = _change_of(view, path)
    if change and change.alias and change.target == view.dialect:
        return None  # an old name this era still accepted
    if change:
        names, removal = _history(view, path)
        if removal is None:
            return RENAMED_KEY.finding(
                shown, f"{shown} is not a {view.dialect} key: {change.why}; "
                f"it is `{names[-1]}` now", f"rename it to {names[-1]} (`rlpilot config migrate` does this)")
        why = change.why if removal is change else f"{change.why}; then {removal.why}"
        return REMOVED_KEY.finding(shown, f"{shown} no longer exists in {view.dialect}: {why}",
                                   removal.hint or "remove it")
    leaf = path.rsplit(".", 1)[-1]
    section = path.rsplit(".", 1)[0] if "." in path else "the top level"
    # A playbook knob spelled as another era did is told its key in this file's era (dialects.INTENTS).
    knob = next((k for i in schema.INTENTS if (k := view.key_for(i)) and k.rsplit(".", 1)[-1] == leaf), None)
    if knob and knob != path:
        return UNKNOWN_KEY.finding(shown, f"{shown} is not a key of {section} of a {view.dialect} {what}; "
                                   f"did you mean `{knob}`?", f"move it to {knob}, or remove it")
    import difflib  # only for a word that is unknown: most runs never need it

    close = difflib.get_close_matches(leaf, sorted(known), n=1, cutoff=0.6)
    if close:
        return UNKNOWN_KEY.finding(shown, f"{shown} is not a key of {section} of a {view.dialect} {what}; "
                                   f"did you mean `{close[0]}`?", f"rename it to {close[0]}, or remove it")
    return UNKNOWN_KEY.finding(shown, f"{shown} is not a key of {section} of a {view.dialect} {what}",
                               "remove it, or check the dialect and kind with --dialect / --kind")


def _newer_dialect_of(view: ConfigView, path: str) -> Dialect | None:
    """The first later dialect whose tables hold `path` (a key that came after the file's era)."""
    if not view.prime_rl:
        return None
    table, _, leaf = path.rpartition(".")
    for dialect in sorted((d for d in keytables.RELEASES if schema.RANK[d] > schema.RANK[view.dialect]),
                          key=schema.RANK.get):
        tables = keytables.table_at(view.kind, keytables.releases(dialect), table)
        if tables is not None and not tables.open and leaf in tables.keys():
            return dialect
    return None


def _wrong_variant(view: ConfigView, path: str, shown: str) -> Finding | None:
    if view.variant == Variant.MAIN:
        return _unknown(view, path, shown, frozenset())
    rl_path = _rl_path(view, path)
    older = sorted({c.old for c in schema.CHANGES if c.variant and c.new and
                    (c.new == rl_path or c.new.startswith(rl_path + "."))})
    spelled = " or ".join(f"`{o}`" for o in older) if older else "nothing"
    return RENAMED_KEY.finding(shown, f"{shown} is main's spelling; the pinned prime-rl v0.8.0 spells it "
                               f"{spelled}", f"use {spelled} with this checkout, or update the checkout")


def outdated_findings(view: ConfigView, installed: Installed, path: Path, target: Target | None = None
                      ) -> list[Finding]:
    """The era against what the stack expects. With a target, what that target would refuse is
    an error. A plain check judges the file in its own era, so the era alone is info; but when no
    installed part that runs this kind takes it (what `stack` would run it with cannot), it is a
    warning: as written it runs nowhere here."""
    expectations = installed.expectations()
    assumed = False
    if target == "hosted":
        cli = installed.prime_cli_version
        expectations = [(CURRENT, f"Hosted Training (`prime train`{f', prime {cli}' if cli else ''})")]
    elif target:
        # A local or SLURM run is prime-rl's own `rl`: the checkout's era, not the prime CLI's.
        expectations = expectations[:1] if installed.prime_rl_version else []
        assumed = not expectations
        expectations = expectations or [(CURRENT, f"a {target} prime-rl run (no checkout found: assumed prime-rl "
                                                  "main)")]
    found, refused = [], set()
    for expected, source in expectations:
        if view.dialect == LAB:
            newer = expected == CURRENT
        else:
            newer = expected != LAB and schema.RANK[expected] > schema.RANK[view.dialect]
        # v0.9's keys are refused where only prime-rl-current is read (`prime train`, a v0.8 checkout)
        ahead = view.dialect == V09 and expected == CURRENT and not assumed
        if view.dialect in (CURRENT, V09) and expected in (CURRENT, V09) and misfit(view.data, view.kind,
                                                                                   expected) == 0:
            continue  # both eras take this file as it is
        if newer or ahead:
            problem = DIALECT_OUTDATED.finding(None, f"this config is {view.dialect}, but {source} "
                                               f"{'reads only' if ahead else 'expects'} {expected}",
                                               f"rlpilot config migrate {path} --to {expected}")
            if target:
                problem.severity = "error"
                problem.message += f"; a {target} run refuses " + ("its v0.9 keys" if ahead else "it")
            found.append(problem)
            refused.add(source)
    if not target:
        runners = {source for _, source in installed.expectations(runs=view.kind)}
        if runners and runners <= refused:
            for problem in found:
                problem.severity = "warning"
                problem.message += f"; nothing installed here runs a {view.dialect} {view.kind} config as written"
    return found
