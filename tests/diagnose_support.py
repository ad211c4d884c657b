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
            if style == "head" and v.get("eval_reward") is not None:  # HEAD's line after an eval epoch
                lines.append(f"{at} SUCCESS Evaluated reverse-text (Step {step}) | Policy v{step} | 41.2s | "
                             f"Reward {_f(v['eval_reward'])} | Turns 1.0 | Branches 1.0 | Error 0.0% | Truncation 0.0%")
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


# --- hosted run exports ------------------------------------------------------------------------
# Shapes from the prime CLI 0.18.0 (prime_cli/commands/rl.py, api/rl.py, api/billing.py): every
# `--output json` is `json.dumps(data, indent=2)`; `metrics` prints {"metrics": [records]} (records
# are the platform's: a step and the orchestrator's or trainer's metric dict, research/prime-rl.md
# section 4), `rollouts` {run_id, samples[], total, page, limit, total_pages}, `progress`
# {latest_step, steps_with_samples[], steps_with_distributions[], last_updated_at}, `distributions`
# {bins[], step}, `usage` RunUsage dumped (run_id, run_name, base_model, status, training{tokens,
# input_tokens, output_tokens, cost_usd}, inference{...}, total_tokens, total_cost_usd, pricing{...},
# record_count), `get` {run: RLRun} (rollouts_per_example, batch_size, max_tokens, ...).
# Metric names: the hosted orchestrator's (`reward/all/{mean,max,min}`, `decode_len/all/*`,
# `solve_all/all` (reward sum == group size, so binary rewards only), `effective_batch_size/all`,
# `evicted_examples/<env>/<pool>`, `filtered_rollouts/<env>/<pool>`, `filters/all/*`, `eval/<env>/avg@1`)
# and the trainer's (`entropy/mean`, `mismatch_kl/mean`, `optim/grad_norm`, `time/*`).

HOSTED_ENV = "wiki-search"


def iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


def hosted_records(run: list[dict[str, Value]], ceiling: float = 1.0) -> list[dict[str, Any]]:
    """Two records per step, orchestrator's then trainer's, as the platform stores what each posts."""
    out = []
    for step, v in enumerate(run):
        at = logged_at(v, step)
        orchestrator = {
            "step": step, "timestamp": iso(at),
            "reward/all/mean": v["reward_mean"], "reward/all/max": v.get("reward_max", ceiling),
            "reward/all/min": v.get("reward_min", 0.0), f"reward/{HOSTED_ENV}/mean": v["reward_mean"],
            "decode_len/all/mean": v["response_length"], "decode_len/all/max": 2 * float(v["response_length"]),
            "prefill_len/all/mean": 180.0, "seq_len/all/mean": 180.0 + float(v["response_length"]),
            "is_truncated/all/mean": v["truncated_frac"],
            "solve_all/all": v["solved_all_frac"], "solve_none/all": v["solved_none_frac"],
            "effective_batch_size/all": 1 - float(v["solved_all_frac"]) - float(v["solved_none_frac"]),
            f"effective_batch_size/{HOSTED_ENV}": 1 - float(v["solved_all_frac"]) - float(v["solved_none_frac"]),
            f"evicted_examples/{HOSTED_ENV}/easy": 0.0, f"evicted_examples/{HOSTED_ENV}/hard": 0.0,
            f"filtered_rollouts/{HOSTED_ENV}/easy": 0.0, f"filtered_rollouts/{HOSTED_ENV}/hard": 0.0,
            "filters/all/is_filtered": 0.0, "filters/all/gibberish": 0.0,
            "elastic/num_servers": 2, "elastic/num_ready": 2,
            "off_policy/max": v["off_policy_max"], "time/step": v["step_time"],
            "time/wait_for_policy": v["wait_for_policy"], "progress/samples": 32 * (step + 1),
        }
        if v.get("eval_reward") is not None:
            orchestrator[f"eval/{HOSTED_ENV}/avg@1"] = v["eval_reward"]
        trainer = {"step": step, "timestamp": iso(at + 0.4), "entropy/mean": v["entropy"],
                   "mismatch_kl/mean": v["mismatch_kl"], "optim/grad_norm": v["grad_norm"],
                   "optim/lr": v["learning_rate"], "loss/mean": v["loss"], "time/step": v["trainer_step_time"]
                   if v.get("trainer_step_time") is not None else v["step_time"],
                   "time/wait_for_batch": v["wait_for_batch"]}
        out += [{k: x for k, x in orchestrator.items() if x is not None},
                {k: x for k, x in trainer.items() if x is not None}]
    return out


