"""Stand-in of prime-rl's `rl` entry point: its command line, real files and real signals.

`uv run rl @ CONFIG [--output-dir DIR] [--dry-run]`. Like prime-rl it refuses keys it does not
know (here: unknown top-level tables and the transition-era `[[orchestrator.train.env]]`), and on
a dry run writes the resolved config and stops. Otherwise it runs `max_steps` steps, appending a
trainer and an orchestrator row per step to `DIR/<run>/metrics.jsonl` and printing step lines,
with a helper process beside it (the real launcher starts inference and trainer processes), so a
stop has to reach the whole process group. SIGTERM ends it as prime-rl does, with status 143.
STANDIN_FAIL_AT_STEP=N makes it fail at step N the way an out-of-memory trainer does (status 1).

With a `[slurm]` table it does what prime-rl's SLURM path does (docs/slurm.md, the
`single_node_rl`/`multi_node_rl` sbatch templates): writes the resolved config without `[slurm]`
to `<run>/configs/rl.json`, renders `<run>/rl.sbatch` (nodes, `--gres=gpu:<gpus_per_node>`,
partition, account, time, nodelist; the job's output in `<run>/job_<id>.log`) whose body runs
`uv run rl @ <run>/configs/rl.json` on the allocated node (through `srun` for a multi-node
deployment), and submits it with the real `sbatch` (or, on a dry run, says how to submit it).
"""

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

KNOWN = {"max_steps", "seq_len", "model", "orchestrator", "trainer", "inference", "deployment", "monitors",
         "ckpt", "output_dir", "log", "name", "wandb", "slurm"}
STEP_SECONDS = float(os.environ.get("STANDIN_STEP_SECONDS", "0.1"))


def main() -> int:
    args = sys.argv[1:]
    source = Path(args[args.index("@") + 1])
    config = json.loads(source.read_text()) if source.suffix == ".json" else tomllib.loads(source.read_text())
    flag = args[args.index("--output-dir") + 1] if "--output-dir" in args else None
    output = Path(flag or config.get("output_dir", "outputs"))
    errors = [f"{key}: Extra inputs are not permitted" for key in config if key not in KNOWN]
    if "env" in config.get("orchestrator", {}).get("train", {}):
        errors.append("orchestrator.train.env: Extra inputs are not permitted")
    if errors:
        print(f"{len(errors)} validation error(s) for RLConfig\n" + "\n".join(errors), file=sys.stderr)
        return 1
    run = output.absolute() / "standin-run"
    (run / "configs").mkdir(parents=True, exist_ok=True)
    resolved = {key: value for key, value in config.items() if key != "slurm"} | {"output_dir": str(output.absolute())}
    (run / "configs" / "rl.json").write_text(json.dumps(resolved))
    if "slurm" in config:
        return submit(config, run, dry_run="--dry-run" in args)
    if "--dry-run" in args:
        print(f"Dry run: resolved configs written to {run / 'configs'}")
        return 0

    signal.signal(signal.SIGTERM, lambda *_: (print("Received SIGTERM, shutting down", flush=True), sys.exit(143)))
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    (run / "helper.pid").write_text(str(helper.pid))
    (run / "logs").mkdir(exist_ok=True)
    with (run / "metrics.jsonl").open("a", buffering=1) as metrics, (run / "logs" / "trainer.log").open("a") as log:
        for step in range(1, config.get("max_steps", 10) + 1):
            reward = min(1.0, 0.05 * step)
            metrics.write(json.dumps({"step": step, "time": time.time(), "loss/mean": 0.1, "entropy/all/mean": 0.4,
                                      "optim/grad_norm": 0.2}) + "\n")
            metrics.write(json.dumps({"step": step, "time": time.time(),
                                      "train/agg/all/agent/reward/mean": reward}) + "\n")
            print(f"Step {step} | 0.1s | Reward {reward:.4f}", flush=True)
            if os.environ.get("STANDIN_FAIL_AT_STEP") == str(step):
                print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", flush=True)
                helper.terminate()
                return 1
            log.write(f"Step {step} | 0.1s | Loss 0.1000\n")
            log.flush()
            time.sleep(STEP_SECONDS)
    helper.terminate()
    print("Training finished", flush=True)
    return 0


def submit(config: dict, run: Path, dry_run: bool) -> int:
    slurm, deployment = config["slurm"], config.get("deployment", {})
    multi_node = deployment.get("type") == "multi_node"
    nodes = deployment["num_train_nodes"] + deployment.get("num_infer_nodes", 0) if multi_node else 1
    options = {"job-name": slurm.get("job_name", "prime-rl"), "nodes": nodes, "ntasks-per-node": 1,
               "gres": f"gpu:{deployment.get('gpus_per_node', 8)}", "exclusive": None,
               "partition": slurm.get("partition", "cluster"), "account": slurm.get("account"),
               "time": slurm.get("time"), "nodelist": slurm.get("nodelist"),
               "output": f"{run}/job_%j.log", "error": f"{run}/job_%j.log"}
    header = [f"#SBATCH --{name}" + ("" if value is None else f"={value}") for name, value in options.items()
              if value is not None or name == "exclusive"]
    project = Path(slurm.get("project_dir", ".")).absolute()
    # Like upstream: a single node runs the launcher in the batch step, multi-node srun-s a step per node.
    launch = f"uv run rl @ {run}/configs/rl.json"
    body = ["set -e", f"cd {project}", f"srun --kill-on-bad-exit=1 {launch}" if multi_node else launch]
    script = run / "rl.sbatch"
    script.write_text("\n".join(["#!/bin/bash", *header, "", *body]) + "\n")
    print(f"Wrote SLURM script to {script}", flush=True)
    if dry_run:
        print(f"Dry run complete. To submit manually:\n\n  sbatch {script}", flush=True)
        return 0
    submitted = subprocess.run(["sbatch", str(script)], capture_output=True, text=True)
    if submitted.returncode != 0:
        print(f"sbatch failed: {submitted.stderr.strip()}", file=sys.stderr)
        return 1
    print(submitted.stdout.strip(), flush=True)
    return 0
