"""A corpus of eval outputs in every format verifiers and the Prime platform write, on the reward
scales people use, each with the verdict it must get and why.

Written here from the formats' facts (field names per release, read in the verifiers and prime
sources; tools/evals/results.py lists them), not copied from any repository's outputs:
- verifiers 0.1.3-0.1.5 `vf-eval -s`: results.jsonl rows keyed `id`, numbered `i // r` over rows
  laid out rollout-major (every example once, then again), each metric a top-level key;
  metadata.json with `env`, `model`, `avg_reward`, `avg_<metric>`.
- verifiers 0.1.6-0.1.9: rows keyed `example_id`, `task`, `generation_ms`; metrics top-level;
  metadata with `env_id`, `avg_metrics`.
- verifiers 0.1.10-0.3: `example_id`, `metrics{}` and each metric flattened, `error` as
  `{error, message, error_chain_repr, error_chain_str}`; metadata with `pass_at_k`.
- verifiers 0.4 `traces.jsonl`: one Episode a line, `rewards{name: {score, weight}}`, `metrics{}`.
- prime-rl `uv run eval`: the same Episodes in `monitors/file/traces/stream/NNNNN.jsonl`.
- a hosted eval's samples, saved from `prime eval samples ID -o json`: one pretty-printed
  document `{"samples": [{example_id, score, input, output}], total, page, limit}`.

`python -m tests.eval_corpus` (from the repo root) prints each case's verdict next to the expected one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_support import episode

# One rollout: its total reward and its components (name -> score); `metrics` are recorded, not summed.
Parts = dict[str, float]


@dataclass(frozen=True)
class Case:
    name: str
    writer: Callable[[Path], Path]  # writes the run under a folder, returns what the user passes
    verdict: str
    judged_by: str
    why: str  # what the summary must say (in its scale line, warnings or recommendations)
    fractions: tuple[float | None, float | None] | None = None  # (all-fail, all-pass) the groups must show


# --- reward scales --------------------------------------------------------------------------------

def game(rng: random.Random, won: bool) -> tuple[Parts, Parts]:
    """A win worth 1.0 plus format and efficiency terms: totals run from about 0.2 to 1.4."""
    rewards = {"victory": float(won), "format": round(rng.uniform(0.1, 0.2), 3),
               "efficiency": round(rng.uniform(0.1, 0.2), 3) if won else round(rng.uniform(0.0, 0.1), 3)}
    return rewards, {"turns": float(rng.randint(4, 30))}


def shaped_solve(rng: random.Random, solved: bool) -> tuple[Parts, Parts]:
    """Per-turn shaping (0.05 a useful turn) plus a solve worth 1.0; `solved` is a metric, not a reward."""
    return ({"turn_progress": round(0.05 * rng.randint(1, 8), 3), "solve": float(solved)},
            {"solved": float(solved)})


def games(pattern: list[list[bool]], seed: int, scale=game) -> list[list[tuple[Parts, Parts]]]:
    rng = random.Random(seed)
    return [[scale(rng, outcome) for outcome in group] for group in pattern]


def never(n: int, size: int = 4) -> list[list[bool]]:
    return [[False] * size for _ in range(n)]


def mixed(n: int, size: int = 4) -> list[list[bool]]:
    return [[i % 2 == 0 for i in range(size)] for _ in range(n)]


def always(n: int, size: int = 4) -> list[list[bool]]:
    return [[True] * size for _ in range(n)]


def plain(values: list[list[float]], name: str) -> list[list[tuple[Parts, Parts]]]:
    return [[({name: v}, {}) for v in group] for group in values]


# --- writers, one per format ------------------------------------------------------------------------

def _total(rewards: Parts) -> float:
    return round(sum(rewards.values()), 6)


def _prompt(example: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Play well."}, {"role": "user", "content": f"Board {example}: your move."}]


def write_v015(folder: Path, groups: list[list[tuple[Parts, Parts]]]) -> Path:
    """verifiers 0.1.3-0.1.5: ids `i // r` over rows laid out rollout-major, metrics top-level."""
    folder.mkdir(parents=True, exist_ok=True)
    n, r = len(groups), len(groups[0])
    rows = []
    for i in range(n * r):
        example, attempt = i % n, i // n  # Dataset.repeat: every example once, then again
        rewards, metrics = groups[example][attempt]
        rows.append({"id": i // r, "prompt": _prompt(example), "completion": [{"role": "assistant", "content": "e4"}],
                     "task": "default", "generation_ms": 812.0, "scoring_ms": 3.0, "total_ms": 815.0,
                     "reward": _total(rewards), **rewards, **metrics})
    _jsonl(folder / "results.jsonl", rows)
    (folder / "metadata.json").write_text(json.dumps({
        "env": "board-game", "model": "stub-model", "num_examples": n, "rollouts_per_example": r,
        "sampling_args": {"max_tokens": None}, "date": "2025-10-01 12:00:00", "time_ms": 9000.0,
        "avg_reward": sum(row["reward"] for row in rows) / len(rows)}))
    return folder


def write_v016(folder: Path, groups: list[list[tuple[Parts, Parts]]]) -> Path:
    """verifiers 0.1.6-0.1.9: example_id, metrics top-level, metadata with env_id and avg_metrics."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"example_id": example, "prompt": _prompt(example), "completion": [{"role": "assistant", "content": "ok"}],
             "task": "default", "reward": _total(rewards), "generation_ms": 640.0, "scoring_ms": 2.0,
             "total_ms": 642.0, **rewards, **metrics}
            for example, group in enumerate(groups) for rewards, metrics in group]
    _jsonl(folder / "results.jsonl", rows)
    (folder / "metadata.json").write_text(json.dumps({
        "env_id": "shaped-puzzle", "env_args": {}, "model": "stub-model", "base_url": "http://127.0.0.1:8000/v1",
        "num_examples": len(groups), "rollouts_per_example": len(groups[0]), "sampling_args": {}, "time_ms": 1.0,
        "avg_reward": 0.0, "avg_metrics": {}, "state_columns": []}))
    return folder


