"""An installed rlpilot works outside its checkout: what it reads at run time is in the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_runs_outside_the_checkout(tmp_path):
    uv = shutil.which("uv")
    subprocess.run([uv, "build", "-q", "--wheel", "-o", tmp_path / "dist", REPO], check=True, timeout=300)
    [wheel] = (tmp_path / "dist").glob("rlpilot-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, venv], check=True)
    # From the cache `uv sync` filled: the same packages the lock file names.
    env = dict(os.environ, UV_OFFLINE="1")
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([uv, "pip", "install", "-q", "--python", venv / "bin" / "python", wheel], check=True, env=env,
                   timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rlpilot = venv / "bin" / "rlpilot"
    helped = subprocess.run([rlpilot, "--help"], cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "config check" in helped.stdout
    config = subprocess.run([venv / "bin" / "python", "-c",
                             "import configs, pathlib; print(pathlib.Path(configs.__file__).parent)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    checked = subprocess.run([rlpilot, "config", "check", f"{config}/training/tiny-arith.toml", "--json"],
                             cwd=elsewhere, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["dialect"] == "prime-rl-current"
    fill = "from prompts import system_prompt as p; print(p('S', 'D'))"
    prompt = subprocess.run([venv / "bin" / "python", "-c", fill], cwd=elsewhere, capture_output=True, text=True,
                            check=True).stdout
    assert "`D` dialect" in prompt
    offline = {k: v for k, v in env.items() if k not in ("OPENAI_API_KEY", "PRIME_API_KEY")}
    chat = subprocess.run([rlpilot, "chat", "--json"], input="/help\n", cwd=elsewhere, capture_output=True,
                          text=True, timeout=120, env=offline)
    assert chat.returncode == 0, chat.stderr
    assert "/stack" in chat.stdout
