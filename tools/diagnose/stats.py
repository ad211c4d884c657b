"""Window statistics the signatures are judged on, and how a watch's next judgement goes on from its last."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import accumulate, islice, repeat
from operator import mul, sub
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")


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


# A watch judges the same run, grown by a few steps, on every poll, and sweeping the whole run again was most of
# a poll (bench/bench_watch.py; issue 46). Inside `continuing(sweeps)` each sweep keeps its state in `sweeps`, and
# the next judgement's sweep of the same series goes on where it stopped. A series is known by its identity: the
# watch's series only grow (RunSoFar appends to them and never changes a value: a series whose steps come again is
# replaced by a new one), and `sweeps` holds each one it swept, so no other object can take its id. Outside (a
# diagnose) every sweep starts afresh and nothing is kept.
_SWEEPS: ContextVar[Sweeps | None] = ContextVar("sweeps", default=None)


class Sweeps:
    """A watch's sweeps: those of its last judgement, and those of the one under way (the others are let go)."""

    def __init__(self) -> None:
        self.last: dict[tuple[object, ...], tuple[Sequence[float], Any]] = {}
        self.now: dict[tuple[object, ...], tuple[Sequence[float], Any]] = {}


@contextmanager
def continuing(sweeps: Sweeps) -> Iterator[None]:
    token = _SWEEPS.set(sweeps)
    kept: dict[tuple[object, ...], tuple[Sequence[float], Any]] = {}
    try:
        yield
        kept = sweeps.now  # a judgement cut short may have left a sweep half done: the next one starts afresh
    finally:
        _SWEEPS.reset(token)
        sweeps.last, sweeps.now = kept, {}


def _state(kind: tuple[object, ...], values: Sequence[float], fresh: Callable[[], T]) -> T:
    """The state of the sweep `kind` (the function and its parameters) over `values` so far, or `fresh()`."""
    sweeps = _SWEEPS.get()
    if sweeps is None:
        return fresh()
    key = (*kind, id(values))
    kept = sweeps.now.get(key) or sweeps.last.get(key)
    if kept is None or kept[0] is not values:
        kept = (values, fresh())
    sweeps.now[key] = kept
    return kept[1]


def settled(kind: tuple[object, ...], values: Sequence[float], answer: Callable[[], T]) -> T:
    """`answer()`, which depends only on values of `values` that stay as it grows: inside `continuing`, found
    once, and kept for the next judgement of the same series."""
    return _state(kind, values, answer)


def mapped(values: Sequence[float], f: Callable[[float], float], kind: Hashable) -> Sequence[float]:
    """`f` of each value (`kind` names `f`): inside `continuing`, one array extended as `values` grows, so that
    the sweeps over it go on too."""
    done = _state(("mapped", kind), values, lambda: array("d"))
    done.extend(map(f, values[len(done):]))
    return done


def extreme(values: Sequence[float], pick: Callable[..., float]) -> float:
    """`pick` (min or max) of the values: inside `continuing`, of the last answer and the new values only."""
    sweep = _state(("extreme", pick), values, lambda: [0, None])
    seen, best = sweep
    if len(values) > seen:
        new = pick(values[seen:])
        sweep[:] = len(values), new if best is None else pick(best, new)
    return sweep[1]


@dataclass
class _Window:
    """A rolling window swept up to `seen`: sorted, and in arrival order; and what the sweep found."""

    found: list | array
    seen: int = 0
    ordered: list[float] = field(default_factory=list)
    recent: deque[float] = field(default_factory=deque)


def spikes(values: Sequence[float], window: int, factor: float, warmup: int) -> list[tuple[int, float]]:
    """(index, ratio) of every point above `factor` times the median of the `window` before it."""
    sweep = _state(("spikes", window, factor, warmup), values, lambda: _Window([]))
    found, recent, ordered = sweep.found, sweep.recent, sweep.ordered
    # Inlined median and bisect: a watch judges every grad norm of a long run on every poll.
    for i in range(sweep.seen, len(values)):
        value = values[i]
        count = len(ordered)
        if count >= warmup:
            middle = count >> 1
            base = ordered[middle] if count & 1 else (ordered[middle - 1] + ordered[middle]) / 2
            if base > 0 and value > factor * base:
                found.append((i, value / base))
        recent.append(value)
        insort(ordered, value)
        if count >= window:
            del ordered[bisect_left(ordered, recent.popleft())]
    sweep.seen = len(values)
    return list(found)


