"""`rlpilot train watch RUN [--every 5m] [--budget-usd X]`: follow a run, report what is new as it comes.

A `Watcher` polls: each `poll()` reads only what is new since the last one (a hosted run's
metrics past the last step it holds, `prime train metrics --min-step`; a local run's
metrics.jsonl past the byte offset it reached; a run where its logger keeps it, `train watch PATH`: a
`.wandb` file past its last whole record, an event file past its last event, a Trackio run's rows past
the last id), adds it to the series it keeps, judges the run
with diagnosis' signatures and returns the events that are new: a finding the first time it
appears, a budget warning, a stall, the run's end. `train watch` is its foreground loop; a chat
session runs the same `Watcher` in the background (agent/chat/watching.py).

Budget: with `--budget-usd`, each hosted poll reads the spend (`prime train usage`); when the
spend, or the spend projected to `max_steps`, reaches the budget, the watch ends with the stop
question. It never stops a run by itself: `--yes` on the command line is the user's answer
given ahead, and in a chat the assistant proposes `train_stop`, which the user confirms.

Stalls are judged from the platform's own clock, never this machine's: the step count and
`last_updated_at` of `prime train progress`, and the timestamps of the metric rows.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field

from tools.diagnose.configkeys import ConfigView, open_config
from tools.diagnose.readers import detect, read_metrics_jsonl, tfevents, trackio_db, wandb_run
from tools.diagnose.readers.places import place_kind
from tools.diagnose.readers.records import HINT, pick_run
from tools.diagnose.series import Bad, Collector, Run, one_per_step
from tools.diagnose.stats import Sweeps, continuing
from tools.diagnose.tool import judge
from tools.evals.samples import Sample
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.eras import Target
from tools.framework.errors import BadInput
from tools.framework.findings import Severity
from tools.framework.playbook import STALL_FACTOR
from tools.io import files
from tools.training import hosted, local, records, slurm
from tools.training.episodes import LEGACY_TRACES, STREAM
from tools.training.rollouts import TrainingFinding, hacking_evidence, read_samples
from tools.training.runs import StopInput, StopResult, train_stop
from tools.training.spend import Spend, spend_from

_EVERY = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h)?")
_SECONDS = {"s": 1, "m": 60, "h": 3600, None: 1}
MIN_EVERY_SECONDS = 1.0
BUDGET_WARNING = 0.8  # a warning once the spend passes this share of the budget
# `stalled`: no new step for STALL_FACTOR times the usual step time while the platform still hears
# from the run, the same rule as diagnosis' own.
STALL_MIN_SECONDS = 600.0  # a short run's step time is too noisy to judge a gap of a few minutes
_TIME_KEYS = ("timestamp", "time", "_timestamp", "created_at", "createdAt")
_HOSTED_ACTIVE = {"QUEUED", "PENDING", "RUNNING", "PAUSING"}


class WatchInput(BaseModel):
    run: Annotated[str, Arg(positional=True, metavar="RUN"), Field(
        min_length=1, description="The run id, or the file or folder its logger writes: W&B, TensorBoard, a "
                                  "Trackio .db, a metrics.jsonl.")]
    run_name: Annotated[str | None, Arg(flag="--run"), Field(
        description="Which run, when the path holds several.")] = None
    every: Annotated[str, Field(description="How often to check: 30s, 5m, 1h.")] = "5m"
    rounds: Annotated[int | None, Field(ge=1, description="Checks to make (default: until the run ends or needs "
                                                        "a decision).")] = None
    budget_usd: Annotated[float | None, Field(gt=0, description="Ask to stop when the spend or its projection "
                                                                "reaches this (USD).")] = None
    yes: Annotated[bool, Arg(user_decision=True), Field(
        description="Stop the run if the watch ends with the stop question (the user's answer, given ahead).")] = False


class WatchEvent(BaseModel):
    """Something new a poll found; `stop` marks the ones that end the watch with the stop question."""

    kind: Literal["finding", "budget", "stalled", "ended"]
    code: str
    severity: Severity
    at_step: int | None
    summary: str
    stop: bool = False
    stop_when: list[str] = Field(default_factory=list, description="What would show the problem is fixed.")

    def line(self) -> str:
        where = f" at step {self.at_step}" if self.at_step is not None else ""
        return f"{self.severity} {self.code}{where}: {self.summary}"


# -- what a poll reads ------------------------------------------------------------------------


@dataclass
class Snapshot:
    """One poll's reading of the run: its state, and only the metric rows that are new."""

    status: str
    running: bool
    max_steps: int | None = None
    lines: Iterable[bytes] | Iterable[str] = ()  # the new metric rows, one JSON object a line, read once
    step_times: list[tuple[int, datetime]] = field(default_factory=list)  # from the rows' own timestamps
    latest_step: int | None = None
    updated_at: datetime | None = None  # the platform's clock
    spend: Spend | None = None
    sampled: list[TrainingFinding] = field(default_factory=list)  # read from newly sampled rollouts
    part: Run | None = None  # the new rows already read into series, by a reader of a logger's file


