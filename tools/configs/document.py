"""A training config as a file: read it, walk its keys, find their lines.

Every read goes through `load`, so a missing file, a folder, a binary file, invalid TOML or a
value of the wrong type is one clear `BadInput` line (exit 2) naming the file and line. Reading
needs only the standard library's parser: the tomlkit document that edits work on is
`tools.configs.toml_edit`'s, so a check never pays for importing tomlkit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs.dialects import KEY_TYPES, type_ok
from tools.framework.errors import BadInput
from tools.io import files

_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")


@dataclass
class Config:
    path: Path
    text: str
    data: dict[str, Any]


def load(path: Path) -> Config:
    text = read_text(path)
    return Config(path, text, read_data(text, path))


def read_text(path: Path) -> str:
    if not path.exists():
        raise BadInput("no-such-file", f"{path}: no such file", "check the path, or run `ls` in its folder")
    if path.is_dir():
        raise BadInput("is-a-directory", f"{path} is a directory, not a config file",
                       "pass the .toml file itself, e.g. rl.toml inside it")
    text = files.read_toml_text(path)
    if not text.strip():  # refused like an unreadable file, not judged as a config with nothing wrong
        raise BadInput("empty-file", f"{path} is empty: no config in it", "pass the .toml config file you meant")
    return text


def read_data(text: str, path: Path) -> dict[str, Any]:
    """The config's values, checked for the types rlpilot relies on."""
    data = files.parse_toml(text, path)
    check_types(data, path, text)
    return data


# Top-level counts prime-rl's eval configs of 2025 took per environment, as a list (one each).
_PER_ENVIRONMENT = frozenset({"rollouts_per_example", "num_examples"})


def check_types(data: dict[str, Any], path: Path, text: str) -> None:
    for key, display, value in walk(data):
        expected = KEY_TYPES.get(key)
        if key in _PER_ENVIRONMENT and isinstance(value, list) and all(type_ok(expected, v) for v in value):
            continue
        if expected and not type_ok(expected, value):
            line = line_of(text, display)
            where = f"{path}:{line}" if line else str(path)
            raise BadInput("wrong-type", f"{where}: {display} must be {expected}, not {value!r}",
                           f"write e.g. {display} = {_example(expected)}")


def _example(expected: str) -> str:
    return {"an integer": "128", "a number": "1e-6", "true or false": "true"}.get(expected, '"text"')


def walk(data: dict[str, Any], schema: str = "", display: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every key below `data` as (schema path, display path, value), tables before their keys.

    The schema path marks array-of-tables entries with `[]`, the display path with `[i]`.
    """
    for key, value in data.items():
        sub_schema = f"{schema}.{key}" if schema else key
        sub_display = f"{display}.{key}" if display else key
        yield sub_schema, sub_display, value
        if isinstance(value, dict):
            yield from walk(value, sub_schema, sub_display)
        elif is_table_array(value):
            for index, entry in enumerate(value):
                yield from walk(entry, sub_schema + "[]", f"{sub_display}[{index}]")


def is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def lookup(data: dict[str, Any], dotted: str, default: Any = None) -> Any:
    """The value at a dotted path of plain tables (no array entries), or `default`."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def split_key(dotted: str) -> list[str | int]:
    """`orchestrator.train.source[0].group_size` -> ["orchestrator", "train", "source", 0, "group_size"]."""
    parts: list[str | int] = []
    for segment in dotted.split("."):
        match = _SEGMENT.match(segment.strip())
        if not match:
            raise BadInput("bad-key", f"{dotted!r} is not a dotted key", "write e.g. orchestrator.batch_size or "
                           "orchestrator.train.source[0].group_size")
        parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    table: str  # display path of the table the line belongs to ("" at the top)
    key: str | None  # the display path a `key = value` line defines
    header: bool


def scan(text: str) -> Iterator[Line]:
    """Each line with the table it belongs to, as display paths (`[[x]]` entries get `[i]`)."""
    table, counts = "", {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        header = re.match(r"^\[\[\s*([^\]]+?)\s*\]\](\s*#.*)?$|^\[\s*([^\]]+?)\s*\](\s*#.*)?$", line)
        if header:
            name = _unquote(header.group(1) or header.group(3))
            base = _with_indices(name, counts)
            if header.group(1):
                counts[base] = counts.get(base, -1) + 1
                table = f"{base}[{counts[base]}]"
            else:
                table = base
            yield Line(number, table, None, True)
            continue
        assignment = re.match(r"^([A-Za-z0-9_.\"' -]+?)\s*=", line)
        key = None
        if assignment and not line.startswith("#"):
            key = _unquote(assignment.group(1))
            key = f"{table}.{key}" if table else key
        yield Line(number, table, key, False)


class LineIndex:
    """Where each display path of a text is defined, from one scan: a file with thousands of
    findings is looked up once per finding, not scanned once per finding."""

    def __init__(self, text: str):
        self.tables: dict[str, int] = {}  # a header's table, its entry-less base, and every table above it
        self.keys: dict[str, int] = {}
        for line in scan(text):
            if line.header:
                base = re.sub(r"\[\d+\]$", "", line.table)
                for name in (line.table, base, *_above(line.table, ".[")):
                    self.tables.setdefault(name, line.number)
            elif line.key:
                self.keys.setdefault(line.key, line.number)

    def line_of(self, display: str) -> int | None:
        """The first line that writes `display` out: its header or key, a table below it, or the key
        whose inline table holds it."""
        found = [self.tables.get(display), self.keys.get(display), *map(self.keys.get, _above(display, "."))]
        return min((number for number in found if number), default=None)


def _above(path: str, boundaries: str) -> list[str]:
    """The paths above `path`, cut where a part ends (`a.b[2].c` -> `a`, `a.b`, `a.b[2]`)."""
    return [path[:i] for i, char in enumerate(path) if char in boundaries and i]


def line_of(text: str, display: str) -> int | None:
    """The 1-based line where `display` (a display path) is defined, when it is written out."""
    return LineIndex(text).line_of(display)


def _with_indices(name: str, counts: dict[str, int]) -> str:
    """A header inside an array of tables attaches to its last entry: add that entry's index."""
    parts, built = name.split("."), ""
    for part in parts:
        built = f"{built}.{part}" if built else part
        if built in counts and built != name:
            built = f"{built}[{counts[built]}]"
    return built


def _unquote(key: str) -> str:
    return ".".join(p.strip().strip("\"'") for p in key.split("."))
