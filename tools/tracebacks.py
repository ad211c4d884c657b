"""What a Python program that failed said about it: the exception its last traceback ends in.

A child's last lines are not that. NLTK's LookupError prints an empty message line, then a banner
of asterisks around "Resource 'words' not found." and a list of the folders it searched; a
program's last three lines were that list (verifiers' wordle, run offline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TRACEBACK = "Traceback (most recent call last)"
# An exception's own line closes a traceback: `Name: message`, or a bare dotted name (`KeyboardInterrupt`).
EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b.*")
# Lines that frame a message and say nothing: blank, or only rules of *, =, - or #.
_FRAME = re.compile(r"^[\s*=#~-]*$")


def is_exception_line(line: str) -> bool:
    return not line[:1].isspace() and EXCEPTION_LINE.match(line) is not None


def opens_empty(line: str) -> bool:
    """An exception line whose message starts on the next line (`LookupError:` and nothing after)."""
    return line.rstrip().endswith(":") or ":" not in line


def is_frame(line: str) -> bool:
    return _FRAME.match(line) is not None


def raised(lines: Sequence[str], count: int) -> list[str] | None:
    """The exception `lines` end with, as at most `count` lines: its own, then, when its message starts
    on the next line, the first lines of that message. None when they end otherwise: a traceback a
    program logged and survived, followed by what it said after, did not end it."""
    start = max((i for i, line in enumerate(lines) if TRACEBACK in line), default=None)
    if start is None:
        return None
    index = next((i for i in range(start + 1, len(lines)) if is_exception_line(lines[i])), None)
    if index is None:
        return None
    message = lines[index + 1:]
    if not all(line[:1].isspace() or is_frame(line) for line in message):
        return None
    said = [lines[index].strip()]
    if opens_empty(lines[index]):
        said += [line.strip() for line in message if not is_frame(line)][:count - 1]
    return said
