"""The commands of the README and the docs pages, read from their code blocks, for the tests that run them.

A `bash` block is a list of shell commands (a trailing `  # comment` is the page's note on it,
and "exit N" in that note is the exit status it promises; otherwise 0). Each block starts in the
checkout, as a reader coming to it would. A page's "Try `rlpilot ...`" examples are commands too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def pages(root: Path = REPO) -> list[Path]:
    """What a reader reads: the README, then the docs pages."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Command:
    text: str
    section: str
    block: int  # the bash block's index in its page; -1 for the page's "Try" examples
    exit_code: int = 0
    page: str = "README.md"


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


def _command(line: str, section: str, block: int, page: str) -> Command:
    text, _, note = line.partition("  # ")
    promised = re.search(r"\bexit (\d)\b", note)
    return Command(text.strip(), section, block, int(promised.group(1)) if promised else 0, page)


def bash_commands(text: str, page: str = "README.md") -> list[Command]:
    return [_command(line, b.section, index, page) for index, b in enumerate(blocks(text)) if b.language == "bash"
            for line in b.body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def try_examples(text: str, page: str = "README.md") -> list[Command]:
    return [Command(f"uv run {example}", "Try", -1, page=page)
            for example in re.findall(r"Try `(rlpilot [^`]+)`", text)]


def page_commands(path: Path, root: Path = REPO) -> list[Command]:
    """A page's bash lines, then its "Try" examples; `root` is the checkout the page is in."""
    text, name = path.read_text(), path.relative_to(root).as_posix()
    return bash_commands(text, name) + try_examples(text, name)


def json_blocks(readme: str) -> list[Block]:
    return [b for b in blocks(readme) if b.language == "json"]
