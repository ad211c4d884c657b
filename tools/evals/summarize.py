"""`rlpilot eval summarize`: is there a learning signal in this eval run?

The playbook's first-run protocol asks for reward diversity at baseline. GRPO-style training
learns only from groups (the rollouts of one example) whose rewards differ, so the verdict is
about groups: all failing, all passing, or all equal. Verdicts, in the order they are checked:
`broken` (no rollouts, or more than half errored), `too-hard` (mean reward <= 0.05 and at least
90% of groups all-fail), `too-easy` (at least 90% all-pass), `no-diversity` (at least 90% with
zero variance), else `ready`. Recommendations follow the playbook and
shared/research/rl-stability.md (S1, S2, section 2 on filtering, 3.4 on group size).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.contract import Arg, Context, ToolResult
from tools.evals.results import Format, RunData, locate, read_run

Verdict = Literal["ready", "too-hard", "too-easy", "no-diversity", "broken"]
RewardKind = Literal["binary", "continuous"]

FAIL_AT_MOST = 0.05  # a continuous reward this low counts as a failure
PASS_AT_LEAST = 0.95  # and this high as a pass
DOMINANT = 0.9  # the share of groups that makes a verdict
HARD_MEAN = 0.05
MOSTLY = 0.5  # "most groups", for recommendations that are not verdicts
_ZERO = 1e-9
_SHOWN_SKIPS = 5


class SummarizeInput(BaseModel):
    path: Annotated[Path, Arg(positional=True),
                    Field(description="An eval run directory, its traces.jsonl or results.jsonl, or a folder of runs "
                                      "(the newest is read).")]


class RewardStats(BaseModel):
    mean: float | None
    std: float | None
    min: float | None
    max: float | None


class PassAtK(BaseModel):
    k: int
    value: float | None


class Recommendation(BaseModel):
    code: str
    action: str
    reason: str


class EvalSummary(ToolResult):
    path: str = Field(description="The results file that was read.")
    format: Format
    env: str | None = None
    model: str | None = None
    rollouts: int
    examples: int
    errored: int
    reward: RewardStats
    reward_kind: RewardKind
    zero_variance_fraction: float | None
    all_fail_fraction: float | None
    all_pass_fraction: float | None
    pass_at_k: PassAtK
    verdict: Verdict
    recommendations: list[Recommendation]
    errors: dict[str, int] = Field(default_factory=dict, description="Error text -> how many rollouts hit it.")
    skipped_lines: int = 0
    warnings: list[str] = Field(default_factory=list)

    def render(self) -> str:
        def num(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        r = self.reward
        lines = [
            f"run        {self.path} ({self.format})",
            *([f"env        {self.env}"] if self.env else []),
            *([f"model      {self.model}"] if self.model else []),
            f"rollouts   {self.rollouts} over {self.examples} examples, {self.errored} errored",
            f"reward     mean {num(r.mean)}  std {num(r.std)}  min {num(r.min)}  max {num(r.max)}"
            f"  ({self.reward_kind})",
            f"groups     zero-variance {num(self.zero_variance_fraction)}  all-fail {num(self.all_fail_fraction)}"
            f"  all-pass {num(self.all_pass_fraction)}",
            f"pass@{self.pass_at_k.k}     {num(self.pass_at_k.value)}",
            f"verdict    {self.verdict}",
        ]
        if self.errors:
            lines.append("errors")
            lines += [f"  {count:>5}  {text}" for text, count in self.errors.items()]
        lines += [f"warning    {w}" for w in self.warnings]
        if self.recommendations:
            lines.append("recommendations")
            for rec in self.recommendations:
                lines += [f"  - {rec.action}", f"    why: {rec.reason}"]
        return "\n".join(lines)

    def exit_code(self) -> int:
        return 1 if self.verdict == "broken" else 0


def eval_summarize(args: SummarizeInput, ctx: Context) -> EvalSummary:
    path = ctx.resolve(args.path)
    return summarize_run(read_run(locate(path)))


def summarize_run(run: RunData) -> EvalSummary:
    rollouts = run.rollouts
    scored = [r.reward for r in rollouts if r.reward is not None]
    kind: RewardKind = "binary" if all(v == 0.0 or v == 1.0 for v in scored) else "continuous"
    fail_at, pass_at = (0.0, 1.0) if kind == "binary" else (FAIL_AT_MOST, PASS_AT_LEAST)

    groups: dict[str, list[float]] = {}
    for rollout in rollouts:
        if rollout.reward is not None:
            groups.setdefault(rollout.example, []).append(rollout.reward)
    sizes = [len(g) for g in groups.values()]
    all_fail = _fraction(groups, lambda g: max(g) <= fail_at)
    all_pass = _fraction(groups, lambda g: min(g) >= pass_at)
    zero_variance = _fraction(groups, lambda g: max(g) - min(g) <= _ZERO)
    k = min(sizes) if sizes else 1
    pass_k = (sum(_pass_at_k(len(g), sum(v >= pass_at for v in g), k) for g in groups.values()) / len(groups)
              if groups else None)

    errored = sum(r.errored for r in rollouts)
    mean = statistics.fmean(scored) if scored else None
    stats = RewardStats(mean=_round(mean), std=_round(statistics.pstdev(scored)) if scored else None,
                        min=min(scored, default=None), max=max(scored, default=None))
    verdict = _verdict(len(rollouts), errored, mean, all_fail, all_pass, zero_variance)
    errors = Counter(r.error for r in rollouts if r.error is not None)
    summary = EvalSummary(
        path=str(run.files.results),
        format=run.files.format,
        env=_metadata_text(run, "env_id", "env"),
        model=_metadata_text(run, "model"),
        rollouts=len(rollouts),
        examples=len({r.example for r in rollouts}),
        errored=errored,
        reward=stats,
        reward_kind=kind,
        zero_variance_fraction=_round(zero_variance),
        all_fail_fraction=_round(all_fail),
        all_pass_fraction=_round(all_pass),
        pass_at_k=PassAtK(k=k, value=_round(pass_k)),
        verdict=verdict,
        recommendations=[],
        errors=dict(errors.most_common(10)),
        skipped_lines=len(run.skipped),
        warnings=_skip_warnings(run),
    )
    summary.recommendations = recommend(summary, min(sizes, default=0))
    return summary


def _skip_warnings(run: RunData) -> list[str]:
    shown = [f"{run.files.results}:{s.line}: skipped, {s.why}" for s in run.skipped[:_SHOWN_SKIPS]]
    hidden = len(run.skipped) - len(shown)
    return shown + ([f"... and {hidden} more skipped lines"] if hidden else [])


def _fraction(groups: dict[str, list[float]], test) -> float | None:
    return sum(1 for g in groups.values() if test(g)) / len(groups) if groups else None


def _pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator (Chen et al. 2021): the chance that k of the n rollouts hold a pass."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _verdict(rollouts: int, errored: int, mean: float | None, all_fail: float | None,
             all_pass: float | None, zero_variance: float | None) -> Verdict:
    if rollouts == 0 or errored > rollouts / 2 or mean is None:
        return "broken"
    if mean <= HARD_MEAN and (all_fail or 0) >= DOMINANT:
        return "too-hard"
    if (all_pass or 0) >= DOMINANT:
        return "too-easy"
    if (zero_variance or 0) >= DOMINANT:
        return "no-diversity"
    return "ready"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _metadata_text(run: RunData, *keys: str) -> str | None:
    for key in keys:
        value = run.metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def recommend(s: EvalSummary, group_size: int) -> list[Recommendation]:
    recs: list[Recommendation] = []

    def add(code: str, action: str, reason: str) -> None:
        recs.append(Recommendation(code=code, action=action, reason=reason))

    if s.rollouts == 0:
        add("rerun-eval", "Run the eval again and read its log: no rollout was recorded.",
            "A summary needs at least one finished rollout.")
        return recs
    if s.errored:
        top, count = next(iter(s.errors.items()))
        add("fix-errors", f"Fix the failing rollouts first (most common: {top!r}, {count} times), then rerun the eval.",
            f"{s.errored} of {s.rollouts} rollouts errored; errored rollouts carry no reward signal, and more than "
            "half errored makes the run unusable for judging difficulty.")
    if s.verdict == "broken":
        return recs
    if group_size < 2:
        add("more-rollouts", "Rerun with at least 3 rollouts per example (-r 3).",
            "With one rollout per example no group can show variance, so diversity cannot be judged.")
    pass_rate = s.reward.mean if s.reward_kind == "binary" else None
    if s.verdict == "too-hard" or s.pass_at_k.value == 0:
        add("check-verifier", "Check the verifier on gold answers (`rlpilot env check ENV`): gold must score, "
            "no-op answers must not.",
            "Nothing passes at baseline; a parser or rubric bug looks exactly like a task that is too hard.")
    if s.verdict == "too-hard":
        add("easier-data", "Use easier examples or a curriculum, or an SFT warm-up, before RL.",
            f"Mean reward {s.reward.mean:.3f}: with {_pct(s.all_fail_fraction)} of groups all-fail there is almost "
            "no advantage to learn from (rl-stability S1).")
    if (s.all_fail_fraction or 0) >= MOSTLY and s.verdict in ("too-hard", "ready", "no-diversity"):
        add("larger-group", f"Raise the group size (rollouts per example) above {group_size}, e.g. to 16.",
            f"{_pct(s.all_fail_fraction)} of groups failed every rollout; the chance a group of G all fail is "
            f"(1-p)^G, so a larger group turns rare successes into a learning signal"
            + (f" (at p={pass_rate:.2f}: G={group_size} gives {_all_fail_chance(pass_rate, group_size)}, "
               f"G=16 gives {_all_fail_chance(pass_rate, 16)})." if pass_rate and group_size > 1 else "."))
    if s.verdict == "too-easy":
        add("harder-data", "Use harder examples (or drop the ones the model always solves) before training.",
            f"{_pct(s.all_pass_fraction)} of groups passed every rollout; all-pass groups have zero advantage and "
            "teach nothing (rl-stability S2).")
    if s.verdict == "no-diversity" and group_size >= 2:
        add("add-variance", "Sample at temperature 1.0 and check that the reward is not constant; consider partial "
            "credit (a continuous reward).",
            f"{_pct(s.zero_variance_fraction)} of groups gave every rollout the same reward, so they carry no "
            "advantage.")
    if s.reward_kind == "binary" and s.verdict != "too-hard":
        add("difficulty-filtering", "Turn on difficulty filtering for training, with oversampling (factor 2): "
            "`rlpilot config tune CONFIG --eval RUN` sets it in your config's dialect.",
            f"Rewards are binary and {_pct(s.zero_variance_fraction)} of groups have zero variance; filtering keeps "
            "batches full of mixed groups (playbook; rl-stability section 2).")
    if s.reward_kind == "continuous":
        add("filtering-conservative", "Keep difficulty filtering off, or conservative, until the reward "
            "distribution is known.",
            "Rewards are continuous; right/wrong filtering thresholds assume 0/1 rewards (playbook).")
    if s.verdict == "ready":
        add("proceed", "Rewards differ at baseline: go on to training with a conservative run length, and "
            "inspect samples early (`rlpilot eval samples RUN`).",
            f"{_pct(1 - (s.zero_variance_fraction or 0))} of groups have mixed rewards.")
    return recs


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _all_fail_chance(p: float, group: int) -> str:
    return f"{(1 - p) ** group:.0%}"
