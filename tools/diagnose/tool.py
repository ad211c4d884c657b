"""`rlpilot diagnose`: read a run's metrics, name what is going wrong, the fix, and when to stop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.configs.document import lookup
from tools.diagnose import stats
from tools.diagnose.compare import Comparison, compare
from tools.diagnose.configkeys import ConfigView, open_config
from tools.diagnose.readers import FORMATS, checkpoints_in, read
from tools.diagnose.series import CANONICAL, Run
from tools.diagnose.signatures import BY_CODE, SIGNATURES, Change
from tools.diagnose.story import Begun, Story, offered, rollback, tell
from tools.diagnose.view import View
from tools.diagnose.vocabulary import export_hints
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.deltas import Delta
from tools.framework.errors import BadInput
from tools.framework.findings import Severity, rank
from tools.framework.playbook import HEALTHY_MIN_POINTS, INTERLEAVED_STRETCH, INTERLEAVED_TIMES, RECENT
from tools.verifiers.refs import shown

# The series the signatures judge: a run without one of them is judged without that signature.
JUDGED = ("reward_mean", "entropy", "response_length", "truncated_frac", "grad_norm", "mismatch_kl", "eval_reward")


class DiagnoseInput(BaseModel):
    source: Annotated[
        Path,
        Arg(positional=True, metavar="SOURCE"),
        Field(description="A run's metrics file, log or folder, as prime-rl, Tinker, verl, TRL, W&B, TensorBoard "
                          "or Trackio write them, or `prime train metrics` JSON."),
    ]
    config: Annotated[
        Path | None,
        Arg(metavar="PATH"),
        Field(description="The run's TOML config: deltas then name its real keys and values."),
    ] = None
    compare: Annotated[
        Path | None,
        Arg(metavar="RUN_A"),
        Field(description="An earlier run (any accepted source) to compare this one against."),
    ] = None
    run: Annotated[
        str | None,
        Arg(metavar="NAME"),
        Field(description="Which run, where the source holds several: its id or name, as the error listing "
                          "them says."),
    ] = None


class RunFinding(BaseModel):
    code: str
    severity: Severity
    first_step: int | None = Field(description="the step where it began")
    steps: list[int] | None = Field(description="[first, last] step the finding covers")
    caused_by: str | None = Field(None, description="the code of the finding this one follows from")
    summary: str
    evidence: dict[str, float]
    causes: list[str]
    deltas: list[Delta]
    stop_when: list[str]
    look_at: list[str] = Field(default_factory=list, description="commands that show the rollouts to read")


class Coverage(BaseModel):
    code: str = Field(description="the story (a finding's code)")
    series: dict[str, str] = Field(description="canonical series read -> the metric it was read from")
    values: int = Field(description="the fewest values any of those series has")
    needs: int = Field(description="the fewest values the story is judged on (tools/framework/playbook.py)")
    judged: bool = Field(description="false: too few values, the story is unjudged (neither found nor ruled out)")


class Primary(BaseModel):
    code: str
    at_step: int | None = Field(description="where the trouble began: the earliest first step of the primary "
                                            "finding and of everything that follows from it")
    suspected_cause: str | None = Field(None, description="the earliest finding before the primary that it follows "
                                                          "from (a grad-norm spike before a collapse)")
    cause_step: int | None = Field(None, description="the step where the suspected cause began")
    rollback_step: int | None = Field(description="the last step before at_step the run can resume from (the "
                                                  "nearest checkpoint at or before it when checkpoints are known); "
                                                  "null when rolling back would not help")
    checkpoint: bool = Field(description="rollback_step is a checkpoint the run has (its folder or the platform's "
                                         "list shows it); false when it only is where `ckpt.interval` schedules one")
    remedy: str


class DiagnoseResult(ToolResult):
    source: str
    format: str
    steps: int = Field(description="how many distinct steps the source reports")
    first_step: int | None = Field(description="None when the source has no step (a log that ended first)")
    last_step: int | None
    metrics_found: list[str] = Field(description="canonical series found")
    metric_sources: dict[str, str] = Field(description="the metric each canonical series was read from")
    config_dialect: str | None = None
    notes: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list, description="metrics the run has that no reader maps")
    vocabularies: list[str] = Field(default_factory=list, description="the trainers whose metric vocabularies named "
                                    "the series read ('pattern': read by the name's pattern alone)")
    missing: list[str] = Field(default_factory=list, description="series the signatures judge that the run lacks")
    judged: bool = Field(True, description="false when nothing was found and the reward series is missing or too "
                                           "short for the trend stories: no verdict, healthy or not")
    stories: list[Coverage] = Field(default_factory=list, description="each story the run has the series for: "
                                    "what it read, over how many values, and whether that was enough")
    primary: Primary | None = Field(description="the finding that explains the run; null when it is healthy")
    findings: list[RunFinding] = Field(description="the primary first, then in the order they began")
    compare: Comparison | None = None

    def exit_code(self) -> int:
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def render(self) -> str:
        span = f": {self.first_step}-{self.last_step}" if self.steps else ""
        lines = [f"{self.source}  ({FORMATS.get(self.format, self.format)}, {self.steps} steps{span})",
                 f"metrics: {', '.join(self.metrics_found) or 'none recognised'}"
                 + (f" (names of {', '.join(self.vocabularies)})" if self.vocabularies else "")]
        if self.missing:
            lines.append(f"not in the source: {', '.join(self.missing)} (what they would show was not judged)")
        lines += [f"note: {note}" for note in self.notes]
        short = [f"{c.code} ({c.values} of {c.needs})" for c in self.stories if not c.judged]
        if short:
            lines.append(f"unjudged, too few values (has of needs): {', '.join(short)}")
        if self.primary:
            began = f" from step {self.primary.at_step}" if self.primary.at_step is not None else ""
            lines += ["", f"primary: {self.primary.code}{began}: {self.primary.remedy}"]
        for finding in self.findings:
            where = f" (steps {finding.steps[0]}-{finding.steps[1]})" if finding.steps else ""
            if finding.steps and finding.first_step is not None and finding.first_step != finding.steps[0]:
                where = f" (began at step {finding.first_step}; judged on steps {finding.steps[0]}-{finding.steps[1]})"
            lines += ["", f"{finding.severity.upper():7} {finding.code}{where}: {finding.summary}"]
            if finding.caused_by:  # its own causes would distract from the one it follows from
                lines.append(f"  follows:   {finding.caused_by}")
            else:
                lines += [f"  cause:     {cause}" for cause in finding.causes]
            for delta in finding.deltas:
                value = f"{delta.from_!r} -> {delta.to!r}, " if delta.to is not None else ""
                lines.append(f"  change:    {delta.key}: {value}{delta.change}  ({delta.why})")
            lines += [f"  read:      {command}" for command in finding.look_at]
            lines += [f"  stop when: {condition}" for condition in finding.stop_when]
        if self.compare:
            lines += ["", f"compared with {self.compare.source} ({self.compare.steps} steps)",
                      f"  {'series':18} {'before':>12} {'after':>12} {'change':>12}"]
            for row in self.compare.series:
                before = f"{row.a.recent_mean:.4g}" if row.a else "-"
                after = f"{row.b.recent_mean:.4g}" if row.b else "-"
                change = f"{row.change:+.4g}" if row.change is not None else ""
                lines.append(f"  {row.name:18} {before:>12} {after:>12} {change:>12}")
            for label, codes in (("appeared", self.compare.appeared), ("went away", self.compare.resolved),
                                 ("still there", self.compare.persisting)):
                lines.append(f"  {label}: {', '.join(codes) or 'none'}")
        return "\n".join(lines)


def diagnose(args: DiagnoseInput, ctx: Context) -> DiagnoseResult:
    config = open_config(ctx.resolve(args.config)) if args.config else None
    source = ctx.resolve(args.source)
    kind, run = read(source, args.run)
    _refuse_interleaved(source, run)
    run = _with_checkpoints(run, source, ctx)
    primary, findings = judge(run, config, _samples(source, kind))
    comparison = None
    if args.compare:
        earlier_source = ctx.resolve(args.compare)
        earlier_kind, earlier = read(earlier_source)
        _refuse_interleaved(earlier_source, earlier)
        comparison = compare(str(earlier_source), earlier_kind, earlier, _codes(judge(earlier, config)[1]), run,
                             _codes(findings), list(CANONICAL))
    notes = list(run.notes)
    stories = coverage(run)
    if "reward_mean" not in run.series:
        notes.append("no reward series found: the reward findings were not judged")
    return DiagnoseResult(
        source=str(source), format=kind, steps=len(run.steps), first_step=run.first_step, last_step=run.last_step,
        metrics_found=[name for name in CANONICAL if name in run.series],
        metric_sources={name: run.series[name].raw for name in CANONICAL if name in run.series},
        config_dialect=str(config.dialect) if config else None, notes=notes, unread=run.unread,
        vocabularies=_vocabularies(run),
        missing=[name for name in JUDGED if name not in run.series],
        judged=primary is not None or _judgeable(run), stories=stories, primary=primary, findings=findings,
        compare=comparison,
    )


def _refuse_interleaved(source: Path, run: Run) -> None:
    """Two runs written into one file go back and forth between their steps; one series of them mixed
    into one run would be judged as nonsense, so the file is refused with the places it went back."""
    for found in run.series.values():
        back = found.went_back
        if len(back) < INTERLEAVED_TIMES:
            continue
        stretches = [here[0] - before[0] for before, here in zip([(0, 0, 0), *back[:-1]], back, strict=True)]
        if stats.median(stretches) >= INTERLEAVED_STRETCH:
            continue
        places = "; ".join(f"step {high} then {step}" for _, high, step in back[:5])
        raise BadInput("interleaved-runs",
                       f"{source}: {shown(found.raw)} goes back and forth between steps {len(back)} times "
                       f"({places}{'; ...' if len(back) > 5 else ''}): two runs were written into one file, and "
                       "their steps would be mixed into one run",
                       "split the rows by run (its run id or name, or the process that wrote it) into one file per "
                       "run and diagnose each on its own; a resume, whose later rows restart at an earlier step "
                       "and run on, is read as one run (the later rows win)")


def coverage(run: Run) -> list[Coverage]:
    """What each story reads and whether it has the values it needs; stories the run lacks a series for
    are left out (`missing` names those series)."""
    stories = []
    for signature in SIGNATURES:
        found = [run.series[name] for name in signature.reads if name in run.series]
        if not signature.reads or len(found) < len(signature.reads):
            continue
        values = min(len(series) for series in found)
        stories.append(Coverage(code=signature.code, series={s.name: s.raw for s in found}, values=values,
                                needs=signature.min_steps, judged=values >= signature.min_steps))
    return stories


def judge(run: Run, config: ConfigView | None,
          samples: Callable[[int], str] | None = None) -> tuple[Primary | None, list[RunFinding]]:
    """The findings as one story: each linked to what it follows from, the primary first."""
    cap = config.value_of("max_off_policy_steps") if config else None
    view = View(run, cap) if isinstance(cap, int) and cap > 0 else View(run)
    hits = [(signature, hit) for signature in SIGNATURES if (hit := signature.check(view)) is not None]
    story = tell([Begun(s.code, hit.severity or s.severity, hit.first_step) for s, hit in hits])
    findings = []
    severity = {s.code: hit.severity or s.severity for s, hit in hits}
    for signature, hit in hits:
        reads = samples is not None and signature.reads_samples
        look_at = [samples(step) for step in dict.fromkeys(hit.steps or ())] if reads else []
        # What follows from an informational finding (groups all solved once the task is learned)
        # is part of it, not a problem of its own; and nothing informational asks for a change.
        level = "info" if severity[story.root(signature.code)] == "info" else severity[signature.code]
        findings.append(RunFinding(
            code=signature.code, severity=level, first_step=hit.first_step,
            steps=list(hit.steps) if hit.steps else None, caused_by=story.caused_by.get(signature.code),
            summary=hit.says, evidence=hit.evidence, causes=list(signature.causes),
            deltas=[] if level == "info" else _deltas(offered(signature.code, story), config, run.settings),
            stop_when=list(signature.stop_when), look_at=look_at,
        ))
    findings.sort(key=lambda f: (f.code != story.primary, f.first_step is None, f.first_step or 0, rank(f.severity)))
    if story.primary is None:
        # `healthy` means no error or warning; informational findings may stand beside it. Without a
        # reward series nothing says the run learns: no verdict.
        return None, [_healthy(run) if _judgeable(run) else _unjudged(run), *findings]
    origin = next(f for f in findings if f.code == story.origin)
    return _primary(story, findings[0], origin, run, config), findings


def _primary(story: Story, finding: RunFinding, origin: RunFinding, run: Run, config: ConfigView | None) -> Primary:
    checkpoints, seen = _checkpoints(run, config)
    step = rollback(story.at_step, run.first_step, checkpoints) if BY_CODE[finding.code].rolls_back else None
    remedy = []
    if story.cause is not None:
        remedy.append(f"suspected cause: {story.cause}, from step {story.cause_step}")
    # A checkpoint is named only when the run shows it: `[ckpt] interval` says where one was due, not
    # that it was written or kept (`keep_last` prunes them; a crash can cut one short).
    if step is not None and seen:
        remedy.append(f"roll back: resume from the checkpoint at step {step}")
    elif step is not None and checkpoints is not None:
        remedy.append(f"roll back to step {step}, where `ckpt.interval` schedules a checkpoint: resume from it if "
                      "the run kept it, else from the nearest one before it (`rlpilot train checkpoints RUN` lists "
                      "them)")
    elif step is not None:
        remedy.append(f"roll back to step {step}, the last before the trouble; no checkpoint was seen (the source "
                      "does not list them): resume from the nearest one at or before it")
    elif BY_CODE[finding.code].rolls_back and story.at_step is not None and checkpoints is not None:
        none = "no checkpoint" if seen else "`ckpt.interval` schedules no checkpoint"
        remedy.append(f"{none} before step {story.at_step}: restart from the start")
    if BY_CODE[finding.code].remedy:
        remedy.append(BY_CODE[finding.code].remedy)
    # The fix is the root cause's: a collapse that an entropy explosion led to is treated where it began.
    deltas = list({d.key: d for d in (*origin.deltas, *finding.deltas)}.values())
    remedy += [f"{d.key}: {d.change}" + (f" ({d.from_!r} -> {d.to!r})" if d.to is not None else "") for d in deltas]
    if finding.look_at:
        remedy.append(f"read the rollouts first ({finding.look_at[0]})")
    if not deltas and not finding.look_at:
        remedy.append(f"look for the cause: {finding.causes[0]}")
    return Primary(code=finding.code, at_step=story.at_step, suspected_cause=story.cause, cause_step=story.cause_step,
                   rollback_step=step, checkpoint=step is not None and seen, remedy="; ".join(remedy))


def _checkpoints(run: Run, config: ConfigView | None) -> tuple[list[int] | None, bool]:
    """Steps the run can resume from, and whether the run shows them: its own checkpoints (the run
    folder's, the platform's list; possibly none) when the source shows them, else the steps every
    `[ckpt] interval` schedules, else None (unknown)."""
    if run.checkpoints_seen or run.checkpoints:
        return run.checkpoints, True
    # prime-rl spells the interval `ckpt.interval` in every era; the intent table has no entry for it.
    interval = lookup(config.data, "ckpt.interval") if config else None
    if isinstance(interval, int) and not isinstance(interval, bool) and interval > 0 and run.last_step is not None:
        return list(range(interval, run.last_step + 1, interval)), False
    return None, False


# Where prime-rl writes inside a run folder: `monitors/file/metrics.jsonl` (v0.9+), `logs/**` and
# `launcher/logs/` (docs/sources.md, "What a prime-rl run writes"; docs/sources.md, "prime-rl v0.9.0 and later main").
_RUN_SUBFOLDERS = ("monitors", "logs", "launcher")
_RUN_DEPTH = 4  # ancestors looked at: up to three folders between a run and its file (logs/latest/envs/x.log)


def _run_dir(source: Path) -> Path:
    """The run folder a source belongs to: the folder itself, the one above `monitors/`, `logs/` or
    `launcher/` for a file prime-rl writes there, else the folder that holds the file."""
    if source.is_dir():
        return source
    for ancestor in list(source.parents)[1:_RUN_DEPTH]:
        if source.relative_to(ancestor).parts[0] in _RUN_SUBFOLDERS:
            return ancestor
    return source.parent


def _with_checkpoints(run: Run, source: Path, ctx: Context) -> Run:
    """A file of a run folder (its metrics.jsonl, a log) knows no checkpoints by itself: read them from the
    folder it belongs to, the way a run folder source is read, when that folder is one the caller may read."""
    if run.checkpoints_seen or source.is_dir():
        return run
    try:
        run_dir = ctx.resolve(_run_dir(source))
    except BadInput:
        return run  # above the workspace: not ours to list
    saved = checkpoints_in(run_dir)
    return run if saved is None else replace(run, checkpoints=sorted(set(saved)), checkpoints_seen=True)


def _samples(source: Path, kind: str) -> Callable[[int], str]:
    """The command that shows a step's rollouts (best first: how the reward is earned)."""
    if kind == "prime-train-metrics":
        return lambda step: f"prime train rollouts RUN --step {step}"
    run_dir = _run_dir(source)
    if (run_dir / "monitors/file/traces/stream").is_dir():
        # v0.9+ keeps every episode in one stream, which `train rollouts` reads by step.
        return lambda step: f"rlpilot train rollouts RUN --step {step}"
    # Up to v0.8 prime-rl wrote each step's rollouts to <run_dir>/rollouts/step_N/train/all/traces.jsonl.
    rollouts = run_dir / "rollouts"
    return lambda step: f"rlpilot eval samples {rollouts / f'step_{step}/train/all/traces.jsonl'} --which best"


