"""`eval run` through prime-rl's own `uv run eval` (v0.9+), and reading its trace stream.

The checkout is a stand-in written here: a prime-rl 0.9.1 project whose `eval` console script
asks the model (a scripted local server) and writes episodes where prime-rl does
(`<run>/monitors/file/traces/stream/NNNNN.jsonl`), recording the argv and folder it was run
with. The real `uv run` builds and runs it, from uv's cache, with no network.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from eval_support import episode
from fakes.openai_server import ScriptedOpenAIServer, last_user_text
from ops_support import prime_env, rlpilot

from tools.evals.samples import SamplesInput, eval_samples
from tools.framework.contract import Context

PYPROJECT = """\
[project]
name = "prime-rl"
version = "0.9.1"
requires-python = ">=3.11"
dependencies = []

[project.scripts]
eval = "prime_rl.entrypoints.eval:main"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["src/prime_rl"]
"""

# Stand-in of `uv run eval TASKSET -m M -n N -r R ...`: one request per rollout, "What is I + 10?".
EVAL = r'''
import json, os, sys, urllib.request
from pathlib import Path

SWITCHES = {"--no-dashboard", "--monitors.prime", "--no-monitors.prime", "--resume"}


def main():
    argv = sys.argv[1:]
    taskset, flags, i = argv[0], {}, 1
    while i < len(argv):
        if argv[i] in SWITCHES:
            flags[argv[i]] = True
            i += 1
        else:
            flags[argv[i]] = argv[i + 1]
            i += 2
    run_dir = Path(flags["--output-dir"]) / flags["--run.name"]
    (run_dir / "configs" / "attempt_0").mkdir(parents=True)
    (run_dir / "configs" / "attempt_0" / "eval.json").write_text(json.dumps({"argv": argv, "cwd": os.getcwd()}))
    traces = run_dir / "monitors" / "file" / "traces"
    (traces / "stream").mkdir(parents=True)
    key = os.environ.get(flags["--client.api-key-var"], "none")
    with open(traces / "stream" / "00000.jsonl", "w") as stream, open(traces / "stream.index.jsonl", "w") as index:
        for idx in range(int(flags["-n"])):
            for _ in range(int(flags["-r"])):
                question = f"What is {idx} + 10?"
                body = json.dumps({"model": flags["-m"], "messages": [{"role": "user", "content": question}]})
                request = urllib.request.Request(flags["--client.base-url"] + "/chat/completions", body.encode(),
                                                 {"Content-Type": "application/json", "Authorization": "Bearer " + key})
                reply = json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
                score = 1.0 if str(idx + 10) in reply else 0.0
                task = {"data": {"idx": idx, "prompt": question}, "key": f"k{idx}"}
                nodes = [{"message": {"role": "user", "content": question}, "sampled": False},
                         {"parent": 0, "message": {"role": "assistant", "content": reply}, "sampled": True}]
                trace = {"id": f"t{idx}", "agent": {"config": {"model": flags["-m"]}, "trainable": True},
                         "nodes": nodes, "rewards": {"correct": {"score": score, "weight": 1.0}}, "errors": []}
                stream.write(json.dumps({"env": {"id": taskset}, "task": task, "ok": True, "errors": [],
                                         "traces": [trace]}) + "\n")
                index.write(json.dumps({"trace_id": trace["id"]}) + "\n")
    print(f"Evaluated {taskset}", file=sys.stderr)
'''


def wrong_on_the_first_example(request: dict) -> str:
    a, b = map(int, last_user_text(request).removeprefix("What is ").rstrip("?").split(" + "))
    return f"The answer is {a + b + (a == 0)}."


@pytest.fixture
def machine(tmp_path: Path):
    """A prime-rl 0.9.1 stand-in checkout, and a workspace whose Python has no verifiers (so no vf-eval)."""
    checkout = tmp_path / "prime-rl"
    (checkout / "src" / "prime_rl" / "entrypoints").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text(PYPROJECT)
    (checkout / "src" / "prime_rl" / "__init__.py").write_text("")
    (checkout / "src" / "prime_rl" / "entrypoints" / "__init__.py").write_text("")
    (checkout / "src" / "prime_rl" / "entrypoints" / "eval.py").write_text(EVAL)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "my-envs"\nversion = "0.1.0"\n')
    subprocess.run([shutil.which("uv"), "venv", "-q", "--python", sys.executable, workspace / ".venv"], check=True)
    env = prime_env(tmp_path / "home", PATH=f"{Path(shutil.which('uv')).parent}:/usr/bin:/bin",
                    RLPILOT_HOME=str(tmp_path / "state"), RLPILOT_PRIME_RL=str(checkout))
    return workspace, checkout, env


def test_eval_run_goes_through_uv_run_eval_in_the_checkout_and_reads_its_trace_stream(machine):
    workspace, checkout, env = machine
    stack = json.loads(rlpilot("stack", "--json", cwd=workspace, env=env).stdout)
    assert {c["name"]: c["via"] for c in stack["capabilities"]}["local-eval"].startswith("uv run eval ENV in ")

    with ScriptedOpenAIServer(wrong_on_the_first_example) as server:
        done = rlpilot("eval", "run", "--yes", "tiny-arith", "-m", "stub-model", "--base-url", server.base_url,
                       "--api-key-var", "STUB_API_KEY", "-n", "3", "-r", "2", "--no-upload", "--json",
                       cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] and result["form"] == "prime-rl-eval"
    run_dir = Path(result["run_dir"])
    assert run_dir.parent == workspace / "outputs"
    # What arrived through `uv run` is what was built, and it ran in the checkout.
    seen = json.loads((run_dir / "configs" / "attempt_0" / "eval.json").read_text())
    assert seen["argv"] == result["command"][3:] and Path(seen["cwd"]) == checkout.resolve()
    assert {"-c", "--no-dashboard", "--no-monitors.prime"} <= set(seen["argv"])
    assert len(server.requests) == 6

    summary = result["summary"]
    assert (summary["rollouts"], summary["examples"], summary["errored"]) == (6, 3, 0)
    assert summary["reward"]["mean"] == pytest.approx(4 / 6) and summary["all_fail_fraction"] == pytest.approx(1 / 3)
    again = json.loads(rlpilot("eval", "summarize", str(workspace / "outputs"), "--json", cwd=workspace,
                               env=env).stdout)
    assert again["rollouts"] == 6 and again["reward"]["mean"] == pytest.approx(4 / 6)

    # Now the checkout has an environment (`uv run` made it), and the eval's import is checked there.
    refused = rlpilot("eval", "run", "--yes", "tiny-arith", "-m", "stub-model", "--base-url", "http://127.0.0.1:9/v1",
                      "--no-upload", "--json", cwd=workspace, env=env)
    assert refused.returncode == 2 and "prime-rl checkout's environment" in refused.stderr
    assert str(checkout / ".venv" / "bin" / "python") in refused.stderr


def test_a_stream_with_a_sealed_chunk_is_read_in_order(tmp_path):
    stream = tmp_path / "outputs" / "my-eval" / "monitors" / "file" / "traces" / "stream"
    stream.mkdir(parents=True)
    lines = [json.dumps(episode(i, float(i % 2), reply=f"reply {i}")).encode() + b"\n" for i in range(4)]
    # Sealed: one frame per line and a skippable seek-table frame at the end.
    compress = zstandard.ZstdCompressor().compress
    sealed = b"".join(compress(line) for line in lines[:2]) + struct.pack("<II", 0x184D2A5E, 4) + bytes(4)
    (stream / "00000.jsonl.zst").write_bytes(sealed)
    (stream / "00001.jsonl").write_bytes(b"".join(lines[2:]))
    # A chunk being sealed: its plain file is still whole, so it is the one read.
    (stream / "00002.jsonl").write_bytes(lines[0])
    (stream / "00002.jsonl.zst").write_bytes(b"half a frame")

    summary = json.loads(rlpilot("eval", "summarize", str(tmp_path / "outputs"), "--json", cwd=tmp_path,
                                 env=prime_env(tmp_path / "home")).stdout)
    assert summary["rollouts"] == 5 and summary["examples"] == 4 and summary["reward"]["mean"] == pytest.approx(2 / 5)
    best = eval_samples(SamplesInput(path=stream / "00001.jsonl", n=5, which="best"), Context(workspace=tmp_path))
    assert [(s.line, s.reply) for s in best.samples if s.reward] == [(2, "reply 1"), (4, "reply 3")]

    (stream / "00002.jsonl").unlink()
    broken = rlpilot("eval", "summarize", str(stream), "--json", cwd=tmp_path, env=prime_env(tmp_path / "home"))
    assert broken.returncode == 2 and "00002.jsonl.zst: not a whole zstd file" in broken.stderr
