"""`rlpilot eval summarize`: is there a learning signal in this eval run?

The playbook's first-run protocol asks for reward diversity at baseline. The verdict, and the
pass/fail scale it is judged on, are tools/evals/verdict.py's; the summary says which scale it
used (`reward_scale`).
The recommendations (RULES) are derived from the verdict and the same numbers, so none contradicts it:
"go on to training" only when ready, "fix the errors first" only when broken, difficulty
filtering only for binary rewards with mixed groups to keep and never for `too-easy` (the data is
what is wrong: harder examples, as verifiers says of a baseline of 80% or more; filtering would only
drop the all-pass majority from every batch), pass@k only for binary rewards.
The group shares are over the scored rollouts only (an errored rollout has no reward), and over the
groups with at least two of them: a group of one is all-pass or all-fail with zero variance by
construction, so counting it would pass the pass rate off as a diversity share. The summary counts
the scored and judged groups beside them, so shares of a mostly errored run are read as such.
A larger group is advised only where some group has mixed rewards: the (1-p)^G argument needs
rollouts that are independent tries, and groups whose every rollout scored alike say they are not.
A run that failed is named by its failure (tools/evals/failures.py): its rollouts' most common
error, or, with no rollout at all, its log.
Recommendations follow the playbook; its numbers and their sources are in tools/framework/playbook.py.
"""

from __future__ import annotations

import re
import shlex
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.evals.failures import DESCRIBED, Failure, explain, read_logs, run_logs
from tools.evals.results import Format, Rollout, RunData, locate, read_run
from tools.evals.verdict import (
    RERUN_ROLLOUTS,
    ZERO,
    RewardKind,
    RewardScale,
    Verdict,
    group_share,
    group_warnings,
    judge_scale,
    judge_verdict,
    pass_at_k_estimate,
    rounded,
    too_few_groups,
    two_value_warnings,
    why_unjudged,
)
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.playbook import ERRORED, MAJORITY, PRESETS

# The playbook's group size for complex tasks: the larger group a rare success needs.
LARGER_GROUP = PRESETS["complex"][0]
# What differs between rollouts that failed the same way: the random folder a temp path starts with
# (a file named in the temp folder itself is kept: /tmp/words.txt is not /tmp/answers.json), an
# object's address, a uuid, a hex id with letters and digits. Errors are counted with these masked,
# and shown as the first rollout wrote them; numbers and paths elsewhere are kept, they may matter.
_PER_ROLLOUT = re.compile(r"(?<![\w./-])(?:(?:/private)?/var/folders/[^/\s]+/[^/\s]+/T|/var/tmp|/tmp(?:/user/\d+)?)"
                          r"/[^/\s'\"]+(?=/)"
                          r"|(?<![0-9A-Za-z])0x[0-9a-f]+"
                          r"|(?i:\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)"
                          r"|(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}(?![0-9A-Za-z])")
_SHOWN_SKIPS = 5


class SummarizeInput(BaseModel):
    path: Annotated[Path, Arg(positional=True),
                    Field(description="An eval run folder, its traces or results file, or a folder of runs (the newest "
                                      "is read).")]


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
    command: str | None = Field(None, description="The rlpilot command the action names, runnable as shown once "
                                                  "its CAPITALIZED placeholders are filled.")


class RoleSummary(BaseModel):
    """One role of a run whose episodes score several roles, judged on its own rollouts."""
    rollouts: int
    examples: int
    errored: int
    reward: RewardStats
    reward_kind: RewardKind
    pass_rate: float | None = None
    zero_variance_fraction: float | None
    all_fail_fraction: float | None
    all_pass_fraction: float | None
    verdict: Verdict
    unjudged_because: list[str] = Field(default_factory=list)