def medians_before(values: Sequence[float], window: int) -> Sequence[float]:
    """The median of the `window` values before each point, from the point at index `window` on (a sorted
    window kept with bisect: a long run costs a few microseconds a point). Read it before the series grows."""
    if len(values) <= window:
        return array("d")
    sweep = _state(("medians_before", window), values, lambda: _Window(array("d")))
    found, ordered = sweep.found, sweep.ordered
    if not sweep.seen:
        ordered.extend(sorted(values[:window]))
        sweep.seen = window
    for i in range(sweep.seen, len(values)):
        found.append(median_sorted(ordered))
        del ordered[bisect_left(ordered, values[i - window])]
        insort(ordered, values[i])
    sweep.seen = len(values)
    return found


@dataclass
class _Scan:
    at: int  # where the scan goes on: every decision before it saw all the values it looks at
    found: list[tuple[int, int, float, float]]


def excursions(values: Sequence[float], window: int, least: Callable[[float], float], spread: float,
               shortest: int, longest: int) -> list[tuple[int, int, float, float]]:
    """(first, back, peak, level) of each stretch that left its level (the median of the `window` values before
    it) and came back: at least `shortest` values in a row off it by more than the larger of `least(level)` and
    `spread` times the median absolute deviation of those `window` values, back within half that move inside
    `longest` values, and staying there (the median of the next `window` values is)."""
    medians = medians_before(values, window)  # medians[i - window]: the level before i
    scan = _state(("excursions", window, least, spread, shortest, longest), values, lambda: _Scan(window, []))
    found, i, kept = scan.found[:], scan.at, len(scan.found)
    end = len(values) - window
    settled = True  # every decision so far saw all the values it looks at
    while i < end:
        # The least move, before the costlier spread: most points are within it, so they are passed over in one
        # sweep.
        i = next((j for j, value, level in zip(range(i, end), values[i:end], medians[i - window:end - window],
                                               strict=True)
                  if abs(value - level) > least(level)), end)
        if settled:  # what was found so far stays as the series grows: a watch goes on from here
            scan.at, kept = i, len(found)
        if i == end:
            break
        settled = i + longest + window <= len(values)
        level = medians[i - window]
        before = values[i - window:i]
        move = max(least(level), spread * median([abs(v - level) for v in before]))
        if any(abs(v - level) <= move for v in values[i:i + shortest]):
            i += 1
            continue
        back = next((j for j in range(i + shortest, min(len(values), i + longest + 1))
                     if abs(values[j] - level) < move / 2), None)
        if back is None or abs(median(values[back:back + window]) - level) >= move / 2:
            i += longest  # a new level, not an excursion
            continue
        found.append((i, back, max(values[i:back], key=lambda v: abs(v - level)), level))
        i = back + window
    scan.found = found[:kept]
    return found


