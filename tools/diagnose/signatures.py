"""Every diagnosis: its definition, its threshold, its causes, remedies and stop conditions.

Each threshold is defined here and nowhere else. Sources: shared/research/rl-stability.md
(signature ids S1-S17 below) and the playbook's three failure bins; numbers marked "derived"
have no published source and were set against synthetic runs (tests/diagnose_support.py).
Levels and trends are judged on windows, never on one point, so a healthy noisy run raises
nothing; a spike, a non-finite value and an out-of-memory line are events by definition.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.diagnose import stats
from tools.diagnose.series import Run, Series
from tools.findings import Severity

RECENT = 50  # "recent" = the last 50 reported values, or the whole run when shorter
MIN_LEVEL_POINTS = 5  # fewer values than this say nothing about a level
MIN_TREND_POINTS = 20  # slopes and spreads need W >= 20 (rl-stability.md 5.2)
SLOPE_Z = 2.0  # a slope within 2 standard errors of zero is "not distinguishable from zero"
# Refined: slow-learning's slope is taken over the last quarter of the run (50 to 200 values). On a
# long run, 50 steps of steady but slow progress (0.03 of reward) are not distinguishable from noise.
SLOW_RUN_SHARE = 4
SLOW_MAX_WINDOW = 200

FLAT_REWARD = 0.05  # S1, rewards on a 0-1 scale
SATURATED_REWARD = 0.95  # S2; AReaL keeps prompts with success in [0.05, 0.95]
SATURATED_SOLVED_ALL = 0.9  # S2; ScaleRL drops prompts solved >= 0.9 of the time
TREND_WINDOW = 20  # S4: rolling trend
UNSTABLE_SPREAD = 0.1  # S4: spread around the trend (derived; about 2x the noise of 128 rollouts at p=0.5)
ENTROPY_BASELINE_STEPS = 10  # S5/S6: entropy is judged against its own start, not in absolute terms
ENTROPY_COLLAPSE = 0.2
ENTROPY_EXPLOSION = 2.0
ENTROPY_RISE = 0.1  # refined: "rising" = a significant slope that adds 10% over the window, not noise
TRUNCATION = 0.10  # S7: verl "truncating too much"; AReaL acts at 0.05
MISMATCH_BUG = 1.0  # S11: a misalignment bug is orders of magnitude off from the first steps
MISMATCH_BUG_STEPS = 5
MISMATCH_HIGH = 0.01  # S10: prime-rl's stated target (CI bands are run-specific)
STOPPED_GAP = 5  # non-finite: a metric absent for the last 5 steps (or 3 of its intervals)
SPIKE_FACTOR = 10.0  # S12: a step above 10x the rolling median
SPIKE_WINDOW = 20
SPIKE_WARMUP = 5
TRAINABLE = 0.5  # S1/S2: fewer than half the rollouts carry an advantage
STALE_SHARE = 0.5  # S15: "most recent steps"
OFF_POLICY_CAP = 8  # prime-rl's default max_off_policy_steps
ERRORED = 0.05  # S17: prime-rl docs, sustained > 5% is a smell
WAIT_INFO = 0.25  # derived: a pipelined run always waits a little; below a quarter of a step it is noise
WAIT_WARNING = 0.5  # one side waits for more than half of the step


@dataclass(frozen=True)
class Change:
    """A config change named by intent; the config view turns it into a real key and value."""

    intent: str
    phrase: str  # what to do, when the current value is not known
    why: str
    factor: float | None = None
    value: Any = None
    floor: float | None = None

    def apply(self, current: Any) -> Any:
        if self.value is not None:
            return self.value
        if self.factor is None or isinstance(current, bool) or not isinstance(current, int | float):
            return None
        target = current * self.factor
        if self.floor is not None:
            target = max(target, self.floor)
        return int(round(target)) if isinstance(current, int) else target


@dataclass
class Hit:
    steps: tuple[int, int] | None
    evidence: dict[str, float]
    says: str
    severity: Severity | None = None  # None: the signature's own


@dataclass
class View:
    """The run as the checks see it."""

    run: Run
    off_policy_cap: int = OFF_POLICY_CAP

    def series(self, name: str, points: int = MIN_LEVEL_POINTS) -> Series | None:
        found = self.run.series.get(name)
        return found if found is not None and len(found) >= points else None

    def recent(self, name: str, points: int = MIN_LEVEL_POINTS) -> tuple[list[int], list[float]] | None:
        found = self.series(name, points)
        if found is None:
            return None
        steps, values = found.recent(RECENT)
        return list(steps), list(values)


def _span(steps: list[int]) -> tuple[int, int]:
    return steps[0], steps[-1]


def _trend(steps: list[int], values: list[float]) -> tuple[float, float]:
    """Slope per step and its z score (slope / standard error)."""
    b, se = stats.slope(steps, values)
    if se > 0:
        return b, b / se  # an infinite error (too few distinct steps) gives z = 0
    return b, math.copysign(math.inf, b) if b else 0.0  # a perfect line


def check_flat(view: View) -> Hit | None:
    recent = view.recent("reward_mean")
    if recent is None:
        return None
    steps, values = recent
    level = stats.mean(values)
    if level > FLAT_REWARD:
        return None
    # Refined: a reward still small but climbing (significantly, and by half the threshold over
    # the window) is learning, not flat.
    if len(values) >= MIN_TREND_POINTS:
        b, z = _trend(steps, values)
        if z > SLOPE_Z and b * (steps[-1] - steps[0]) >= FLAT_REWARD / 2:
            return None
    return Hit(_span(steps), {"recent_mean_reward": level, "threshold": FLAT_REWARD},
               f"mean reward {level:.3f} over the last {len(values)} steps")


def check_saturated(view: View) -> Hit | None:
    recent = view.recent("reward_mean")
    solved = view.recent("solved_all_frac")
    level = stats.mean(recent[1]) if recent else None
    share = stats.mean(solved[1]) if solved else None
    if (level is None or level < SATURATED_REWARD) and (share is None or share < SATURATED_SOLVED_ALL):
        return None
    evidence = {"recent_mean_reward": level, "recent_solved_all_share": share}
    steps = (recent or solved)[0]
    says = f"mean reward {level:.3f}" if level is not None else ""
    if share is not None:
        says = ", ".join(filter(None, [says, f"{share:.0%} of groups solved by every rollout"]))
    return Hit(_span(steps), {k: v for k, v in evidence.items() if v is not None}, says)


def check_unstable(view: View) -> Hit | None:
    found = view.series("reward_mean", MIN_TREND_POINTS)
    if found is None:
        return None
    values = list(found.values[-(RECENT + TREND_WINDOW):])
    spread = stats.spread_around_trend(values, TREND_WINDOW, RECENT)
    if spread <= UNSTABLE_SPREAD:
        return None
    steps = list(found.steps[-RECENT:])
    return Hit(_span(steps),
               {"spread_around_trend": spread, "threshold": UNSTABLE_SPREAD, "trend_window": TREND_WINDOW},
               f"reward swings by {spread:.3f} (std) around its {TREND_WINDOW}-step trend")


def check_slow(view: View) -> Hit | None:
    found = view.series("reward_mean", MIN_TREND_POINTS)
    if found is None:
        return None
    level = stats.mean(found.values[-RECENT:])
    if not FLAT_REWARD < level < SATURATED_REWARD:
        return None
    steps, values = found.recent(min(max(RECENT, len(found) // SLOW_RUN_SHARE), SLOW_MAX_WINDOW))
    steps, values = list(steps), list(values)
    b, z = _trend(steps, values)
    if abs(z) >= SLOPE_Z:
        return None
    trainable = view.recent("trainable_frac")
    share = stats.mean(trainable[1]) if trainable else None
    if share is not None and share < TRAINABLE:
        return None  # zero-advantage-dominant explains it
    # Refined: the playbook's bin is slow learning *despite stability*; swings hide any slope.
    if check_unstable(view) is not None:
        return None
    evidence = {"recent_mean_reward": level, "slope_per_step": b, "slope_z": z}
    if share is not None:
        evidence["recent_trainable_share"] = share
    evidence["slope_window"] = len(values)
    return Hit(_span(steps), evidence,
               f"reward {level:.3f} and not moving over the last {len(values)} steps (slope {b:+.2e}/step, z={z:.1f})")


def _entropy(view: View) -> tuple[list[int], list[float], float, float] | None:
    found = view.series("entropy", 2 * ENTROPY_BASELINE_STEPS)
    if found is None:
        return None
    baseline = stats.mean(found.values[:ENTROPY_BASELINE_STEPS])
    steps, values = found.recent(RECENT)
    if baseline <= 0:
        return None
    return list(steps), list(values), baseline, stats.mean(values) / baseline


def check_entropy_collapse(view: View) -> Hit | None:
    found = _entropy(view)
    if found is None or found[3] >= ENTROPY_COLLAPSE:
        return None
    steps, values, baseline, ratio = found
    return Hit(_span(steps), {"baseline_entropy": baseline, "recent_entropy": stats.mean(values), "ratio": ratio,
                              "threshold": ENTROPY_COLLAPSE},
               f"entropy fell to {ratio:.0%} of its first-{ENTROPY_BASELINE_STEPS}-step value")


def check_entropy_explosion(view: View) -> Hit | None:
    found = _entropy(view)
    if found is None or found[3] <= ENTROPY_EXPLOSION:
        return None
    steps, values, baseline, ratio = found
    b, z = _trend(steps, values)
    if z <= SLOPE_Z or b * (steps[-1] - steps[0]) < ENTROPY_RISE * stats.mean(values):
        return None
    return Hit(_span(steps), {"baseline_entropy": baseline, "recent_entropy": stats.mean(values), "ratio": ratio,
                              "slope_per_step": b, "threshold": ENTROPY_EXPLOSION},
               f"entropy at {ratio:.0%} of its first-{ENTROPY_BASELINE_STEPS}-step value and still rising")


def _share(view: View, name: str, threshold: float, below: bool, what: str) -> Hit | None:
    """A share whose recent mean is past its threshold (above it, or below it when `below`)."""
    recent = view.recent(name)
    if recent is None:
        return None
    share = stats.mean(recent[1])
    if (share >= threshold) if below else (share <= threshold):
        return None
    return Hit(_span(recent[0]), {f"recent_{name.removesuffix('_frac')}_share": share, "threshold": threshold},
               f"{share:.1%} of rollouts {what} over the last {len(recent[1])} steps")


def check_truncation(view: View) -> Hit | None:
    return _share(view, "truncated_frac", TRUNCATION, False, "truncated")


def check_mismatch_bug(view: View) -> Hit | None:
    found = view.series("mismatch_kl", 1)
    if found is None:
        return None
    early = [(s, v) for s, v in zip(found.steps, found.values, strict=True)
             if s < found.steps[0] + MISMATCH_BUG_STEPS]
    worst = max(v for _, v in early)
    if worst <= MISMATCH_BUG:
        return None
    return Hit((early[0][0], early[-1][0]), {"max_early_mismatch_kl": worst, "threshold": MISMATCH_BUG},
               f"mismatch KL {worst:.3g} within the first {MISMATCH_BUG_STEPS} steps")


def check_mismatch_high(view: View) -> Hit | None:
    recent = view.recent("mismatch_kl")
    if recent is None or check_mismatch_bug(view) is not None:
        return None
    level = stats.median(recent[1])
    if level <= MISMATCH_HIGH:
        return None
    return Hit(_span(recent[0]), {"recent_median_mismatch_kl": level, "threshold": MISMATCH_HIGH},
               f"median mismatch KL {level:.3g} over the last {len(recent[1])} steps")


def check_nonfinite(view: View) -> Hit | None:
    run = view.run
    evidence: dict[str, float] = {}
    firsts, lasts = [], []
    for name, bad in run.nonfinite.items():
        evidence[f"{name} non-finite values"] = bad.count
        firsts.append(bad.first)
        lasts.append(bad.last)
    for found in run.series.values():
        if len(found) < MIN_TREND_POINTS:
            continue
        tail = found.steps[-RECENT:]
        interval = stats.median(list(map(operator.sub, tail[1:], tail)))  # how often it is reported lately
        if run.last_step - found.steps[-1] > max(STOPPED_GAP, 3 * interval):
            evidence[f"{found.raw} last reported at step"] = found.steps[-1]
            firsts.append(found.steps[-1] + 1)
            lasts.append(run.last_step)
        # A metric reported every step that skips steps other metrics report was dropped there.
        # A metric that had non-finite values is already reported, and prime-rl leaves those steps out.
        missing = run.missing(found) if interval == 1 and found.raw not in run.nonfinite else None
        if missing is not None:
            evidence[f"{found.raw} missing steps"] = missing[0]
            firsts.append(missing[1])
            lasts.append(missing[2])
    if not evidence:
        return None
    says = "; ".join(f"{k} {v:g}" for k, v in evidence.items())
    return Hit((min(firsts), max(lasts)), evidence, says)


def check_grad_spike(view: View) -> Hit | None:
    found = view.series("grad_norm", SPIKE_WARMUP + 1)
    if found is None:
        return None
    hits = stats.spikes(found.values, SPIKE_WINDOW, SPIKE_FACTOR, SPIKE_WARMUP)
    if not hits:
        return None
    steps = [found.steps[i] for i, _ in hits]
    worst = max(ratio for _, ratio in hits)
    return Hit((steps[0], steps[-1]), {"spikes": len(hits), "max_ratio_to_rolling_median": worst,
                                       "threshold": SPIKE_FACTOR},
               f"{len(hits)} step(s) with grad norm above {SPIKE_FACTOR:g}x its rolling median (worst {worst:.1f}x)")


def check_zero_advantage(view: View) -> Hit | None:
    return _share(view, "trainable_frac", TRAINABLE, True, "carry an advantage (trainable)")


def check_staleness(view: View) -> Hit | None:
    evidence: dict[str, float] = {}
    spans = []
    lag = view.recent("off_policy_max")
    if lag is not None:
        pinned = sum(v >= view.off_policy_cap for v in lag[1]) / len(lag[1])
        if pinned > STALE_SHARE:
            evidence.update(share_of_steps_at_cap=pinned, cap=view.off_policy_cap)
            spans.append(_span(lag[0]))
    dropped = view.recent("off_policy_dropped")
    if dropped is not None:
        share = sum(v > 0 for v in dropped[1]) / len(dropped[1])
        if share > STALE_SHARE:
            evidence.update(share_of_steps_dropping=share, mean_dropped=stats.mean(dropped[1]))
            spans.append(_span(dropped[0]))
    if not evidence:
        return None
    says = []
    if "cap" in evidence:
        says.append(f"off-policy lag at its cap ({view.off_policy_cap}) on {evidence['share_of_steps_at_cap']:.0%} "
                    "of recent steps")
    if "share_of_steps_dropping" in evidence:
        says.append(f"stale rollouts dropped on {evidence['share_of_steps_dropping']:.0%} of recent steps")
    return Hit((min(s for s, _ in spans), max(e for _, e in spans)), evidence, "; ".join(says))


def check_errored(view: View) -> Hit | None:
    return _share(view, "errored_frac", ERRORED, False, "errored")


def _waiting(view: View, wait: str, who: str) -> Hit | None:
    waits, times = view.recent(wait), view.recent("step_time")
    if waits is None or times is None:
        return None
    step_time = stats.median(times[1])
    if step_time <= 0:
        return None
    share = stats.median(waits[1]) / step_time
    if share <= WAIT_INFO:
        return None
    severity: Severity = "warning" if share > WAIT_WARNING else "info"
    return Hit(_span(waits[0]), {"median_wait_s": stats.median(waits[1]), "median_step_s": step_time,
                                 "wait_share_of_step": share}, f"{who} waits {share:.0%} of each step", severity)


def check_trainer_bottleneck(view: View) -> Hit | None:
    return _waiting(view, "wait_for_policy", "the orchestrator (inference) waiting for the trainer's policy")


def check_orchestrator_bottleneck(view: View) -> Hit | None:
    return _waiting(view, "wait_for_batch", "the trainer waiting for the orchestrator's batch")


def check_oom(view: View) -> Hit | None:
    ooms = view.run.ooms
    if not ooms:
        return None
    steps = [o.step for o in ooms if o.step is not None]
    return Hit((min(steps), max(steps)) if steps else None, {"oom_lines": len(ooms)},
               f"{len(ooms)} out-of-memory line(s), first at {ooms[0].where}: {ooms[0].text[:120]}")


LOWER_LR = Change("learning_rate", "lower it (halve)", "smaller steps keep updates inside the trust region", 0.5)
RAISE_GROUP = Change("group_size", "raise it (double, at least 8)",
                     "more rollouts per prompt make a mixed-reward group likelier: P(all fail) = (1-p)^G", 2, floor=8)
RAISE_BATCH = Change("batch_size", "raise it (double)", "a larger batch averages out step-to-step noise", 2)
FILTER = Change("difficulty_filtering", "turn difficulty filtering on",
                "drops groups that are all-pass or all-fail so every step has signal", value=True)


@dataclass(frozen=True)
class Signature:
    code: str
    severity: Severity
    check: Callable[[View], Hit | None]
    causes: tuple[str, ...]
    changes: tuple[Change, ...] = ()
    stop_when: tuple[str, ...] = field(default=())


SIGNATURES: tuple[Signature, ...] = (
    Signature("oom", "error", check_oom,
              ("rollout pressure or sequence lengths too large for the GPUs (trainer or inference)",),
              (Change("max_tokens", "lower it (halve)", "shorter sequences need less activation and KV memory", 0.5),
               Change("batch_size", "lower it (halve)", "fewer rollouts in flight per step", 0.5)),
              ("no out-of-memory lines after a restart", "peak memory stays below the GPU's size")),
    Signature("non-finite", "error", check_nonfinite,
              ("an importance ratio overflowing on stale tokens (exp of a large log-ratio)",
               "micro/mini-batch arithmetic leaving no gradient-accumulation steps",
               "learning rate too high; prime-rl drops non-finite values, so a metric that stops is one"),
              (LOWER_LR,),
              ("after a restart from the last finite checkpoint: no non-finite value and no missing metric "
               "for 50 steps",)),
    Signature("mismatch-kl-bug", "error", check_mismatch_bug,
              ("token/logprob misalignment between trainer and inference",
               "multi-turn re-tokenization or a chat template that strips earlier turns",
               "a model-implementation bug; do not paper over it with importance sampling"),
              (),
              ("a 1-step smoke run lands below 0.01 mismatch KL",)),
    Signature("flat-reward", "error", check_flat,
              ("task too hard for the model (playbook bin 1)", "verifier or parser scores gold answers 0",
               "prompt/tool contract or format mismatch", "answers cut off by max tokens"),
              (RAISE_GROUP, FILTER),
              ("the verifier gives gold answers full reward", "mixed-reward groups rise above half",
               "reward slope over 20+ steps significantly above zero")),
    Signature("saturated-reward", "warning", check_saturated,
              ("data too easy for the current policy, or normal late-training saturation",),
              (FILTER,),
              ("mixed-reward groups back above half", "held-out eval reward still rising")),
    Signature("unstable-reward", "warning", check_unstable,
              ("batch or group too small (playbook bin 2)", "learning rate too high",
               "several optimizer steps per rollout batch or too much asynchrony"),
              (LOWER_LR, RAISE_GROUP, RAISE_BATCH),
              (f"reward spread around its {TREND_WINDOW}-step trend below {UNSTABLE_SPREAD} for 50 steps",)),
    Signature("slow-learning", "warning", check_slow,
              ("task difficulty or reward shaping (playbook bin 3: revisit these before risk knobs)",
               "learning rate too low (common for LoRA at a full fine-tuning rate)",
               "an advantage bug (wrong group ids), reward noise"),
              (FILTER,
               Change("learning_rate", "raise it (double)", "verifiers: raise LR for more aggressive training", 2)),
              ("reward slope significantly above zero over the last quarter of the run (50-200 steps)",)),
    Signature("entropy-collapse", "warning", check_entropy_collapse,
              ("symmetric clipping with too small an upper epsilon", "rollout temperature below 1",
               "many optimizer updates per rollout batch"),
              (Change("temperature", "set it to 1.0", "lower temperatures collapse entropy faster", value=1.0),),
              ("entropy flat or slowly rising for 50 steps",)),
    Signature("entropy-explosion", "warning", check_entropy_explosion,
              ("upper clip epsilon or entropy bonus too strong", "sequence-level loss on long outputs",
               "train-inference mismatch on low-probability tokens"),
              (LOWER_LR,),
              ("entropy stops rising", "no gibberish or repetition in sampled rollouts")),
    Signature("length-truncation", "warning", check_truncation,
              ("the task needs a longer budget", "repetition loops", "length bias of per-sequence normalization"),
              (Change("max_tokens", "raise it (double)", "fewer answers cut off before they finish", 2),),
              (f"truncated share below {TRUNCATION:.0%} (AReaL acts at 5%)",)),
    Signature("mismatch-kl-high", "warning", check_mismatch_high,
              ("bf16 rounding differences between trainer and inference", "MoE routing differences",
               "vLLM cascade attention on long multi-turn contexts", "staleness"),
              (Change("max_off_policy_steps", "lower it (halve)", "less stale data widens the mismatch less", 0.5),),
              (f"median mismatch KL back below {MISMATCH_HIGH} for 50 steps", "grad norm flat")),
    Signature("grad-norm-spike", "warning", check_grad_spike,
              ("learning rate too high", "train-inference mismatch", "stale data",
               "low-probability tokens with huge importance ratios"),
              (LOWER_LR,),
              ("no step above 10x the rolling median grad norm for 50 steps",)),
    Signature("zero-advantage-dominant", "warning", check_zero_advantage,
              ("most groups all-pass or all-fail: task too hard or too easy for the group size",
               "a reward that is always 0 or 1 regardless of the answer"),
              (RAISE_GROUP, FILTER),
              (f"trainable share above {TRAINABLE:.0%} for 50 steps",)),
    Signature("staleness", "warning", check_staleness,
              ("inference far ahead of the trainer", "long agentic rollouts queued behind the cap"),
              (Change("max_off_policy_steps", "lower it", "bounds how stale a trained rollout may be; "
                      "pair with fewer in-flight rollouts so fewer are dropped", 0.5),),
              ("off-policy lag below its cap and no rollouts dropped on most of 50 steps",)),
    Signature("errored-rollouts", "warning", check_errored,
              ("environment code raising", "timeouts", "sandbox out of memory", "tool failures"),
              (),
              (f"errored share below {ERRORED:.0%} for 50 steps (read logs/latest/envs/ first)",)),
    Signature("trainer-bottleneck", "info", check_trainer_bottleneck,
              ("the trainer is the slower side: inference idles until the next policy",),
              (),
              ("the orchestrator's wait for a policy under a quarter of the step",)),
    Signature("orchestrator-bottleneck", "info", check_orchestrator_bottleneck,
              ("inference or environments are the slower side: the trainer idles for data",),
              (),
              ("the trainer's wait for a batch under a quarter of the step",)),
)
