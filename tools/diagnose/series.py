"""Canonical per-step series, and the crosswalk from every metric name we know to them.

Readers hand rows of `{raw metric name: value}` to a `Collector`; it keeps, for each raw name
that the crosswalk maps to a canonical series, two compact arrays (steps, values) and nothing
of the row itself, so memory is a few bytes per step per canonical metric however wide the rows
are. `finish()` then picks, for every canonical series, the best-ranked raw name present.

Names: the vocabulary tables of tools/diagnose/vocabularies/ (one per trainer, each with its source),
and the fallback patterns of tools/diagnose/vocabulary.py.
"""

from __future__ import annotations

import math
import operator
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress

from tools.diagnose.vocabulary import FALLBACK, bookkeeping, meaning
from tools.verifiers.refs import shown

CANONICAL: dict[str, str] = {
    "reward_mean": "mean reward per step",
    "reward_std": "spread of rewards within a step",
    "reward_max": "best reward in a step (of an example or a rollout)",
    "reward_min": "worst reward in a step (of an example or a rollout)",
    "entropy": "policy entropy",
    "mismatch_kl": "trainer-vs-inference KL (k3)",
    "grad_norm": "gradient norm",
    "loss": "training loss",
    "response_length": "response length in tokens",
    "eval_reward": "held-out eval reward (logged in the same run)",
    "truncated_frac": "share of truncated rollouts",
    "trainable_frac": "share of rollouts with a non-zero advantage",
    "solved_all_frac": "share of groups where every rollout succeeded",
    "solved_none_frac": "share of groups where every rollout failed",
    "solved_some_frac": "share of groups with mixed outcomes",
    "errored_frac": "share of rollouts that errored",
    "off_policy_max": "largest off-policy lag in the batch (steps)",
    "off_policy_mean": "mean off-policy lag (steps)",
    "off_policy_dropped": "rollouts dropped as too stale",
    "wait_for_batch": "trainer time waiting for a batch (s)",
    "wait_for_policy": "orchestrator time waiting for a policy (s)",
    "step_time": "wall time of a step (s)",
    "learning_rate": "learning rate",
    # Read and shown, judged by no signature (prime-rl v0.9+ names, docs/sources.md, "prime-rl v0.9.0 and later main").
    "timeout_frac": "share of rollouts that timed out",
    "model_time": "time a rollout spent in model calls (s)",
    "eval_truncated_frac": "share of eval rollouts truncated",
    "eval_errored_frac": "share of eval rollouts that errored",
    "eval_response_length": "eval sequence length in tokens",
    "expert_load_cv": "spread of MoE expert load (coefficient of variation)",
    "expert_cold_frac": "share of MoE experts that received almost no tokens",
    "perplexity": "training perplexity (SFT)",
    "val_loss": "validation loss (SFT)",
    "val_perplexity": "validation perplexity (SFT)",
    "filtered_frac": "share of rollouts the orchestrator's filters dropped",
}

# Shares of rollouts or groups; an era that logged a count under such a name is not judged as one.
SHARES = frozenset({"truncated_frac", "trainable_frac", "solved_all_frac", "solved_none_frac", "errored_frac",
                    "timeout_frac", "eval_truncated_frac", "eval_errored_frac", "expert_cold_frac", "filtered_frac"})

# Rows of one run arrive a few steps out of order (the orchestrator runs ahead of the trainer by its
# off-policy lag, at most 8 steps by default); steps that fall back to the run's first step after more
# than twice that come from a second run appended to the same file.
MAX_RESTART_GAP = 16

# Trainer and orchestrator both log `time/step` into one metrics.jsonl (and both print a time in
# their step lines); the longer of the two is the step's wall time. Elsewhere a repeated step
# comes from a resumed run, whose later value wins.
REDUCE_MAX = frozenset({"step_time"})