def median_sorted(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _running_sums(values: Sequence[float]) -> array:
    """0, then the running sums of `values`."""
    prefix = _state(("running_sums",), values, lambda: array("d", [0.0]))
    prefix.extend(islice(accumulate(values[len(prefix) - 1:], initial=prefix[-1]), 1, None))
    return prefix


def rolling_mean(values: Sequence[float], window: int) -> Sequence[float]:
    """The centred mean of the `window` values around each point (fewer at the two ends)."""
    prefix = _running_sums(values)
    half, n = window // 2, len(values)
    width = 2 * half + 1
    if n <= width:
        return [(prefix[min(n, i + half + 1)] - prefix[max(0, i - half)]) / (min(n, i + half + 1) - max(0, i - half))
                for i in range(n)]
    # The ends have fewer neighbours; the middle, most of a long run, has all `width`, so it stays as the run grows.
    # Compact arrays: a diagnose holds several at once, and a long run's lists of floats were a fifth of its peak.
    head = [prefix[i + half + 1] / (i + half + 1) for i in range(half)]
    middle = _state(("rolling_mean", window), values, lambda: array("d"))
    done = len(middle)
    middle.extend((high - low) / width for low, high in zip(prefix[done:n - 2 * half], prefix[done + width:],
                                                                   strict=True))
    tail = array("d", ((prefix[n] - prefix[i - half]) / (n - i + half) for i in range(n - half, n)))
    return array("d", head) + middle + tail


def peak(values: Sequence[float], window: int) -> int:
    """The index of the greatest centred `window`-point mean of `values` (the first, where several are)."""
    smoothed = rolling_mean(values, window)
    final = len(values) - window // 2 if len(values) > 2 * (window // 2) + 1 else 0  # the means that stay
    kept = _state(("peak", window), values, lambda: [0, None])  # the means looked at, and the greatest's index
    if final > kept[0]:
        at = max(range(kept[0], final), key=smoothed.__getitem__)
        if kept[1] is None or smoothed[at] > smoothed[kept[1]]:
            kept[1] = at
        kept[0] = final
    best = kept[1]
    if len(smoothed) > kept[0]:
        at = max(range(kept[0], len(smoothed)), key=smoothed.__getitem__)
        if best is None or smoothed[at] > smoothed[best]:
            best = at
    return best


def spread_around_trend(values: Sequence[float], window: int, last: int) -> float:
    """Standard deviation, over the last `last` points, of each point minus the centred mean of
    the `window` points around it: swings, with the learning trend taken out."""
    prefix = _running_sums(values)
    half, n = window // 2, len(values)

    def residual(i: int) -> float:
        lo, hi = max(0, i - half), min(n, i + half)
        return values[i] - (prefix[hi] - prefix[lo]) / (hi - lo)

    whole = _state(("residuals", window), values, lambda: array("d"))  # those whose windows are whole stay
    whole.extend(map(residual, range(len(whole), n - half)))
    first = max(0, n - last)
    residuals = whole[first:] + array("d", map(residual, range(max(first, len(whole)), n)))
    centre = mean(residuals)
    return math.sqrt(math.fsum(map(pow, map(sub, residuals, repeat(centre)), repeat(2))) / max(1, len(residuals) - 1))


class Past(NamedTuple):
    """A threshold a value is past when `compare(value, threshold)` holds (operator.gt: above it). A value, not
    a function: a watch's next judgement knows it for the same threshold, and goes on from what it found."""

    compare: Callable[[float, float], bool]
    threshold: float

    def __call__(self, value: float) -> bool:
        return self.compare(value, self.threshold)


@dataclass
class _Stretch:
    final: int = 0  # the centred means before this index have full windows (they stay), and were looked at
    last: int = -1  # the last of those not past the threshold


def onset(values: Sequence[float], window: int, past: Past) -> int | None:
    """Where the final stretch of the centred `window`-point means of `values` that are all `past` a threshold
    begins; None when the last is not past it."""
    smoothed = rolling_mean(values, window)
    if not smoothed or not past(smoothed[-1]):
        return None
    stretch = _state(("onset", window, past), values, _Stretch)
    half = window // 2
    final = len(values) - half if len(values) > 2 * half + 1 else 0
    start = len(smoothed) - 1
    while start > stretch.final and past(smoothed[start - 1]):
        start -= 1
    if start > stretch.final:  # the mean before `start` is not past
        if start - 1 < final:
            stretch.final, stretch.last = final, start - 1
        return start
    stretch.final = final
    return stretch.last + 1


@dataclass
class _Sums:
    steps: Sequence[int]
    origin: int  # the index of the first point summed
    # Running sums of x, x², y, xy and y² from `origin` on, each with a leading zero.
    columns: tuple[list[float], ...] = field(default_factory=lambda: tuple([0] for _ in range(5)))


def slope_since(xs: Sequence[int], ys: Sequence[float], first: int) -> tuple[float, float]:
    """`slope(xs[first:], ys[first:])` from running sums, equal to it up to rounding: a window that is a share
    of the run (half of it) is as long as the run, and a watch extends the sums by its new points alone rather
    than summing the window again on every poll. The x are steps, integers, so their sums are exact."""
    sums = _state(("slope_since",), ys, lambda: _Sums(xs, first))
    if sums.steps is not xs or first < sums.origin:
        sums = _Sums(xs, first)
    done = sums.origin + len(sums.columns[0]) - 1
    x, y = xs[done:], ys[done:]
    for column, terms in zip(sums.columns, (x, map(mul, x, x), y, map(mul, x, y), map(mul, y, y)), strict=True):
        column.extend(islice(accumulate(terms, initial=column[-1]), 1, None))
    n, lo = len(ys) - first, first - sums.origin
    sx, sxx, sy, sxy, syy = (column[-1] - column[lo] for column in sums.columns)
    sxx = (n * sxx - sx * sx) / n if n else 0.0
    if n < 3 or sxx == 0:
        return 0.0, math.inf
    sxy -= sx * sy / n
    b = sxy / sxx
    residual = max(0.0, syy - sy * sy / n - b * sxy)
    return b, math.sqrt(residual / (n - 2) / sxx)


def hinge(values: Sequence[float], lo: int, hi: int, first: int, last: int) -> tuple[int, float] | None:
    """The change-point of `values[lo:hi + 1]`: the index h in [first, last] where a line that bends
    once (continuous, its slope changing at h) fits best, with the change of slope there. Sums over
    the window are kept as prefix sums, so each candidate costs a 3x3 solve: O(n) in all."""
    n = hi - lo + 1
    if n < 6 or not lo < first <= last < hi:
        return None
    px, pxx, py, pxy = [0.0], [0.0], [0.0], [0.0]
    for i in range(lo, hi + 1):
        x, y = float(i - lo), values[i]
        px.append(px[-1] + x)
        pxx.append(pxx[-1] + x * x)
        py.append(py[-1] + y)
        pxy.append(pxy[-1] + x * y)
    sx, sxx, sy, sxy = px[-1], pxx[-1], py[-1], pxy[-1]
    syy = math.fsum(values[i] ** 2 for i in range(lo, hi + 1))
    best: tuple[float, int, float] | None = None
    for h in range(first, last + 1):
        k = h - lo  # u = max(0, x - k) is non-zero from x = k on
        m = n - k
        tx, txx, ty, txy = sx - px[k], sxx - pxx[k], sy - py[k], sxy - pxy[k]
        su, suu, sxu, suy = tx - k * m, txx - 2 * k * tx + k * k * m, txx - k * tx, txy - k * ty
        gram = ((float(n), sx, su), (sx, sxx, sxu), (su, sxu, suu))
        solved = _solve3(gram, (sy, sxy, suy))
        if solved is None:
            continue
        sse = syy - (solved[0] * sy + solved[1] * sxy + solved[2] * suy)
        if best is None or sse < best[0]:
            best = (sse, h, solved[2])
    return None if best is None else (best[1], best[2])


def _solve3(a: tuple[tuple[float, ...], ...], b: tuple[float, ...]) -> tuple[float, float, float] | None:
    """Cramer's rule for a 3x3 system; None when it is singular."""
    def det(m: tuple[tuple[float, ...], ...]) -> float:
        return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    whole = det(a)
    if abs(whole) < 1e-12 * max(1.0, abs(a[0][0] * a[1][1] * a[2][2])):
        return None
    columns = []
    for c in range(3):
        m = tuple(tuple(b[r] if j == c else a[r][j] for j in range(3)) for r in range(3))
        columns.append(det(m) / whole)
    return columns[0], columns[1], columns[2]
