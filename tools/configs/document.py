"""A training config as a file: read it, walk its keys, find their lines, edit it in place.

Every read goes through `load`, so a missing file, a folder, a binary file, invalid TOML or a
value of the wrong type is one clear `BadInput` line (exit 2) naming the file and line. Edits
work on the tomlkit document, so comments and formatting of untouched keys survive.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.items import AoT, Table
from tomlkit.toml_document import TOMLDocument

from tools.configs.dialects import KEY_TYPES, type_ok
from tools.errors import BadInput
from tools.files import read_bytes_bounded

_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")


@dataclass
class Config:
    path: Path
    text: str
    doc: TOMLDocument

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.unwrap()


def load(path: Path) -> Config:
    text = read_text(path)
    return Config(path, text, parse(text, path))


def read_text(path: Path) -> str:
    if not path.exists():
        raise BadInput("no-such-file", f"{path}: no such file", "check the path, or run `ls` in its folder")
    if path.is_dir():
        raise BadInput("is-a-directory", f"{path} is a directory, not a config file",
                       "pass the .toml file itself, e.g. rl.toml inside it")
    raw = read_bytes_bounded(path)
    if b"\0" in raw:
        raise BadInput("not-toml", f"{path} is a binary file, not a TOML config", "pass the .toml config file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput("not-toml", f"{path} is not UTF-8 text (byte {error.start})",
                       "TOML files are UTF-8; re-save it as UTF-8") from None


def parse(text: str, path: Path) -> TOMLDocument:
    try:
        doc = tomlkit.parse(text)
        # tomlkit lets some keys defined twice through (and raises others as no ParseError); TOML
        # forbids them all, and the standard library's parser says where.
        tomllib.loads(text)
        check_types(doc.unwrap(), path, text)
    except ParseError as error:
        raise BadInput("invalid-toml", f"{path}:{error.line}: invalid TOML at line {error.line}, column "
                       f"{error.col}: {_reason(error)}", "fix the syntax on that line") from None
    except (TOMLKitError, tomllib.TOMLDecodeError) as error:
        raise _strict_error(text, path, error) from None
    except RecursionError:
        raise BadInput("invalid-toml", f"{path}: nested too deeply to be a training config",
                       "a config's tables go a few levels deep; check the file is the config you meant") from None
    return doc


def _strict_error(text: str, path: Path, error: Exception) -> BadInput:
    """A key or table defined twice, located by the standard library's parser."""
    try:
        tomllib.loads(text)
        reason, line = str(error), None
    except tomllib.TOMLDecodeError as strict:
        reason = str(strict)
        found = re.search(r"\(at line (\d+), column \d+\)", reason)
        line = found.group(1) if found else None
        reason = reason.replace(found.group(0), "").strip() if found else reason
    where = f"{path}:{line}" if line else str(path)
    return BadInput("invalid-toml", f"{where}: invalid TOML{f' at line {line}' if line else ''}: {reason}",
                    "TOML allows each key and table once; remove or merge the repeated one")


def _reason(error: ParseError) -> str:
    reason = re.sub(r"\s+at line \d+ col \d+$", "", str(error))
    return reason.replace("'\\x00'", "the end of the file")


def check_types(data: dict[str, Any], path: Path, text: str) -> None:
    for key, display, value in walk(data):
        expected = KEY_TYPES.get(key)
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


def line_of(text: str, display: str) -> int | None:
    """The 1-based line where `display` (a display path) is defined, when it is written out."""
    for line in scan(text):
        if line.header:
            base = re.sub(r"\[\d+\]$", "", line.table)
            if display in (line.table, base) or line.table.startswith((display + ".", display + "[")):
                return line.number
        elif line.key and (line.key == display or display.startswith(line.key + ".")):
            return line.number
    return None


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


# --- editing the tomlkit document -------------------------------------------------------------


def container_of(doc: TOMLDocument, parts: list[str | int], create: bool = False,
                 for_table: bool = False) -> Any | None:
    """The table or array entry holding the last part of `parts`; None when it does not exist.

    With `create`, missing tables on the way are made; `for_table` says the last part will be a
    table itself, so its parent needs no header of its own."""
    node: Any = doc
    for index, part in enumerate(parts[:-1]):
        if isinstance(part, int):
            if not isinstance(node, AoT | list) or part >= len(node):
                return None
            node = node[part]
            continue
        if part not in node:
            if not create:
                return None
            # A table created only to hold a sub-table stays implicit, so no empty header appears.
            holds_table = index + 1 < len(parts) - 1 or for_table
            node[part] = tomlkit.table(is_super_table=holds_table)
        node = node[part]
        if not isinstance(node, dict | AoT | list):
            return None
    return node


def get_item(doc: TOMLDocument, parts: list[str | int]) -> Any | None:
    parent = container_of(doc, parts)
    last = parts[-1]
    if parent is None:
        return None
    if isinstance(last, int):
        return parent[last] if isinstance(parent, AoT | list) and last < len(parent) else None
    return parent.get(last) if isinstance(parent, dict) else None