def _healthy(run: Run) -> RunFinding:
    short = [f"{c.code} needs {c.needs} values of {'/'.join(c.series)}, the run has {c.values}"
             for c in coverage(run) if not c.judged]
    evidence = {}
    for name in ("reward_mean", "entropy", "mismatch_kl", "grad_norm"):
        found = run.series.get(name)
        if found is not None and len(found):
            evidence[f"recent_mean_{name}"] = stats.mean(found.values[-RECENT:])
    return RunFinding(code="healthy", severity="info", first_step=run.first_step,
                      steps=[run.first_step, run.last_step] if run.steps else None,
                      summary="no failure signature on any window"
                              + (f"; unjudged, too few values: {'; '.join(short)}" if short else ""),
                      evidence=evidence, causes=[], deltas=[],
                      stop_when=[])


def _vocabularies(run: Run) -> list[str]:
    """The fewest trainers whose tables name every series read, the one naming most first: a name two
    trainers share (`optim/lr`) does not make a prime-rl run a Tinker one."""
    named = {trainer: {name for name, found in run.series.items() if trainer in found.vocabularies}
             for found in run.series.values() for trainer in found.vocabularies}
    chosen: list[str] = []
    covered: set[str] = set()
    for trainer in sorted(named, key=lambda t: (-len(named[t]), t)):
        if named[trainer] - covered:
            chosen.append(trainer)
            covered |= named[trainer]
    return chosen


