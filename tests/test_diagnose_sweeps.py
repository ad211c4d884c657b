"""The sweeps a watch repeats on every poll go on where they stopped (tools/diagnose/stats.py): each answer
must be what a sweep over the whole series from scratch would give, also where the series was changed rather
than grown; and a poll does the work of its new steps, not of the whole run."""

from __future__ import annotations

import json
import operator
import random
import statistics
import sys
from array import array
from collections import Counter

import pytest
from diagnose_support import make_run, rows

from tools.diagnose import stats
from tools.training.watch import FileSource, Watcher

WINDOW = 20


def reference_medians(values, window):
    return [statistics.median(values[i - window:i]) for i in range(window, len(values))]


def reference_spikes(values, window, factor, warmup):
    found = []
    for i, value in enumerate(values):
        before = values[max(0, i - window):i]
        if len(before) >= warmup:
            base = statistics.median(before)
            if base > 0 and value > factor * base:
                found.append((i, value / base))
    return found


def series(seed: int, length: int) -> array:
    rng = random.Random(seed)
    return array("d", (rng.lognormvariate(0, 0.5) * (6 if rng.random() < 0.01 else 1) for _ in range(length)))


def test_a_grown_series_is_judged_as_from_scratch():
    values = series(1, 600)
    for end in (300, 310, 311, 600):  # a watch's polls: the same series, a few points longer each time
        grown = values[:end]
        assert list(stats.medians_before(grown, WINDOW)) == reference_medians(grown, WINDOW)
        assert stats.spikes(grown, WINDOW, 3.0, 10) == reference_spikes(grown, WINDOW, 3.0, 10)


def test_a_changed_series_is_not_taken_for_a_grown_one():
    values = series(2, 400)
    stats.medians_before(values[:300], WINDOW)
    stats.spikes(values[:300], WINDOW, 3.0, 10)
    changed = array("d", values)
    changed[150] = 100.0  # an earlier point differs: what was swept before does not hold for it
    assert list(stats.medians_before(changed, WINDOW)) == reference_medians(changed, WINDOW)
    assert stats.spikes(changed, WINDOW, 3.0, 10) == reference_spikes(changed, WINDOW, 3.0, 10)


def test_inside_a_watch_each_sweep_goes_on_and_answers_as_from_scratch():
    """A watch's series is one array that grows in place (RunSoFar); every sweep a poll goes on from must give
    what the same sweep over the whole series gives afresh (slope_since: up to rounding)."""
    whole = series(3, 900)
    for i in range(300, 340):
        whole[i] *= 4  # an excursion the transient scan finds, and a stretch the onset goes back over
    steps = array("q", range(0, 1800, 2))
    grown, at = array("d"), array("q")
    sweeps = stats.Sweeps()
    past = stats.Past(operator.gt, 1.2)
    least = lambda level: 0.5  # noqa: E731 (one object, the key of its sweep)

    def sweeps_of(values):
        return (list(stats.medians_before(values, WINDOW)), stats.spikes(values, WINDOW, 3.0, 10),
                stats.excursions(values, WINDOW, least, 5.0, 2, 10), list(stats.rolling_mean(values, WINDOW)),
                stats.onset(values, WINDOW, past), stats.spread_around_trend(values, WINDOW, len(values)),
                stats.extreme(values, max), list(stats.mapped(values, past, past)), stats.peak(values, WINDOW))
    for end in (120, 121, 130, 200, 333, 340, 360, 500, 501, 900):
        grown.extend(whole[len(grown):end])
        at.extend(steps[len(at):end])
        with stats.continuing(sweeps):
            kept = sweeps_of(grown)
            slope = stats.slope_since(at, grown, end // 2)
        fresh = array("d", grown)  # a new object: nothing is kept for it
        assert kept == sweeps_of(fresh), end
        assert slope == pytest.approx(stats.slope(at[end // 2:], fresh[end // 2:]), rel=1e-9), end
    assert stats.excursions(whole, WINDOW, least, 5.0, 2, 10)  # the planted excursion was there to find


def test_a_judgement_cut_short_leaves_nothing_for_the_next_to_go_on_from():
    sweeps, values = stats.Sweeps(), series(4, 100)
    with stats.continuing(sweeps):
        stats.medians_before(values, WINDOW)
    assert sweeps.last
    with pytest.raises(RuntimeError), stats.continuing(sweeps):
        stats.medians_before(values, WINDOW)  # a sweep may stop half done where the judgement raises
        raise RuntimeError
    assert not sweeps.last and not sweeps.now


def test_a_watch_poll_does_the_work_of_its_new_steps_not_of_the_whole_run(tmp_path):
    """Counted, not timed: the lines of diagnosis code a poll runs after 10 new steps are about as many on a run
    four times as long (there, every check finds what it found before: a truncation and its onset, a transient).
    Judging the whole run again, as every poll did before, runs about twice as many."""
    counted: Counter[str] = Counter()

    def tracer(frame, event, arg):
        if "/tools/" not in frame.f_code.co_filename:
            return None
        counted[event] += 1
        return tracer

    def lines_of_a_poll(steps: int) -> int:
        run = make_run(steps + 20, truncated_frac=lambda s, rng: 0.3 if s > steps // 2 else 0.01,
                       entropy=lambda s, rng: 0.6 * (3 if s % 400 in (200, 201, 202) else 1) + rng.gauss(0, 0.01))
        path = tmp_path / f"{steps}.jsonl"
        lines = [json.dumps(row) + "\n" for row in rows(run)]
        path.write_text("".join(lines[:2 * steps]))
        watcher = Watcher("counted", FileSource(path))
        watcher.poll()
        for grown in (steps, steps + 10):  # the second poll after the first read is the one counted
            with path.open("a") as handle:
                handle.write("".join(lines[2 * grown:2 * grown + 20]))
            counted.clear()
            before = sys.gettrace()
            sys.settrace(tracer)
            try:
                watcher.poll()
            finally:
                sys.settrace(before)
        assert {"length-truncation", "transient-spike"} <= {event.code for event in watcher.seen.values()}
        return sum(counted.values())

    short, long = lines_of_a_poll(1000), lines_of_a_poll(4000)
    assert long < 1.25 * short, (short, long)