class Source(Protocol):
    target: str
    source: str | None  # what is read, for a run followed where its logger keeps it

    def read(self) -> Snapshot: ...


class FileSource:
    """A metrics.jsonl that grows: each read parses the complete lines past the last offset.

    `path` may be a function that finds the file: a run that just started has written none yet.
    """

    target = "local"

    def __init__(self, path: Path | Callable[[], Path | None] | None, status: Any = None,
                 max_steps: int | None = None, source: str | None = None):
        self._find = path if callable(path) else (lambda: path)
        self.path: Path | None = None
        self.offset = 0
        self.source = source
        self._status = status or (lambda: ("running", True))
        self.max_steps = max_steps

    def read(self) -> Snapshot:
        status, running = self._status()
        return Snapshot(status=status, running=running, max_steps=self.max_steps, lines=self._new_lines())

    def _new_lines(self) -> Iterator[bytes]:
        """Streamed, so that the first read of a long run holds no more of it than diagnose does; the bytes
        past the last offset only, undecoded (the reader parses bytes)."""
        self.path = self.path or self._find()
        if self.path is None or not self.path.exists():
            return
        with files.open_regular(self.path) as handle:
            handle.seek(self.offset)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    return  # a line being written is read next time
                self.offset += len(raw)
                yield raw


class HostedSource:
    """A hosted run: status, progress, the metrics past the last step held, and the spend when a budget asks."""

    target = "hosted"
    source = None

    def __init__(self, run: str, ctx: Context, with_spend: bool):
        self.run, self.ctx, self.with_spend = run, ctx, with_spend
        self.last_step: int | None = None
        self.last_sampled: int | None = None
        self.first_samples: list[Sample] | None = None

    def read(self) -> Snapshot:
        # The metrics first: the progress and spend read after them cover at least the steps they hold.
        new_rows = hosted.new_metrics(self.run, self.last_step, self.ctx)
        with ThreadPoolExecutor(max_workers=3) as pool:  # CLI calls of a second or more each
            run = pool.submit(hosted.get_run, self.run, self.ctx)
            progress = pool.submit(hosted.progress, self.run, self.ctx)
            usage = pool.submit(hosted.usage, self.run, self.ctx) if self.with_spend else None
            run_data, progress_data = run.result(), progress.result()
            usage_data = usage.result() if usage else None
        steps = [row["step"] for row in new_rows if isinstance(row.get("step"), int)]
        if steps:
            self.last_step = max(steps + [self.last_step or 0])
        latest = progress_data.get("latest_step")
        latest = latest if isinstance(latest, int) else self.last_step
        spend = spend_from(usage_data, latest, run_data.get("max_steps")) if usage_data else None
        times = [(row["step"], at) for row in new_rows if isinstance(row.get("step"), int)
                 for at in [next((_when(row[key]) for key in _TIME_KEYS if key in row), None)] if at is not None]
        return Snapshot(status=run_data["status"], running=run_data["status"] in _HOSTED_ACTIVE,
                        max_steps=run_data.get("max_steps"), lines=[json.dumps(row) for row in new_rows],
                        step_times=times, latest_step=latest,
                        updated_at=_when(progress_data.get("last_updated_at")), spend=spend,
                        sampled=self._read_samples(progress_data.get("steps_with_samples") or []))

    def _read_samples(self, sampled: list[int]) -> list[TrainingFinding]:
        """Reward hacking read from the rollouts of each newly sampled step, against the first one sampled."""
        newest = max(sampled, default=None)
        if newest is None or (self.last_sampled is not None and newest <= self.last_sampled):
            return []
        self.last_sampled = newest
        samples = read_samples(hosted.rollouts(self.run, newest, self.ctx).get("samples") or [])
        if self.first_samples is None:
            first = min(sampled)
            self.first_samples = samples if first == newest else read_samples(
                hosted.rollouts(self.run, first, self.ctx).get("samples") or [])
        found = hacking_evidence(samples, newest, self.first_samples if min(sampled) < newest else None)
        return [found] if found else []