def hosted_run_record(run_id: str, batch_size: int = 32, group: int = 8, max_tokens: int = 2048) -> dict[str, Any]:
    return {"run": {"id": run_id, "name": "saturn", "status": "RUNNING", "kind": "DEDICATED_FULL_FT",
                    "base_model": "Qwen/Qwen3-4B-Instruct-2507", "rollouts_per_example": group,
                    "batch_size": batch_size, "max_tokens": max_tokens, "seq_len": 4096, "max_steps": 400,
                    "learning_rate": 1e-6, "environments": [{"id": f"primeintellect/{HOSTED_ENV}"}],
                    "created_at": "2026-11-30T10:00:00Z", "updated_at": "2026-11-30T12:00:00Z"}}


def write_hosted_export(folder: Path, run: list[dict[str, Value]], ceiling: float = 1.0, run_id: str = "run-hosted",
                        last_updated: float | None = None, checkpoints: list[int] = ()) -> Path:
    """A folder of `prime train ... --output json` exports, as an engineer saves them."""
    folder.mkdir(parents=True, exist_ok=True)

    def dump(name: str, data: Any) -> None:
        (folder / name).write_text(json.dumps(data, indent=2, default=str))

    records = hosted_records(run, ceiling)
    dump("metrics_raw.json", {"metrics": records})
    last = len(run) - 1
    samples = [{"step": last, "example_id": i // 8, "prompt": [{"role": "user", "content": f"q{i // 8}"}],
                "completion": [{"role": "assistant", "content": "a"}],
                "reward": round(min(ceiling, float(run[-1]["reward_mean"]) * (0.9 + 0.025 * (i % 8))), 4),
                "advantage": 0.0} for i in range(32)]
    dump("rollouts_raw.json", {"run_id": run_id, "samples": samples, "total": 32, "page": 1, "limit": 100,
                               "total_pages": 1})
    (folder / "results.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    dump("usage.json", {"run_id": run_id, "run_name": "saturn", "base_model": "Qwen/Qwen3-4B-Instruct-2507",
                        "status": "RUNNING", "training": {"tokens": 9_000_000, "input_tokens": 0, "output_tokens": 0,
                                                          "cost_usd": 6.3},
                        "inference": {"tokens": 4_000_000, "input_tokens": 3_000_000, "output_tokens": 1_000_000,
                                      "cost_usd": 2.7},
                        "total_tokens": 13_000_000, "total_cost_usd": 9.0,
                        "pricing": {"training_per_mtok": 0.7, "inference_input_per_mtok": 0.5,
                                    "inference_output_per_mtok": 1.2}, "record_count": len(records)})
    updated = last_updated if last_updated is not None else logged_at(run[-1], last) + 1
    dump("progress.json", {"latest_step": last, "steps_with_samples": [last], "steps_with_distributions": [last],
                           "last_updated_at": iso(updated)})
    dump("distributions.json", {"bins": [{"min": 0.0, "max": ceiling, "count": 32}], "step": last})
    dump("metadata.json", hosted_run_record(run_id))
    if checkpoints:
        dump("checkpoints.json", {"checkpoints": [
            {"id": f"ck-{s}", "rft_run_id": run_id, "step": s, "storage_url": f"s3://ck/{s}", "status": "READY",
             "created_at": "2026-11-30T11:00:00Z"} for s in checkpoints]})
    final = {k: x for k, x in records[-2].items() if k not in ("step", "timestamp")}
    dump("metrics_summary.json", {"run_id": run_id, "latest_step": last, "metrics": final})
    return folder