# Families a hosted run logs that no signature judges, named in `notes` by what they measure
# (the hosted orchestrator's buffer and filters; docs/sources.md: "RL stability: thresholds and remedies", "What a
# prime-rl run writes").
KNOWN_FAMILIES = {
    "evicted_examples/": "share of examples evicted from the easy/hard pools (difficulty buffer)",
    "filtered_rollouts/": "share of rollouts filtered out per pool (difficulty buffer)",
    "pool/": "the difficulty buffer's pool shares",
    "filters/": "per-filter shares of filtered rollouts",
    "elastic/": "the elastic inference pool (servers and their state)",
    "prefill_len/": "prompt tokens per rollout",
    "seq_len/": "prompt and output tokens per rollout",
    "decode_len/": "output tokens per rollout (min/max/per env)",
    "effective_batch_size/": "share of problems with mixed outcomes (per env)",
    "timing/": "time per rollout phase",
    "stop_condition/": "why rollouts stopped",
    "samples_per_rollout/": "samples per rollout",
    "num_turns/": "turns per rollout",
    "metrics/": "the environment's own metrics",
    "batch/": "each environment's share of the batch",
    "progress/": "counters of what was consumed",
    "solve_all/": "share of problems solved by every rollout (binary rewards)",
    "solve_none/": "share of problems no rollout solved",
}

_NONFINITE_WORDS = frozenset({"nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity"})


def text_number(text: str) -> float | None:
    """A number written as text ("0.5", "NaN", "inf"), or None when the text is not one."""
    try:
        return float(text)
    except ValueError:
        return None


@dataclass
class Bad:
    """Where a raw metric was non-finite."""

    count: int = 0
    first: int = 0
    last: int = 0

    def add(self, step: int) -> None:
        if not self.count:
            self.first = step
        self.count += 1
        self.last = step


@dataclass
class Track:
    raw: str
    canonical: str
    rank: int
    complement: bool = False
    vocabularies: tuple[str, ...] = ()
    steps: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("d"))


