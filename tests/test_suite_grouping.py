"""The suite leans on pytest-xdist's `--dist loadgroup` (pyproject.toml): the single-node Slurm's tests
share one worker, and each scripted brain plays the bench's scenarios once, on one worker. Some pytest
and xdist pairs drop the groups without a word (pytest 9.2 with xdist 3.8, pytest-xdist#1386): this
shows the installed pair keeps a group on one worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = '''
import os, time, pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(4))
def test_one(i):
    time.sleep(0.2)
    open("seen", "a").write("one " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.xdist_group("two")
@pytest.mark.parametrize("i", range(4))
def test_two(i):
    time.sleep(0.2)
    open("seen", "a").write("two " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(TESTS)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                          "-q", "test_grouped.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    seen = [line.split() for line in (tmp_path / "seen").read_text().splitlines()]
    workers = {group: {worker for name, worker in seen if name == group} for group in ("one", "two")}
    assert all(len(found) == 1 for found in workers.values()), workers
