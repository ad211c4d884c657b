"""The README's commands, read from its code blocks, for the tests that run them.

A `bash` block is a list of shell commands (a trailing `  # comment` is the README's note on it,
and "exit N" in that note is the exit status it promises; otherwise 0). Each block starts in the
checkout, as a reader coming to it would. The tour's "Try `rlpilot ...`" examples are commands too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


@dataclass(frozen=True)
class Command:
    text: str
    section: str
    block: int  # the bash block's index in the README; -1 for the tour's examples
    exit_code: int = 0


@dataclass(frozen=True)
class Block:
    language: str
    body: str
    section: str


def blocks(readme: str) -> list[Block]:
    found = []
    section = ""
    inside: list[str] | None = None
    language = ""
    for line in readme.splitlines():
        if inside is None and line.startswith("#"):
            section = line.lstrip("#").strip()
        if line.startswith("```"):
            if inside is None:
                inside, language = [], line[3:].strip()
            else:
                found.append(Block(language, "\n".join(inside), section))
                inside = None
        elif inside is not None:
            inside.append(line)
    return found


def _command(line: str, section: str, block: int) -> Command:
    text, _, note = line.partition("  # ")
    promised = re.search(r"\bexit (\d)\b", note)
    return Command(text.strip(), section, block, int(promised.group(1)) if promised else 0)


def bash_commands(readme: str) -> list[Command]:
    return [_command(line, b.section, index) for index, b in enumerate(blocks(readme)) if b.language == "bash"
            for line in b.body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def tour_examples(readme: str) -> list[Command]:
    return [Command(f"uv run {text}", "Tour", -1) for text in re.findall(r"Try `(rlpilot [^`]+)`", readme)]


def json_blocks(readme: str) -> list[Block]:
    return [b for b in blocks(readme) if b.language == "json"]
