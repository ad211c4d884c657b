"""prime-rl's config keys by date: the dates a config fits, and what each key was on other dates.

`prime_rl_history.json.gz` is written by scripts/prime_rl_history.py from a fetched prime-rl
(every first-parent commit that changed a config module since v0.1, read statically): for each
config kind and key path, the spans of commits in which it existed, its type and default, and
its successor where it was renamed or moved. tests/test_config_history.py holds it to the
JSON Schemas prime-rl's config classes export for each release (tests/upstream_schema.py).

A config's era is the window of commits in which the most of its keys existed (the file's own
commit date, where git knows it, picks the commit instead). A key of that window is valid; a key
of other dates is told when it existed and what replaced it; a key no commit had is unknown.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs.document import is_table_array
from tools.framework.eras import Dialect, Kind
from tools.framework.errors import ToolError
from tools.io import files, process

# A kind's keys sit in the table of this kind (an overlay is its base's; the rest are their own).
_TABLE_KIND = {Kind.OVERLAY: Kind.RL}


@functools.cache
def _history() -> dict[str, Any]:
    return json.loads(gzip.decompress(files.package_data(__package__, "prime_rl_history.json.gz")))


def commits() -> list[tuple[str, str]]:
    """(commit, date) per index of the spans."""
    return [tuple(c) for c in _history()["commits"]]


def keys(kind: Kind | str) -> dict[str, dict[str, Any]]:
    return _history()["kinds"].get(str(_TABLE_KIND.get(Kind(kind), kind)), {})


@dataclass(frozen=True)
class Era:
    first: int  # commit indices of the window
    last: int
    known: int  # how many of the file's keys existed then
    total: int
    evidence: str
    from_git: bool = False  # the file's own commit date, not the window its keys fit best

    def window(self) -> tuple[str, str]:
        table = commits()
        return table[self.first][1], table[self.last][1]

    def dates(self) -> str:
        table = commits()
        start, end = table[self.first][1], table[self.last][1]
        return start if start == end else f"{start} to {end}"


@functools.cache
def _tables(kind: str) -> frozenset[str]:
    """The paths that hold keys of their own (a table); a dict-typed value without them is data."""
    return frozenset(path.rsplit(".", 1)[0] for path in keys(kind) if "." in path)


def spellings(kind: Kind | str, data: dict[str, Any]) -> dict[str, str]:
    """Each key the file writes (as findings show it: `orchestrator.env[1].ratio`) with its path in
    the table (free names as `*`, array entries without an index); keys under another package's
    table are left out (that package judges them)."""
    found: dict[str, str] = {}
    _flatten(keys(kind), _tables(str(_TABLE_KIND.get(Kind(kind), kind))), data, "", "", found)
    return found


def paths(kind: Kind | str, data: dict[str, Any]) -> set[str]:
    return set(spellings(kind, data).values())


def _flatten(table: dict[str, dict[str, Any]], tables: frozenset[str], data: dict[str, Any], prefix: str,
             shown: str, found: dict[str, str]) -> None:
    for written, value in data.items():
        key = written.replace("-", "_")
        path = f"{prefix}{key}"
        display = f"{shown}{written}"
        if path not in table and f"{prefix}*" in table:
            path = f"{prefix}*"
        found[display] = path
        if table.get(path, {}).get("open") or path in table and path not in tables:
            continue  # another package's table, or a value that is a dict (an environment's `args`)
        entries = [value] if isinstance(value, dict) else value if is_table_array(value) else []
        for index, entry in enumerate(entries):
            where = display if isinstance(value, dict) else f"{display}[{index}]"
            _flatten(table, tables, entry, f"{path}.", f"{where}.", found)


def existed(kind: Kind | str, path: str, first: int, last: int) -> bool:
    entry = keys(kind).get(path)
    return entry is not None and any(start <= last and end >= first for start, end in entry["spans"])


def _per_commit(kind: Kind | str, data: dict[str, Any]) -> list[int] | None:
    """How many of the file's keys existed at each commit; None when the table has no key of it."""
    table = keys(kind)
    written = [p for p in paths(kind, data) if p in table]
    if not written:
        return None
    size = len(commits())
    counts = [0] * (size + 1)
    for path in written:
        for start, end in table[path]["spans"]:
            counts[start] += 1
            counts[end + 1] -= 1
    running, per_commit = 0, []
    for step in counts[:size]:
        running += step
        per_commit.append(running)
    return per_commit


def era(kind: Kind | str, data: dict[str, Any], file: Path | None = None) -> Era | None:
    """The window of commits the file fits; None when the table has no key of it."""
    per_commit = _per_commit(kind, data)
    if per_commit is None:
        return None
    total = len(paths(kind, data))
    dated = _commit_index(file) if file is not None else None
    if dated is not None:
        return Era(dated, dated, per_commit[dated], total,
                   f"the file's own commit date ({commits()[dated][1]}, from git)", from_git=True)
    best = max(per_commit)
    # The latest window where the most keys existed: a file that fits many dates is judged as the newest.
    last = max(i for i, n in enumerate(per_commit) if n == best)
    first = last
    while first > 0 and per_commit[first - 1] == best:
        first -= 1
    return Era(first, last, best, total, f"its keys: {best} of {total} existed then")