class PlaceSource:
    """A run where its logger keeps it, followed as it grows: each read parses only the records written
    since the last (`bytes_read` counts what was read). A run has ended when its logger says so (W&B's exit
    record); event files and Trackio rows carry no such mark, so they are watched until `--rounds`."""

    target = "local"

    def __init__(self, path: Path, kind: str, run: str | None):
        self.path, self.kind = path, kind
        self.bytes_read = 0
        self._cursors: dict[Path, wandb_run.Cursor] = {}
        self._followers: dict[Path, tfevents.Follower] = {}
        self._last_id = 0
        runs = {"wandb": wandb_run.runs_in, "tensorboard": tfevents.runs_in, "trackio": trackio_db.runs_in}[kind](path)
        if not runs:
            raise BadInput("no-steps", f"{path}: no {FOLLOWED[kind]} written here yet", HINT)
        self.run = pick_run(path, list(runs), run)
        self.source = f"{FOLLOWED[kind]} {self.run} at {path}"
        # Trackio's listing scans the whole table: the run's database and name are found once.
        self._trackio_run = runs[self.run] if kind == "trackio" else None

    def read(self) -> Snapshot:
        collector = Collector()
        ended = {"wandb": self._wandb, "tensorboard": self._events, "trackio": self._trackio}[self.kind](collector)
        return Snapshot(status="finished" if ended else "being written", running=not ended, part=collector.finish())

    def _wandb(self, collector: Collector) -> bool:
        files = [file for file in wandb_run.runs_in(self.path).get(self.run, [])
                 if file.stat().st_size >= len(wandb_run.HEADER)]  # a file just created has no header yet
        for file in files:
            cursor = self._cursors.setdefault(file, wandb_run.Cursor())
            before = cursor.bytes_read
            wandb_run.read_file(file, collector, file.name, cursor)
            self.bytes_read += cursor.bytes_read - before
        return bool(files) and self._cursors[files[-1]].ended  # a resumed run's newest folder decides

    def _events(self, collector: Collector) -> bool:
        for file in tfevents.runs_in(self.path).get(self.run, []):
            follower = self._followers.setdefault(file, tfevents.Follower(file))
            before = follower.bytes_read
            follower.read(collector, file.name)
            self.bytes_read += follower.bytes_read - before
        return False

    def _trackio(self, collector: Collector) -> bool:
        assert self._trackio_run is not None
        file, name = self._trackio_run
        self._last_id, read = trackio_db.read_rows(file, name, collector, self._last_id)
        self.bytes_read += read
        return False


FOLLOWED = {"wandb": "W&B run", "tensorboard": "TensorBoard run", "trackio": "Trackio run"}