def set_item(doc: TOMLDocument, parts: list[str | int], value: Any) -> None:
    parent = container_of(doc, parts, create=True)
    if parent is None or not isinstance(parent, dict):
        raise BadInput("bad-key", f"{'.'.join(map(str, parts))}: a part of this path is not a table",
                       "set a key inside a table, e.g. orchestrator.batch_size")
    last = parts[-1]
    if last in parent:
        existing = parent[last]
        item = tomlkit.item(value)
        if hasattr(existing, "trivia") and hasattr(item, "trivia"):
            item.trivia.comment = existing.trivia.comment
            item.trivia.comment_ws = existing.trivia.comment_ws
        parent[last] = item
    else:
        parent[last] = value


def delete_item(doc: TOMLDocument, parts: list[str | int]) -> None:
    parent = container_of(doc, parts)
    if isinstance(parent, dict) and parts[-1] in parent:
        del parent[parts[-1]]


def rename_in_place(parent: Table | Container, old: str, new: str) -> None:
    """Rename a key where it stands, keeping its position, value and comment."""
    body = parent.value if isinstance(parent, Table) else parent
    item = body.item(old)
    body._replace(old, new, item)
    # tomlkit 0.13-0.15 leave the dict views stale after a rename of a plain value: the container
    # and a Table around it each mirror the keys as a dict of their own.
    if new not in dict.keys(body):
        dict.__setitem__(body, new, item.value)
    if isinstance(parent, Table):
        dict.pop(parent, old, None)
        dict.__setitem__(parent, new, item)


def dumps(doc: TOMLDocument) -> str:
    return tomlkit.dumps(doc)


# --- editing the text itself ------------------------------------------------------------------
# tomlkit re-renders interleaved tables in its own order (e.g. an `[[orchestrator.x]]` written
# between two `[orchestrator.train.*]` tables moves), so a set that goes through tomlkit's
# renderer can move lines it never touched. `splice` changes only the edited key's own lines.


def display_path(parts: list[str | int]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def splice(text: str, parts: list[str | int], value: Any) -> str | None:
    """`text` with the key at `parts` set to `value`, touching only that key's lines (or adding
    one line, or one table at the end); None when the key's place is not written out plainly."""
    if isinstance(parts[-1], int):
        return None
    display = display_path(parts)
    if is_table_array(value):
        return _append_tables(text, display, value)
    rendered = inline(value).as_string() if isinstance(value, dict) else tomlkit.item(value).as_string()
    lines = text.splitlines(keepends=True)
    scanned = list(scan(text))
    hit = next((line for line in scanned if line.key == display), None)
    if hit:
        return _replace_value(lines, hit.number, rendered)
    parent, _, leaf = display.rpartition(".")
    if any(line.key and (line.key == parent or parent.startswith(line.key + ".")) for line in scanned):
        return None  # the parent is an inline table or dotted keys
    headed = any(line.header and line.table == parent for line in scanned)
    if parent and not headed:
        if "[" in parent:
            return None
        ending = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{ending}[{parent}]\n{leaf} = {rendered}\n"
    section = [line for line in scanned if line.table == parent]
    content = [line.number for line in section if not line.header and _is_content(lines[line.number - 1])]
    if content:
        at = content[-1]
    elif parent:
        at = next(line.number for line in section if line.header)
    else:
        return f"{leaf} = {rendered}\n" + ("\n" if text.lstrip().startswith("[") else "") + text
    if not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines.insert(at, f"{leaf} = {rendered}\n")
    return "".join(lines)


def _append_tables(text: str, display: str, entries: list[dict[str, Any]]) -> str | None:
    """A new array of tables goes at the end; one that exists already is left to tomlkit."""
    if "[" in display or any(line.table.startswith(display) or line.key == display for line in scan(text)):
        return None
    blocks = []
    for entry in entries:
        lines = [f"[[{display}]]"]
        lines += [f"{key} = {(inline(v) if isinstance(v, dict) else tomlkit.item(v)).as_string()}"
                  for key, v in entry.items()]
        blocks.append("\n".join(lines) + "\n")
    ending = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    return text + ending + "\n".join(blocks)


def inline(value: dict[str, Any]) -> Any:
    """A dict as a TOML inline table (`{ a = 1 }`), nested dicts too."""
    table = tomlkit.inline_table()
    for key, sub in value.items():
        table[key] = inline(sub) if isinstance(sub, dict) else sub
    return table


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _replace_value(lines: list[str], number: int, rendered: str) -> str | None:
    first = lines[number - 1]
    equals = first.index("=")
    for end in range(number, len(lines) + 1):
        chunk = first[equals + 1:] + "".join(lines[number:end])
        try:
            item = tomlkit.parse("v =" + chunk).item("v")
        except ParseError:
            continue
        gap = chunk[:len(chunk) - len(chunk.lstrip(" \t"))]
        trivia = item.trivia
        newline = "\n" if chunk.endswith("\n") else ""
        lines[number - 1:end] = [first[:equals + 1] + gap + rendered + trivia.comment_ws + trivia.comment + newline]
        return "".join(lines)
    return None
