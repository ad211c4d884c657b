"""Where a command's time went: the programs it waited on (vf-eval, vf-validate), and rlpilot around them.

A person waiting on `eval run` or `env check` should be able to tell vf-eval's minute from rlpilot's, so
those commands carry a `TimingSplit` in their result (the CLI, `--json` and the agent show the same one).
Honest by construction: a program's share is its child process's wall time (vf-eval reports no duration
of its own), and rlpilot's is the rest of the command's wall time, whether or not a part of it is named.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, Field

OTHER = "other"  # rlpilot's time that no named part covers: threads, result models, the gaps between parts
STARTING = "starting rlpilot"  # from the command's start (the CLI's own) to the tool's first line


class Span(BaseModel):
    what: str
    seconds: float


class TimingSplit(BaseModel):
    """The command's wall time = the programs' + rlpilot's; rlpilot's = its parts' (OTHER included)."""

    seconds: float = Field(description="The command's wall time, from its start to its result.")
    programs: list[Span] = Field(description="The programs it waited on, each its child process's wall time.")
    rlpilot: float = Field(description="The rest of the wall time: rlpilot's own, around the programs.")
    parts: list[Span] = Field(description=f"What rlpilot's time went to; {OTHER!r} is what no part names.")

    def render(self) -> str:
        waited = sum(p.seconds for p in self.programs)
        parts = ", ".join(f"{p.what} {p.seconds:.1f} s" for p in self.parts if round(p.seconds, 1))
        ours = f"rlpilot {self.rlpilot:.1f} s"
        if self.programs:
            share = f", {self.rlpilot / waited:.0%} as long" if waited else ""
            ours = f"rlpilot around {'it' if len(self.programs) == 1 else 'them'} {self.rlpilot:.1f} s{share}"
        programs = ", ".join(f"{p.what} {p.seconds:.1f} s" for p in self.programs)
        return "; ".join(filter(None, [programs, ours])) + (f" ({parts})" if parts else "")


class Stopwatch:
    """Times one command. `started`: when it began (time.monotonic()), where that is before the tool's
    first line (the CLI's start, so its imports count as rlpilot's); None starts it now."""

    def __init__(self, started: float | None = None) -> None:
        now = time.monotonic()
        self.started = now if started is None else started
        self._programs: list[tuple[str, float]] = []
        self._parts: dict[str, float] = {STARTING: now - self.started} if started is not None else {}

    @contextmanager
    def part(self, what: str) -> Iterator[None]:
        """A named part of rlpilot's own time; a program must not run inside one, or it counts twice."""
        began = time.monotonic()
        try:
            yield
        finally:
            self._parts[what] = self._parts.get(what, 0.0) + time.monotonic() - began

    def program(self, what: str, seconds: float) -> None:
        """A program the command waited on, by its child process's wall time (ProcessResult.seconds)."""
        self._programs.append((what, seconds))

    def split(self) -> TimingSplit:
        """The figures so far, to the millisecond; each sum holds to within a millisecond per figure rounded."""
        total = time.monotonic() - self.started
        ours = total - sum(seconds for _, seconds in self._programs)
        parts = [*self._parts.items(), (OTHER, ours - sum(self._parts.values()))]

        def spans(pairs: list[tuple[str, float]]) -> list[Span]:
            return [Span(what=what, seconds=round(seconds, 3)) for what, seconds in pairs]

        return TimingSplit(seconds=round(total, 3), programs=spans(self._programs), rlpilot=round(ours, 3),
                           parts=spans(parts))