class EvalSummary(ToolResult):
    path: str = Field(description="The results file that was read.")
    format: Format
    env: str | None = None
    model: str | None = None
    rollouts: int
    examples: int
    errored: int
    errored_fraction: float | None = None
    scored: int = Field(0, description="Rollouts that carry a reward: the group shares are over these only.")
    scored_examples: int = Field(0, description="Groups (examples) with at least one scored rollout: the "
                                                "denominator of the group shares.")
    unscored_examples: int = Field(0, description="Groups with no scored rollout (every one errored or went "
                                                  "unscored): left out of the group shares.")
    errored_examples: int = Field(0, description="Groups that lost at least one rollout to an error.")
    judged_examples: int = Field(0, description="Groups with at least two scored rollouts, the only ones that can "
                                                "show variance: the denominator of the group shares.")
    temperature: float | None = Field(None, description="The sampling temperature the run records (its metadata, "
                                                        "saved config or traces); null when it records none.")
    reward: RewardStats
    reward_kind: RewardKind
    reward_scale: RewardScale
    pass_rate: float | None = Field(None, description="The share of scored rollouts that pass.")
    zero_variance_fraction: float | None
    all_fail_fraction: float | None
    all_pass_fraction: float | None
    pass_at_k: PassAtK | None = Field(description="The chance that one of k rollouts passes (k the smallest group); "
                                                  "null for continuous rewards, where nothing is a plain pass.")
    verdict: Verdict
    unjudged_because: list[str] = Field(default_factory=list, description="Why diversity is not judged (verdict "
                                        "`unjudged`), each with the rerun that would judge it.")
    recommendations: list[Recommendation]
    failure: Failure | None = Field(None, description="What the run's log or its errors name as the failure "
                                                      "(auth, quota, network, crash), when they name one.")
    errors: dict[str, int] = Field(default_factory=dict, description="Error text -> how many rollouts hit it.")
    skipped_lines: int = 0
    warnings: list[str] = Field(default_factory=list)
    roles: dict[str, RoleSummary] = Field(default_factory=dict, description="Where episodes score several roles "
                                          "(two players, a proposer and a solver): each role judged on its own. "
                                          "The run-wide reward and shares are then left empty: they would mix roles.")

    def render(self) -> str:
        def num(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        r = self.reward
        pass_line = (f"pass@{self.pass_at_k.k}     {num(self.pass_at_k.value)}" if self.pass_at_k
                     else "pass@k     - (continuous rewards)")
        lines = [
            f"run        {self.path} ({self.format})",
            *([f"env        {self.env}"] if self.env else []),
            *([f"model      {self.model}"] if self.model else []),
            f"rollouts   {self.rollouts} over {self.examples} examples, {self.errored} errored",
            *([] if self.roles else [  # several roles: their rewards are shown apart, never mixed
                f"reward     mean {num(r.mean)}  std {num(r.std)}  min {num(r.min)}  max {num(r.max)}"
                f"  ({self.reward_kind})",
                f"scale      {self.reward_scale.description}",
                f"groups     zero-variance {num(self.zero_variance_fraction)}  all-fail "
                f"{num(self.all_fail_fraction)}  all-pass {num(self.all_pass_fraction)}{self._group_counts()}",
                pass_line]),
            f"verdict    {self.verdict}" + (f" ({'; '.join(self.unjudged_because)})" if self.unjudged_because
                                             else ""),
        ]
        for name, role in self.roles.items():
            rr = role.reward
            lines.append(f"role       {name}: {role.rollouts} rollouts, reward mean {num(rr.mean)}  min {num(rr.min)}  "
                         f"max {num(rr.max)}  ({role.reward_kind}), zero-variance {num(role.zero_variance_fraction)}"
                         f", verdict {role.verdict}"
                         + (f" ({'; '.join(role.unjudged_because)})" if role.unjudged_because else ""))
        if self.errors:
            lines.append("errors")
            lines += [f"  {count:>5}  {text}" for text, count in self.errors.items()]
        lines += [f"warning    {w}" for w in self.warnings]
        if self.recommendations:
            lines.append("recommendations")
            for rec in self.recommendations:
                lines += [f"  - {rec.action}", f"    why: {rec.reason}"]
        return "\n".join(lines)

    def _group_counts(self) -> str:
        """What the shares are over, when errors left rollouts out of them."""
        if self.scored == self.rollouts:
            return ""
        counts = [f"{self.scored_examples} of {self.examples} groups and {self.scored} of {self.rollouts} rollouts "
                  "scored"]
        if self.errored_examples:
            counts.append(f"{self.errored_examples} group(s) with errored rollouts")
        return f"  (over the scored only: {'; '.join(counts)})"

    def exit_code(self) -> int:
        return 1 if self.verdict == "broken" else 0


def eval_summarize(args: SummarizeInput, ctx: Context) -> EvalSummary:
    path = ctx.resolve(args.path)
    return summarize_run(read_run(locate(path)))


def summarize_run(run: RunData) -> EvalSummary:
    whole = _summarize(run)
    if len(run.roles) < 2:
        return whole
    return _by_role(run, whole)


def _by_role(run: RunData, whole: EvalSummary) -> EvalSummary:
    """A run whose episodes score several roles: each role is judged on its own rollouts. One mean or verdict
    over all of them would belong to no role (the players of a zero-sum game average to 0 whoever wins)."""
    parts = {role: _summarize(replace(run, rollouts=[r for r in run.rollouts if r.role == role]))
             for role in run.roles}
    whole.roles = {role: RoleSummary(**part.model_dump(include=set(RoleSummary.model_fields)))
                   for role, part in parts.items()}
    whole.reward = RewardStats(mean=None, std=None, min=None, max=None)
    whole.pass_rate = whole.zero_variance_fraction = whole.all_fail_fraction = whole.all_pass_fraction = None
    whole.pass_at_k = None
    if whole.verdict != "broken":
        said = ", ".join(f"{role} {part.verdict}" for role, part in parts.items())
        whole.verdict = "unjudged"
        whole.unjudged_because = [f"its rewards belong to {len(parts)} roles ({said}): each is judged on its own "
                                  "rollouts; a verdict over all of them would belong to none"]
    whole.recommendations = [rec.model_copy(update={"action": f"{role}: {rec.action}"})
                             for role, part in parts.items() for rec in part.recommendations]
    whole.warnings = [*_skip_warnings(run), *(f"{role}: {warning}" for role, part in parts.items()
                                              for warning in part.warnings if warning not in whole.warnings)]
    return whole


def _summarize(run: RunData) -> EvalSummary:
    rollouts = run.rollouts
    scored = [r for r in rollouts if r.reward is not None]
    values = {r.reward for r in scored}
    kind: RewardKind = "binary" if len(values) == 2 or values <= {0.0, 1.0} else "continuous"
    scale, passes, fails = judge_scale(scored, kind, run.success_name)

    groups: dict[str, list[float]] = {}
    outcomes: dict[str, list[tuple[bool, bool]]] = {}
    for rollout in scored:
        groups.setdefault(rollout.example, []).append(rollout.reward)
        outcomes.setdefault(rollout.example, []).append((passes(rollout), fails(rollout)))
    sizes = [len(g) for g in groups.values()]
    # A group of one scored rollout is all-pass or all-fail and has zero variance by construction:
    # counting it would turn the pass rate into a diversity share. The shares are over the rest.
    judged_groups = {example for example, g in groups.items() if len(g) >= 2}
    all_fail = group_share(outcomes, lambda g: all(failed for _, failed in g), judged_groups)
    all_pass = group_share(outcomes, lambda g: all(passed for passed, _ in g), judged_groups)
    zero_variance = group_share(groups, lambda g: max(g) - min(g) <= ZERO, judged_groups)
    judged = scale.judged_by in ("success-component", "binary")
    pass_rate = rounded(statistics.fmean(passes(r) for r in scored)) if judged and scored else None
    pass_k = None
    if kind == "binary" and groups:
        k = min(sizes)
        pass_k = PassAtK(k=k, value=rounded(statistics.fmean(pass_at_k_estimate(len(g), sum(p for p, _ in g), k)
                                                            for g in outcomes.values())))

    errored = sum(r.errored for r in rollouts)
    errored_share = errored / len(rollouts) if rollouts else None
    planned = Counter(r.example for r in rollouts)  # each group's rollouts, scored or not
    errored_examples = len({r.example for r in rollouts if r.errored})
    mean = statistics.fmean(r.reward for r in scored) if scored else None
    rewards = [r.reward for r in scored]
    stats = RewardStats(mean=rounded(mean), std=rounded(statistics.pstdev(rewards)) if rewards else None,
                        min=min(rewards, default=None), max=max(rewards, default=None))
    unjudged = why_unjudged(run, len(groups), len(judged_groups))
    verdict = judge_verdict(errored_share, bool(scored), unjudged, all_fail, all_pass, zero_variance)
    errors = _counted_errors(rollouts)
    said_groups = verdict == "unjudged" and too_few_groups(len(groups), len(judged_groups))
    summary = EvalSummary(
        path=str(run.files.results),
        format=run.files.format,
        env=_metadata_text(run, "env_id", "env"),
        model=_metadata_text(run, "model"),
        rollouts=len(rollouts),
        examples=len({r.example for r in rollouts}),
        errored=errored,
        errored_fraction=rounded(errored_share),
        scored=len(scored),
        scored_examples=len(groups),
        unscored_examples=len(planned) - len(groups),
        errored_examples=errored_examples,
        judged_examples=len(judged_groups),
        temperature=run.temperature,
        reward=stats,
        reward_kind=kind,
        reward_scale=scale,
        pass_rate=pass_rate,
        zero_variance_fraction=rounded(zero_variance),
        all_fail_fraction=rounded(all_fail),
        all_pass_fraction=rounded(all_pass),
        pass_at_k=pass_k,
        verdict=verdict,
        unjudged_because=unjudged if verdict == "unjudged" else [],
        recommendations=[],
        failure=_failure(run, errors) if verdict == "broken" else None,
        errors=dict(errors.most_common(10)),
        skipped_lines=len(run.skipped),
        warnings=[*_skip_warnings(run), *group_warnings(run, groups, planned, said_groups),
                  *two_value_warnings(values, scale)],
    )
    summary.recommendations = recommend(summary, min((len(groups[e]) for e in judged_groups), default=1))
    return summary


def _counted_errors(rollouts: list[Rollout]) -> Counter[str]:
    """How many rollouts hit each error, the same error with another temp folder or id counted as one."""
    shown: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for error in (r.error for r in rollouts if r.error is not None):
        counts[shown.setdefault(_PER_ROLLOUT.sub("*", error), error)] += 1
    return counts


def _failure(run: RunData, errors: Counter[str]) -> Failure | None:
    """What went wrong, when the run says: its most common rollout error, or with no rollout at all its log."""
    if errors:
        return explain(errors.most_common(1)[0][0])
    if run.rollouts:
        return None
    results = run.files.results
    logs = run_logs(results if results.is_dir() else results.parent)
    return read_logs(logs).failure if logs else None


def _skip_warnings(run: RunData) -> list[str]:
    shown = [f"{run.files.results}:{s.line}: skipped, {s.why}" for s in run.skipped[:_SHOWN_SKIPS]]
    hidden = len(run.skipped) - len(shown)
    return shown + ([f"... and {hidden} more skipped lines"] if hidden else [])


def _metadata_text(run: RunData, *keys: str) -> str | None:
    for key in keys:
        value = run.metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@dataclass(frozen=True)
class _Case:
    """What the rules read: the summary, the smallest group that can show variance (1 when none can), and
    what follows from them."""

    s: EvalSummary
    group_size: int

    @property
    def run(self) -> str:
        return shlex.quote(str(Path(self.s.path).parent))

    @property
    def env(self) -> str:
        return shlex.quote(self.s.env) if self.s.env else "ENV"

    @property
    def top(self) -> tuple[str, int]:
        """The most common error and its count."""
        return next(iter(self.s.errors.items()), ("", 0))

    @property
    def errored(self) -> str:
        return f"{self.s.errored} of {self.s.rollouts} rollouts ({_pct(self.s.errored_fraction)}) errored"

    @property
    def unjudged(self) -> bool:
        return self.s.verdict == "unjudged"

    @property
    def deterministic(self) -> bool:
        return not self.unjudged and self.s.judged_examples > 0 and self.s.zero_variance_fraction == 1.0

    @property
    def binary(self) -> bool:
        return self.s.reward_kind == "binary"

    @property
    def nothing_passes(self) -> bool:
        return self.s.pass_rate == 0.0

    @property
    def mixed(self) -> float:
        return 1 - (self.s.zero_variance_fraction or 0)

    @property
    def larger(self) -> int:
        return LARGER_GROUP if self.group_size < LARGER_GROUP else 2 * self.group_size

    @property
    def described(self) -> str:
        return DESCRIBED[self.s.failure.kind] if self.s.failure else ""


@dataclass(frozen=True)
class _Rule:
    """One recommendation: when it applies, what it says (from the case), and whether it is the last said."""

    code: str
    applies: Callable[[_Case], bool]
    action: Callable[[_Case], str]
    reason: Callable[[_Case], str]
    command: Callable[[_Case], str | None] = lambda c: None
    last: bool = False


def _larger_group_reason(c: _Case) -> str:
    p, s = c.s.pass_rate or 0.0, c.s
    return (f"{_pct(s.all_fail_fraction)} of groups failed every rollout; the chance a group of G all fail is "
            f"(1-p)^G, so a larger group turns rare successes into a learning signal (at p={p:.2f}: "
            f"G={c.group_size} gives {_all_fail_chance(p, c.group_size)}, G={c.larger} gives "
            f"{_all_fail_chance(p, c.larger)}; rl-stability 3.4).")


# In order; nothing here may argue with the verdict. A run with no rollout, or a broken one, gets one word only.
RULES: tuple[_Rule, ...] = (
    _Rule("rerun-eval", lambda c: c.s.rollouts == 0 and c.s.failure is not None,
          lambda c: f"Fix {c.described} that its log shows, then run the eval again",
          lambda c: f"No rollout was recorded; the log says ({c.s.failure.where}): {c.s.failure.text}. "
                    f"{c.s.failure.action}.",
          lambda c: f"rlpilot eval run {c.env} -m MODEL", last=True),
    _Rule("rerun-eval", lambda c: c.s.rollouts == 0,
          lambda c: "Run the eval again and read its log: no rollout was recorded",
          lambda c: "A summary needs at least one finished rollout.",
          lambda c: f"rlpilot eval run {c.env} -m MODEL", last=True),
    _Rule("fix-errors", lambda c: c.s.verdict == "broken",
          lambda c: f"Fix the failing rollouts first (most common: {c.top[0]!r}, {c.top[1]} times), then rerun the "
                    "eval; read them with",
          lambda c: f"{c.errored}, above the {ERRORED:.0%} that makes a run unfit to judge difficulty "
                    "(rl-stability S17): errored rollouts carry no reward."
                    + (f" It is {c.described}: {c.s.failure.action}." if c.s.failure else ""),
          lambda c: f"rlpilot eval samples {c.run} --which worst", last=True),
    _Rule("more-rollouts", lambda c: c.unjudged and too_few_groups(c.s.scored_examples, c.s.judged_examples),
          lambda c: f"Rerun with at least {RERUN_ROLLOUTS} rollouts per example",
          lambda c: "With one rollout per example no group can show variance: within-group diversity is unjudged.",
          lambda c: f"rlpilot eval run {c.env} -m MODEL -r {RERUN_ROLLOUTS}"),
    _Rule("raise-temperature", lambda c: c.unjudged and c.s.temperature == 0,
          lambda c: "Rerun sampling at a temperature above 0 (vf-eval "
                    + ("`-T 1.0`" if c.s.format == "legacy" else "`--sampling.temperature 1.0`")
                    + "; `rlpilot eval run` leaves it to the server's default, which is above 0 unless the server "
                      "sets it)",
          lambda c: "At temperature 0 each example's rollouts are the same greedy answer, so every group has zero "
                    "variance whatever the task: diversity is unjudged, and a larger group only repeats that answer. "
                    "Training samples at a temperature above 0.",
          lambda c: f"rlpilot eval run {c.env} -m MODEL -r {RERUN_ROLLOUTS}"),
    _Rule("deterministic", lambda c: c.deterministic,
          lambda c: "Make the rollouts of an example differ before judging the group size: sample at a temperature "
                    "above 0 and check that the reward reads the reply",
          lambda c: f"Every rollout of each of the {c.s.judged_examples} examples scored the same, so the rollouts are "
                    "not independent tries (temperature 0, a server that answers greedily or from a cache, or a "
                    "reward that does not tell replies apart); a larger group would repeat the same outcome and add "
                    "cost, not signal."),
    _Rule("check-verifier", lambda c: c.s.verdict == "too-hard" or c.unjudged and c.nothing_passes,
          lambda c: "Check the verifier on gold answers (gold must score, no-op answers must not)",
          lambda c: ("Nothing passes at baseline" if c.nothing_passes else
                     f"{_pct(c.s.all_fail_fraction)} of groups fail every rollout")
                    + "; a parser or rubric bug looks exactly like a task that is too hard.",
          lambda c: f"rlpilot env check {c.env}"),
    _Rule("easier-data", lambda c: c.s.verdict == "too-hard",
          lambda c: "Use easier examples or a curriculum, or an SFT warm-up, before RL",
          lambda c: f"Mean reward {c.s.reward.mean:.3f}: with {_pct(c.s.all_fail_fraction)} of groups all-fail there "
                    "is almost no advantage to learn from (rl-stability S1)."),
    # The (1-p)^G argument needs rollouts that are independent tries: some group must have mixed rewards.
    _Rule("larger-group", lambda c: bool(c.s.pass_rate) and c.group_size >= 2
          and (c.s.all_fail_fraction or 0) >= MAJORITY and not c.unjudged and not c.deterministic,
          lambda c: f"Raise the group size (rollouts per example) from {c.group_size} to {c.larger}",
          _larger_group_reason),
    _Rule("harder-data", lambda c: c.s.verdict == "too-easy",
          lambda c: "Use harder examples (a harder split or dataset) before training",
          lambda c: f"{_pct(c.s.all_pass_fraction)} of groups passed every rollout; all-pass groups have zero "
                    "advantage and teach nothing; the remedy is harder data (rl-stability S2). Difficulty filtering "
                    "is no substitute: it would drop that majority from every batch and train on the "
                    f"{_pct(c.mixed)} of groups left with mixed rewards."),
    _Rule("add-variance", lambda c: c.s.verdict == "no-diversity" and c.group_size >= 2,
          lambda c: "Sample at temperature 1.0 and check that the reward is not constant; consider partial credit "
                    "(a continuous reward)",
          lambda c: (f"Every rollout scored {c.s.reward.min:g}" if c.s.reward.min == c.s.reward.max else
                     f"{_pct(c.s.zero_variance_fraction)} of groups gave every rollout the same reward "
                     f"({_pct(c.s.all_pass_fraction)} all-pass, {_pct(c.s.all_fail_fraction)} all-fail)")
                    + ", so they carry no advantage."),
    # Filtering keeps a batch's mixed groups; on a too-easy run they are the minority, and the data is the fix.
    _Rule("difficulty-filtering", lambda c: c.binary and c.mixed > 0 and c.s.verdict not in ("too-easy", "unjudged"),
          # Not "with oversampling": current prime-rl has no such knob; tune adds it only where the era has one.
          lambda c: "When you train, turn on difficulty filtering; this sets it in your config's dialect",
          lambda c: f"Rewards are binary and {_pct(c.mixed)} of groups have mixed rewards to keep; filtering drops "
                    f"the {_pct(c.s.zero_variance_fraction)} with zero variance so batches stay full of mixed groups "
                    "(playbook; rl-stability section 2).",
          lambda c: f"rlpilot config tune CONFIG --eval {c.run}"),
    _Rule("filtering-conservative", lambda c: not c.binary,
          lambda c: "Keep difficulty filtering off, or conservative, until the reward distribution is known",
          lambda c: "Rewards are continuous; right/wrong filtering thresholds assume 0/1 rewards (playbook)."),
    _Rule("proceed", lambda c: c.s.verdict == "ready",
          lambda c: "Rewards differ at baseline: go on to training with a conservative run length, and inspect "
                    "samples early",
          lambda c: f"{_pct(c.mixed)} of groups have mixed rewards.",
          lambda c: f"rlpilot eval samples {c.run}"),
    # Below the bar, so after what the verdict asks for.
    _Rule("inspect-errors", lambda c: c.s.errored > 0,
          lambda c: f"Read the errored rollouts when convenient (most common: {c.top[0]!r})",
          lambda c: f"{c.errored}, within the {ERRORED:.0%} a run tolerates (rl-stability S17); the verdict is "
                    "judged on the rollouts that scored.",
          lambda c: f"rlpilot eval samples {c.run} --which worst"),
)


def recommend(s: EvalSummary, group_size: int) -> list[Recommendation]:
    """What to do next: each rule of RULES that applies, in order, up to the first that is the last said.
    `group_size`: the smallest group that can show variance (1 when none can)."""
    case, recs = _Case(s, group_size), []
    for rule in RULES:
        if rule.applies(case):
            command = rule.command(case)
            shown = f": `{command}`" if command else ""
            recs.append(Recommendation(code=rule.code, action=f"{rule.action(case)}{shown}.", reason=rule.reason(case),
                                       command=command))
            if rule.last:
                break
    return recs


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _all_fail_chance(p: float, group: int) -> str:
    return f"{(1 - p) ** group:.0%}"
