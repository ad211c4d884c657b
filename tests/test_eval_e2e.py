"""The real vf-eval 0.4 runs the example environments against a scripted local OpenAI server.

Only loopback serves the model; vf-eval's harness set-up (a `uv sync` of its PEP 723 script)
may use the package index, as every vf-eval run does.
"""

from __future__ import annotations

import json
import socket
import statistics
import time
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from eval_support import arithmetic_script, rlpilot, use_environments_venv
from fakes.openai_server import ScriptedOpenAIServer, last_user_text

from tools.evals.run import EvalRunInput, eval_run
from tools.framework.contract import Context
from tools.framework.errors import BadInput


@pytest.fixture
def workspace(tmp_path_factory, tmp_path, monkeypatch):
    use_environments_venv(tmp_path_factory, monkeypatch)
    return tmp_path


def test_vf_eval_run_is_summarized_with_exactly_the_scripted_rewards(workspace):
    events: list[dict] = []
    with ScriptedOpenAIServer(arithmetic_script()) as server:
        result = eval_run(EvalRunInput(yes=True, env="tiny-arith", model="stub-model", base_url=server.base_url,
                                       api_key_var="STUB_API_KEY", num_examples=4, rollouts=2, upload=False),
                          Context(workspace=workspace, emit=events.append))
    assert result.ok and result.form == "vf-eval", result.problem
    assert result.command[-1] == "--no-push"
    s = result.summary
    # Operands are 3, 10, 17, 24: example 0 always fails, the others pass once in two.
    assert (s.rollouts, s.examples, s.errored) == (4 * 2, 4, 0)
    assert (s.reward.mean, s.reward.min, s.reward.max, s.reward_kind) == (0.375, 0.0, 1.0, "binary")
    assert (s.all_fail_fraction, s.all_pass_fraction, s.zero_variance_fraction) == (0.25, 0.0, 0.25)
    assert (s.pass_at_k.k, s.pass_at_k.value, s.verdict) == (2, 0.75, "ready")
    assert Path(result.run_dir) == workspace / "outputs" / Path(result.run_dir).name
    # Streaming chat completions, one per rollout, for the model we named.
    assert len(server.requests) == 8
    assert all(r["stream"] and r["model"] == "stub-model" for r in server.requests)
    # What vf-eval understood of our argv, from the config it resolved and saved with the run.
    resolved = json.loads((Path(result.run_dir) / "configs" / "resolved" / "eval.json").read_text())
    assert (resolved["model"], resolved["num_rollouts"], resolved["select"]["limit"]) == ("stub-model", 2, 4)
    assert resolved["push"] is False and resolved["rich"] is None
    assert (resolved["client"]["base_url"], resolved["client"]["api_key_var"]) == (server.base_url, "STUB_API_KEY")
    assert resolved["env"]["agent"]["harness"]["id"] == "null"
    assert resolved["env"]["agent"]["runtime"]["type"] == "subprocess"
    progress = [e for e in events if e["type"] == "progress"]
    assert progress[0]["done"] == 0 and progress[-1] == {"type": "progress", "done": 8, "total": 8,
                                                         "label": "rollouts"}
    assert len({e["done"] for e in progress}) >= 3, progress  # it streamed, not only start and end