def _judgeable(run: Run) -> bool:
    """"Healthy" needs a reward series long enough to show its trend."""
    return len(run.series.get("reward_mean") or ()) >= HEALTHY_MIN_POINTS


def _unjudged(run: Run) -> RunFinding:
    reward = run.series.get("reward_mean")
    if reward is not None:
        return RunFinding(
            code="unjudged", severity="warning", first_step=run.first_step,
            steps=[run.first_step, run.last_step] if run.steps else None,
            summary=f"only {len(reward)} reward value(s) ({reward.raw}), fewer than the {HEALTHY_MIN_POINTS} a "
                    "verdict needs, so no verdict; unjudged: " + ", ".join(
                        f"{c.code} (needs {c.needs})" for c in coverage(run) if not c.judged),
            evidence={"reward_values": float(len(reward)), "needed": float(HEALTHY_MIN_POINTS)},
            causes=["the run has only just begun, or logs rarely"],
            deltas=[], stop_when=[f"the run has logged {HEALTHY_MIN_POINTS} or more steps with a reward"])
    read = ", ".join(f"{name} ({found.raw})" for name, found in run.series.items()) or "none"
    unread = ", ".join(map(shown, run.unread[:12])) + (f" and {len(run.unread) - 12} more" if len(run.unread) > 12
                                                       else "")
    return RunFinding(
        code="unjudged", severity="warning", first_step=run.first_step,
        steps=[run.first_step, run.last_step] if run.steps else None,
        summary=f"no reward series, so no verdict: read {read}; not read: {unread or 'none'}",
        evidence={"series_read": float(len(run.series)), "metrics_unread": float(len(run.unread))},
        causes=["the source holds no metric any trainer's vocabulary names as the reward (or its name is one "
                "diagnose does not know: the unread names are listed)"],
        deltas=[], stop_when=["the source has a per-step reward series; " + "; ".join(
            export_hints({trainer for found in run.series.values() for trainer in found.vocabularies}))])


