"""Synthetic training runs for the diagnosis tests, written in every source format.

A run is a list of per-step dicts of canonical values (the names of tools.diagnose.series).
`make_run` gives a healthy, noisy run: reward rising, entropy easing down, small mismatch and
grad norm, few truncations or errors. Overrides replace one canonical series with a constant or
a function of (step, rng); a value of None leaves the metric out at that step (prime-rl drops
non-finite values), float("nan") writes NaN, and the string "NaN" writes NaN as text. A row may
carry `time` (unix seconds: when the step was logged, used for every format's timestamps) and
`eval_reward` (a held-out eval at that step, written as prime-rl's eval row).
"""

from __future__ import annotations

import csv
import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Value = float | int | str | None
Override = Value | Callable[[int, random.Random], Value]


def make_run(steps: int = 200, seed: int = 0, **overrides: Override) -> list[dict[str, Value]]:
    rng = random.Random(seed)
    run = []
    for s in range(steps):
        progress = s / steps
        row: dict[str, Value] = {
            "reward_mean": min(1.0, max(0.0, 0.15 + 0.6 * progress + rng.gauss(0, 0.04))),
            "reward_std": 0.3 + rng.gauss(0, 0.02),
            "entropy": 0.6 * (1 - 0.3 * progress) + rng.gauss(0, 0.01),
            "mismatch_kl": 0.002 * math.exp(rng.gauss(0, 0.2)),
            "grad_norm": 0.25 * math.exp(rng.gauss(0, 0.25)),
            "loss": rng.gauss(0, 0.01),
            "response_length": 400 + 100 * progress + rng.gauss(0, 20),
            "truncated_frac": max(0.0, 0.02 + rng.gauss(0, 0.005)),
            "trainable_frac": 0.75 + rng.gauss(0, 0.03),
            "solved_all_frac": 0.1,
            "solved_none_frac": 0.15,
            "errored_frac": 0.005 + abs(rng.gauss(0, 0.003)),
            "off_policy_max": rng.choice((1, 1, 2)),
            "off_policy_mean": 0.8,
            "off_policy_dropped": 0,
            "wait_for_batch": 0.3 * math.exp(rng.gauss(0, 0.2)),
            "wait_for_policy": 0.5 * math.exp(rng.gauss(0, 0.2)),
            "step_time": 10 * math.exp(rng.gauss(0, 0.05)),
            "learning_rate": 1e-6,
        }
        for name, override in overrides.items():
            row[name] = override(s, rng) if callable(override) else override
        run.append(row)
    return run


HEAD_ORCHESTRATOR = {
    "reward_mean": "train/agg/all/agent/reward/mean",
    "truncated_frac": "train/agg/all/agent/is_truncated/mean",
    "trainable_frac": "train/agg/all/agent/is_trainable/mean",
    "errored_frac": "train/agg/all/agent/has_error/mean",
    "response_length": "train/agg/all/num_output_tokens/mean",
    "off_policy_max": "off_policy/max",
    "off_policy_mean": "off_policy/mean",
    "off_policy_dropped": "off_policy/dropped",
    "wait_for_policy": "time/wait_for_policy",
    "step_time": "time/step",
}
HEAD_TRAINER = {
    "loss": "loss/mean",
    "entropy": "entropy/all/mean",
    "mismatch_kl": "mismatch_kl/all/mean",
    "grad_norm": "optim/grad_norm",
    "learning_rate": "optim/lr",
    "wait_for_batch": "time/wait_for_batch",
    "step_time": "time/step",
}
CLASSIC_ORCHESTRATOR = {
    "reward_mean": "reward/all/mean",
    "response_length": "seq_len/all/mean",
    "truncated_frac": "is_truncated/all/mean",
    "solved_all_frac": "solve_all/all",
    "solved_none_frac": "solve_none/all",
    "errored_frac": "errored_rollouts/all",
    "off_policy_max": "off_policy_level/all/max",
    "wait_for_policy": "time/wait_for_ckpt",
    "step_time": "time/step",
}
CLASSIC_TRAINER = {
    "loss": "loss/mean",
    "entropy": "entropy/mean",
    "mismatch_kl": "mismatch_kl/mean",
    "grad_norm": "optim/grad_norm",
    "learning_rate": "optim/lr",
    "wait_for_batch": "time/wait_for_batch",
    "step_time": "time/step",
}
ERAS = {"head": (HEAD_ORCHESTRATOR, HEAD_TRAINER), "classic": (CLASSIC_ORCHESTRATOR, CLASSIC_TRAINER)}
EVAL_NAMES = {"head": "eval/reverse-text/all/agent/avg@4", "classic": "eval/reverse-text/avg@4"}
T0 = 1.7e9