@dataclass
class Series:
    """One canonical series, sorted by step with one value per step."""

    name: str
    raw: str
    steps: array
    values: array
    vocabularies: tuple[str, ...] = ()  # the trainers whose tables name `raw` (FALLBACK: read by pattern)
    # Where, in the order read, a value came at or before the step of the one before it: (its index, that
    # step, its step). A resume does it once; two writers in one file do it over and over. Not kept for a step
    # time (REDUCE_MAX), whose steps repeat by design.
    went_back: list[tuple[int, int, int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.values)

    def recent(self, count: int) -> tuple[array, array]:
        return self.steps[-count:], self.values[-count:]

    def at(self, step: int) -> float | None:
        index = bisect_left(self.steps, step)
        if index < len(self.steps) and self.steps[index] == step:
            return self.values[index]
        return None


@dataclass
class OOM:
    where: str  # "file:line"
    step: int | None  # the last step line seen before it in the same log
    text: str


@dataclass
class Clock:
    """Times as the source wrote them, one clock per kind of timestamp (unix seconds in metrics rows
    and JSON logs, time of day in console logs): a stall is judged on these, never the reader's clock."""

    # When each step was first reported, in compact columns (a dict of them held ~80 bytes a step): the steps
    # that came in order, and those that came after a later one (few: steps mostly come in order).
    steps: array = field(default_factory=lambda: array("q"))
    times: array = field(default_factory=lambda: array("d"))
    late: dict[int, float] = field(default_factory=dict)
    last_seen: dict[str, float] = field(default_factory=dict)  # component -> the last time it logged anything

    def __len__(self) -> int:
        return len(self.steps) + len(self.late)

    def stamp(self, component: str, time: float, step: int | None) -> None:
        try:
            time = float(time)
        except OverflowError:  # an integer no float holds is no time
            return
        if step is not None:
            steps = self.steps
            if not steps or step > steps[-1]:
                steps.append(step)
                self.times.append(time)
            elif step != steps[-1] and step not in self.late and steps[bisect_left(steps, step)] != step:
                self.late[step] = time
        if time >= self.last_seen.get(component, time):
            self.last_seen[component] = time

    def columns(self) -> tuple[array, array]:
        """Every step reported, in order, and when each was first reported."""
        if not self.late:
            return self.steps, self.times
        ordered = sorted([*zip(self.steps, self.times, strict=True), *self.late.items()])
        return array("q", (step for step, _ in ordered)), array("d", (time for _, time in ordered))


@dataclass
class Run:
    """What a source holds, once read: canonical series and everything odd met on the way."""

    series: dict[str, Series]
    steps: array  # every distinct step any row reported, sorted
    nonfinite: dict[str, Bad]
    ooms: list[OOM]
    notes: list[str]
    unread: list[str] = field(default_factory=list)  # metric names the run has that no reader maps
    clocks: dict[str, Clock] = field(default_factory=dict)
    checkpoints: list[int] = field(default_factory=list)  # steps with a checkpoint in the run folder
    settings: dict[str, float] = field(default_factory=dict)  # intent -> value, from a hosted run record
    sample_rewards: tuple[float, float] | None = None  # (lowest, highest) reward of any exported rollout
    # Whether the source shows the run's checkpoints (its folder's `checkpoints/`, the platform's list),
    # so `checkpoints` is all the run has, possibly none, rather than unknown.
    checkpoints_seen: bool = False

    @property
    def first_step(self) -> int | None:
        return self.steps[0] if self.steps else None

    @property
    def last_step(self) -> int | None:
        return self.steps[-1] if self.steps else None

    def missing(self, found: Series) -> tuple[int, int, int] | None:
        """(count, first, last) of the steps inside `found`'s span that other metrics report and it lacks."""
        lo, hi = bisect_left(self.steps, found.steps[0]), bisect_right(self.steps, found.steps[-1])
        if hi - lo == len(found):
            return None
        held = set(found.steps)
        gone = [step for step in self.steps[lo:hi] if step not in held]
        return len(gone), gone[0], gone[-1]


class Collector:
    """Receives rows from the readers; keeps only compact arrays for the canonical metrics."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._routed: list[tuple[str, Track]] = []  # only these names are looked up in each row
        self._routed_names: set[str] = set()
        self._tracks: list[Track] = []
        self._unread: set[str] = set()
        self._steps = array("q")
        self.clocks: dict[str, Clock] = {}
        self.checkpoints: list[int] = []
        self.checkpoints_seen = False
        self.nonfinite: dict[str, Bad] = {}
        self.ooms: list[OOM] = []
        self.notes: list[str] = []
        self.stepless = 0
        self.timed = 0
        self.first_stepless = ""
        self.malformed = 0
        self.first_malformed = ""
        self.settings: dict[str, float] = {}
        self.document = ""  # what a JSON document turned out to be, when it had no steps
        # Where the steps went back to the start: (where, the highest step before, the step it went back to).
        self.restarts: list[tuple[str, int, int]] = []
        self._source_first: int | None = None
        self._run_high = -MAX_RESTART_GAP
        self._sample_low = math.inf
        self._sample_high = -math.inf

    def new_source(self) -> None:
        """Rows from another file follow: its steps may cover the same run again (a folder's two exports)."""
        self._source_first, self._run_high = None, -MAX_RESTART_GAP

    @property
    def steps_seen(self) -> int:
        return len(self._steps)

    def sample_reward(self, reward: float) -> None:
        self._sample_low = min(self._sample_low, reward)
        self._sample_high = max(self._sample_high, reward)

    def row(self, step: int, row: dict, scan: bool, where: str = "") -> None:
        """One row of one step. `scan`: the row may hold non-finite values outside the vocabularies.
        `where` (file:line) names the row if its step starts the run over."""
        steps = self._steps
        if not steps or steps[-1] != step:
            if self._source_first is None:
                self._source_first = step
            if step > self._run_high:
                self._run_high = step
            elif step <= self._source_first and self._run_high - self._source_first >= MAX_RESTART_GAP:
                self.restarts.append((where, self._run_high, step))
                self._run_high = step
            steps.append(step)
        if not self._seen.issuperset(row):  # in C: new names are rare after the first rows
            self._learn(row)
        for name, track in self._routed:
            value = row.get(name)
            if value is None:
                continue
            if value.__class__ is str:
                value = text_number(value)
            try:
                finite = value - value == 0
            except TypeError:  # a list, or text that is no number
                continue
            if finite:
                track.steps.append(step)
                track.values.append(value)
            else:
                self._bad(name, step)
        if scan:
            routed = self._routed_names
            for name, value in row.items():
                if name not in routed and _is_nonfinite(value):
                    self._bad(name, step)

    def no_step(self, where: str) -> None:
        self.stepless += 1
        self.first_stepless = self.first_stepless or where

    def bad_line(self, where: str) -> None:
        self.malformed += 1
        self.first_malformed = self.first_malformed or where

    def oom(self, where: str, text: str, step: int | None) -> None:
        self.ooms.append(OOM(where, step, text.strip()[:200]))

    def clock(self, kind: str) -> Clock:
        found = self.clocks.get(kind)
        if found is None:
            found = self.clocks[kind] = Clock()
        return found

    def _bad(self, name: str, step: int) -> None:
        self.nonfinite.setdefault(name, Bad()).add(step)

    def _learn(self, row: dict) -> None:
        for name in row.keys() - self._seen:
            self._seen.add(name)
            track = _track_for(name)
            if track is not None:
                self._tracks.append(track)
                self._routed.append((name, track))
                self._routed_names.add(name)
            elif name not in bookkeeping():
                self._unread.add(name)

    def finish(self) -> Run:
        best: dict[str, Track] = {}
        for track in self._tracks:
            if not track.values:
                continue
            held = best.get(track.canonical)
            if held is None or (track.rank, -len(track.values)) < (held.rank, -len(held.values)):
                best[track.canonical] = track
        series = {name: _tidy(track) for name, track in best.items()}
        _derive_group_shares(series)
        notes = list(self.notes)
        guessed = [f"{shown(found.raw)} as {name}" for name, found in series.items() if FALLBACK in found.vocabularies]
        if guessed:
            notes.append("read by the name's pattern, as no trainer's vocabulary names it: " + "; ".join(guessed))
        for name in SHARES & series.keys():
            if max(series[name].values) > 1:
                notes.append(f"{shown(series[name].raw)} goes above 1, so it is a count, not a share; it was not "
                             "judged")
                del series[name]
        reward = series.get("reward_mean")
        if reward is not None and not 0 <= min(reward.values) <= max(reward.values) <= 1:
            notes.append(f"rewards range {min(reward.values):.3g} to {max(reward.values):.3g}: the reward "
                         "thresholds, which assume a 0-1 scale, are applied to the reward's own scale (its floor to "
                         "the best reward an example or rollout reached)")
        if self.stepless:
            notes.append(f"{self.stepless} row(s) had no step and were skipped (first at {self.first_stepless})")
        if self.malformed:
            notes.append(f"{self.malformed} line(s) could not be parsed and were skipped "
                         f"(first at {self.first_malformed})")
        families: dict[str, int] = {}
        for name in self._unread:
            family = next((f for f in KNOWN_FAMILIES if name.startswith(f)), None)
            if family is not None:
                families[family] = families.get(family, 0) + 1
        if families:
            notes.append("read but judged by no signature: " + "; ".join(
                f"{family}* ({count}: {KNOWN_FAMILIES[family]})" for family, count in sorted(families.items())))
        if self._unread:
            # The names are the run's own text (a metrics.jsonl key can be any string): quoted and cut, as
            # every message quotes what it did not write, so they read as data, never as instructions.
            names = sorted(self._unread)
            more = f", and {len(names) - 12} more (all in `unread`)" if len(names) > 12 else ""
            notes.append(f"{len(names)} metric(s) that no reader maps were not judged"
                         f" (`log:` names are console labels): {', '.join(map(shown, names[:12]))}{more}")
        samples = (self._sample_low, self._sample_high) if self._sample_high >= self._sample_low else None
        steps = self._steps  # each step once where they came in order, as they mostly do
        if not all(map(operator.lt, steps, steps[1:])):
            steps = array("q", sorted(set(steps)))
        return Run(series, steps, self.nonfinite, self.ooms, notes,
                   sorted(self._unread), self.clocks, sorted(set(self.checkpoints)), dict(self.settings), samples,
                   self.checkpoints_seen)


# A name's meaning is fixed by the tables, and each Collector (every watch poll makes one) asks again for
# every name of a row: ~40 regular expressions per name. Bounded, as a name is the run's own text.
_meaning = lru_cache(maxsize=4096)(meaning)


def _track_for(name: str) -> Track | None:
    found = _meaning(name)
    return None if found is None else Track(name, found.canonical, found.rank, found.complement, found.vocabularies)


def _is_nonfinite(value: object) -> bool:
    if value.__class__ is float:
        return not math.isfinite(value)
    return value.__class__ is str and value.strip().lower() in _NONFINITE_WORDS


def _tidy(track: Track) -> Series:
    """Sort by step and keep one value per step."""
    steps, values = track.steps, track.values
    # A step time is logged by both of prime-rl's components at each step (REDUCE_MAX): its steps repeat by
    # design, which is no going back; a tuple for each was a quarter of a long run's memory (bench_diagnose.py).
    back = () if track.canonical in REDUCE_MAX else compress(range(1, len(steps)), map(operator.le, steps[1:], steps))
    went_back = [(i, steps[i - 1], steps[i]) for i in back]  # compress is in C: a long run is scanned fast
    if track.complement:
        values = array("d", (1.0 - v for v in values))
    steps, values = one_per_step(steps, values, track.canonical)
    return Series(track.canonical, track.raw, steps, values, track.vocabularies, went_back)


def one_per_step(steps: array, values: array, canonical: str) -> tuple[array, array]:
    """The values of the series `canonical` in the order they were read, sorted by step with one value per step:
    of a step read again, the later value (a resumed run logs again the steps after its checkpoint), the larger
    for a step time (REDUCE_MAX). A watch merges each poll's rows by this rule too, so that it keeps what a
    diagnose of the same bytes keeps."""
    if not all(map(operator.le, steps, steps[1:])):
        order = sorted(range(len(steps)), key=steps.__getitem__)  # stable: arrival order kept per step
        steps = array("q", (steps[i] for i in order))
        values = array("d", (values[i] for i in order))
    if len(set(steps)) != len(steps):
        keep_max = canonical in REDUCE_MAX
        merged_steps, merged_values = array("q"), array("d")
        for step, value in zip(steps, values, strict=True):
            if merged_steps and merged_steps[-1] == step:
                merged_values[-1] = max(merged_values[-1], value) if keep_max else value
            else:
                merged_steps.append(step)
                merged_values.append(value)
        steps, values = merged_steps, merged_values
    return steps, values


def _derive_group_shares(series: dict[str, Series]) -> None:
    """Trainable share from solved-all/solved-none, for eras that log no trainable share.

    HEAD logs the solved counts (`solved_none`, `solved_all`, `solved_some`); the classic era
    logged shares. Counts are turned into shares with the step's total when `solved_some` is there.
    """
    none, every = series.get("solved_none_frac"), series.get("solved_all_frac")
    if none is None or every is None:
        return
    some = series.get("solved_some_frac")
    steps, trainable, all_share, none_share = array("q"), array("d"), array("d"), array("d")
    for step, n in zip(none.steps, none.values, strict=True):
        a = every.at(step)
        if a is None:
            continue
        total = 1.0
        if some is not None and max(n, a) > 1:
            total = n + a + (some.at(step) or 0.0)
        if total <= 0:
            continue
        steps.append(step)
        none_share.append(n / total)
        all_share.append(a / total)
        trainable.append(1.0 - (n + a) / total)
    series["solved_none_frac"] = Series("solved_none_frac", none.raw, steps, none_share, none.vocabularies)
    series["solved_all_frac"] = Series("solved_all_frac", every.raw, steps, all_share, every.vocabularies)
    if "trainable_frac" not in series and steps:
        series["trainable_frac"] = Series("trainable_frac", f"1 - {none.raw} - {every.raw}", steps, trainable,
                                          none.vocabularies)

