"""The checks that judge the run's machinery rather than its learning: errors, staleness, who waits on
whom, a stall, running out of memory. The table that names them is tools/diagnose/signatures.py."""

from __future__ import annotations

import math
import operator
from array import array

from tools.diagnose import stats
from tools.diagnose.checks import share_above
from tools.diagnose.stats import Past
from tools.diagnose.view import Hit, View, step_span
from tools.framework.findings import Severity
from tools.framework.playbook import (
    ERRORED,
    LEVEL_MIN_POINTS,
    RECENT,
    SMOOTH,
    STALE_SHARE,
    STALL_FACTOR,
    STALL_MIN_SECONDS,
    STALL_MIN_STEPS,
    STALL_WINDOW,
    WAIT_INFO,
    WAIT_WARNING,
)
from tools.verifiers.refs import shown


def check_staleness(view: View) -> Hit | None:
    evidence: dict[str, float] = {}
    spans = []
    lag = view.recent("off_policy_max")
    if lag is not None:
        pinned = sum(v >= view.off_policy_cap for v in lag[1]) / len(lag[1])
        if pinned > STALE_SHARE:
            evidence.update(share_of_steps_at_cap=pinned, cap=view.off_policy_cap)
            spans.append(step_span(lag[0]))
    dropped = view.recent("off_policy_dropped")
    if dropped is not None:
        share = sum(v > 0 for v in dropped[1]) / len(dropped[1])
        if share > STALE_SHARE:
            evidence.update(share_of_steps_dropping=share, mean_dropped=stats.mean(dropped[1]))
            spans.append(step_span(dropped[0]))
    if not evidence:
        return None
    began = []
    for name, flagged, key in (("off_policy_max", Past(operator.ge, view.off_policy_cap), "cap"),
                               ("off_policy_dropped", Past(operator.gt, 0), "share_of_steps_dropping")):
        found = view.series(name)
        if key in evidence and found is not None:
            flags = stats.mapped(found.values, flagged, flagged)  # 1.0 where flagged, else 0.0
            start = stats.onset(flags, SMOOTH, Past(operator.gt, STALE_SHARE))
            began += [found.steps[start]] if start is not None else []
    says = []
    if "cap" in evidence:
        says.append(f"off-policy lag at its cap ({view.off_policy_cap}) on {evidence['share_of_steps_at_cap']:.0%} "
                    "of recent steps")
    if "share_of_steps_dropping" in evidence:
        says.append(f"stale rollouts dropped on {evidence['share_of_steps_dropping']:.0%} of recent steps")
    return Hit((min(s for s, _ in spans), max(e for _, e in spans)), evidence, "; ".join(says),
               first_step=min(began) if began else None)


def check_errored(view: View) -> Hit | None:
    return share_above(view, "errored_frac", ERRORED, False, "errored")


def _waiting(view: View, wait: str, who: str) -> Hit | None:
    """The share of the recent steps' time spent waiting: total wait over total step time on the
    steps both report. Totals, not per-step medians: an asynchronous pipeline alternates long and
    near-empty steps, and a median wait over a median step can exceed the step itself."""
    waits, times = view.series(wait), view.series("step_time")
    if waits is None or times is None:
        return None
    pairs = [(step, w, t) for step, w in zip(*waits.recent(RECENT), strict=True)
             if (t := times.at(step)) is not None]
    if len(pairs) < LEVEL_MIN_POINTS:
        return None
    waited, took = math.fsum(w for _, w, _ in pairs), math.fsum(t for _, _, t in pairs)
    if took <= 0:
        return None
    share = min(1.0, waited / took)  # a wait logged by one side can outlast the other side's step
    if share <= WAIT_INFO:
        return None
    severity: Severity = "warning" if share > WAIT_WARNING else "info"
    return Hit((pairs[0][0], pairs[-1][0]), {"mean_wait_s": waited / len(pairs), "mean_step_s": took / len(pairs),
                                             "wait_share_of_step": share},
               f"{who} waits {share:.0%} of its time (over the last {len(pairs)} steps)", severity)


def check_trainer_bottleneck(view: View) -> Hit | None:
    return _waiting(view, "wait_for_policy", "the orchestrator (inference) waiting for the trainer's policy")


def check_orchestrator_bottleneck(view: View) -> Hit | None:
    return _waiting(view, "wait_for_batch", "the trainer waiting for the orchestrator's batch")


def check_stalled(view: View) -> Hit | None:
    run = view.run
    for clock in run.clocks.values():
        if len(clock) < STALL_MIN_STEPS:
            continue
        steps, times = clock.columns()
        # Over windows of steps: an asynchronous pipeline reports steps in bursts (tens of seconds,
        # then hundredths), and the median of single gaps would be a burst's, not the run's pace.
        span = min(STALL_WINDOW, len(steps) - 1)
        gaps = array("d", ((t1 - t0) / (s1 - s0) for s0, t0, s1, t1 in zip(steps, times, steps[span:], times[span:],
                                                                          strict=False) if s1 > s0))
        usual = stats.median(gaps) if gaps else 0.0
        if usual <= 0:
            continue
        last_step, last_time = steps[-1], times[-1]
        component, latest = max(clock.last_seen.items(), key=lambda item: item[1])
        silent = latest - last_time
        evidence = {"median_step_seconds": usual, "last_step": last_step, "threshold_intervals": STALL_FACTOR}
        if silent > max(STALL_FACTOR * usual, STALL_MIN_SECONDS):
            return Hit((last_step, last_step), {**evidence, "seconds_logged_after_last_step": silent},
                       f"no step after {last_step} while {component} kept logging for {silent / 60:.0f} min "
                       f"({silent / usual:.0f}x the median step time): the last component that logged is {component}",
                       first_step=last_step + 1)
        previous_step, previous_time = steps[-2], times[-2]
        if last_time - previous_time > max(STALL_FACTOR * usual * (last_step - previous_step), STALL_MIN_SECONDS):
            gap = last_time - previous_time
            return Hit((previous_step, last_step), {**evidence, "seconds_between_last_two_steps": gap},
                       f"{gap / 60:.0f} min between steps {previous_step} and {last_step} "
                       f"({gap / usual:.0f}x the median step time); the last component that logged is {component}",
                       first_step=previous_step + 1)
    return None


def check_oom(view: View) -> Hit | None:
    ooms = view.run.ooms
    if not ooms:
        return None
    steps = [o.step for o in ooms if o.step is not None]
    return Hit((min(steps), max(steps)) if steps else None, {"oom_lines": len(ooms)},
               f"{len(ooms)} out-of-memory line(s), first at {ooms[0].where}: {shown(ooms[0].text)}")
