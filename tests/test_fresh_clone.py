"""A clone with nothing beside it: the tests that read ../shared/ skip, each with one line naming what
it needs, and CI's RLPILOT_REQUIRE_SHARED turns those skips into failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# One reader of each way the resolver is used: a fixture, a collection-time list, a module mark, a call.
READERS = ["tests/test_config_corpus.py", "tests/test_config_schema.py", "tests/test_config_migrate.py",
           "tests/test_skill.py::test_check_names_the_seed_playbooks_commands_that_fail_here_and_what_replaced_them"]


def _pytest(clone: Path, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RLPILOT_SHARED", "RLPILOT_REQUIRE_SHARED")}
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-rs", "-p", "no:cacheprovider", *READERS],
                          cwd=clone, env={**env, **extra}, capture_output=True, text=True, timeout=300)


def test_a_clone_alone_skips_what_needs_shared_and_ci_makes_that_a_failure(tmp_path):
    clone = tmp_path / "rlpilot"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    assert not (tmp_path / "shared").exists()

    alone = _pytest(clone)
    assert alone.returncode == 0, alone.stdout[-3000:]
    skips = [line for line in alone.stdout.splitlines() if line.startswith("SKIPPED")]
    beside = f"needs {tmp_path / 'shared'}"
    assert skips and all(beside in line for line in skips if "RLPILOT_TEST_PRIME_RL" not in line)
    assert "Traceback" not in alone.stdout + alone.stderr

    required = _pytest(clone, RLPILOT_REQUIRE_SHARED="1")
    assert required.returncode != 0
    assert "RLPILOT_REQUIRE_SHARED is set" in required.stdout + required.stderr
