"""A final answer's Markdown read into units, for the answer check (agent/chat/answer_check.py).

A model writes what it did in tables, bold labels, lists and code spans as often as in sentences;
read as plain words, `| Run ID | r-4242 |` or `**Status:** launched ✅` hold no sentence a pattern
knows. Here each line is read for its structure first: a table row becomes one unit per cell, under
its column's header, and one for the row; a `label: value` line (bold or not), a list item and a
heading are units with their label; prose is split into sentences. Markup goes (emphasis, code
spans' backticks, links' brackets), and struck-out text goes with it: it says what was not done.
A checked box is read as done and an empty one as not. What a code fence holds is a command or a file
shown, not something said, and is left out. The text is made plain first (`normal`): a curly apostrophe
(`I’ve launched`), a zero-width space inside a word or a full-width letter would otherwise hide a claim
from the patterns. One pass over the lines, no backtracking pattern, and no unit longer than its line
and a bounded label: the check's time stays linear in the answer's length.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

# Emphasis, code spans and HTML tags go; a link keeps its text and its address.
_STRUCK = re.compile(r"~~[^~\n]*~~")
_LINK = re.compile(r"\[([^\[\]\n]{0,200})\]\(([^)\s]{0,400})\)")  # bounded: "[a[a[a..." is no link, fast
_TAG = re.compile(r"<[^<>\n]{0,40}>")
_MARKUP = re.compile(r"\*\*|__|[*`]")
_LIST = re.compile(r"\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_BOX = re.compile(r"\[([ xX✓✔])\]\s*")
_HEADING = re.compile(r"\s*#{1,6}\s+|\s*>+\s*")
_BOLD_LABEL = re.compile(r"\s*(?:\*\*|__)([^*_\n]{1,60}?)(?:\*\*|__)\s*[:：\-–—]?\s*")
_LABEL = re.compile(r"([^:：=\n]{1,40}?)\s*(?:[:：]|\s=)\s+")
_TABLE_RULE = re.compile(r"\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*")
# A sentence ends at a full stop before a space or the end (rl.toml and 0.93 stay whole), at !?; and at
# the full-width stops of Chinese and Japanese.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|[。！？；]")

DONE_BOX, OPEN_BOX = "✅", "❌"
# A table's column header longer than this is no column's name but text of its own (a header row is a word or
# two per column); it is read as a row and names no cell, or every body cell would carry a copy of it and a
# table built for it would make units the square of its size.
HEADER_CHARS = 60
# Quotes and hyphens NFKC leaves as they are: to the ASCII ones the patterns, AGENTIVE's words (`i've`), ids
# (r-4242) and signed values are written with. Dashes stay: they are punctuation between a metric and its value.
_ASCII = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
                        "″": '"', "‐": "-", "‑": "-", "−": "-"})


class Unit(NamedTuple):
    """A NamedTuple, not a model: an answer may hold tens of thousands of cells, made here and read once."""

    text: str  # its words, markup gone; a table row as its cells joined by " : ", a cell as "header: cell"
    label: str  # what it is under, lower case (a column's header, a `label:`), or ""
    source: str  # the answer's own words it comes from: a line, or a sentence of a plain line
    cell: bool = False  # one cell of a table row: its row is the unit that says what was done


def normal(text: str) -> str:
    """`text` as the check reads it: format characters (zero-width spaces and joiners, bidi marks, soft hyphens)
    gone, compatibility forms folded (NFKC: full-width letters and digits, ligatures), curly quotes made
    straight and hyphens plain. Linear: the format characters are looked up once per distinct character."""
    hidden = {ord(c): None for c in set(text) if unicodedata.category(c) == "Cf"}
    return unicodedata.normalize("NFKC", text.translate(hidden)).translate(_ASCII)


def units(answer: str) -> list[Unit]:
    """Every unit of `answer` (made `normal` first), in order; a code fence and what it holds give none."""
    found: list[Unit] = []
    lines = normal(answer).splitlines()
    index, fence = 0, ""
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if fence:  # inside a fence until a line of the same marker, at least as long, closes it (CommonMark)
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            index += 1
            continue
        opening = re.match(r"`{3,}|~{3,}", stripped)
        # a backtick fence's info string holds no backtick (CommonMark): "```x``` I launched it" is a code span
        # in a paragraph, not a fence hiding every line after it
        if opening and not (opening.group(0)[0] == "`" and "`" in stripped[opening.end():]):
            fence = opening.group(0)
            index += 1
            continue
        if line.lstrip().startswith("|"):
            end = index
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            found += _table(lines[index:end])
            index = end
            continue
        found += _line(line)
        index += 1
    return found


def _plain(text: str) -> str:
    text = _STRUCK.sub(" ", text)
    text = _LINK.sub(r"\1 (\2)", text)
    return " ".join(_MARKUP.sub("", _TAG.sub(" ", text)).split())


def _cells(row: str) -> list[str]:
    return [_plain(cell) for cell in row.strip().strip("|").split("|")]


def _table(rows: list[str]) -> list[Unit]:
    header = _cells(rows[0]) if len(rows) > 1 and _TABLE_RULE.fullmatch(rows[1]) else []
    if any(len(name) > HEADER_CHARS for name in header):
        header, rows = [], rows[:1] + rows[2:]  # text of its own: a row, and the rule under it nothing
    found = []
    for row in rows[2:] if header else rows:
        cells = _cells(row)
        source = row.strip()
        found.append(Unit(text=" : ".join(c for c in cells if c), label="", source=source))
        found += [Unit(text=f"{name}: {cell}" if name else cell, label=name.lower(), source=source, cell=True)
                  for name, cell in zip(header or [""] * len(cells), cells, strict=False) if cell]
    return found


def _line(line: str) -> list[Unit]:
    if not line.strip():
        return []
    source = line.strip()
    rest = _HEADING.sub("", line, count=1) if _HEADING.match(line) else line
    rest = rest[_LIST.match(rest).end():] if _LIST.match(rest) else rest
    box = _BOX.match(rest)
    if box:  # a checklist's box: what it says is done or not, as a word the check reads
        rest = (DONE_BOX if box.group(1).strip() else OPEN_BOX) + " " + rest[box.end():]
    bold = _BOLD_LABEL.match(rest)
    if bold and bold.end() < len(rest):
        text = f"{_plain(bold.group(1))}: {_plain(rest[bold.end():])}"
    else:
        text = _plain(rest)
    named = _LABEL.match(text)
    label = _plain(named.group(1)).lower() if named and named.end() < len(text) else ""
    # a plain line's sentences are the answer's own words; a line with markup is left out whole
    plain = text == source
    sentences = [sentence for sentence in _SENTENCE_END.split(text) if sentence.strip()]
    return [Unit(text=sentence, label=label if index == 0 else "", source=sentence if plain else source)
            for index, sentence in enumerate(sentences)]