def place_source(path: Path, run: str | None) -> Source:
    """The source that follows what `path` holds: a W&B run, event files, a Trackio run or a metrics.jsonl."""
    if not path.exists():
        raise BadInput("source-not-found", f"{path} does not exist, and no run has that id",
                       "pass a run id, or a path to a W&B run folder, an event file, a Trackio .db or a metrics.jsonl")
    kind = place_kind(path)  # a folder as diagnose reads it: the first of the places it holds
    if kind in FOLLOWED:
        return PlaceSource(path, kind, run)
    if path.is_file() and kind is None and detect(path) == "metrics-jsonl":
        return FileSource(path, source=f"metrics JSON lines at {path}")
    raise BadInput("cannot-follow", f"{path} is not a run that can be followed as it grows",
                   "point at a W&B run folder or .wandb file, a TensorBoard event file or its folder, a Trackio .db "
                   "or a metrics.jsonl; `rlpilot diagnose` reads the others whole")


def _when(value: Any) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


# -- what the watch keeps -----------------------------------------------------------------------


class RunSoFar:
    """The run's canonical series, grown by each poll's new rows only (never read again from the start), and
    the sweeps of its last judgement, which the next one goes on from (so a series it keeps only grows; one whose
    steps come again is replaced). On the same bytes, however the polls cut them, it keeps what diagnose keeps."""

    def __init__(self) -> None:
        self.run = Collector().finish()
        self.sweeps = Sweeps()

    def add(self, lines: Iterable[bytes] | Iterable[str]) -> bool:
        """Add metrics.jsonl rows; whether they held anything new."""
        collector = Collector()
        read_metrics_jsonl(lines, collector, "watch")
        return self.merge(collector.finish())

    def merge(self, part: Run) -> bool:
        """Add rows already read into series; whether they held anything new."""
        if not len(part.steps) and not part.ooms:
            return False
        held = self.run
        for name, new in part.series.items():
            old = held.series.get(name)
            if old is None or not old.steps:
                held.series[name] = new
            elif not new.steps:
                continue  # a share derived from counts that met on no step of this poll (_derive_group_shares)
            elif new.steps[0] > old.steps[-1]:  # as a poll mostly finds it: the series grows, its sweeps go on
                old.steps.extend(new.steps)
                old.values.extend(new.values)
            else:
                # A step held already comes again (a resumed run logs again the steps after its checkpoint; the
                # other component's row of a step comes a poll later) or comes late: from there on, the series
                # diagnose makes of the same rows, as a new series, so that its sweeps start afresh (they go on
                # only over a series that grew).
                cut = bisect_left(old.steps, new.steps[0])
                steps, values = one_per_step(old.steps[cut:] + new.steps, old.values[cut:] + new.values, name)
                held.series[name] = replace(old, steps=old.steps[:cut] + steps, values=old.values[:cut] + values)
        if held.steps and part.steps and part.steps[0] <= held.steps[-1]:
            cut = bisect_left(held.steps, part.steps[0])
            held.steps = held.steps[:cut] + array("q", sorted({*held.steps[cut:], *part.steps}))
        else:
            held.steps.extend(part.steps)
        for name, bad in part.nonfinite.items():
            kept = held.nonfinite.setdefault(name, Bad(first=bad.first))
            kept.count += bad.count
            kept.last = bad.last
        held.ooms.extend(part.ooms)
        held.notes.extend(note for note in part.notes if note not in held.notes)
        return True


@dataclass
class StallClock:
    """When the latest step appeared by the platform's clock, and how long steps usually take."""

    step: int | None = None
    seen_at: datetime | None = None
    per_step: list[float] = field(default_factory=list)

    def step_seen(self, step: int, at: datetime) -> None:
        if self.step is not None and self.seen_at is not None and step > self.step:
            seconds = (at - self.seen_at).total_seconds() / (step - self.step)
            if seconds > 0:
                self.per_step.append(seconds)
        if self.step is None or step > self.step:
            self.step, self.seen_at = step, at

    def gap(self, now: datetime | None) -> tuple[float, float] | None:
        """(seconds since the latest step, median seconds per step), when both are known."""
        if now is None or self.seen_at is None or not self.per_step:
            return None
        return (now - self.seen_at).total_seconds(), statistics.median(self.per_step)


