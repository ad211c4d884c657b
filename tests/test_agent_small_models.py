"""What a small or local model does to a session, at the process boundary (issue 25's list).

Each test drives the real agent and the real openai client against the scripted server on
loopback, shaped like the server that showed the problem: a model that repeats itself, a 4k
context, a server that refuses `content: null` or an unnamed tool choice, one that streams nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agent_support import Recorder, call, make_agent, scripted
from fakes.openai_server import Failure, Raw, Reply, ScriptedOpenAIServer

from agent.chat.catalog import CATALOG
from agent.surfaces.common import start_conversation
from tools.catalog import Offer

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "training" / "tiny-arith.toml"
EVERY_TOOL = [entry.name for entry in CATALOG]


def test_every_request_carries_a_reply_budget_and_a_named_tool_choice(tmp_path):
    with ScriptedOpenAIServer(scripted(Reply("hello"))) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["report"], recorder).send("hi")
    [request] = server.requests
    assert request["max_tokens"] == 4096 and request["tool_choice"] == "auto"


def test_a_server_that_wants_max_completion_tokens_gets_it(tmp_path):
    def openai_newer(request: dict[str, Any]):
        if "max_tokens" in request:
            return Failure(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                "Use 'max_completion_tokens' instead.")
        return Reply("fine")

    with ScriptedOpenAIServer(openai_newer) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["report"], recorder)
        agent.send("hi")
        agent.send("again")
    assert [e["text"] for e in recorder.of_type("assistant")] == ["fine", "fine"]
    assert [("max_tokens" in r, r.get("max_completion_tokens")) for r in server.requests] == [
        (True, None), (False, 4096), (False, 4096)]  # learnt once, for the session


def test_a_small_context_gets_the_compact_tools_and_a_smaller_reply_budget(tmp_path):
    with ScriptedOpenAIServer(scripted(Reply("hello")), context_tokens=4096) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, EVERY_TOOL, recorder).send("hi")
    [request] = server.requests
    offered = [tool["function"]["name"] for tool in request["tools"]]
    assert set(offered) == {entry.name for entry in CATALOG if entry.offer is Offer.COMPACT}
    assert "More tools" not in request["messages"][0]["content"]
    assert request["max_tokens"] == 1024  # a quarter of the context
    check = next(t for t in request["tools"] if t["function"]["name"] == "config_check")["function"]["parameters"]
    assert "description" in check["properties"]["path"] and "description" not in check["properties"]["kind"]
    # What is sent fits the context by the conservative estimate, with the reply budget left over.
    assert len(json.dumps(request["messages"])) + len(json.dumps(request["tools"])) < (4096 - 1024) * 3


def test_results_that_pile_up_are_cut_to_fit_the_context_oldest_first(tmp_path):
    shutil.copy(CONFIG, tmp_path / "rl.toml")
    script = scripted(*[call("config_check", path="rl.toml", kind=kind) for kind in ("rl", "trainer", "orchestrator")],
                      Reply("done"))
    with ScriptedOpenAIServer(script, context_tokens=4096) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, EVERY_TOOL, recorder)
        start_conversation(agent)  # the system prompt takes its share
        agent.send("check rl.toml three ways")
    last = server.requests[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) == 3 and "to fit the model's context" in results[0]
    cut = ["to fit the model's context" in result for result in results]
    assert cut == sorted(cut, reverse=True)  # the oldest go first
    # The session keeps every result whole: only what is sent is cut.
    assert all("to fit" not in m.get("content", "") for m in agent.session.messages() if m["role"] == "tool")


def test_an_overflow_the_estimate_missed_is_retried_once_with_less_history(tmp_path):
    seen: list[int] = []

    def tight(request: dict[str, Any]):
        size = len(json.dumps(request["messages"]))
        seen.append(size)
        if len(seen) == 3:  # the second turn overflows once
            return Failure(400, "This model's maximum context length is 8192 tokens. However, you requested "
                                "9000 tokens. Please reduce the length of the messages.")
        return Reply("ok " + "x" * 2000)

    with ScriptedOpenAIServer(tight) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["report"], recorder)
        agent.send("one")
        agent.send("two")
        agent.send("three")
    assert [e["text"][:2] for e in recorder.of_type("assistant")] == ["ok", "ok", "ok"]
    assert any("did not fit the model's context" in e["message"] for e in recorder.of_type("notice"))
    assert seen[3] < seen[2]  # the retry sent less
    assert recorder.of_type("error") == []


def test_an_overflow_that_persists_says_what_to_do(tmp_path):
    too_long = Failure(400, "the request exceeds the available context size, try increasing it")
    with ScriptedOpenAIServer(lambda request: too_long) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["report"], recorder).send("hi")
    [error] = recorder.of_type("error")
    assert "no longer fits the model's context" in error["message"] and "reply_tokens" in error["message"]
    assert "OpenAI-compatible" not in error["message"]


def test_a_reply_cut_at_the_budget_is_said_and_an_empty_one_is_shown_not_stored(tmp_path):
    with ScriptedOpenAIServer(scripted(Reply("la " * 50, finish_reason="length"), Reply(""))) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["report"], recorder)
        agent.send("sing")
        agent.send("again")
    assert any("cut at 4096 tokens" in e["message"] for e in recorder.of_type("notice"))
    [error] = recorder.of_type("error")
    assert "answered with nothing" in error["message"]
    assert [m["role"] for m in agent.session.messages()] == ["user", "assistant", "user"]


def test_the_same_call_made_again_in_a_turn_runs_once(tmp_path):
    shutil.copy(CONFIG, tmp_path / "rl.toml")
    script = scripted(*[call("config_check", path="rl.toml")] * 12, Reply("checked"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["config_check"], recorder)
        agent.send("check it")
        agent.send("check it once more")
    ran = [c["name"] for c in agent.session.tool_calls(ok_only=False)]
    assert ran == ["config_check"]  # twelve asks in the first turn, one run; the second turn got "checked"
    results = [json.loads(m["content"]) for m in server.requests[12]["messages"] if m["role"] == "tool"]
    assert "not_run" in results[-1] and "not_run" not in results[0]


def test_a_run_id_that_cannot_be_one_is_refused_before_anyone_is_asked(tmp_path):
    script = scripted(call("train_stop", run="<the run id from before>"), Reply("sorry"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder(answers=["yes"])
        make_agent(tmp_path, server.base_url, ["train_stop"], recorder).send("stop my run")
    assert recorder.questions == []
    [result] = recorder.of_type("tool_result")
    assert not result["ok"] and "is not a run id" in json.dumps(result)


def test_a_server_that_refuses_null_content_beside_tool_calls_is_never_sent_it(tmp_path):
    def strict(request: dict[str, Any]):
        if any(m.get("content") is None for m in request["messages"]):
            return Failure(400, "messages: content must be a string")
        return call("report") if len(request["messages"]) < 2 else Reply("done")

    with ScriptedOpenAIServer(strict) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["report"], recorder).send("report please")
    assert recorder.of_type("error") == [] and recorder.of_type("assistant")[-1]["text"] == "done"
    [asked] = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert asked["content"] == "" and asked["tool_calls"][0]["function"]["name"] == "report"


def test_a_server_without_tool_calling_gets_advice_that_names_its_flag(tmp_path):
    refusal = Failure(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
    with ScriptedOpenAIServer(lambda request: refusal) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["report"], recorder).send("hi")
    [error] = recorder.of_type("error")
    assert "--enable-auto-tool-choice --tool-call-parser" in error["message"] and "--jinja" in error["message"]
    assert len(server.requests) == 1  # a 400 is not retried


def test_a_server_that_streams_nothing_is_asked_without_streaming(tmp_path):
    def streams_nothing(request: dict[str, Any]):
        return Raw(b"", "text/event-stream") if request.get("stream") else Reply("whole")

    with ScriptedOpenAIServer(streams_nothing) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["report"], recorder)
        agent.send("hi")
        agent.send("hi again")
    assert [e["text"] for e in recorder.of_type("assistant")] == ["whole", "whole"]
    assert [bool(r.get("stream")) for r in server.requests] == [True, False, False]


def test_a_tool_offered_by_name_is_named_in_the_prompt_and_its_schema_follows_its_first_call(tmp_path):
    shutil.copy(CONFIG, tmp_path / "rl.toml")
    script = scripted(call("config_restore", path="rl.toml"), Reply("nothing to restore"))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, EVERY_TOOL, recorder)
        start_conversation(agent)
        agent.send("undo your last edit of rl.toml")
    first, second = server.requests
    by_name = {entry.name for entry in CATALOG if entry.offer is Offer.BY_NAME}
    assert by_name and not by_name & {t["function"]["name"] for t in first["tools"]}
    assert "config_restore(path): Put back" in first["messages"][0]["content"]
    assert "config_restore" in {t["function"]["name"] for t in second["tools"]}
    [result] = recorder.of_type("tool_result")
    assert result["name"] == "config_restore"  # it ran like any other tool
    # The line is sent, never stored: the transcript's system prompt is the playbook's alone.
    assert "More tools" not in agent.session.messages()[0]["content"]


def test_a_plain_reply_past_its_bound_is_said_too_large_not_unreachable(tmp_path):
    """A non-streamed reply is read whole by the SDK, which reports the door's BodyTooLarge as a connection error."""
    from tools.io.http import REPLY_BYTES

    huge = Raw(b'{"choices": [{"message": {"content": "' + b"a" * (REPLY_BYTES + 1) + b'"}}]}')
    with ScriptedOpenAIServer(lambda request: huge) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["report"], recorder, stream=False).send("hi")
    [error] = recorder.of_type("error")
    assert "is the server running" not in error["message"] and "could not reach" not in error["message"]
    assert f"went past {REPLY_BYTES >> 20} MiB, rlpilot's bound on one answer" in error["message"]
    assert "reply_tokens" in error["message"] and "--base-url" in error["message"]
    assert len(server.requests) == 1  # the same request would bring the same reply: not retried
