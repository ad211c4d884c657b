"""Helpers for the eval tests: run files in the shapes verifiers writes, and a workspace venv.

The episode shape is a trimmed copy of a real verifiers 0.4.0 `traces.jsonl` line (vf-eval
against tests/fakes/openai_server.py): the keys rlpilot reads are all there, in place.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from fakes.openai_server import last_user_text

REPO = Path(__file__).resolve().parents[1]
ENVIRONMENTS = REPO / "environments"
RLPILOT = Path(sys.executable).parent / "rlpilot"


def episode(idx: int, reward: float | None, *, error: str | None = None, reply: str = "42",
            env: str = "tiny-arith", model: str = "stub-model", timeout: bool = False) -> dict[str, Any]:
    """One rollout as a verifiers 0.4 Episode record. `error` makes it a failed rollout; `timeout` one that
    overran its deadline, which verifiers 0.4 records on the episode (env.py: `is_timeout` and a TimeoutError)."""
    if timeout:
        timed_out = episode(idx, None, error="timeout", reply=reply, env=env, model=model)
        timed_out["traces"][0].update(errors=[], stop_condition="timeout")
        deadline = {"type": "TimeoutError", "message": "TinyArithEnv.run() exceeded its 600s deadline "
                    "(--env.timeout.episode)", "status_code": None}
        return {**timed_out, "is_timeout": True, "errors": [deadline]}
    rewards = {} if reward is None else {"correct": {"score": reward, "weight": 1.0}}
    errors = [{"type": "ProviderError", "message": error, "status_code": 503}] if error else []
    nodes = [
        {"semantic_parents": [], "message": {"role": "system", "content": "Be brief."}, "sampled": False},
        {"parent": 0, "semantic_parents": [], "message": {"role": "user", "content": f"Question {idx}?"},
         "sampled": False},
    ]
    if not error:
        nodes.append({"parent": 1, "semantic_parents": [], "message": {"role": "assistant", "content": reply},
                      "sampled": True})
    task = {"type": "TinyArithTask", "data": {"idx": idx, "prompt": f"Question {idx}?", "system_prompt": "Be brief.",
                                              "answer": "42"}, "key": f"k{idx}", "hash": f"k{idx}"}
    trace = {
        "version": 1, "id": f"t{idx}", "verifiers": {"version": "0.4.0"}, "task": task,
        "agent": {"config": {"model": model, "harness": {"id": "null"}}, "name": "agent", "trainable": True},
        "tools": [], "nodes": nodes, "calls": [], "rewards": rewards, "metrics": {}, "info": {},
        "is_completed": not error, "ok": not error,
        "stop_condition": "provider_error" if error else "agent_completed", "is_timeout": False,
        "errors": errors, "timing": {}, "num_input_tokens": 10, "num_output_tokens": 1, "num_total_tokens": 11,
    }
    return {"id": f"e{idx}", "env": {"id": env}, "task": task, "run": {"type": "eval", "id": "r", "name": "run"},
            "ok": not error, "is_timeout": False, "errors": [], "traces": [trace],
            "num_input_tokens": 10, "num_output_tokens": 1, "num_total_tokens": 11}


def legacy_row(example_id: int, reward: float | None, *, error: str | None = None,
               reply: str = "42") -> dict[str, Any]:
    """One rollout as a verifiers <= 0.3 results.jsonl row (state_to_output)."""
    row: dict[str, Any] = {
        "example_id": example_id,
        "prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"Question {example_id}?"}],
        "completion": [{"role": "assistant", "content": reply}],
        "reward": 0.0 if reward is None else reward, "is_completed": True, "is_truncated": False,
        "stop_condition": "completed", "metrics": {"correct": reward}, "correct": reward, "answer": "42",
    }
    if error:
        row.update(error=error, error_chain=[error])
    return row


def write_traces(folder: Path, groups: dict[int, list[float | None]], *, error: str | None = None,
                 **kwargs: Any) -> Path:
    """A traces.jsonl of these rewards per example; with `error`, a None reward is a rollout that failed with it."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(episode(idx, r, error=error if r is None else None, **kwargs))
             for idx, rewards in groups.items() for r in rewards]
    (folder / "traces.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def write_legacy(folder: Path, groups: dict[int, list[float | None]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [legacy_row(idx, r) for idx, rewards in groups.items() for r in rewards]
    (folder / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    sizes = {len(v) for v in groups.values()}
    (folder / "metadata.json").write_text(json.dumps({
        "env_id": "tiny-arith", "model": "stub-model", "num_examples": len(groups),
        "rollouts_per_example": max(sizes, default=0), "avg_reward": 0.0,
    }))
    return folder


def rlpilot(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess, as a user runs it."""
    return subprocess.run([RLPILOT, *args], cwd=cwd, env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


_venvs: dict[Path, Path] = {}


def environments_venv(base: Path) -> Path:
    """A workspace venv with verifiers and both example environments installed, built once per run.

    Installed as a user would (`uv pip install -e environments/<name>`), from the warm uv cache.
    """
    if base in _venvs:
        return _venvs[base]
    venv = base / ".venv"
    started = time.monotonic()
    subprocess.run(["uv", "venv", "-q", str(venv), "--python", sys.executable], check=True)
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    "-e", str(ENVIRONMENTS / "tiny_arith"), "-e", str(ENVIRONMENTS / "reverse_words")], check=True)
    print(f"environments venv built in {time.monotonic() - started:.1f} s", file=sys.stderr)
    _venvs[base] = venv
    return venv


def use_environments_venv(tmp_path_factory, monkeypatch) -> Path:
    """Make the shared environments venv this test's workspace interpreter."""
    venv = environments_venv(tmp_path_factory.getbasetemp() / "eval-venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    for name in ("UV_PROJECT_ENVIRONMENT", "RLPILOT_HOME", "STUB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return venv


def arithmetic_script():
    """Always wrong on the first task (3 + 11); otherwise right on the first try, wrong on the second."""
    seen: Counter[str] = Counter()

    def reply(request: dict) -> str:
        text = last_user_text(request)
        a, b = map(int, re.search(r"What is (\d+) \+ (\d+)", text).groups())
        seen[text] += 1
        right = a != 3 and seen[text] == 1
        time.sleep((a - 3) / 7)  # examples finish a second apart, so progress has steps to show
        return f"The answer is {a + b if right else a + b + 1}."

    return reply