class Watcher:
    """Polls a run; each `poll()` returns only the events that are new."""

    def __init__(self, run: str, source: Source, *, budget_usd: float | None = None,
                 config: ConfigView | None = None):
        self.run, self.source, self.budget_usd, self.config = run, source, budget_usd, config
        self.so_far = RunSoFar()
        self.clock = StallClock()
        self.seen: dict[str, WatchEvent] = {}
        self.snapshot: Snapshot | None = None
        self.polls = 0

    @property
    def last_step(self) -> int | None:
        return self.so_far.run.last_step

    def poll(self) -> list[WatchEvent]:
        self.polls += 1
        snapshot = self.snapshot = self.source.read()
        grew = self.so_far.merge(snapshot.part) if snapshot.part is not None else self.so_far.add(snapshot.lines)
        for step, at in snapshot.step_times:
            self.clock.step_seen(step, at)
        if snapshot.latest_step is not None and snapshot.updated_at is not None:
            self.clock.step_seen(snapshot.latest_step, snapshot.updated_at)
        events = [*(self._findings(snapshot) if grew else []), *self._sampled(snapshot), *self._budget(snapshot),
                  *self._stall(snapshot)]
        if not snapshot.running:
            events.append(WatchEvent(kind="ended", code="ended", severity="info", at_step=self.last_step,
                                     summary=f"the run is {snapshot.status}"))
        return [event for event in events if self._new(event)]

    def _new(self, event: WatchEvent) -> bool:
        key = f"{event.kind}:{event.code}"
        if key in self.seen:
            return False
        self.seen[key] = event
        return True

    def _findings(self, snapshot: Snapshot) -> list[WatchEvent]:
        """The diagnosis as it stands; the stop question comes with its primary finding, when that is an error."""
        with continuing(self.so_far.sweeps):
            primary, found = judge(self.so_far.run, self.config)
        lead = primary.code if primary else None
        return [WatchEvent(kind="finding", code=f.code, severity=f.severity, at_step=self.last_step,
                           summary=f.summary + (" (what explains the run)" if f.code == lead else ""),
                           stop_when=f.stop_when, stop=f.code == lead and f.severity == "error" and snapshot.running)
                for f in found if f.code != "healthy"]

    def _sampled(self, snapshot: Snapshot) -> list[WatchEvent]:
        return [WatchEvent(kind="finding", code=f.code, severity=f.severity, at_step=f.at_step,
                           summary=f"{f.summary} (`rlpilot train rollouts {self.run} --step {f.at_step}`)")
                for f in snapshot.sampled]

    def _budget(self, snapshot: Snapshot) -> list[WatchEvent]:
        spend, budget = snapshot.spend, self.budget_usd
        if spend is None or budget is None:
            return []
        if spend.total_usd >= budget:
            return [WatchEvent(kind="budget", code="budget-reached", severity="error", at_step=spend.steps,
                               stop=snapshot.running, summary=f"spent ${spend.total_usd:.2f} of the "
                                                              f"${budget:.2f} budget")]
        if spend.projected_usd is not None and spend.projected_usd >= budget:
            return [WatchEvent(kind="budget", code="budget-projected", severity="error", at_step=spend.steps,
                               stop=snapshot.running,
                               summary=f"projected ${spend.projected_usd:.2f} at {spend.max_steps} steps, over the "
                                       f"${budget:.2f} budget (${spend.total_usd:.2f} spent so far)")]
        if spend.total_usd >= BUDGET_WARNING * budget:
            return [WatchEvent(kind="budget", code="budget-warning", severity="warning", at_step=spend.steps,
                               summary=f"spent ${spend.total_usd:.2f}, {spend.total_usd / budget:.0%} of the "
                                       f"${budget:.2f} budget")]
        return []

    def _stall(self, snapshot: Snapshot) -> list[WatchEvent]:
        gap = self.clock.gap(snapshot.updated_at)
        if not snapshot.running or gap is None:
            return []
        since, per_step = gap
        if since < max(STALL_FACTOR * per_step, STALL_MIN_SECONDS):
            return []
        return [WatchEvent(kind="stalled", code="stalled", severity="error", at_step=self.clock.step, stop=True,
                           summary=f"no step since step {self.clock.step} for {since / 60:.0f} min while the platform "
                                   f"still hears from the run (steps took {per_step:.0f} s); read "
                                   f"`rlpilot train logs {self.run}` for where it hangs",
                           stop_when=["new steps arrive at the usual pace"])]


