"""The checks behind each signature (tools/diagnose/signatures.py): each reads the run's View and returns
a Hit when its threshold (tools/framework/playbook.py) is passed. Levels and trends are judged on
windows, never on one point, so a healthy noisy run raises nothing; a spike, a non-finite value and
an out-of-memory line are events by definition."""

from __future__ import annotations

import math
import operator
from bisect import bisect_left

from tools.diagnose import stats
from tools.diagnose.series import Series
from tools.diagnose.stats import Past
from tools.diagnose.view import Hit, View, onset_step, start_level, step_span, trend_of, trend_since, turned_at
from tools.framework.playbook import (
    COLLAPSE_MIN_GAIN,
    COLLAPSE_MIN_POINTS,
    COLLAPSE_ONSET,
    COLLAPSE_SHARE,
    COLLAPSE_Z,
    ENTROPY_BASELINE_STEPS,
    ENTROPY_COLLAPSE,
    ENTROPY_EXPLOSION,
    ENTROPY_EXPLOSION_ONSET,
    ENTROPY_MIN_POINTS,
    ENTROPY_ONSET,
    ENTROPY_RISE,
    FAIL_AT_MOST,
    HACK_ENTROPY,
    HACK_EVAL_POINTS,
    HACK_EVAL_SHARE,
    HACK_LENGTH,
    HACK_LENGTH_ONSET,
    LENGTH_COLLAPSE,
    LENGTH_COLLAPSE_FROM,
    LENGTH_COLLAPSE_SHARE,
    MISMATCH_BUG,
    MISMATCH_BUG_STEPS,
    MISMATCH_HIGH,
    PASS_AT_LEAST,
    RECENT,
    SATURATED_SOLVED_ALL,
    SLOPE_Z,
    SLOW_MAX_WINDOW,
    SLOW_RUN_SHARE,
    SMOOTH,
    SPIKE_FACTOR,
    SPIKE_MIN_POINTS,
    SPIKE_REPEAT,
    SPIKE_SETTLE,
    SPIKE_WARMUP,
    SPIKE_WINDOW,
    START_POINTS,
    STEADY_GAIN,
    STEADY_RUN_SHARE,
    STOPPED_GAP,
    TRAINABLE,
    TRANSIENT_ENTROPY,
    TRANSIENT_MAX_STEPS,
    TRANSIENT_MIN_STEPS,
    TRANSIENT_REWARD,
    TRANSIENT_Z,
    TREND_MIN_POINTS,
    TREND_WINDOW,
    TRUNCATION,
    UNSTABLE_SPREAD,
)
from tools.verifiers.refs import shown


def check_flat(view: View) -> Hit | None:
    recent = view.recent("reward_mean")
    if recent is None:
        return None
    steps, values = recent
    level = stats.mean(values)
    if level > FAIL_AT_MOST:
        return None
    # A run that rose well above its start earlier learned: a fall from there is a collapse (its own
    # signature), never a "flat" reward.
    found = view.series("reward_mean")
    if max(stats.rolling_mean(found.values, SMOOTH)) - start_level(found) >= COLLAPSE_MIN_GAIN:
        return None
    # Refined: a reward still small but climbing (significantly, and by half the threshold over
    # the window) is learning, not flat.
    if len(values) >= TREND_MIN_POINTS:
        b, z = trend_of(steps, values)
        if z > SLOPE_Z and b * (steps[-1] - steps[0]) >= FAIL_AT_MOST / 2:
            return None
    return Hit(step_span(steps), {"recent_mean_reward": level, "threshold": FAIL_AT_MOST},
               f"mean reward {level:.3f} over the last {len(values)} steps",
               first_step=onset_step(found, Past(operator.le, FAIL_AT_MOST)))


