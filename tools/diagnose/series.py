"""Canonical per-step series, and the crosswalk from every metric name we know to them.

Readers hand rows of `{raw metric name: value}` to a `Collector`; it keeps, for each raw name
that the crosswalk maps to a canonical series, two compact arrays (steps, values) and nothing
of the row itself, so memory is a few bytes per step per canonical metric however wide the rows
are. `finish()` then picks, for every canonical series, the best-ranked raw name present.

Names: shared/research/prime-rl.md section 3.3 (HEAD and classic-era metrics.jsonl names) and
3.4 (console labels, read as `log:<Label>`); rl-stability.md section 7 (verl, TRL, AReaL).
"""

from __future__ import annotations

import math
import operator
import re
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from tools.env_refs import shown

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
    # Read and shown, judged by no signature (prime-rl v0.9+ names, research/prime-rl.md section 7).
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

# Trainer and orchestrator both log `time/step` into one metrics.jsonl (and both print a time in
# their step lines); the longer of the two is the step's wall time. Elsewhere a repeated step
# comes from a resumed run, whose later value wins.
REDUCE_MAX = frozenset({"step_time"})

_A = r"[^/]+"  # an agent, seat or env name
_AGG_ALL = rf"train/agg/all/{_A}"
_AGG_EFF = rf"train/agg/effective/{_A}"
_ENV_ALL = rf"train/{_A}/all/{_A}"
_EVAL_ALL = rf"eval/{_A}/all/{_A}"

