"""The commands people wait on, against `prime --help` timed in the same run, each as a ratio.

Targets (issue 46, on a 2-core machine where `prime --help` takes about 0.6 s):
- `rlpilot --help` at most a quarter of prime's time;
- every tool's `--help` at most half (0.3 s there): the slowest one is reported;
- `rlpilot sessions` at most half;
- `rlpilot skill` at most twice: it runs prime's own `--help` for the commands it names (two of them, at
  once), so one `prime --help` is its floor; the issue's 1 s is about 1.7 of it.
`sessions` and `skill` run in an empty workspace of their own. Run: `uv run python bench/bench_help.py [--quick]`.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from common import QUICK_RUNS, command_env, parser, seconds, verdict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.chat.catalog import CATALOG  # noqa: E402

BIN = Path(sys.executable).parent
ROUNDS = 7
HELP, TOOL_HELP, SESSIONS, SKILL = 0.25, 0.5, 0.5, 2.0


def command(argv: list[str], cwd: Path | None = None) -> Callable[[], object]:
    run = partial(subprocess.run, argv, env=command_env(), capture_output=True, check=True, cwd=cwd)
    run()  # warm the file cache, and write the bytecode a second run finds
    return run


def main() -> int:
    quick = parser(__doc__).parse_args().quick
    prime = shutil.which("prime", path=str(BIN)) or shutil.which("prime")
    if prime is None:
        print("prime is not installed: `uv sync` installs it with the dev group")
        return 2
    rlpilot = str(BIN / "rlpilot")
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        timed = {"--help": command([rlpilot, "--help"]),
                 "sessions": command([rlpilot, "sessions"], workspace),
                 "skill": command([rlpilot, "skill", "--workspace", str(workspace)], workspace),
                 **{" ".join(e.command) + " --help": command([rlpilot, *e.command, "--help"]) for e in CATALOG}}
        reference = command([prime, "--help"])
        # Each round times every command and prime back to back, so a busy machine slows them alike.
        rounds = []
        for _ in range(QUICK_RUNS if quick else ROUNDS):
            times = {name: seconds(run) for name, run in timed.items()}
            rounds.append((times, seconds(reference)))
    ratio = {name: statistics.median(times[name] / theirs for times, theirs in rounds) for name in timed}
    prime_ms = statistics.median(theirs for _, theirs in rounds) * 1000
    slowest = max((name for name in timed if name.endswith(" --help") and name != "--help"), key=ratio.get)
    figures = [("rlpilot --help", ratio["--help"], HELP), (f"slowest tool, {slowest}", ratio[slowest], TOOL_HELP),
               ("sessions", ratio["sessions"], SESSIONS), ("skill", ratio["skill"], SKILL)]
    verdicts = [verdict(figure, target, quick) for _, figure, target in figures]
    said = "; ".join(f"{name} {figure:.2f} ({figure * prime_ms:.0f} ms; target <= {target}): {word}"
                     for (name, figure, target), (word, _) in zip(figures, verdicts, strict=True))
    print(f"against prime --help ({prime_ms:.0f} ms): {said}")
    return max(code for _, code in verdicts)


if __name__ == "__main__":
    sys.exit(main())
