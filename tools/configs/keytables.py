"""Every table and key of prime-rl's config schema, per release, as upstream defined them.

`upstream_keys.json` holds, for each release rlpilot speaks (v0.3.0 to main, and v0.9: main with
the orchestrator's changes of v0.9.0 and the main after it, which no published schema here
covers), the root class of
each config kind and every config class: its fields, the classes a field's table may be (a
union, such as the algorithm or deployment types, is all of them), whether its keys are free
names (`dict[str, Model]`), and whether upstream leaves it open (vLLM's pass-through arguments,
verifiers' environment blocks, which each environment package narrows). It is read from
prime-rl's config classes exported as JSON Schema per release, by tests/upstream_schema.py, and
tests/test_config_schema.py holds it against them.

A dialect accepts the keys of any of its releases; a pinned variant (a v0.8.0 or main checkout)
only its own.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from tools.configs.dialects import LAB_SECTIONS
from tools.configs.document import is_table_array
from tools.framework.eras import Dialect, Kind, Variant
from tools.io import files

RELEASES: dict[Dialect, tuple[str, ...]] = {
    Dialect.CLASSIC: ("v0.3.0", "v0.4.0", "v0.5.0"),
    Dialect.TRANSITION: ("v0.6.0", "v0.7.0"),
    Dialect.CURRENT: ("v0.8.0", "main"),
    Dialect.V09: ("v0.9",),
}
VARIANT_RELEASE = {Variant.V080: "v0.8.0", Variant.MAIN: "main"}
KINDS = ("rl", "trainer", "orchestrator", "inference", "env-server", "sft", "eval")


@functools.cache
def _graph() -> dict[str, Any]:
    return json.loads(files.package_data(__package__, "upstream_keys.json"))


@dataclass(frozen=True)
class Tables:
    """The classes one TOML table may be (across releases and union members)."""

    classes: frozenset[str]
    open: bool = False  # upstream takes any key here

    def keys(self) -> frozenset[str]:
        return frozenset(key for c in self.classes for key in _class(c)["fields"])

    def child(self, key: str) -> Tables | None:
        """The table under `key`; None when `key` holds a value, not a table."""
        shapes = [(c.partition("/")[0], _class(c)["fields"].get(key)) for c in self.classes]
        shapes = [(release, s) for release, s in shapes if s is not None]
        if not shapes:
            return None
        classes = frozenset(f"{release}/{t}" for release, s in shapes for t in s["tables"])
        opened = any(s["open"] for _, s in shapes) or any(_class(c)["open"] for c in classes)
        return Tables(classes, opened)

    def is_map(self, key: str) -> bool:
        """Whether `key`'s table has free names, each holding one of its classes."""
        return any((_class(c)["fields"].get(key) or {}).get("map") for c in self.classes)


def _class(class_id: str) -> dict[str, Any]:
    release, _, name = class_id.partition("/")
    return _graph()[release]["classes"][name]


def releases(dialect: Dialect, variant: Variant | None = None) -> tuple[str, ...]:
    if dialect == Dialect.CURRENT and variant:
        return (VARIANT_RELEASE[variant],)
    return RELEASES.get(dialect, ())


def root(kind: str, release_names: tuple[str, ...]) -> Tables | None:
    """The top-level table of `kind` in these releases; None when none of them defines the kind."""
    graph = _graph()
    classes = frozenset(f"{r}/{graph[r]['roots'][kind]}" for r in release_names if kind in graph[r]["roots"])
    if not classes:
        return None
    return Tables(classes, any(_class(c)["open"] for c in classes))


def table_at(kind: str, release_names: tuple[str, ...], path: str) -> Tables | None:
    """The table at a dotted path (`[]` entries and free names as in the data) from the kind's root."""
    tables = root(kind, release_names)
    for part in [p for p in path.replace("[]", "").split(".") if p]:
        if tables is None or tables.open:
            return tables
        tables = tables.child(part)
    return tables


def snake(key: str) -> str:
    """prime-rl's config loader reads `micro-batch-size` as `micro_batch_size`."""
    return key.replace("-", "_")


def misfit(data: dict[str, Any], kind: Kind, dialect: Dialect) -> int | None:
    """How many keys of `data` the kind's schema in `dialect` does not know; None when that
    dialect has no such kind (or no schema to hold it against)."""
    if dialect == Dialect.HOSTED_LAB:
        if kind != Kind.RL:
            return None
        return sum(1 for key, value in data.items() if key not in LAB_SECTIONS[""]) + sum(
            1 for key in (data.get("sampling") or {}) if key not in LAB_SECTIONS["sampling"])
    tables = root(kind, releases(dialect))
    return None if tables is None else _unknown_count(tables, data, top=kind)


def _unknown_count(tables: Tables, data: dict[str, Any], top: Kind | None = None) -> int:
    if tables.open:
        return 0
    count = 0
    known = tables.keys()
    for key, value in data.items():
        key = snake(key)
        if key not in known:
            count += 1
            continue
        child = tables.child(key)
        if child is None:
            continue
        if top == Kind.RL and key == "model" and isinstance(value, str):
            count += 1  # the lab-era `model = "..."` where prime-rl has a table
        entries = [value] if isinstance(value, dict) else value if is_table_array(value) else []
        if tables.is_map(key) and isinstance(value, dict):
            entries = [v for v in value.values() if isinstance(v, dict)]
        count += sum(_unknown_count(child, entry) for entry in entries)
    return count