def test_continuous_rewards_come_out_as_the_script_implies(workspace):
    """The first reply per sentence is the full reversal; the second drops as many words as the sentence's
    place in the order they came (1, 2, 3), so the rewards are graded, not two values a binary reward has."""
    seen: Counter[str] = Counter()
    expected: dict[str, list[float]] = {}

    def reply(request: dict) -> str:
        sentence = last_user_text(request).split(": ", 1)[1]
        words = sentence.split()[::-1]
        seen[sentence] += 1
        answer = words if seen[sentence] == 1 else words[:-(list(seen).index(sentence) + 1)]
        expected.setdefault(sentence, []).append(SequenceMatcher(None, answer, words).ratio())
        return " ".join(answer)

    with ScriptedOpenAIServer(reply) as server:
        result = eval_run(EvalRunInput(yes=True, env="reverse-words", model="stub-model", base_url=server.base_url,
                                       api_key_var="STUB_API_KEY", num_examples=3, rollouts=2, upload=False),
                          Context(workspace=workspace))
    s = result.summary
    rewards = [r for group in expected.values() for r in group]
    assert result.ok and s.reward_kind == "continuous" and (s.rollouts, s.examples) == (6, 3)
    assert s.reward.mean == pytest.approx(statistics.fmean(rewards), abs=1e-6)
    assert (s.reward.min, s.reward.max) == (pytest.approx(min(rewards)), 1.0)
    assert s.zero_variance_fraction == 0.0 and s.all_pass_fraction == 0.0 and s.verdict == "ready"


def test_a_run_where_every_rollout_errors_fails_on_the_cli(workspace):
    def broken(request: dict) -> str:
        raise RuntimeError("model crashed")

    with ScriptedOpenAIServer(broken) as server:
        done = rlpilot("eval", "run", "--yes", "tiny-arith", "-m", "stub-model", "--base-url", server.base_url,
                       "--api-key-var", "STUB_API_KEY", "-n", "1", "-r", "1", "--no-upload", "--json", cwd=workspace)
    # vf-eval itself exits 0 here; the results say otherwise.
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert not result["ok"] and "every rollout errored" in result["problem"] and "eval samples" in result["hint"]
    assert result["summary"]["verdict"] == "broken" and result["summary"]["errored"] == 1
    assert "rollouts: 1/1" in done.stderr


def test_the_cli_says_how_long_vf_eval_took_and_how_long_rlpilot_took_around_it(workspace):
    with ScriptedOpenAIServer(lambda request: "42") as server:
        started = time.monotonic()
        done = rlpilot("eval", "run", "--yes", "tiny-arith", "-m", "stub-model", "--base-url", server.base_url,
                       "--api-key-var", "STUB_API_KEY", "-n", "2", "-r", "1", "--no-upload", "--json", cwd=workspace)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    timing = json.loads(done.stdout)["timing"]
    [program] = timing["programs"]
    assert program["what"] == "vf-eval" and program["seconds"] > 0
    # It adds up, to the millisecond each figure is rounded to: the command's wall time is vf-eval's and
    # rlpilot's, and rlpilot's is its named parts' and the rest.
    assert timing["seconds"] == pytest.approx(program["seconds"] + timing["rlpilot"], abs=0.003)
    parts = {part["what"]: part["seconds"] for part in timing["parts"]}
    assert timing["rlpilot"] == pytest.approx(sum(parts.values()), abs=0.003 * len(parts))
    assert list(parts) == ["starting rlpilot", "checking the plan", "summarizing the results", "other"]
    assert all(seconds >= 0 for seconds in parts.values()), parts
    # It claims no time that did not pass: the process that printed it ran at least as long.
    assert timing["seconds"] <= took


def test_an_unreachable_endpoint_or_a_missing_key_stops_before_the_run(workspace):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # bound, never listening
        with pytest.raises(BadInput) as unreachable:
            eval_run(EvalRunInput(yes=True, env="tiny-arith", model="m", base_url=closed), Context(workspace=workspace))
    assert unreachable.value.code == "endpoint-unreachable" and closed in unreachable.value.message
    # A remote URL needs its key: refused before any connection is tried.
    with pytest.raises(BadInput) as no_key:
        eval_run(EvalRunInput(yes=True, env="tiny-arith", model="m", base_url="https://models.example.invalid/v1",
                              api_key_var="STUB_API_KEY"), Context(workspace=workspace))
    assert no_key.value.code == "missing-api-key" and "export STUB_API_KEY" in no_key.value.hint
    assert not (workspace / "outputs").exists()