def watcher_for(run: str, ctx: Context, budget_usd: float | None = None, run_name: str | None = None) -> Watcher:
    """A watcher for a run rlpilot launched (its record says where), a path to a run being written where its
    logger keeps it, or else any hosted run. A run id that also names a path in the workspace is the run."""
    try:
        record, is_id = records.load(ctx.workspace, records.check_run_id(run)), True
    except BadInput:
        record, is_id = None, False
    if record is None and (not is_id or ctx.resolve(run).exists()):
        if budget_usd is not None:
            raise BadInput("budget-is-hosted-only", f"{run} is a file being written: it has no platform spend to "
                           "watch", "drop --budget-usd")
        return Watcher(run, place_source(ctx.resolve(run), run_name))
    config = open_config(Path(record.config)) if record and Path(record.config).is_file() else None
    if record is not None and record.target in ("local", "slurm"):
        if budget_usd is not None:
            raise BadInput("budget-is-hosted-only", f"run {run} is a {record.target} run: it has no platform spend "
                           "to watch", "drop --budget-usd; stop it with `rlpilot train stop` when you want")

        def status() -> tuple[str, bool]:
            if record.target == "slurm":
                job = slurm.job_state(record.job_id)
                return job.describe(record.stopped_at is not None), job.active
            state = local.state(record, ctx.workspace)
            return state, state == "running"

        steps = record.summary.get("max_steps")
        return Watcher(run, FileSource(lambda: local.metrics_file(record, ctx.workspace), status,
                                       steps if isinstance(steps, int) else None), config=config)
    return Watcher(run, HostedSource(run, ctx, with_spend=budget_usd is not None), budget_usd=budget_usd,
                   config=config)


# -- the foreground loop ----------------------------------------------------------------------


class StopQuestion(BaseModel):
    kind: Literal["confirm"] = "confirm"
    prompt: str
    options: list[str] = Field(default_factory=lambda: ["yes", "no"])
    detail: str


class WatchResult(ToolResult):
    run: str
    target: Target
    source: str | None = Field(None, description="What was read, for a run followed where its logger keeps it.")
    checks: int
    status: str
    ended: bool
    last_step: int | None
    findings: list[WatchEvent] = Field(description="Every event in the order it first appeared.")
    stop_suggested: bool
    reason: str | None = None
    question: StopQuestion | None = Field(None, description="The stop question the watch ends with; the run stops "
                                                            "only on a yes (`train stop`, or --yes here).")
    stopped: StopResult | None = None
    spend: Spend | None = None
    budget_usd: float | None = None
    samples: str | None = Field(None, description="Where to read sampled rollouts early on.")
    next: str

    def render(self) -> str:
        checks = f"{self.checks} check{'s' if self.checks != 1 else ''}"
        lines = [f"run {self.run} ({self.target}): {self.status} at step {self.last_step}, {checks}"]
        if self.spend:
            budget = f" (budget ${self.budget_usd:.2f})" if self.budget_usd else ""
            lines.append(f"  spend {self.spend.line()}{budget}")
        if self.source:
            lines.append(f"  read {self.source}")
        lines += [f"  {event.line()}" for event in self.findings]
        if self.samples:
            lines.append(f"samples: {self.samples}")
        if self.question and not self.stopped:
            lines.append(f"question: {self.question.prompt} ({self.question.detail})")
        if self.stopped:
            lines.append(f"stopped: {self.stopped.render()}")
        return "\n".join(lines + [f"next: {self.next}"])

    def exit_code(self) -> int:
        return 1 if self.stop_suggested and not self.stopped else 0


