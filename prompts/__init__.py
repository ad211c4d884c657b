"""The system prompt, written from the playbook, with the user's stack filled in."""

from __future__ import annotations

from pathlib import Path

SYSTEM = Path(__file__).with_name("system.md")


def system_prompt(stack: str, dialect: str) -> str:
    return SYSTEM.read_text().format(stack=stack, dialect=dialect)
