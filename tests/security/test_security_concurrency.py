"""Case 6: two `rlpilot config set` processes on one file never lose an edit, and the backups hold
the version before each edit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from security_support import RLPILOT

from tools.configs.edit import backups_of

PAIRS = 20
CONFIG = "max_steps = 100\n\n[orchestrator.train.sampling]\ntemperature = 1.0\n"


def _quick_env(tmp_path: Path) -> dict[str, str]:
    """A workspace Python without the prime CLI beside it: each process skips `prime --version`,
    which nothing here needs, and the 40 processes finish sooner."""
    bare = tmp_path / "bare-venv" / "bin"
    bare.mkdir(parents=True)
    (bare / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("RLPILOT_HOME", "UV_PROJECT_ENVIRONMENT")}
    return env | {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(bare.parent)}


def test_twenty_pairs_of_concurrent_config_set_lose_no_edit(tmp_path: Path) -> None:
    config = tmp_path / "rl.toml"
    config.write_text(CONFIG)
    env = _quick_env(tmp_path)
    lost, busy = [], []
    for pair in range(PAIRS):
        steps, temperature = 1000 + pair, 0.5 + pair / 100
        values = [f"max_steps={steps}", f"orchestrator.train.sampling.temperature={temperature}"]
        edits = [subprocess.Popen([str(RLPILOT), "config", "set", "rl.toml", value], cwd=tmp_path, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for value in values]
        results = [(edit.wait(timeout=120), *edit.communicate()) for edit in edits]
        text = config.read_text()
        lines = (f"max_steps = {steps}", f"temperature = {temperature}")
        for (code, _, stderr), written in zip(results, lines, strict=True):
            assert "Traceback" not in stderr, stderr
            if code == 0 and written not in text:
                lost.append((pair, written))  # it said "written", but the file does not hold it
            elif code != 0:
                assert "busy" in stderr, stderr  # the only way an edit may fail here, and it says so
                busy.append(pair)
        # The newest backup is the file just before the pair's second edit: the first edit, not the second.
        latest = backups_of(config, tmp_path)[-1].read_text()
        assert (f"max_steps = {steps}" in latest) != (f"temperature = {temperature}" in latest) or busy
    assert lost == []
    assert len(backups_of(config, tmp_path)) == 2 * PAIRS - len(busy)


def _config_set(tmp_path: Path, env: dict[str, str], value: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RLPILOT), "config", "set", "rl.toml", value], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.umask(0o022))


def test_an_edit_lock_is_0600_under_a_umask_of_022_and_never_taken_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "rl.toml").write_text(CONFIG)
    env = _quick_env(tmp_path)
    assert _config_set(tmp_path, env, "max_steps=7").returncode == 0
    [lock] = (tmp_path / ".rlpilot" / "locks").iterdir()
    assert oct(lock.stat().st_mode & 0o777) == "0o600"  # filelock's own default would be 0644 here

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    lock.unlink()
    lock.symlink_to(victim)
    refused = _config_set(tmp_path, env, "max_steps=8")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"its edit lock {lock} could not be taken" in refused.stderr, refused.stderr
    assert victim.read_text() == "keep me\n" and "max_steps = 7\n" in (tmp_path / "rl.toml").read_text()


def test_a_locks_folder_that_cannot_be_made_is_a_one_line_refusal(tmp_path: Path) -> None:
    """Where the locks folder should be, a file (or another user's folder): one line, nothing written."""
    (tmp_path / "rl.toml").write_text(CONFIG)
    (tmp_path / ".rlpilot").mkdir()
    (tmp_path / ".rlpilot" / "locks").write_text("")
    refused = _config_set(tmp_path, _quick_env(tmp_path), "max_steps=8")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"its edit lock {tmp_path / '.rlpilot' / 'locks'} could not be taken" in refused.stderr, refused.stderr
    assert (tmp_path / "rl.toml").read_text() == CONFIG
