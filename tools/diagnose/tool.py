"""`rlpilot diagnose`: read a run's metrics, name what is going wrong, the fix, and when to stop."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.contract import Arg, Context, ToolResult
from tools.deltas import Delta
from tools.diagnose import stats
from tools.diagnose.compare import Comparison, compare
from tools.diagnose.configkeys import ConfigView, open_config
from tools.diagnose.readers import FORMATS, read
from tools.diagnose.series import CANONICAL, Run
from tools.diagnose.signatures import RECENT, SIGNATURES, Change, Signature, View
from tools.findings import Severity, by_severity


class DiagnoseInput(BaseModel):
    source: Annotated[
        Path,
        Arg(positional=True, metavar="SOURCE"),
        Field(description="metrics.jsonl, a console or JSON log, `prime train metrics` JSON, a CSV with a "
                          "step column, or a run folder."),
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


class RunFinding(BaseModel):
    code: str
    severity: Severity
    steps: list[int] | None = Field(description="[first, last] step the finding covers")
    summary: str
    evidence: dict[str, float]
    causes: list[str]
    deltas: list[Delta]
    stop_when: list[str]


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
    findings: list[RunFinding]
    compare: Comparison | None = None

    def exit_code(self) -> int:
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def render(self) -> str:
        span = f": {self.first_step}-{self.last_step}" if self.steps else ""
        lines = [f"{self.source}  ({FORMATS.get(self.format, self.format)}, {self.steps} steps{span})",
                 f"metrics: {', '.join(self.metrics_found) or 'none recognised'}"]
        lines += [f"note: {note}" for note in self.notes]
        for finding in self.findings:
            where = f" (steps {finding.steps[0]}-{finding.steps[1]})" if finding.steps else ""
            lines += ["", f"{finding.severity.upper():7} {finding.code}{where}: {finding.summary}"]
            lines += [f"  cause:     {cause}" for cause in finding.causes]
            for delta in finding.deltas:
                was = f"{delta.from_} -> " if delta.from_ is not None else ""
                lines.append(f"  change:    {delta.key}: {was}{delta.to}  ({delta.why})")
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
    kind, run = read(source)
    findings = judge(run, config)
    comparison = None
    if args.compare:
        earlier_source = ctx.resolve(args.compare)
        earlier_kind, earlier = read(earlier_source)
        comparison = compare(str(earlier_source), earlier_kind, earlier, _codes(judge(earlier, config)), run,
                             _codes(findings), list(CANONICAL))
    notes = list(run.notes)
    if "reward_mean" not in run.series:
        notes.append("no reward series found: the reward findings were not judged")
    return DiagnoseResult(
        source=str(source), format=kind, steps=len(run.steps), first_step=run.first_step, last_step=run.last_step,
        metrics_found=[name for name in CANONICAL if name in run.series],
        metric_sources={name: run.series[name].raw for name in CANONICAL if name in run.series},
        config_dialect=str(config.dialect) if config else None, notes=notes, findings=findings, compare=comparison,
    )


def judge(run: Run, config: ConfigView | None) -> list[RunFinding]:
    cap = config.value_of("max_off_policy_steps") if config else None
    view = View(run, cap) if isinstance(cap, int) and cap > 0 else View(run)
    findings = []
    for signature in SIGNATURES:
        hit = signature.check(view)
        if hit is not None:
            findings.append(RunFinding(
                code=signature.code, severity=hit.severity or signature.severity,
                steps=list(hit.steps) if hit.steps else None, summary=hit.says, evidence=hit.evidence,
                causes=list(signature.causes), deltas=_deltas(signature, config), stop_when=list(signature.stop_when),
            ))
    # `healthy` means no error or warning; informational findings may stand beside it.
    if not any(f.severity != "info" for f in findings):
        findings.insert(0, _healthy(run))
    findings[:] = by_severity(findings)
    return findings


def _healthy(run: Run) -> RunFinding:
    evidence = {}
    for name in ("reward_mean", "entropy", "mismatch_kl", "grad_norm"):
        found = run.series.get(name)
        if found is not None and len(found):
            evidence[f"recent_mean_{name}"] = stats.mean(found.values[-RECENT:])
    return RunFinding(code="healthy", severity="info", steps=[run.first_step, run.last_step] if run.steps else None,
                   summary="no failure signature on any window", evidence=evidence, causes=[], deltas=[],
                   stop_when=[])


def _deltas(signature: Signature, config: ConfigView | None) -> list[Delta]:
    deltas = []
    for change in signature.changes:
        delta = _delta(change, config)
        if delta is not None:
            deltas.append(delta)
    return deltas


def _delta(change: Change, config: ConfigView | None) -> Delta | None:
    key = config.key_for(change.intent) if config else None
    if config is None or key is None:
        why = change.why if config is None else f"{change.why} ({config.dialect} has no single key for this)"
        return Delta(key=change.intent, to=change.phrase, why=why)
    current = config.value_of(change.intent)
    target = change.apply(current)
    if target is not None and target == current:
        return None  # already where the remedy would put it
    return Delta(file=str(config.path), key=key, from_=current, to=change.phrase if target is None else target,
                 why=change.why)


def _codes(findings: list[RunFinding]) -> list[str]:
    return [f.code for f in findings]