# --- other trainers, in the files they write -------------------------------------------------------
# Each mapping is canonical series -> the name the trainer logs, read from its public code (the
# vocabulary tables in tools/diagnose/vocabularies/ name the files and commits); `*_EXTRA` are names the
# trainer logs beside them that diagnosis reads for nothing.

TINKER = {  # tinker_cookbook/rl/metric_util.py, rl/metrics.py, rl/train.py
    "reward_mean": "env/all/reward/total",
    "response_length": "env/all/ac_tokens_per_turn",
    "trainable_frac": "env/all/by_group/frac_mixed",
    "solved_all_frac": "env/all/by_group/frac_all_good",
    "solved_none_frac": "env/all/by_group/frac_all_bad",
    "entropy": "optim/entropy",
    "mismatch_kl": "optim/kl_sample_train_v2",
    "learning_rate": "optim/lr",
    "step_time": "time/total",
}
TINKER_EXTRA = ("env/all/ob_tokens_per_turn", "env/all/turns_per_episode", "env/all/total_episodes",
                "env/all/total_turns", "env/all/total_ac_tokens", "env/all/total_ob_tokens", "optim/kl_sample_train_v1",
                "time/sampling_time_mean", "time/sampling_time_max", "time/train_step")
TRL = {  # trl/trainer/grpo_trainer.py (GRPOTrainer._metrics), with transformers' loss/grad_norm/learning_rate
    "reward_mean": "reward",
    "reward_std": "reward_std",
    "entropy": "entropy",
    "grad_norm": "grad_norm",
    "loss": "loss",
    "response_length": "completions/mean_length",
    "truncated_frac": "completions/clipped_ratio",
    "learning_rate": "learning_rate",
}
TRL_EXTRA = ("num_tokens", "completions/min_length", "completions/max_length", "completions/mean_terminated_length",
             "rewards/accuracy_reward/mean", "rewards/accuracy_reward/std", "kl", "clip_ratio/region_mean")
VERL = {  # verl/trainer/ppo/metric_utils.py, ray_trainer.py, workers/fsdp_workers.py
    "reward_mean": "critic/score/mean",
    "entropy": "actor/entropy",
    "grad_norm": "actor/grad_norm",
    "loss": "actor/pg_loss",
    "learning_rate": "actor/lr",
    "response_length": "response_length/mean",
    "truncated_frac": "response_length/clip_ratio",
    "step_time": "timing_s/step",
}
VERL_EXTRA = ("critic/score/max", "critic/rewards/mean", "critic/advantages/mean", "prompt_length/mean",
              "perf/throughput", "actor/ppo_kl", "actor/pg_clipfrac", "training/global_step", "training/epoch")
OPENRLHF = {  # openrlhf/utils/logging_utils.py (`train/` + the actor and experience status keys)
    "reward_mean": "train/reward",
    "response_length": "train/response_length",
    "truncated_frac": "train/truncated",
    "loss": "train/policy_loss",
    "learning_rate": "train/actor_lr",
    "grad_norm": "train/actor_grad_norm",
    "mismatch_kl": "train/vllm_kl",
}
OPENRLHF_EXTRA = ("train/return", "train/total_length", "train/kl", "train/ppo_clip_ratio", "train/ppo_kl",
                  "train/timing/make_experience", "train/timing/ppo_train")


def _trainer_row(values: dict[str, Value], names: dict[str, str], extra: tuple[str, ...], step: int) -> dict[str, Any]:
    row: dict[str, Any] = _named(values, names)
    row.update({name: (step * 7 + i) % 13 / 13 for i, name in enumerate(extra)})
    return row