def logged_at(values: dict[str, Value], step: int) -> float:
    return float(values.get("time") or T0 + step)


def _filler(step: int, count: int) -> dict[str, float]:
    """Metrics diagnosis does not read, so rows are as wide as prime-rl's."""
    return {f"perf/extra_{i}/mean": (step * 31 + i) % 97 / 97 for i in range(count)}


def _named(values: dict[str, Value], names: dict[str, str]) -> dict[str, Value]:
    return {raw: values[canonical] for canonical, raw in names.items() if values.get(canonical) is not None}


def rows(run: list[dict[str, Value]], era: str = "head", filler: int = 10) -> list[dict[str, Any]]:
    """metrics.jsonl rows: an orchestrator row and a trainer row per step, as prime-rl appends them."""
    orchestrator, trainer = ERAS[era]
    out = []
    for step, values in enumerate(run):
        at = logged_at(values, step)
        out.append({"step": step, "time": at, **_named(values, orchestrator), **_filler(step, filler)})
        out.append({"step": step, "time": at + 0.5, **_named(values, trainer), **_filler(step, filler)})
        if values.get("eval_reward") is not None:
            out.append({"step": step, "time": at + 0.7, EVAL_NAMES[era]: values["eval_reward"]})
    return out


def write_jsonl(path: Path, run: list[dict[str, Value]], era: str = "head") -> Path:
    with path.open("w") as handle:
        for row in rows(run, era):
            handle.write(json.dumps(row) + "\n")
    return path


def write_prime_train_metrics(path: Path, run: list[dict[str, Value]]) -> Path:
    """`prime train metrics` prints one pretty JSON document: {"metrics": [records]}."""
    path.write_text(json.dumps({"metrics": rows(run, filler=3)}, indent=2))
    return path