# (pattern, canonical, rank): the lowest rank present in a run wins. `all` (every arrival) ranks
# above `effective` (what was shipped after filtering), because filtering biases reward toward
# mixed groups. Per-env names rank below the aggregate. Other frameworks rank last.
_CROSSWALK: tuple[tuple[str, str, int], ...] = (
    (rf"{_AGG_ALL}/reward/mean|reward/all/mean|log:Reward", "reward_mean", 0),
    (rf"{_AGG_EFF}/reward/mean|reward/mean", "reward_mean", 1),
    (rf"{_ENV_ALL}/reward/mean|reward/{_A}/mean", "reward_mean", 2),
    (r"critic/score/mean|reward|rollout/reward", "reward_mean", 3),
    (rf"{_AGG_ALL}/reward/max|reward/all/max|reward/max", "reward_max", 0),
    (rf"{_AGG_EFF}/reward/max|reward/{_A}/max", "reward_max", 2),
    (rf"{_AGG_ALL}/reward/min|reward/all/min|reward/min", "reward_min", 0),
    (rf"{_AGG_EFF}/reward/min|reward/{_A}/min", "reward_min", 2),
    (rf"{_AGG_ALL}/reward/std|reward/all/std", "reward_std", 0),
    (rf"{_AGG_EFF}/reward/std|reward/std|reward_std|critic/score/std", "reward_std", 1),
    (r"entropy/all/mean|entropy/mean|log:Entropy", "entropy", 0),
    (rf"entropy/{_A}/mean", "entropy", 2),
    (r"actor/entropy|entropy", "entropy", 3),
    (r"mismatch_kl/all/mean|mismatch_kl/mean|log:Mismatch KL", "mismatch_kl", 0),
    (rf"mismatch_kl/{_A}/mean", "mismatch_kl", 2),
    (r"rollout_corr/k3_kl", "mismatch_kl", 3),
    (r"optim/grad_norm|log:Grad\. Norm", "grad_norm", 0),
    (r"actor/grad_norm|grad_norm", "grad_norm", 3),
    (r"loss/mean|log:Loss", "loss", 0),
    (r"loss|actor/pg_loss", "loss", 3),
    # Output tokens first; `seq_len` (classic era, and the docs' name) counts the prompt as well.
    # `decode_len` is the hosted orchestrator's output tokens per rollout (prefill_len is the prompt).
    (r"train/agg/all/num_output_tokens/mean|completion_len/all/mean|completion_len/mean|decode_len/all/mean"
     r"|decode_len/mean", "response_length", 0),
    (r"train/agg/effective/num_output_tokens/mean", "response_length", 1),
    (rf"train/{_A}/all/num_output_tokens/mean|completion_len/{_A}/mean|decode_len/{_A}/mean", "response_length", 2),
    (r"seq_len/all/mean|seq_len/mean|log:Seq\. Length", "response_length", 2),
    (rf"seq_len/{_A}/mean|train/agg/(?:all|effective)/num_total_tokens/mean", "response_length", 3),
    (r"response_length/mean|completions/mean_length", "response_length", 3),
    # Eval rows: `eval/<env>/<subset>/<agent>/avg@k` (HEAD), `eval/<env>/avg@k` (classic).
    (rf"eval/{_A}/all/{_A}/avg@\d+|eval/{_A}/avg@\d+|log:Eval Reward", "eval_reward", 0),
    (rf"eval/{_A}/effective/{_A}/avg@\d+|eval/{_A}/all/{_A}/reward/mean", "eval_reward", 1),
    (rf"{_AGG_ALL}/is_truncated/mean|is_truncated/all/mean|log:Truncation", "truncated_frac", 0),
    (rf"{_AGG_EFF}/is_truncated/mean|is_truncated/mean", "truncated_frac", 1),
    (r"response_length/clip_ratio|completions/clipped_ratio|ppo_actor/no_eos_ratio", "truncated_frac", 3),
    (rf"{_AGG_ALL}/is_trainable/mean|log:Trainable", "trainable_frac", 0),
    # The hosted orchestrator's share of problems with mixed outcomes: 1 - solve_none - solve_all.
    (r"effective_batch_size/all", "trainable_frac", 1),
    (rf"effective_batch_size/{_A}", "trainable_frac", 2),
    (rf"{_AGG_ALL}/solved_all|solve_all/all", "solved_all_frac", 0),
    (rf"solve_all/{_A}", "solved_all_frac", 2),
    (rf"{_AGG_ALL}/solved_none|solve_none/all", "solved_none_frac", 0),
    (rf"solve_none/{_A}", "solved_none_frac", 2),
    (rf"{_AGG_ALL}/solved_some", "solved_some_frac", 0),
    (rf"{_AGG_ALL}/has_error/mean|has_error/mean|log:Error", "errored_frac", 0),
    (r"errored_rollouts/all", "errored_frac", 1),
    (r"off_policy/max|off_policy_level/all/max|log:Max Off-Policy|log:Max\. Off-Policy Level", "off_policy_max", 0),
    (r"off_policy/mean|off_policy_level/all/mean", "off_policy_mean", 0),
    (r"off_policy/dropped", "off_policy_dropped", 0),
    (r"time/wait_for_batch", "wait_for_batch", 0),
    (r"time/wait_for_policy|time/wait_for_ckpt", "wait_for_policy", 0),
    (r"time/step|log:Time", "step_time", 0),
    (r"optim/lr|log:LR", "learning_rate", 0),
    (r"actor/lr|learning_rate|lr", "learning_rate", 3),
    # v0.9+ (research/prime-rl.md section 7); the old `reward/{all,env}/mean` family above stays.
    (r"is_timeout/all/mean", "timeout_frac", 0),
    (rf"is_timeout/{_A}/mean", "timeout_frac", 2),
    (rf"{_AGG_ALL}/timing/agent/model/mean", "model_time", 0),
    (rf"{_AGG_EFF}/timing/agent/model/mean", "model_time", 1),
    (rf"{_EVAL_ALL}/is_truncated/mean", "eval_truncated_frac", 0),
    (rf"{_EVAL_ALL}/has_error/mean", "eval_errored_frac", 0),
    (rf"eval/{_A}/all/seq_len/mean", "eval_response_length", 0),
    (r"expert_load/cv/mean", "expert_load_cv", 0),
    (r"expert_load/cold_frac/mean", "expert_cold_frac", 0),
    (r"loss/perplexity", "perplexity", 0),
    (r"val/loss", "val_loss", 0),
    (r"val/perplexity", "val_perplexity", 0),
    (r"filters/all/is_filtered", "filtered_frac", 0),
    (rf"filters/{_A}/is_filtered", "filtered_frac", 2),
)
_COMPILED = tuple((re.compile(pattern), canonical, rank) for pattern, canonical, rank in _CROSSWALK)
# TRL logs the share of groups whose rewards all agree; the trainable share is its complement.
_COMPLEMENT = {"frac_reward_zero_std": "trainable_frac"}

