"""Stand-in of prime-rl's `rl` entry point: its command line, real files and real signals.

`uv run rl @ CONFIG [--output-dir DIR] [--dry-run]`. Like prime-rl it refuses keys it does not
know (here: unknown top-level tables and the transition-era `[[orchestrator.train.env]]`), and on
a dry run writes the resolved config and stops. Otherwise it runs `max_steps` steps, appending a
trainer and an orchestrator row per step to `DIR/<run>/metrics.jsonl` and printing step lines,
with a helper process beside it (the real launcher starts inference and trainer processes), so a
stop has to reach the whole process group. SIGTERM ends it as prime-rl does, with status 143.
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
         "ckpt", "output_dir", "log", "name", "wandb"}
STEP_SECONDS = float(os.environ.get("STANDIN_STEP_SECONDS", "0.1"))


def main() -> int:
    args = sys.argv[1:]
    config = tomllib.loads(Path(args[args.index("@") + 1]).read_text())
    output = Path(args[args.index("--output-dir") + 1] if "--output-dir" in args else "outputs")
    errors = [f"{key}: Extra inputs are not permitted" for key in config if key not in KNOWN]
    if "env" in config.get("orchestrator", {}).get("train", {}):
        errors.append("orchestrator.train.env: Extra inputs are not permitted")
    if errors:
        print(f"{len(errors)} validation error(s) for RLConfig\n" + "\n".join(errors), file=sys.stderr)
        return 1
    run = output / "standin-run"
    (run / "configs").mkdir(parents=True, exist_ok=True)
    (run / "configs" / "rl.json").write_text(json.dumps(config))
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
            log.write(f"Step {step} | 0.1s | Loss 0.1000\n")
            log.flush()
            time.sleep(STEP_SECONDS)
    helper.terminate()
    print("Training finished", flush=True)
    return 0
