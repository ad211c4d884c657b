"""Gates in agent scenarios: the model proposes, only the user's answers decide."""

from __future__ import annotations

import pytest
from agent_support import Recorder, call, make_agent, tool_messages
from eval_support import environments_venv
from fakes.openai_server import Reply, ScriptedOpenAIServer
from test_eval_e2e import arithmetic_script


def agent_then_eval(agent_replies: list[Reply]):
    """One server for both: requests with tools come from the agent, the others from vf-eval."""
    answer_task = arithmetic_script()
    queue = list(agent_replies)

    def script(request: dict):
        if "tools" in request:
            return queue.pop(0) if queue else Reply("(script exhausted)")
        return answer_task(request)

    return script


@pytest.fixture
def eval_workspace(tmp_path_factory, tmp_path, monkeypatch):
    venv = environments_venv(tmp_path_factory.getbasetemp() / "eval-venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)
    # prime-runs' own switch: vf-eval keeps its default push setting but opens no platform run.
    monkeypatch.setenv("PRIME_RUNS_MODE", "disabled")
    return tmp_path


def test_an_unanswered_model_family_question_runs_no_eval(tmp_path):
    eval_call = call("eval_run", env="tiny-arith", model="stub-model", num_examples=2, rollouts=1)
    with ScriptedOpenAIServer(agent_then_eval([eval_call, Reply("ok, waiting for you")])) as server:
        recorder = Recorder(answers=[])
        agent = make_agent(tmp_path, server.base_url, ["eval_run"], recorder)
        agent.send("smoke-eval tiny-arith")
    assert [q.kind for q in recorder.questions] == ["model-family"]
    assert all("tools" in r for r in server.requests), "vf-eval must not have run"
    result = tool_messages(server.requests[1])[0]
    assert result["declined"] is True and "model family" in result["message"]
    assert agent.session.questions()[0]["answer"] is None


def test_first_run_protocol_end_to_end(eval_workspace):
    replies = [
        call("stack_info"),
        Reply(tool_calls=[{"name": "eval_run", "arguments": {
            "env": "tiny-arith", "model": "stub-model", "num_examples": 4, "rollouts": 2,
            "api_key_var": "STUB_API_KEY"}}]),
        call("report", notes="Rewards vary inside groups, so RL has signal."),
        Reply("The environment is ready for a short run."),
    ]
    with ScriptedOpenAIServer(agent_then_eval(replies)) as server:
        # The eval's model is served by the same scripted server the agent talks to.
        replies[1].tool_calls[0]["arguments"]["base_url"] = server.base_url
        recorder = Recorder(answers=["1"])  # "instruct", by its number
        agent = make_agent(eval_workspace, server.base_url, ["stack_info", "eval_run", "report"], recorder,
                           timeout=60)
        agent.send("validate tiny-arith before training")
    assert [q.kind for q in recorder.questions] == ["model-family"]
    assert agent.session.get("model_family") == "instruct"
    evaluation = next(e for e in recorder.of_type("tool_result") if e["name"] == "eval_run")
    assert evaluation["ok"], evaluation
    assert evaluation["result"]["summary"]["verdict"] == "ready"
    report = recorder.of_type("report")[0]["report"]
    observed = report["observed"]["evals"][0]
    assert observed["verdict"] == "ready" and observed["reward"]["mean"] == 0.25
    assert report["deltas"] == [] and "tune" in report["next_step"]["action"]
    assert recorder.of_type("assistant")[-1]["text"] == "The environment is ready for a short run."