def write_v02(folder: Path, groups: list[list[tuple[Parts, Parts]]], errors: int = 0,
              temperature: float | None = None) -> Path:
    """verifiers 0.1.10-0.3: metrics{} and flattened, error data on failed rows, metadata with pass_at_k and
    the run's `sampling_args` (`-T` lands in it as `temperature`)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for example, group in enumerate(groups):
        for rewards, metrics in group:
            parts = {**rewards, **metrics}
            rows.append({"example_id": example, "prompt": _prompt(example),
                         "completion": [{"role": "assistant", "content": "move"}], "reward": _total(rewards),
                         "timing": {"generation_ms": 500.0}, "is_completed": True, "is_truncated": False,
                         "stop_condition": "completed", "metrics": parts, "token_usage": {"input_tokens": 90.0,
                                                                                           "output_tokens": 12.0},
                         **parts})
    for row in rows[:errors]:
        row.update(reward=0.0, error={"error": "ModelError", "message": "upstream returned 503",
                                      "error_chain_repr": "ModelError('upstream returned 503')",
                                      "error_chain_str": "ModelError: upstream returned 503"},
                   error_chain="ModelError('upstream returned 503')")
    _jsonl(folder / "results.jsonl", rows)
    (folder / "metadata.json").write_text(json.dumps({
        "env_id": "board-game", "model": "stub-model", "num_examples": len(groups),
        "rollouts_per_example": len(groups[0]), "sampling_args": {"max_tokens": None, "temperature": temperature},
        "avg_reward": 0.0, "avg_metrics": {}, "avg_error": 0.0,
        "pass_at_k": {"1": 0.0}, "pass_all_k": {"1": 0.0}, "pass_threshold": 0.5, "version_info": {}}))
    return folder


def _episode(example: int, rewards: Parts, metrics: Parts, env: str) -> dict[str, Any]:
    record = episode(example, 0.0, env=env)
    record["traces"][0].update(rewards={name: {"score": score, "weight": 1.0} for name, score in rewards.items()},
                               metrics=metrics)
    return record


def write_traces(folder: Path, groups: list[list[tuple[Parts, Parts]]], env: str = "board-game") -> Path:
    """verifiers 0.4 vf-eval: traces.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    _jsonl(folder / "traces.jsonl", [_episode(example, rewards, metrics, env)
                                     for example, group in enumerate(groups) for rewards, metrics in group])
    return folder


def write_v04_run(folder: Path, groups: list[list[tuple[Parts, Parts]]] | None, *, temperature: float | None = None,
                  log: tuple[str, ...] = (), in_traces: bool = False) -> Path:
    """A verifiers 0.4 vf-eval run directory (v1/cli/output.py): the resolved config saved before any rollout
    (`configs/resolved/eval.json`, with `sampling` and `num_rollouts`), `traces.jsonl` (created empty up front,
    an Episode appended per rollout; `groups=None`: the eval stopped before creating it), and this attempt's
    log `logs/attempt_1/eval.log` with `logs/latest` pointing at it. `in_traces` records the temperature on each
    trace's agent config instead of the saved config."""
    folder.mkdir(parents=True, exist_ok=True)
    sampling = {"temperature": None if in_traces else temperature, "top_p": None, "reasoning_effort": None,
                "max_tokens": 512}
    config = folder / "configs" / "resolved" / "eval.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"model": "stub-model", "sampling": sampling, "num_tasks": len(groups or [0]),
                                  "num_rollouts": len(groups[0]) if groups else 3, "output_dir": "outputs",
                                  "run": {"name": folder.name, "dir": folder.name}, "push": False}, indent=2))
    if groups is not None:
        records = [_episode(example, rewards, metrics, "board-game")
                   for example, group in enumerate(groups) for rewards, metrics in group]
        for record in records if in_traces else []:
            record["traces"][0]["agent"]["config"]["sampling"] = {**sampling, "temperature": temperature}
        _jsonl(folder / "traces.jsonl", records)
    attempt = folder / "logs" / "attempt_1"
    attempt.mkdir(parents=True)
    (attempt / "eval.log").write_text("".join(line + "\n" for line in [
        "12:00:01    INFO eval config:", json.dumps({"model": "stub-model", "sampling": sampling}, indent=2),
        f"12:00:02    INFO running {len(groups or [0])}x3 rollouts on stub-model", *log]))
    (folder / "logs" / "latest").symlink_to("attempt_1")
    return folder