def every_seconds(text: str) -> float:
    match = _EVERY.fullmatch(text.strip())
    if not match:
        raise BadInput("bad-interval", f"{text!r} is not an interval", "write e.g. 30s, 5m or 1h")
    return max(MIN_EVERY_SECONDS, float(match.group(1)) * _SECONDS[match.group(2)])


def train_watch(args: WatchInput, ctx: Context) -> WatchResult:
    pause = every_seconds(args.every)
    watcher = watcher_for(args.run, ctx, args.budget_usd, args.run_name)
    if args.yes and watcher.source.source is not None:
        raise BadInput("cannot-stop-a-file", f"{args.run} is a file being written, not a run rlpilot can stop",
                       "drop --yes; stop the run where it runs")
    events: list[WatchEvent] = []
    reason = None
    while True:
        new = watcher.poll()
        snapshot = watcher.snapshot
        assert snapshot is not None
        ctx.emit({"type": "progress", "label": f"run {args.run} step", "done": watcher.last_step or 0,
                  "total": snapshot.max_steps})
        for event in new:
            ctx.emit({"type": "log", "line": event.line(), "finding": event.model_dump()})
        events += new
        stopping = next((event for event in new if event.stop), None)
        if stopping:
            reason = f"{stopping.code}: {stopping.summary}"
            break
        if not snapshot.running or (args.rounds and watcher.polls >= args.rounds):
            break
        time.sleep(pause)
    question = None
    stopped = None
    if reason:
        question = StopQuestion(prompt=f"Stop run {args.run}?", detail=reason)
        if args.yes:
            stopped = train_stop(StopInput(run=args.run, yes=True), ctx)  # the user's yes, given ahead
    return WatchResult(
        run=args.run, target=watcher.source.target, source=watcher.source.source, checks=watcher.polls,
        status=snapshot.status, ended=not snapshot.running, last_step=watcher.last_step, findings=events,
        stop_suggested=reason is not None, reason=reason, question=question, stopped=stopped, spend=snapshot.spend,
        budget_usd=args.budget_usd, samples=_samples(args.run, watcher, ctx),
        next=_next(args.run, snapshot, reason, stopped),
    )


def _samples(run: str, watcher: Watcher, ctx: Context) -> str | None:
    if watcher.source.target == "hosted":
        step = watcher.last_step
        return f"`rlpilot train rollouts {run} --step {step}`" if step else None
    if watcher.source.source is not None:
        return None
    record = records.load(ctx.workspace, run)
    if record is None:
        return None
    outputs = records.outputs(record, ctx.workspace)
    written = any(outputs.glob(f"**/{STREAM}/*.jsonl*")) or any(outputs.glob(f"**/{LEGACY_TRACES}"))
    return f"`rlpilot train rollouts {run}`" if written else None


def _next(run: str, snapshot: Snapshot, reason: str | None, stopped: StopResult | None) -> str:
    if stopped:
        return f"the run was stopped ({stopped.status}); `rlpilot diagnose` on its metrics for the full picture"
    if reason:
        return (f"this run needs a decision ({reason}): the stop question is yours; `rlpilot train stop {run}` "
                "stops it (the assistant asks you first), then apply the deltas from `rlpilot diagnose` and relaunch")
    if snapshot.running:
        return f"keep watching: `rlpilot train watch {run}`"
    return f"the run ended ({snapshot.status}); `rlpilot diagnose` on its metrics for the full picture"