def check_saturated(view: View) -> Hit | None:
    """Near the ceiling of the reward's own scale. A reward that climbed there is a success (info);
    one that started there had nothing to learn (a warning: the data is too easy)."""
    recent = view.recent("reward_mean")
    solved = view.recent("solved_all_frac") if _solved_all_measured(view) else None
    level = stats.mean(recent[1]) if recent else None
    share = stats.mean(solved[1]) if solved else None
    if (level is None or level < PASS_AT_LEAST) and (share is None or share < SATURATED_SOLVED_ALL):
        return None
    found = view.series("reward_mean")
    start = start_level(found) if found is not None else None
    climbed = start is not None and start < PASS_AT_LEAST and (level or 0) - start >= COLLAPSE_MIN_GAIN
    evidence = {"recent_mean_reward": view.reward(level) if level is not None else None,
                "recent_solved_all_share": share, "reward_ceiling": view.scale[1],
                "start_reward": view.reward(start) if start is not None else None}
    steps = (recent or solved)[0]
    says = f"mean reward {view.reward(level):.3g} of a ceiling of {view.scale[1]:.3g}" if level is not None else ""
    if share is not None:
        says = ", ".join(filter(None, [says, f"{share:.0%} of groups solved by every rollout"]))
    says += (f"; it climbed there from {view.reward(start):.3g}: the task is learned" if climbed
             else "; it started there: nothing left to learn")
    began = onset_step(found, Past(operator.ge, PASS_AT_LEAST)) if recent else None
    return Hit(step_span(steps), {k: v for k, v in evidence.items() if v is not None}, says,
               severity="info" if climbed else None, first_step=began)


def _solved_all_measured(view: View) -> bool:
    """The solved-by-every-rollout share means something only for a 0-1 reward: the hosted and
    classic orchestrators count a group as solved when its rewards sum to the group size. Where the
    reward sits at its top while that share stays near zero, it measures nothing."""
    if view.rescaled:
        return False
    solved, reward = view.recent("solved_all_frac"), view.recent("reward_mean")
    return solved is None or reward is None or not (stats.mean(reward[1]) >= PASS_AT_LEAST
                                                     and stats.mean(solved[1]) < 1 - PASS_AT_LEAST)


def check_unstable(view: View) -> Hit | None:
    found = view.series("reward_mean", TREND_MIN_POINTS)
    if found is None:
        return None
    values = list(found.values[-(RECENT + TREND_WINDOW):])
    spread = stats.spread_around_trend(values, TREND_WINDOW, RECENT)
    if spread <= UNSTABLE_SPREAD:
        return None
    steps = list(found.steps[-RECENT:])
    width = view.scale[1] - view.scale[0]
    return Hit(step_span(steps),
               {"spread_around_trend": spread * width, "threshold": UNSTABLE_SPREAD * width,
                "trend_window": TREND_WINDOW},
               f"reward swings by {spread * width:.3g} (std) around its {TREND_WINDOW}-step trend"
               + (f" (a reward of scale {view.scale[0]:g}-{view.scale[1]:g})" if view.rescaled else ""))