def fits_as_well(kind: Kind | str, data: dict[str, Any], path: str, found: Era) -> bool:
    """Whether the file fits some date on which `path` existed as well as the dates it was given:
    then its era is uncertain, and a key of other dates may be the right one (a git date is certain)."""
    per_commit = _per_commit(kind, data)
    if found.from_git or per_commit is None:
        return False
    return any(per_commit[i] >= found.known for start, end in keys(kind).get(path, {}).get("spans", [])
               for i in range(start, end + 1))


def _commit_index(file: Path) -> int | None:
    """The last commit of the table at or before the date git gives the file, when it is tracked."""
    try:
        return _dated(str(file), file.stat().st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=64)
def _dated(name: str, _mtime: int) -> int | None:
    file = Path(name)
    try:  # the repository is someone's: its git configuration may name programs
        done = process.git(["log", "-1", "--format=%cs", "--", file.name], cwd=file.parent, timeout=5)
    except (OSError, ToolError):
        return None
    date = done.stdout.strip()
    if not done.ok or not date:
        return None
    before = [i for i, (_, d) in enumerate(commits()) if d <= date]
    return before[-1] if before else None


def when(kind: Kind | str, path: str) -> str:
    """`from 2025-09-02 to 2026-01-10` (or `since ...`) for every span the key existed."""
    table, last = commits(), len(commits()) - 1
    spans = keys(kind)[path]["spans"]
    return ", ".join(f"since {table[a][1]}" if b == last else f"from {table[a][1]} to {table[b][1]}"
                     for a, b in spans)


def default_at(kind: Kind | str, path: str, index: int) -> Any:
    """The key's default at a commit: `{"expr": ...}` where it is not a literal."""
    entry = keys(kind)[path]
    changes = entry.get("defaults") or [[0, entry["default"]]]
    return next((value for start, value in reversed(changes) if start <= index), changes[0][1])


def successor(kind: Kind | str, path: str) -> str | None:
    return keys(kind).get(path, {}).get("successor")


# The release after which each dialect's spellings began on main (the one before it was cut).
_BEGAN_AFTER = {Dialect.TRANSITION: "v0.5.0", Dialect.CURRENT: "v0.7.0", Dialect.V09: "v0.8.0"}


def began(dialect: Dialect) -> int:
    """The first commit index of a dialect's window of dates (v0.9's lies after the table's last
    commit, main of 2026-08-21)."""
    if dialect == Dialect.V09:
        return len(commits())
    tag = _BEGAN_AFTER.get(dialect)
    return _history()["tags"][tag] + 1 if tag else 0


def moved(kind: Kind | str, path: str) -> str | None:
    """Where a key written under a table that was renamed or moved sits now (`orchestrator.env.ratio`
    -> `orchestrator.train.env.ratio`); None when no table above it moved, or the key is not there."""
    table = keys(kind)
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        above, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        seen = {above}
        while (after := table.get(above, {}).get("successor")) and after not in seen:
            seen.add(after)
            if f"{after}.{rest}" in table:
                return f"{after}.{rest}"
            above = after
    return None


def misfit(kind: Kind | str, data: dict[str, Any]) -> int:
    """How many of the file's keys the kind never had, on any date."""
    table = keys(kind)
    return sum(1 for path in paths(kind, data) if path not in table)


def nearest(kind: Kind | str, path: str, era: Era) -> str | None:
    """The key of the era's dates closest to one that never existed (a key of other dates would be
    refused in turn): a close name in the same table first."""
    import difflib

    def of_era(key: str) -> bool:
        return existed(kind, key, era.first, era.last)

    parent = path.rsplit(".", 1)[0] + "." if "." in path else ""
    leaf = path.rsplit(".", 1)[-1]
    siblings = {name: key for name, key in _children(kind, parent).items() if of_era(key)}
    close = difflib.get_close_matches(leaf, list(siblings), n=1, cutoff=0.6)
    if close:
        return siblings[close[0]]
    close = difflib.get_close_matches(path, [key for key in _of_similar_length(kind, len(path)) if of_era(key)],
                                      n=1, cutoff=0.6)
    return close[0] if close else None


@functools.cache
def _children(kind: Kind | str, parent: str) -> dict[str, str]:
    return {p[len(parent):]: p for p in keys(kind) if p.startswith(parent) and "." not in p[len(parent):]}


@functools.cache
def _by_length(kind: Kind | str) -> tuple[list[int], list[str]]:
    ordered = sorted(keys(kind), key=len)
    return [len(p) for p in ordered], ordered


def _of_similar_length(kind: Kind | str, size: int) -> list[str]:
    """The keys difflib can match to a word of `size` characters at cutoff 0.6: its first test (2 * shorter /
    both lengths >= 0.6) admits lengths from 3/7 to 7/3 of it, taken one wider each way against rounding.
    The same answer as from the whole table, in time per key that does not grow with the table (a config of
    10k unknown tables took 74 s: bench/bench_config_size.py)."""
    lengths, ordered = _by_length(kind)
    return ordered[bisect.bisect_left(lengths, size * 3 // 7 - 1):bisect.bisect_right(lengths, size * 7 // 3 + 1)]
