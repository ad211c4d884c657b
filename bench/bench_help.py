"""`rlpilot --help` against `prime --help`, timed in the same run, reported as a ratio.

Target: rlpilot takes at most a quarter of prime's time. Run: `uv run python bench/bench_help.py`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
ROUNDS = 7
TARGET = 0.25


def median_seconds(argv: list[str]) -> float:
    env = dict(os.environ, PRIME_DISABLE_VERSION_CHECK="1")
    subprocess.run(argv, env=env, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    prime = shutil.which("prime", path=str(BIN)) or shutil.which("prime")
    if prime is None:
        print("prime is not installed: `uv sync` installs it with the dev group")
        return 2
    ours = median_seconds([str(BIN / "rlpilot"), "--help"])
    theirs = median_seconds([prime, "--help"])
    ratio = ours / theirs
    print(f"rlpilot --help {ours * 1000:.0f} ms, prime --help {theirs * 1000:.0f} ms, "
          f"ratio {ratio:.3f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
