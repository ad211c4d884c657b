"""Window statistics the signatures are judged on (plain floats; windows are short)."""

from __future__ import annotations

import math
from bisect import insort
from collections import deque
from collections.abc import Callable, Sequence


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def median(values: Sequence[float]) -> float:
    return median_sorted(sorted(values))


def slope(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope per step and its standard error."""
    n = len(ys)
    mx, my = mean(xs), mean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if n < 3 or sxx == 0:
        return 0.0, math.inf
    b = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    residual = math.fsum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys, strict=True))
    return b, math.sqrt(residual / (n - 2) / sxx)


def spread_around_trend(values: Sequence[float], window: int, last: int) -> float:
    """Standard deviation, over the last `last` points, of each point minus the centred mean of
    the `window` points around it: swings, with the learning trend taken out."""
    prefix = [0.0]
    for value in values:
        prefix.append(prefix[-1] + value)
    half = window // 2
    residuals = []
    for i in range(max(0, len(values) - last), len(values)):
        lo, hi = max(0, i - half), min(len(values), i + half)
        residuals.append(values[i] - (prefix[hi] - prefix[lo]) / (hi - lo))
    centre = mean(residuals)
    return math.sqrt(math.fsum((r - centre) ** 2 for r in residuals) / max(1, len(residuals) - 1))


def spikes(values: Sequence[float], window: int, factor: float, warmup: int) -> list[tuple[int, float]]:
    """(index, ratio) of every point above `factor` times the median of the `window` before it."""
    found: list[tuple[int, float]] = []
    recent: deque[float] = deque()
    ordered: list[float] = []
    for i, value in enumerate(values):
        if len(recent) >= warmup:
            base = median_sorted(ordered)
            if base > 0 and value > factor * base:
                found.append((i, value / base))
        recent.append(value)
        insort(ordered, value)
        if len(recent) > window:
            ordered.remove(recent.popleft())
    return found


def median_sorted(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def rolling_mean(values: Sequence[float], window: int) -> list[float]:
    """The centred mean of the `window` values around each point (fewer at the two ends)."""
    prefix = [0.0]
    for value in values:
        prefix.append(prefix[-1] + value)
    half, n = window // 2, len(values)
    return [(prefix[min(n, i + half + 1)] - prefix[max(0, i - half)]) / (min(n, i + half + 1) - max(0, i - half))
            for i in range(n)]


def onset(smoothed: Sequence[float], past: Callable[[float], bool]) -> int | None:
    """Where the final stretch of `smoothed` values that are all `past` a threshold begins; None
    when the last value is not past it."""
    if not smoothed or not past(smoothed[-1]):
        return None
    start = len(smoothed) - 1
    while start > 0 and past(smoothed[start - 1]):
        start -= 1
    return start