def write_stream(folder: Path, groups: list[list[tuple[Parts, Parts]]]) -> Path:
    """prime-rl `uv run eval`: the same episodes in the run's trace stream, two chunks."""
    stream = folder / "monitors" / "file" / "traces" / "stream"
    stream.mkdir(parents=True, exist_ok=True)
    records = [_episode(example, rewards, metrics, "shaped-puzzle")
               for example, group in enumerate(groups) for rewards, metrics in group]
    half = len(records) // 2
    _jsonl(stream / "00000.jsonl", records[:half])
    _jsonl(stream / "00001.jsonl", records[half:])
    return folder


def write_hosted(folder: Path, groups: list[list[tuple[Parts, Parts]]]) -> Path:
    """`prime eval samples ID -o json > samples.json`: a pretty-printed document of scored samples."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = [{"example_id": example, "score": _total(rewards), "input": f"Board {example}: your move.",
                "output": "e4"} for example, group in enumerate(groups) for rewards, _ in group]
    path = folder / "samples.json"
    path.write_text(json.dumps({"samples": samples, "total": len(samples), "page": 1, "limit": 1000}, indent=2))
    return path


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


# --- the cases ----------------------------------------------------------------------------------------

CASES = [
    Case("game-mostly-never-wins-v04", lambda f: write_traces(f, games(never(7) + mixed(3), 1)),
         "too-hard", "success-component", "pass = victory at its top", (0.7, 0.0)),
    Case("game-mostly-never-wins-v02", lambda f: write_v02(f, games(never(7) + mixed(3), 2)),
         "too-hard", "success-component", "pass = victory at its top", (0.7, 0.0)),
    Case("game-mixed-is-ready-v016", lambda f: write_v016(f, games(never(3) + mixed(5) + always(2), 3)),
         "ready", "success-component", "go on to training", (0.3, 0.2)),
    Case("game-ids-v015", lambda f: write_v015(f, games(always(1, 3) + never(3, 3), 4)),
         "too-hard", "success-component", "grouped by their prompts", (0.75, 0.25)),
    Case("shaped-solve-rarely-solved-stream", lambda f: write_stream(f, games(never(6) + mixed(2), 5, shaped_solve)),
         "too-hard", "success-component", "pass = solved at its top", (0.75, 0.0)),
    Case("shaped-solve-ready-v02", lambda f: write_v02(f, games(never(2) + mixed(6), 6, shaped_solve)),
         "ready", "success-component", "pass = solved at its top", (0.25, 0.0)),
    Case("two-values-not-0-1-v04", lambda f: write_traces(f, plain([[-1, 1, 1, -1], [1, -1, -1, -1],
                                                                    [1, 1, -1, 1], [-1, -1, -1, -1]], "outcome")),
         "ready", "binary", "binary: 1 passes, -1 fails", (0.25, 0.0)),
    Case("two-values-0.2-0.9-hosted", lambda f: write_hosted(f, plain([[0.9, 0.9, 0.9]] * 3 + [[0.2, 0.9, 0.2]],
                                                                      "score")),
         "too-easy", "binary", "binary: 0.9 passes, 0.2 fails", (0.0, 0.75)),
    Case("continuous-unit-v04", lambda f: write_traces(f, plain([[0.2, 0.5, 0.8]] * 4, "lcs_ratio")),
         "ready", "unit-range", "continuous on 0..1", (0.0, 0.0)),
    Case("continuous-beyond-unit-v02", lambda f: write_v02(f, plain([[-2.0, -2.0], [3.0, 3.0], [0.5, 1.5],
                                                                     [1.0, -1.0]], "score_delta")),
         "no-diversity", "observed-range", "observed range -2..3", (0.25, 0.25)),
    # A group of one has no variance to show: its shares would be the pass rate (issue 33).
    Case("one-rollout-per-example-v016", lambda f: write_v016(f, games([[True], [False], [False], [True]], 7)),
         "unjudged", "success-component", "rerun with `-r 3` or more", (None, None)),
    Case("errored-v02", lambda f: write_v02(f, games(mixed(4), 8), errors=4),
         "broken", "success-component", "ModelError: upstream returned 503", None),
]


def summary_text(summary) -> str:
    return "\n".join([summary.render(), *(r.reason for r in summary.recommendations)])


if __name__ == "__main__":
    import sys
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tools.evals.results import locate, read_run
    from tools.evals.summarize import summarize_run

    with tempfile.TemporaryDirectory() as scratch:
        for case in CASES:
            s = summarize_run(read_run(locate(case.writer(Path(scratch) / case.name))))
            print(f"{case.name:38} {s.format:7} {s.verdict:13} (expected {case.verdict:13}) "
                  f"all-fail {s.all_fail_fraction}  {s.reward_scale.description}")
