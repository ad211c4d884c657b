"""The figures issue 32 asks for: `config check` on the configs prime-rl published at dates
between its releases, from 2025-08 to 2026-08.

For the 1st and the 15th of each month, the first-parent commit of prime-rl's main on that day
(or the last before it): every TOML under its configs/ and examples/ is written out beside its siblings
(overlays find their base) and checked as `config check` does, with nothing installed and no
git history (so the dates come from its keys alone). An error is false unless its key is one
that commit's own classes do not have (the file was already stale upstream): those classes are
read from the history table, which tests/test_config_history.py holds to the published schemas.

Run: `uv run python tests/history_figures.py PRIME_RL_GIT_DIR` (a clone or the bare git dir that
`fetch` gives; a few minutes).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from config_support import check_config  # noqa: E402

from tools.configs import history  # noqa: E402
from tools.configs.document import load  # noqa: E402

MONTHS = [f"2025-{m:02d}" for m in range(8, 13)] + [f"2026-{m:02d}" for m in range(1, 9)]
DAYS = [f"{month}-{day}" for month in MONTHS for day in ("01", "15")]
FOLDERS = ("configs/", "examples/")


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True,
                          text=True).stdout


def commit_on(git_dir: Path, day: str) -> tuple[str, str]:
    found = git(git_dir, "log", "--first-parent", "-1", f"--before={day}T23:59", "--format=%H %cs", "HEAD")
    sha, date = found.split()
    return sha, date


def index_of(date: str) -> int:
    return max(i for i, (_, d) in enumerate(history.commits()) if d <= date)


def main(git_dir: Path) -> None:
    print("| date | commit | files | kinds | errors | false errors |")
    print("|---|---|---|---|---|---|")
    dates, total_false, seen = 0, 0, set()
    for day in DAYS:
        sha, date = commit_on(git_dir, day)
        if sha in seen:
            continue
        seen.add(sha)
        at = index_of(date)
        names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", sha).splitlines()
                 if n.endswith(".toml") and n.startswith(FOLDERS)]
        kinds: Counter = Counter()
        errors, false, stale_ones = 0, [], []
        with tempfile.TemporaryDirectory() as scratch:
            for name in names:
                out = Path(scratch) / name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{sha}:{name}"],
                                               check=True, capture_output=True).stdout)
            for name in names:
                path = Path(scratch) / name
                try:
                    result = check_config(path)
                except Exception as problem:  # a file this checker cannot read is a figure too
                    false.append(f"{name}: {type(problem).__name__}: {problem}")
                    continue
                kinds[result.kind.value] += 1
                data = load(path).data
                spelled = history.spellings(result.kind, data)
                for item in result.errors:
                    errors += 1
                    table_path = spelled.get(item.key or "")
                    # Stale upstream: a key prime-rl had on other dates, not at this commit.
                    stale = (item.code == "unknown-key" and table_path in history.keys(result.kind)
                             and not history.existed(result.kind, table_path, at, at))
                    (stale_ones if stale else false).append(f"{name}: {item.code} {item.key}: {item.message}")
        dates += 1
        total_false += len(false)
        shown = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        print(f"| {date} | {sha[:9]} | {len(names)} | {shown} | {errors} | {len(false)} |")
        for line in false:
            print(f"    false: {line}")
        for line in stale_ones:
            print(f"    stale upstream (that commit's classes lack the key): {line}")
    print(f"\n{dates} dates, {total_false} false errors")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