def check_slow(view: View) -> Hit | None:
    found = view.series("reward_mean", TREND_MIN_POINTS)
    if found is None:
        return None
    level = stats.mean(found.values[-RECENT:])
    if not FAIL_AT_MOST < level < PASS_AT_LEAST:
        return None
    steps, values = found.recent(min(max(RECENT, len(found) // SLOW_RUN_SHARE), SLOW_MAX_WINDOW))
    steps, values = list(steps), list(values)
    b, z = trend_of(steps, values)
    if z >= SLOPE_Z:
        return None  # learning
    half = len(found) - len(found) // STEADY_RUN_SHARE  # where the last half begins
    if len(found) - half > len(values):
        half_b, half_z = trend_since(found, half)
        if half_z >= SLOPE_Z and half_b * (found.steps[-1] - found.steps[half]) >= STEADY_GAIN:
            return None  # learning steadily: a quarter was too short to show it through the noise
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
    # A significant fall is not "slow": it says so (a rise before it is a reward collapse).
    moving = "falling" if z <= -SLOPE_Z else "not moving"
    return Hit(step_span(steps), evidence,
               f"reward {level:.3f} and {moving} over the last {len(values)} steps (slope {b:+.2e}/step, z={z:.1f})")


def _entropy(view: View) -> tuple[list[int], list[float], float, float] | None:
    found = view.series("entropy", ENTROPY_MIN_POINTS)
    if found is None:
        return None
    baseline = _entropy_baseline(found)
    steps, values = found.recent(RECENT)
    if baseline <= 0:
        return None
    return list(steps), list(values), baseline, stats.mean(values) / baseline


def _entropy_baseline(found: Series) -> float:
    return stats.mean(found.values[:ENTROPY_BASELINE_STEPS])


def check_entropy_collapse(view: View) -> Hit | None:
    found = _entropy(view)
    if found is None or found[3] >= ENTROPY_COLLAPSE:
        return None
    steps, values, baseline, ratio = found
    began = onset_step(view.series("entropy"), Past(operator.lt, ENTROPY_ONSET * baseline), -1)
    return Hit(step_span(steps), {"baseline_entropy": baseline, "recent_entropy": stats.mean(values), "ratio": ratio,
                              "threshold": ENTROPY_COLLAPSE},
               f"entropy fell to {ratio:.0%} of its first-{ENTROPY_BASELINE_STEPS}-step value", first_step=began)


def check_entropy_explosion(view: View) -> Hit | None:
    found = _entropy(view)
    if found is None or found[3] <= ENTROPY_EXPLOSION:
        return None
    steps, values, baseline, ratio = found
    b, z = trend_of(steps, values)
    if z <= SLOPE_Z or b * (steps[-1] - steps[0]) < ENTROPY_RISE * stats.mean(values):
        return None
    rising = Past(operator.gt, ENTROPY_EXPLOSION_ONSET * baseline)
    began = onset_step(view.series("entropy"), rising, 1)
    return Hit(step_span(steps), {"baseline_entropy": baseline, "recent_entropy": stats.mean(values), "ratio": ratio,
                              "slope_per_step": b, "threshold": ENTROPY_EXPLOSION},
               f"entropy at {ratio:.0%} of its first-{ENTROPY_BASELINE_STEPS}-step value and still rising",
               first_step=began)


def share_above(view: View, name: str, threshold: float, below: bool, what: str) -> Hit | None:
    """A share whose recent mean is past its threshold (above it, or below it when `below`)."""
    recent = view.recent(name)
    if recent is None:
        return None
    share = stats.mean(recent[1])
    past = Past(operator.lt if below else operator.gt, threshold)
    if not past(share):
        return None
    return Hit(step_span(recent[0]), {f"recent_{name.removesuffix('_frac')}_share": share, "threshold": threshold},
               f"{share:.1%} of rollouts {what} over the last {len(recent[1])} steps",
               first_step=onset_step(view.series(name), past, -1 if below else 1))


def check_truncation(view: View) -> Hit | None:
    return share_above(view, "truncated_frac", TRUNCATION, False, "truncated")


def check_mismatch_bug(view: View) -> Hit | None:
    found = view.series("mismatch_kl", 1)
    if found is None:
        return None
    end = bisect_left(found.steps, found.steps[0] + MISMATCH_BUG_STEPS)  # the first steps only, not the run
    early = list(zip(found.steps[:end], found.values[:end], strict=True))
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
    return Hit(step_span(recent[0]), {"recent_median_mismatch_kl": level, "threshold": MISMATCH_HIGH},
               f"median mismatch KL {level:.3g} over the last {len(recent[1])} steps",
               first_step=onset_step(view.series("mismatch_kl"), Past(operator.gt, MISMATCH_HIGH), 1, log=True))


def check_nonfinite(view: View) -> Hit | None:
    run = view.run
    evidence: dict[str, float] = {}
    firsts, lasts = [], []
    # Metric names are the run's own text (any key of any row is scanned): quoted, as data.
    for name, bad in run.nonfinite.items():
        evidence[f"{shown(name)} non-finite values"] = bad.count
        firsts.append(bad.first)
        lasts.append(bad.last)
    for found in run.series.values():
        if len(found) < TREND_MIN_POINTS:
            continue
        tail = found.steps[-RECENT:]
        interval = stats.median(list(map(operator.sub, tail[1:], tail)))  # how often it is reported lately
        if run.last_step - found.steps[-1] > max(STOPPED_GAP, 3 * interval):
            evidence[f"{shown(found.raw)} last reported at step"] = found.steps[-1]
            firsts.append(found.steps[-1] + 1)
            lasts.append(run.last_step)
        # A metric reported every step that skips steps other metrics report was dropped there.
        # A metric that had non-finite values is already reported, and prime-rl leaves those steps out.
        missing = run.missing(found) if interval == 1 and found.raw not in run.nonfinite else None
        if missing is not None:
            evidence[f"{shown(found.raw)} missing steps"] = missing[0]
            firsts.append(missing[1])
            lasts.append(missing[2])
    if not evidence:
        return None
    says = "; ".join(f"{k} {v:g}" for k, v in evidence.items())
    return Hit((min(firsts), max(lasts)), evidence, says)


def check_grad_spike(view: View) -> Hit | None:
    found = view.series("grad_norm", SPIKE_MIN_POINTS)
    if found is None:
        return None
    hits = stats.spikes(found.values, SPIKE_WINDOW, SPIKE_FACTOR, SPIKE_WARMUP)
    if not hits:
        return None
    steps = [found.steps[i] for i, _ in hits]
    worst = max(ratio for _, ratio in hits)
    before = stats.median(found.values[max(0, hits[0][0] - SPIKE_WINDOW):hits[0][0]])
    after = found.values[hits[-1][0] + 1:hits[-1][0] + 1 + SPIKE_WINDOW]
    settled = len(after) >= SPIKE_WARMUP and stats.median(after) < SPIKE_SETTLE * before
    transient = len(hits) < SPIKE_REPEAT and settled
    says = f"{len(hits)} step(s) with grad norm above {SPIKE_FACTOR:g}x its rolling median (worst {worst:.1f}x)"
    return Hit((steps[0], steps[-1]), {"spikes": len(hits), "max_ratio_to_rolling_median": worst,
                                       "threshold": SPIKE_FACTOR},
               says + ("; it settled back after" if transient else ""), "info" if transient else None)


_TRANSIENT = {"entropy": ("entropy", lambda level: TRANSIENT_ENTROPY * abs(level)),
              "reward_mean": ("reward", lambda level: TRANSIENT_REWARD)}
_MAD_SD = 1.4826  # a normal distribution's standard deviation per unit of median absolute deviation


def check_transient(view: View) -> Hit | None:
    """Entropy or the reward left its level for a few steps and came back: named, so nobody hunts for it, and
    never the story (grad norms have grad-norm-spike, which says when they settled)."""
    spikes: list[tuple[str, int, int, float, float]] = []  # (what, first step, step back, value, level)
    for name, (what, least) in _TRANSIENT.items():
        found = view.series(name, 2 * SPIKE_WINDOW)
        if found is not None:
            spikes += [(what, found.steps[first], found.steps[back], peak, level) for first, back, peak, level
                       in stats.excursions(found.values, SPIKE_WINDOW, least, TRANSIENT_Z * _MAD_SD,
                                           TRANSIENT_MIN_STEPS, TRANSIENT_MAX_STEPS)]
    if not spikes:
        return None
    says = "; ".join(f"{what} {'rose' if peak > level else 'fell'} from its level {_shown(view, what, level):.3g} to "
                     f"{_shown(view, what, peak):.3g} at step {first} and was back by step {back}"
                     for what, first, back, peak, level in spikes[:3])
    more = f"; and {len(spikes) - 3} more" if len(spikes) > 3 else ""
    return Hit((spikes[0][1], spikes[-1][2]), {"spikes": len(spikes), "threshold_z": TRANSIENT_Z},
               f"transient: {says}{more}", "info")


def _shown(view: View, what: str, value: float) -> float:
    return view.reward(value) if what == "reward" else value


def check_zero_advantage(view: View) -> Hit | None:
    return share_above(view, "trainable_frac", TRAINABLE, True, "carry an advantage (trainable)")


def check_collapse(view: View) -> Hit | None:
    found = view.series("reward_mean", COLLAPSE_MIN_POINTS)
    if found is None:
        return None
    smoothed = stats.rolling_mean(found.values, SMOOTH)
    start = start_level(found)
    peak_at = stats.peak(found.values, SMOOTH)
    peak = smoothed[peak_at]
    gain = peak - start
    recent_steps, recent_values = found.recent(RECENT)
    recent = stats.mean(recent_values)
    if gain < COLLAPSE_MIN_GAIN or peak_at >= len(found) - RECENT or peak - recent < COLLAPSE_SHARE * gain:
        return None
    noise = stats.spread_around_trend(found.values, SMOOTH, len(found))
    start_points = max(START_POINTS, len(found) // 20)
    if (gain < COLLAPSE_Z * noise * math.sqrt(1 / SMOOTH + 1 / start_points)
            or peak - recent < COLLAPSE_Z * noise * math.sqrt(1 / SMOOTH + 1 / RECENT)):
        return None  # the run's own noise
    b, z = trend_of(list(recent_steps), list(recent_values))
    if z > SLOPE_Z and b * RECENT >= COLLAPSE_SHARE * (peak - recent):
        return None  # climbing back, fast enough to regain half its loss within RECENT steps: not staying down
    fall = peak_at
    while fall + 1 < len(smoothed) and smoothed[fall + 1] >= peak - COLLAPSE_ONSET * gain:
        fall += 1
    lost = (peak - recent) / gain
    shown = view.reward
    return Hit((found.steps[fall], found.steps[-1]),
               {"start_reward": shown(start), "peak_reward": shown(peak), "peak_step": found.steps[peak_at],
                "recent_reward": shown(recent), "share_of_gain_lost": lost, "threshold": COLLAPSE_SHARE},
               f"reward rose from {shown(start):.3f} to {shown(peak):.3f} (step {found.steps[peak_at]}), then fell "
               f"back to {shown(recent):.3f}: {lost:.0%} of its gain lost, and it stays down",
               first_step=turned_at(found, smoothed, peak_at, fall, -1))


def check_hacking(view: View) -> Hit | None:
    train = view.series("reward_mean", COLLAPSE_MIN_POINTS)
    if train is None:
        return None
    held_out = view.series("eval_reward", HACK_EVAL_POINTS)
    if held_out is not None:
        return _diverging_eval(train, held_out)
    length, entropy = view.series("response_length", COLLAPSE_MIN_POINTS), view.series("entropy", COLLAPSE_MIN_POINTS)
    if length is None or entropy is None:
        return None
    gain = stats.mean(train.values[-RECENT:]) - start_level(train)
    length_ratio = stats.mean(length.values[-RECENT:]) / max(start_level(length), 1e-9)
    entropy_ratio = stats.mean(entropy.values[-RECENT:]) / max(_entropy_baseline(entropy), 1e-9)
    if gain < COLLAPSE_MIN_GAIN or length_ratio < HACK_LENGTH or entropy_ratio > HACK_ENTROPY:
        return None
    start = start_level(length)
    smoothed = stats.rolling_mean(length.values, SMOOTH)
    took_off = next((length.steps[i] for i, v in enumerate(smoothed) if v >= HACK_LENGTH_ONSET * start),
                    length.steps[-1])
    before = [v for step, v in zip(train.steps, stats.rolling_mean(train.values, SMOOTH), strict=True)
              if step <= took_off]
    gained_before = (before[-1] - start_level(train)) if before else 0.0
    if gained_before > gain / 2:
        return None  # the reward rose first; the length came later
    grew = onset_step(length, Past(operator.ge, HACK_LENGTH_ONSET * start), 1)
    return Hit((took_off, train.steps[-1]),
               {"reward_gain": gain, "length_ratio": length_ratio, "entropy_ratio": entropy_ratio,
                "share_of_gain_before_length_took_off": gained_before / gain},
               f"reward rose by {gain:.3f} only once the responses grew ({length_ratio:.1f}x their start, from step "
               f"{took_off}) and entropy fell to {entropy_ratio:.0%}: read the rollouts before trusting it",
               first_step=grew if grew is not None and grew <= took_off else took_off)


def check_length_collapse(view: View) -> Hit | None:
    train, length = view.series("reward_mean", COLLAPSE_MIN_POINTS), view.series("response_length", COLLAPSE_MIN_POINTS)
    if train is None or length is None:
        return None
    gain = stats.mean(train.values[-RECENT:]) - start_level(train)
    start = start_level(length)
    ratio = stats.mean(length.values[-RECENT:]) / max(start, 1e-9)
    if gain < COLLAPSE_MIN_GAIN or ratio > LENGTH_COLLAPSE:
        return None
    smoothed = stats.rolling_mean(length.values, SMOOTH)
    below = stats.onset(length.values, SMOOTH, Past(operator.le, LENGTH_COLLAPSE * start))
    if below is None:
        return None
    above = max((i for i in range(below) if smoothed[i] >= LENGTH_COLLAPSE_FROM * start), default=0)
    took = length.steps[below] - length.steps[above]
    if took > max(RECENT, (length.steps[-1] - length.steps[0]) // LENGTH_COLLAPSE_SHARE):
        return None  # a slow shortening as the task is learned
    began = onset_step(length, Past(operator.le, LENGTH_COLLAPSE * start), -1)
    return Hit((length.steps[below], length.steps[-1]),
               {"reward_gain": view.reward(gain) - view.reward(0.0), "length_ratio": ratio,
                "start_length": start, "recent_length": stats.mean(length.values[-RECENT:]),
                "steps_to_halve": float(took), "threshold_ratio": LENGTH_COLLAPSE},
               f"reward rose by {view.reward(gain) - view.reward(0.0):.3g} while the responses fell to {ratio:.0%} of "
               f"their start ({start:.0f} -> {stats.mean(length.values[-RECENT:]):.0f} tokens) within {took} steps: "
               "the reward pays for brevity",
               first_step=began)


def _diverging_eval(train: Series, held_out: Series) -> Hit | None:
    """Training reward rising over the eval's span while the held-out reward stays flat or falls."""
    first, last = held_out.steps[0], held_out.steps[-1]
    inside = [v for step, v in zip(train.steps, train.values, strict=True) if first <= step <= last]
    if len(inside) < 2 * START_POINTS:
        return None
    train_gain = stats.mean(inside[-RECENT:]) - stats.mean(inside[:START_POINTS])
    third = max(1, len(held_out) // 3)
    eval_gain = stats.mean(held_out.values[-third:]) - stats.mean(held_out.values[:third])
    if train_gain < COLLAPSE_MIN_GAIN or eval_gain >= HACK_EVAL_SHARE * train_gain:
        return None
    smoothed = stats.rolling_mean(held_out.values, 3)
    turn = max(range(len(smoothed)), key=smoothed.__getitem__)
    # The smoothed best finds the turn; the raw evals date it: where a line that bends once fits them best.
    bend = stats.hinge(held_out.values, 0, len(held_out) - 1, max(1, turn - 2), min(len(held_out) - 2, turn + 2))
    best = held_out.steps[bend[0] if bend is not None and bend[1] < 0 else turn]
    return Hit((best, train.steps[-1]),
               {"train_reward_gain": train_gain, "eval_reward_gain": eval_gain, "best_eval_step": best,
                "threshold_share": HACK_EVAL_SHARE},
               f"training reward rose by {train_gain:.3f} while the held-out eval reward moved {eval_gain:+.3f} "
               f"(best at step {best}): the policy learns the reward, not the task")

