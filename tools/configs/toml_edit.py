"""Edit a config in place: its tomlkit document, or its text line by line.

Comments and formatting of untouched keys survive: edits work on the tomlkit document, and a
set that tomlkit would re-render in its own order splices the one line instead. A component
file is rewritten as its table of a full config (`nest`, `unnest`), and a rewrite's spacing is
made even (`tidy`).
"""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.items import AoT, Table
from tomlkit.toml_document import TOMLDocument

from tools.configs.document import Config, is_table_array, scan
from tools.framework.errors import BadInput
from tools.io.files import toml_error


def parse(config: Config, text: str | None = None) -> TOMLDocument:
    """The tomlkit document of a config `load` read (or of `text`, a rewrite of its text). Only
    loaded configs: tomlkit lets some keys defined twice through, the standard library's parser
    that `load` uses does not."""
    text = config.text if text is None else text
    try:
        return tomlkit.parse(text)
    except (ParseError, TOMLKitError) as error:
        raise toml_error(config.path, text, str(error)) from None


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


def spaced(old: str, new: str) -> str:
    """`new`, an edit of `old`, with its table headers spaced as a person writes TOML: a table the
    edit added has one blank line before it, and a table that was there keeps the blank line it
    had (tomlkit gives a table it inserts mid-file the blank line of the table after it). A header
    that a comment leads into is left as it is; nothing else changes."""
    old_lines = old.splitlines()
    headers = [line for line in scan(old) if line.header]
    known = {line.table for line in headers}
    blank_before = {line.table for line in headers if line.number > 1 and not old_lines[line.number - 2].strip()}
    lines = new.splitlines(keepends=True)
    out: list[str] = []
    for line in scan(new):
        before = out[-1].strip() if out else ""
        if line.header and before and not before.startswith("#") and (
                line.table not in known or line.table in blank_before):
            out.append("\n")
        out.append(lines[line.number - 1])
    return "".join(out)


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


_HEADER = re.compile(r"^\s*\[\[?[^\[\]]+\]\]?\s*(#.*)?$")
_NAMED_HEADER = re.compile(r"^(\s*)(\[\[?)\s*([^\[\]]+?)\s*(\]\]?)(.*)$")


def nest(text: str, table: str) -> str:
    """A component file's text as its table of a full config: `[x]` -> `[table.x]`."""
    lines = [f"[{table}]"]
    for line in text.splitlines():
        header = _NAMED_HEADER.match(line) if _HEADER.match(line) else None
        lines.append(f"{header[1]}{header[2]}{table}.{header[3]}{header[4]}{header[5]}" if header else line)
    return "\n".join(lines) + "\n"


def unnest(text: str, table: str | None) -> str:
    """The inverse of `nest`: the component's own table headers again."""
    if not table:
        return text
    lines = []
    for line in text.splitlines():
        header = _NAMED_HEADER.match(line) if _HEADER.match(line) else None
        if header and header[3] == table:
            continue
        if header and header[3].startswith(table + "."):
            line = f"{header[1]}{header[2]}{header[3][len(table) + 1:]}{header[4]}{header[5]}"
        lines.append(line)
    return tidy("\n".join(lines))


def tidy(text: str) -> str:
    """One blank line before each table header (unless a comment leads into it), none doubled:
    moved tables otherwise keep the spacing of where they came from."""
    out: list[str] = []
    for line in text.splitlines():
        if _HEADER.match(line) and out and out[-1].strip() and not out[-1].lstrip().startswith("#"):
            out.append("")
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def drop_if_empty(doc: TOMLDocument, parts: list[str | int]) -> None:
    """Drop implicit tables a move emptied (`orchestrator.train` once `[[orchestrator.train.env]]`
    moved out). A table with a header of its own stays: an empty `[inference]` or `[ckpt]` means
    "on, with defaults"."""
    while parts and not isinstance(parts[-1], int):
        table = get_item(doc, parts)
        if not isinstance(table, Table) or len(table) or not table.is_super_table():
            return
        delete_item(doc, parts)
        parts = parts[:-1]


def drop_emptied(entry: Any, tables: list[str]) -> None:
    """Drop the tables inside an array entry that only held what moved out of them (a v0.9
    source's `select` once its `limit` is `num_examples` again), deepest first."""
    for depth in range(len(tables), 0, -1):
        parent = entry
        for name in tables[:depth - 1]:
            parent = parent.get(name) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and isinstance(parent.get(tables[depth - 1]), dict) \
                and not parent[tables[depth - 1]]:
            del parent[tables[depth - 1]]


def inline_toml(value: Any) -> str:
    """A value as TOML text on one line (a kept key's commented line)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {inline_toml(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(inline_toml(item) for item in value) + "]"
    return tomlkit.item(value).as_string() if value is not None else '"None"'


def plain(value: Any) -> Any:
    """A tomlkit item's plain Python value."""
    return value.unwrap() if hasattr(value, "unwrap") else value