def write_tinker(folder: Path, run: list[dict[str, Value]]) -> Path:
    """`<log_path>/metrics.jsonl` as tinker-cookbook's JsonLogger appends it: `{"step": i, ...metrics}`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "metrics.jsonl"
    with path.open("w") as handle:
        for step, values in enumerate(run):
            row = {"step": step, "progress/batch": step, "progress/done_frac": (step + 1) / len(run)}
            handle.write(json.dumps({**row, **_trainer_row(values, TINKER, TINKER_EXTRA, step)}) + "\n")
    return path


def write_trl_state(folder: Path, run: list[dict[str, Value]], logging_steps: int = 1) -> Path:
    """`checkpoint-N/trainer_state.json` as transformers' Trainer saves it: `log_history` rows of the
    GRPOTrainer's metrics with `step` (from 1) and `epoch`, pretty-printed, and a last row of totals."""
    folder.mkdir(parents=True, exist_ok=True)
    history = [{**_trainer_row(values, TRL, TRL_EXTRA, step), "epoch": round((step + 1) / len(run), 4),
                "step": step + 1} for step, values in enumerate(run) if (step + 1) % logging_steps == 0]
    history.append({"epoch": 1.0, "step": len(run), "total_flos": 0.0, "train_loss": 0.01, "train_runtime": 3600.0,
                    "train_samples_per_second": 1.2, "train_steps_per_second": 0.1})
    state = {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None, "epoch": 1.0,
             "eval_steps": 500, "global_step": len(run), "is_hyper_param_search": False, "is_local_process_zero": True,
             "is_world_process_zero": True, "log_history": history, "logging_steps": logging_steps,
             "max_steps": len(run), "num_input_tokens_seen": 0, "num_train_epochs": 1, "save_steps": 500,
             "stateful_callbacks": {}, "total_flos": 0.0, "train_batch_size": 8, "trial_name": None,
             "trial_params": None}
    path = folder / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2, sort_keys=True))
    return path


def write_verl(folder: Path, run: list[dict[str, Value]]) -> Path:
    """`<project>/<experiment>.jsonl` as verl's FileLogger writes it: `{"step": N, "data": {...}}` from step 1."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "qwen2_5_7b_grpo.jsonl"
    with path.open("w") as handle:
        for step, values in enumerate(run, 1):
            handle.write(json.dumps({"step": step, "data": _trainer_row(values, VERL, VERL_EXTRA, step)}) + "\n")
    return path


def write_verl_console(path: Path, run: list[dict[str, Value]]) -> Path:
    """verl's console logger: `step:N - name:value - ...`, values as pprint writes them (numpy scalars as
    `np.float64(x)`), between the trainer's other output."""
    lines = ["(TaskRunner pid=4242) Training from scratch"]
    for step, values in enumerate(run, 1):
        row = _trainer_row(values, VERL, VERL_EXTRA, step)
        shown = [f"{name}:np.float64({value})" if i % 2 else f"{name}:{value}" for i, (name, value) in
                 enumerate(row.items())]
        lines.append("(TaskRunner pid=4242) " + " - ".join([f"step:{step}", *shown]))
    path.write_text("\n".join(lines) + "\n")
    return path


def write_wandb_csv(path: Path, run: list[dict[str, Value]], names: dict[str, str], extra: tuple[str, ...] = (),
                    step_column: str = "Step") -> Path:
    """A W&B history export of any trainer: the step column, then `<run> - <name>` (with __MIN/__MAX)."""
    header = [step_column]
    columns = [*names.values(), *extra]
    for raw in columns:
        header += [f"grpo-run - {raw}", f"grpo-run - {raw}__MIN", f"grpo-run - {raw}__MAX"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for step, values in enumerate(run):
            row = _trainer_row(values, names, extra, step)
            cells: list[Any] = [step]
            for raw in columns:
                text = "" if row.get(raw) is None else str(row[raw])
                cells += [text, text, text]
            writer.writerow(cells)
    return path
