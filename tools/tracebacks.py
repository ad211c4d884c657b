"""What a Python program that failed said about it: the exception its output ends with.

A child's last lines are not that. NLTK's LookupError prints an empty message line, then a banner
of asterisks around "Resource 'words' not found." and a list of the folders it searched; a
program's last three lines were that list (verifiers' wordle, run offline). The rules here were
tried on the shapes real programs print (see tests/test_tracebacks.py): chained exceptions,
exception groups, a finalizer's error after the crash, a traceback logged and survived.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TRACEBACK = "Traceback (most recent call last)"  # also inside "Exception Group Traceback (...)"
# Python printed a finalizer's error and went on: that traceback did not end the program.
_IGNORED = "Exception ignored in"
# An exception's own line closes a traceback: `Name: message`, or a bare dotted name (`KeyboardInterrupt`).
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*"
                             r"(?:Error|Exception|Exit|Interrupt|Failure|Group|Timeout|Expired|Iteration)(?::.*)?$")
# The bars an exception group's traceback is drawn in (`  | ValueError: ...`), taken off before reading.
_GROUP_BARS = re.compile(r"^(?: *\|(?: |$))+")
# Lines that frame a message and say nothing: blank, rules of * = # ~ - +, a group's `+---- 1 ----`.
_FRAME = re.compile(r"^[\s*=#~+|-]*(?:\d+[\s+-]*)?$")
# What a command-line program prints as its last word (argparse, uv, git, `sys.exit("error: ...")`).
_LAST_WORD = re.compile(r"^(?:error|fatal):")


def _body(line: str) -> str:
    return _GROUP_BARS.sub("", line)


def is_frame(line: str) -> bool:
    return _FRAME.match(line) is not None


def starts_traceback(line: str, previous: str) -> bool:
    """A traceback begins here, and not one of a finalizer's that Python went on past."""
    return TRACEBACK in line and not previous.startswith(_IGNORED)


def exception_text(line: str) -> str | None:
    """The exception a line names, when it is a traceback's closing line, else None."""
    body = _body(line)
    return body.strip() if not body[:1].isspace() and _EXCEPTION_LINE.match(body.rstrip()) else None


def opens_empty(text: str) -> bool:
    """An exception whose message starts on the next line (`LookupError:` and nothing after)."""
    return text.endswith(":")


def continues_message(line: str) -> bool:
    """A line of a message that opened empty: indented under it (NLTK's), never a frame."""
    return _body(line)[:1].isspace() and not is_frame(line)


def raised(lines: Sequence[str], count: int) -> list[str] | None:
    """The exception `lines` end with, as at most `count` lines: its own, then, when its message
    opens on the next line, the first lines of that message. None when no traceback ended them: a
    program that logged one and went on to print `error: ...` ended with that."""
    starts = [i for i, line in enumerate(lines) if starts_traceback(line, lines[i - 1] if i else "")]
    if not starts:
        return None
    found = next(((i, text) for i in range(starts[-1] + 1, len(lines))
                  if (text := exception_text(lines[i])) is not None), None)
    if found is None:
        return None
    index, text = found
    after = lines[index + 1:]
    if any(_LAST_WORD.match(line) for line in after):
        return None
    said = [text]
    if opens_empty(text):
        for line in after:
            if not (continues_message(line) or is_frame(line)):
                break
            if continues_message(line):
                said.append(_body(line).strip())
    return said[:count]
