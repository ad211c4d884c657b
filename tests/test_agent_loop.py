"""The agent loop against a scripted OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

import pytest
from agent_support import Recorder, call, make_agent, scripted, tool_messages
from fakes.openai_server import Failure, Reply, ScriptedOpenAIServer

STACK = ["stack_info", "report"]


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_round_trip_is_recorded_and_fed_back(tmp_path, stream):
    script = scripted(call("stack_info"), Reply("You have prime 0.18."))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, STACK, recorder, stream=stream)
        agent.send("what do I have?")
    assert [e["type"] for e in recorder.events] == ["tool_call", "tool_result", "assistant"]
    assert recorder.events[1]["ok"] is True
    assert recorder.events[2]["text"] == "You have prime 0.18."
    first, second = server.requests
    assert {t["function"]["name"] for t in first["tools"]} == set(STACK)
    assert "prime" in tool_messages(second)[0]["result"]
    roles = [m["role"] for m in agent.session.messages()]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert agent.session.usage()["prompt_tokens"] > 0
    assert agent.session.tool_calls("stack_info")[0]["ok"] is True


def test_rate_limit_is_retried_after_the_servers_delay(tmp_path):
    script = scripted(Failure(429, "slow down", {"Retry-After": "0"}), Reply("fine"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, STACK, recorder).send("hi")
    assert len(server.requests) == 2
    assert recorder.of_type("assistant")[0]["text"] == "fine"


def test_server_errors_and_timeouts_are_retried(tmp_path):
    script = scripted(Failure(500, "boom"), Reply("late", delay=3), Reply("on time"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, STACK, recorder, timeout=1).send("hi")
    assert len(server.requests) == 3
    assert [e["text"] for e in recorder.of_type("assistant")] == ["on time"]


def test_a_client_error_is_not_retried_and_the_session_survives(tmp_path):
    script = scripted(Failure(400, "bad request: context too long"), Reply("second try works"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, STACK, recorder)
        agent.send("hi")
        assert len(server.requests) == 1
        assert "HTTP 400" in recorder.of_type("error")[0]["message"]
        agent.send("again")
    assert recorder.of_type("assistant")[0]["text"] == "second try works"


def test_malformed_unknown_and_invalid_calls_go_back_to_the_model(tmp_path):
    script = scripted(
        Reply(tool_calls=[{"name": "stack_info", "arguments": "{not json"},
                          {"name": "launch_rockets", "arguments": {}},
                          {"name": "stack_info", "arguments": {"prime_rl": str(tmp_path)}}]),
        Reply("sorry"),
    )
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, STACK, recorder).send("go")
    errors = [m["error"]["code"] for m in tool_messages(server.requests[1])]
    assert errors == ["bad-arguments", "unknown-tool", "not-a-prime-rl-checkout"]
    assert recorder.of_type("assistant")[0]["text"] == "sorry"


def test_hidden_fields_sent_by_the_model_are_dropped(tmp_path):
    script = scripted(call("report", session="someone-elses-session"), Reply("done"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, STACK, recorder)
        agent.send("report please")
    report = recorder.of_type("report")[0]["report"]
    assert report["session"] == agent.session.id


def test_tool_rounds_are_limited(tmp_path):
    with ScriptedOpenAIServer(lambda request: call("stack_info")) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["stack_info"], recorder)
        agent.max_rounds = 3
        agent.send("loop forever")
    assert len(server.requests) == 3
    assert "3 tool rounds" in recorder.of_type("error")[0]["message"]


def test_secrets_in_user_text_never_reach_the_model_or_the_store(tmp_path):
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    with ScriptedOpenAIServer(scripted(Reply("noted"))) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, STACK, recorder)
        agent.send(f"my key is {key}")
    assert key not in str(server.requests)
    assert key not in (tmp_path / ".rlpilot" / "sessions.sqlite3").read_bytes().decode("latin-1")


def test_long_tool_output_is_cut_with_a_note(tmp_path):
    script = scripted(call("stack_info"), Reply("ok"))
    with ScriptedOpenAIServer(script) as server:
        agent = make_agent(tmp_path, server.base_url, STACK, Recorder())
        agent.max_chars = 200
        agent.send("stack")
    content = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert len(content) < 300 and "[cut" in content
