"""`rlpilot eval run`'s own time around vf-eval's, as a ratio to vf-eval's, on the same rollouts in one run.

The real CLI evaluates the example environment tiny-arith with the real vf-eval against a loopback model
that answers at once (tests/fakes/openai_server.py), so what is left is the eval machinery itself. vf-eval's
time is its child process's wall time, as the command reports it (`timing` in --json); rlpilot's is the
rest of the CLI's wall time, measured here from outside, interpreter start and exit included. The
workspace's venv is built once with uv (from its cache when warm) and warmed by one untimed run, so the
timed runs find the bytecode a person's second run finds. Target: rlpilot's share at most 0.2x vf-eval's.

    uv run python bench/bench_eval_run.py [--examples N] [--quick]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import QUICK_RUNS, command_env, parser, skip, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from eval_support import RLPILOT, environments_venv  # noqa: E402
from fakes.openai_server import ScriptedOpenAIServer  # noqa: E402

TARGET = 0.2
ROLLOUTS = 2  # per example, so that -n is the number of examples
FULL_EXAMPLES = 16  # 32 rollouts: the measurement (issue 46, "Waiting explained")
QUICK_EXAMPLES = 4


def eval_run(workspace: Path, venv: Path, base_url: str, examples: int) -> tuple[float, float]:
    """One `rlpilot eval run`: its wall time from outside, and vf-eval's own as the command reports it."""
    env = {**command_env(), "VIRTUAL_ENV": str(venv)}
    for name in ("UV_PROJECT_ENVIRONMENT", "RLPILOT_HOME"):
        env.pop(name, None)
    argv = [str(RLPILOT), "eval", "run", "--yes", "tiny-arith", "-m", "stub-model", "--base-url", base_url,
            "--api-key-var", "STUB_API_KEY", "-n", str(examples), "-r", str(ROLLOUTS), "--no-upload", "--json"]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"`{' '.join(argv)}` failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
    [vf_eval] = json.loads(done.stdout)["timing"]["programs"]
    return wall, vf_eval["seconds"]


def main() -> int:
    arguments = parser(__doc__)
    arguments.add_argument("--examples", type=int, help=f"examples of {ROLLOUTS} rollouts each; default "
                                                        f"{FULL_EXAMPLES}, {QUICK_EXAMPLES} with --quick")
    args = arguments.parse_args()
    examples = args.examples or (QUICK_EXAMPLES if args.quick else FULL_EXAMPLES)
    if not shutil.which("uv"):
        return skip("uv is not on PATH: the bench builds the workspace's venv with it")
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(lambda request: "42") as server:
        workspace = Path(tmp)
        try:
            venv = environments_venv(workspace / "eval-venv")
        except subprocess.CalledProcessError as error:
            return skip(f"the example environments did not install ({error}): uv needs its cache or the index")
        eval_run(workspace, venv, server.base_url, examples)  # writes the bytecode the timed runs find
        runs = [eval_run(workspace, venv, server.base_url, examples) for _ in range(QUICK_RUNS)]
    ratio = statistics.median((wall - vf_eval) / vf_eval for wall, vf_eval in runs)
    ours = statistics.median(wall - vf_eval for wall, vf_eval in runs)
    vf_eval = statistics.median(vf_eval for _, vf_eval in runs)
    word, code = verdict(ratio, TARGET, args.quick)
    print(f"eval run: {examples * ROLLOUTS} rollouts against a loopback model: vf-eval {vf_eval:.1f} s, rlpilot "
          f"around it {ours:.2f} s, ratio {ratio:.3f}x (target <= {TARGET}x): {word}")
    return code


if __name__ == "__main__":
    sys.exit(main())