def _deltas(changes: tuple[Change, ...], config: ConfigView | None,
            settings: dict[str, float] | None = None) -> list[Delta]:
    return [delta for change in changes if (delta := _delta(change, config, settings or {})) is not None]


def _delta(change: Change, config: ConfigView | None, settings: dict[str, float]) -> Delta | None:
    key = config.key_for(change.intent) if config else None
    if config is None and change.intent in settings:
        # A hosted run record says what the run was launched with; the advice must fit it.
        current = settings[change.intent]
        if change.satisfied(current) or change.apply(current) == current:
            return None
        return Delta(key=change.intent, from_=current, to=change.apply(current), change=change.change,
                     why=f"{change.why} (the run record has {change.intent} = {current:g})")
    current = config.value_of(change.intent) if config else None
    target = change.apply(current)
    if (target is not None and target == current) or (current is not None and change.satisfied(current)):
        # Already where the remedy would put it, in the file or by the dialect's default even without a key
        # (v0.9 drops every zero-advantage sample with no switch: difficulty filtering is always on).
        return None
    if config is None or key is None:
        why = change.why if config is None else f"{change.why} ({config.dialect} has no single key for this)"
        return Delta(key=change.intent, to=change.value, change=change.change, why=why)
    return Delta(file=str(config.path), key=key, from_=current, to=target, change=change.change, why=change.why)


def _codes(findings: list[RunFinding]) -> list[str]:
    return [f.code for f in findings]
