"""`rlpilot train watch RUN [--every 5m]`: follow a run, diagnose each new batch of metrics.

Every check reads the run's status and metrics (the same as `train status`), runs `diagnose` on
them when there are new steps, and reports each finding the first time it appears, as an event
the surface shows at once (terminal now, Slack later). The watch ends when the run ends, after
`--rounds` checks, or when a finding says the run is not worth its GPUs any more: an error
finding (flat reward, non-finite values, out of memory, a mismatch-KL bug). It does not stop the
run itself: it ends with the question, and `train stop` (which the user confirms) does it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.contract import Context, ToolResult
from tools.diagnose.tool import DiagnoseInput, diagnose
from tools.errors import BadInput
from tools.training import records
from tools.training.records import Target
from tools.training.runs import RunArg, RunInput, StatusResult, train_status

_EVERY = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h)?")
_SECONDS = {"s": 1, "m": 60, "h": 3600, None: 1}
MIN_EVERY_SECONDS = 1.0


class WatchInput(BaseModel):
    run: RunArg
    every: Annotated[str, Field(description="How often to check: 30s, 5m, 1h.")] = "5m"
    rounds: Annotated[int | None, Field(ge=1, description="Stop watching after this many checks "
                                                        "(default: until the run ends or needs a decision).")] = None


class Seen(BaseModel):
    code: str
    severity: str
    at_step: int | None
    summary: str
    stop_when: list[str] = Field(default_factory=list, description="What would show the problem is fixed.")


class WatchResult(ToolResult):
    run: str
    target: Target
    checks: int
    status: str
    ended: bool
    last_step: int | None
    findings: list[Seen] = Field(description="Every finding in the order it first appeared.")
    stop_suggested: bool
    reason: str | None = None
    samples: str | None = Field(None, description="Where to read sampled rollouts early on.")
    next: str

    def render(self) -> str:
        checks = f"{self.checks} check{'s' if self.checks != 1 else ''}"
        lines = [f"run {self.run} ({self.target}): {self.status} at step {self.last_step}, {checks}"]
        lines += [f"  {f.severity:<7} {f.code} (from step {f.at_step}): {f.summary}" for f in self.findings]
        if self.samples:
            lines.append(f"samples: {self.samples}")
        return "\n".join(lines + [f"next: {self.next}"])

    def exit_code(self) -> int:
        return 1 if self.stop_suggested else 0


def every_seconds(text: str) -> float:
    match = _EVERY.fullmatch(text.strip())
    if not match:
        raise BadInput("bad-interval", f"{text!r} is not an interval", "write e.g. 30s, 5m or 1h")
    return max(MIN_EVERY_SECONDS, float(match.group(1)) * _SECONDS[match.group(2)])


def train_watch(args: WatchInput, ctx: Context) -> WatchResult:
    pause = every_seconds(args.every)
    record = records.load(ctx.workspace, records.check_run_id(args.run))
    config = Path(record.config) if record and Path(record.config).is_file() else None
    seen: dict[str, Seen] = {}
    diagnosed_step: int | None = None
    checks = 0
    reason = None
    while True:
        checks += 1
        status = train_status(RunInput(run=args.run), ctx)
        last = status.metrics.last_step
        ctx.emit({"type": "progress", "label": f"run {args.run} step", "done": last or 0, "total": status.max_steps})
        if status.metrics.source and last is not None and last != diagnosed_step:
            diagnosed_step = last
            found = diagnose(DiagnoseInput(source=Path(status.metrics.source), config=config), ctx).findings
            for finding in found:
                if finding.code == "healthy" or finding.code in seen:
                    continue
                seen[finding.code] = Seen(code=finding.code, severity=finding.severity, at_step=last,
                                          summary=finding.summary, stop_when=finding.stop_when)
                ctx.emit({"type": "log", "line": f"{finding.severity} {finding.code} at step {last}: "
                          f"{finding.summary}", "finding": seen[finding.code].model_dump()})
            errors = [f for f in found if f.severity == "error"]
            if errors and status.running:
                reason = f"{errors[0].code}: {errors[0].summary}"
                break
        if not status.running or (args.rounds and checks >= args.rounds):
            break
        time.sleep(pause)
    return WatchResult(
        run=args.run, target=status.target, checks=checks, status=status.status, ended=not status.running,
        last_step=status.metrics.last_step, findings=list(seen.values()), stop_suggested=reason is not None,
        reason=reason, samples=_samples(status, ctx), next=_next(args.run, status, reason),
    )


def _samples(status: StatusResult, ctx: Context) -> str | None:
    if status.target == "hosted":
        step = status.metrics.last_step
        return f"`prime train rollouts {status.run} --step {step}`" if step else None
    record = records.load(ctx.workspace, status.run)
    if record is None:
        return None
    traces = sorted(records.outputs(record, ctx.workspace).glob("**/rollouts/step_*/**/*.jsonl"))
    return f"`rlpilot eval samples {traces[-1]}`" if traces else None


def _next(run: str, status: StatusResult, reason: str | None) -> str:
    if reason:
        return f"this run is unlikely to recover ({reason}); stop it with `rlpilot train stop {run}`, " \
               f"apply the deltas from `rlpilot diagnose {status.metrics.source}`, and relaunch"
    if status.running:
        return f"keep watching: `rlpilot train watch {run}`"
    return f"the run ended ({status.status}); `rlpilot diagnose {status.metrics.source}` for the full picture"