# Row fields that are bookkeeping, not metrics: never listed as unread.
# `producer` tags each row of v0.9+'s shared `monitors/file/metrics.jsonl` with its writer (the
# file monitor's `producer` field: orchestrator, trainer, ...). `progress/*` counts what was
# consumed (SFT's epoch, samples, tokens), a position rather than a measurement.
_NOT_METRICS = frozenset({"step", "_step", "Step", "global_step", "train/global_step", "trainer/global_step", "time",
                          "timestamp", "_timestamp", "_runtime", "epoch", "train/epoch", "producer",
                          "progress/epoch", "progress/num_samples", "progress/num_tokens"})

# Families a hosted run logs that no signature judges, named in `notes` by what they measure
# (the hosted orchestrator's buffer and filters; rl-stability.md section 2; research/prime-rl.md 3.3).
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
    steps: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("d"))


@dataclass
class Series:
    """One canonical series, sorted by step with one value per step."""

    name: str
    raw: str
    steps: array
    values: array

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

    step_times: dict[int, float] = field(default_factory=dict)  # when each step was first reported
    last_seen: dict[str, float] = field(default_factory=dict)  # component -> the last time it logged anything

    def stamp(self, component: str, time: float, step: int | None) -> None:
        if step is not None and step not in self.step_times:
            self.step_times[step] = time
        if time >= self.last_seen.get(component, time):
            self.last_seen[component] = time


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
        self._sample_low = math.inf
        self._sample_high = -math.inf

    @property
    def steps_seen(self) -> int:
        return len(self._steps)

    def sample_reward(self, reward: float) -> None:
        self._sample_low = min(self._sample_low, reward)
        self._sample_high = max(self._sample_high, reward)

    def row(self, step: int, row: dict, scan: bool) -> None:
        """One row of one step. `scan`: the row may hold non-finite values outside the crosswalk."""
        if not self._steps or self._steps[-1] != step:
            self._steps.append(step)
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
            elif name not in _NOT_METRICS:
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
        return Run(series, array("q", sorted(set(self._steps))), self.nonfinite, self.ooms, notes,
                   sorted(self._unread), self.clocks, sorted(set(self.checkpoints)), dict(self.settings), samples,
                   self.checkpoints_seen)


def _track_for(name: str) -> Track | None:
    if name in _COMPLEMENT:
        return Track(name, _COMPLEMENT[name], 1, complement=True)
    for pattern, canonical, rank in _COMPILED:
        if pattern.fullmatch(name):
            return Track(name, canonical, rank)
    return None


def _is_nonfinite(value: object) -> bool:
    if value.__class__ is float:
        return not math.isfinite(value)
    return value.__class__ is str and value.strip().lower() in _NONFINITE_WORDS


def _tidy(track: Track) -> Series:
    """Sort by step and keep one value per step."""
    steps, values = track.steps, track.values
    if not all(map(operator.le, steps, steps[1:])):
        order = sorted(range(len(steps)), key=steps.__getitem__)  # stable: arrival order kept per step
        steps = array("q", (steps[i] for i in order))
        values = array("d", (values[i] for i in order))
    if track.complement:
        values = array("d", (1.0 - v for v in values))
    if len(set(steps)) != len(steps):
        keep_max = track.canonical in REDUCE_MAX
        merged_steps, merged_values = array("q"), array("d")
        for step, value in zip(steps, values, strict=True):
            if merged_steps and merged_steps[-1] == step:
                merged_values[-1] = max(merged_values[-1], value) if keep_max else value
            else:
                merged_steps.append(step)
                merged_values.append(value)
        steps, values = merged_steps, merged_values
    return Series(track.canonical, track.raw, steps, values)


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
    series["solved_none_frac"] = Series("solved_none_frac", none.raw, steps, none_share)
    series["solved_all_frac"] = Series("solved_all_frac", every.raw, steps, all_share)
    if "trainable_frac" not in series and steps:
        series["trainable_frac"] = Series("trainable_frac", f"1 - {none.raw} - {every.raw}", steps, trainable)

