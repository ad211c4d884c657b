"""The run as the diagnosis checks see it (`View`, rewards on a 0-1 scale), what a check finds (`Hit`),
and how a finding is dated: onsets are change-points, not the step a line was crossed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from tools.diagnose import stats
from tools.diagnose.series import Run, Series
from tools.framework.findings import Severity
from tools.framework.playbook import (
    LEVEL_MIN_POINTS,
    OFF_POLICY_CAP,
    ONSET_LOOKBACK,
    RECENT,
    SMOOTH,
    START_POINTS,
)


@dataclass
class Hit:
    steps: tuple[int, int] | None
    evidence: dict[str, float]
    says: str
    severity: Severity | None = None  # None: the signature's own
    first_step: int | None = None  # None: the first of `steps`

    def __post_init__(self) -> None:
        if self.first_step is None and self.steps:
            self.first_step = self.steps[0]


@dataclass
class View:
    """The run as the checks see it: rewards on a 0-1 scale (the reward's own floor and ceiling)."""

    run: Run
    off_policy_cap: int = OFF_POLICY_CAP
    scale: tuple[float, float] = (0.0, 1.0)  # the reward's floor and ceiling, in its own units
    _scaled: dict[str, Series] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.scale = reward_scale(self.run)
        low, high = self.scale
        for name in ("reward_mean", "eval_reward"):
            found = self.run.series.get(name)
            if found is not None and self.scale != (0.0, 1.0):
                scaled = stats.mapped(found.values, lambda v: (v - low) / (high - low), ("rescaled", low, high))
                self._scaled[name] = Series(name, found.raw, found.steps, scaled)

    def series(self, name: str, points: int = LEVEL_MIN_POINTS) -> Series | None:
        found = self._scaled.get(name) or self.run.series.get(name)
        return found if found is not None and len(found) >= points else None

    def reward(self, share: float) -> float:
        """A reward on the 0-1 scale the checks use, back in the reward's own units."""
        return self.scale[0] + share * (self.scale[1] - self.scale[0])

    @property
    def rescaled(self) -> bool:
        return self.scale != (0.0, 1.0)

    def recent(self, name: str, points: int = LEVEL_MIN_POINTS) -> tuple[list[int], list[float]] | None:
        found = self.series(name, points)
        if found is None:
            return None
        steps, values = found.recent(RECENT)
        return list(steps), list(values)


def reward_scale(run: Run) -> tuple[float, float]:
    """The reward's floor and ceiling: 0-1 unless the run shows more. The ceiling is the best reward
    any example or rollout reached (`reward/*/max`, exported samples), so a reward that climbs to it
    is at its top whatever its units; without those, the highest mean the run logged."""
    highs, lows = [1.0], [0.0]
    for name, into, pick in (("reward_max", highs, max), ("reward_mean", highs, max), ("reward_min", lows, min),
                             ("reward_mean", lows, min)):
        found = run.series.get(name)
        if found is not None and len(found):
            into.append(stats.extreme(found.values, pick))
    if run.sample_rewards is not None:
        lows.append(run.sample_rewards[0])
        highs.append(run.sample_rewards[1])
    low, high = min(lows), max(highs)
    return (low, high) if high - low > 1e-12 else (0.0, 1.0)


def step_span(steps: list[int]) -> tuple[int, int]:
    return steps[0], steps[-1]


def onset_step(found: Series | None, past: stats.Past, direction: int = 0,
               log: bool = False) -> int | None:
    """Where the change that carried the series into `past` (and kept it there) began: the change-point
    before the crossing, when the slope bends there in `direction` (+1 up, -1 down); the crossing itself
    when no such bend stands out. Onset, not threshold: a rollback before it lands before the decline, not
    where the decline passed a line. The smoothed series finds the change; the raw series dates it.
    `log`: the series grows by factors (a KL), so its bend is looked for in its logarithm."""
    if found is None:
        return None
    start = stats.onset(found.values, SMOOTH, past)
    if start is None:
        return None
    if direction:
        raw = stats.mapped(found.values, _log, "log") if log else found.values
        start = change_point(raw, stats.rolling_mean(raw, SMOOTH), max(0, start - ONSET_LOOKBACK), start, start,
                             direction)
    return found.steps[start]


def _log(value: float) -> float:
    return math.log(max(value, 1e-12))


def turned_at(found: Series, smoothed: Sequence[float], turn: int, crossed: int, direction: int) -> int:
    """The step where a series that turned at index `turn` (its peak or trough) began to move away:
    the change-point near the turn (a smoothed peak is itself a little off) or after it, up to where
    it crossed its line; the fit sees as much before the turn as after, so the bend stands out."""
    lo = max(0, turn - max(SMOOTH, crossed - turn))
    return found.steps[change_point(found.values, smoothed, lo, crossed, crossed, direction, turn - SMOOTH // 2)]


def change_point(raw: Sequence[float], smoothed: Sequence[float], lo: int, crossed: int, fallback: int,
                 direction: int, floor: int = 0) -> int:
    """The change-point of the smoothed values (`raw`'s centred SMOOTH-point means) in [lo, crossed + SMOOTH], dated
    on the raw values: a centred mean bends up to half its window before the series does, so the bend is fitted
    again on the raw values within a window of it, and kept where the raw fit bends the same way."""
    hi = min(len(smoothed) - 1, crossed + SMOOTH)
    lo = max(0, min(lo, crossed - SMOOTH))
    if hi + SMOOTH // 2 >= len(raw):
        return _bend(raw, smoothed, lo, hi, crossed, fallback, direction, floor)
    # Every mean it fits is final: a watch's next poll, asking the same of the grown series, gets this answer.
    return stats.settled(("change_point", lo, hi, crossed, fallback, direction, floor), raw,
                         lambda: _bend(raw, smoothed, lo, hi, crossed, fallback, direction, floor))


def _bend(raw: Sequence[float], smoothed: Sequence[float], lo: int, hi: int, crossed: int, fallback: int,
          direction: int, floor: int) -> int:
    found = stats.hinge(smoothed, lo, hi, max(lo + 1, floor), min(crossed, hi - 1))
    if found is None or found[1] * direction <= 0:
        return fallback
    near = stats.hinge(raw, lo, hi, max(lo + 1, found[0]), min(hi - 1, found[0] + SMOOTH // 2))
    if near is None or near[1] * direction <= 0:
        return found[0]
    return near[0]


def start_level(found: Series) -> float:
    return stats.mean(found.values[:max(START_POINTS, len(found) // 20)])  # the points named in START_POINTS


def trend_of(steps: list[int], values: list[float]) -> tuple[float, float]:
    """Slope per step and its z score (slope / standard error)."""
    return z_scored(*stats.slope(steps, values))


def trend_since(found: Series, first: int) -> tuple[float, float]:
    """`trend_of` the points of `found` from index `first` on, from running sums (stats.slope_since)."""
    return z_scored(*stats.slope_since(found.steps, found.values, first))


def z_scored(b: float, se: float) -> tuple[float, float]:
    if se > 0:
        return b, b / se  # an infinite error (too few distinct steps) gives z = 0
    return b, math.copysign(math.inf, b) if b else 0.0  # a perfect line