def write_csv(path: Path, run: list[dict[str, Value]], run_name: str = "sunny-wave-3") -> Path:
    """W&B "download CSV": a Step column, then `<run> - <metric>` with __MIN/__MAX companions."""
    names = {**HEAD_ORCHESTRATOR, **HEAD_TRAINER}
    header = ["Step"]
    for raw in names.values():
        header += [f"{run_name} - {raw}", f"{run_name} - {raw}__MIN", f"{run_name} - {raw}__MAX"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for step, values in enumerate(run):
            cells: list[Any] = [step]
            for canonical in names:
                value = values.get(canonical)
                text = "" if value is None else str(value)
                cells += [text, text, text]
            writer.writerow(cells)
    return path


def _pct(value: Value) -> str:
    return f"{float(value):.1%}"


def _f(value: Value) -> str:
    return f"{float(value):.4f}"


def clock_of(at: float) -> str:
    """loguru's `HH:mm:ss` (UTC here)."""
    return time.strftime("%H:%M:%S", time.gmtime(at))


def console_lines(run: list[dict[str, Value]], style: str = "head", who: str = "both") -> list[str]:
    """Orchestrator and trainer step lines, as loguru prints them (SUCCESS level); `who` keeps one side."""
    start = clock_of(logged_at(run[0], 0) - 2) if run else "12:00:00"
    lines = [f"{start}    INFO Starting orchestrator", f"{start}    INFO Starting trainer"]
    for step, v in enumerate(run):
        if style == "head":
            orchestrator = [f"Step {step}", f"{float(v['step_time']):.1f}s"]
            if v.get("reward_mean") is not None:
                orchestrator.append(f"Reward {_f(v['reward_mean'])}")
            trainable = round(float(v["trainable_frac"]) * 64)
            orchestrator += [f"Trainable {trainable}/64 ({trainable / 64:.1%})", "Turns 1.0", "Branches 1.0",
                             f"Max Off-Policy {v['off_policy_max']}", f"Error {_pct(v['errored_frac'])}",
                             "Cancelled 0.0%", f"Truncation {_pct(v['truncated_frac'])}"]
            trainer = [f"Step {step}", f"{float(v['step_time']):.1f}s", f"Loss {_f(v['loss'])}",
                       f"Entropy {_f(v['entropy'])}", f"Mismatch KL {_f(v['mismatch_kl'])}"]
            if v.get("grad_norm") is not None:
                trainer.append(f"Grad. Norm {_f(v['grad_norm'])}")
            trainer += [f"LR {float(v['learning_rate']):.2e}", "Throughput 1234 tokens/s", "MFU 41.2%",
                        "Peak Mem. 61.3 GiB"]
        else:
            orchestrator = [f"Step {step}", f"Time: {float(v['step_time']):.2f}s"]
            if v.get("reward_mean") is not None:
                orchestrator.append(f"Reward: {_f(v['reward_mean'])}")
            orchestrator += [f"Seq. Length: {float(v['response_length']):.1f} tokens/sample", "Async Level: 1",
                             f"Max. Off-Policy Level: {v['off_policy_max']}"]
            trainer = [f"Step {step}", f"Time: {float(v['step_time']):.2f}s", f"Loss: {_f(v['loss'])}",
                       f"Entropy: {_f(v['entropy'])}", f"Mismatch KL: {_f(v['mismatch_kl'])}"]
            if v.get("grad_norm") is not None:
                trainer.append(f"Grad. Norm: {_f(v['grad_norm'])}")
            trainer += [f"LR: {float(v['learning_rate']):.2e}", "Throughput: 1234 tokens/s", "MFU: 41.2%",
                        "Peak Mem.: 61.3 GiB"]
        at = clock_of(logged_at(v, step))
        if who != "trainer":
            lines.append(f"{at} SUCCESS " + " | ".join(orchestrator))
        if who != "orchestrator":
            lines.append(f"{at} SUCCESS " + " | ".join(trainer))
    return lines


def write_console(path: Path, run: list[dict[str, Value]], style: str = "head", extra: list[str] = ()) -> Path:
    path.write_text("\n".join(console_lines(run, style) + list(extra)) + "\n")
    return path


def write_json_log(path: Path, run: list[dict[str, Value]], extra: list[str] = ()) -> Path:
    """prime-rl's `log.json_logging = true`: one JSON record per line, the line in `message`."""
    with path.open("w") as handle:
        for line in console_lines(run) + list(extra):
            clock, rest = line.split(" ", 1)
            level, _, message = rest.strip().partition(" ")
            record = {"timestamp": f"2026-08-21T{clock}Z", "level": level, "message": message,
                      "module": "orchestrator", "function": "run", "line": 1}
            handle.write(json.dumps(record) + "\n")
    return path


WRITERS: dict[str, Callable[[Path, list[dict[str, Value]]], Path]] = {
    "metrics-jsonl": lambda d, run: write_jsonl(d / "metrics.jsonl", run),
    "metrics-jsonl-classic": lambda d, run: write_jsonl(d / "metrics.jsonl", run, era="classic"),
    "prime-train-metrics": lambda d, run: write_prime_train_metrics(d / "metrics.json", run),
    "csv": lambda d, run: write_csv(d / "export.csv", run),
    "console-log": lambda d, run: write_console(d / "orchestrator.log", run),
    "console-log-classic": lambda d, run: write_console(d / "rl.log", run, style="classic"),
    "json-log": lambda d, run: write_json_log(d / "orchestrator.log", run),
}
