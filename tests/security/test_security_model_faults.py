"""Case 10: a model server that answers garbage, or nothing, ends the turn with one error event; the
session goes on; the default wait is bounded and the error says how long was waited."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from agent_support import scripted
from fakes.openai_server import Raw, Reply, ScriptedOpenAIServer
from security_support import RLPILOT

from configs.settings import BUNDLED


def _chat(tmp_path: Path, base_url: str, messages: list[str], *flags: str) -> tuple[int, list[dict], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PRIME_API_KEY", "RLPILOT_HOME")}
    done = subprocess.run([str(RLPILOT), "chat", "--json", "--base-url", base_url, "--model", "m", *flags],
                          input="".join(m + "\n" for m in messages), cwd=tmp_path, env=env | {"HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=120)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.strip()], done.stderr


@pytest.mark.parametrize(("fault", "flags"), [
    (Raw(b'{"id": "x", "choices": [{"message": '), ["--no-stream"]),  # a body cut off mid-JSON
    (Raw(b"<html>502 Bad Gateway</html>", "text/html"), ["--no-stream"]),
    (Raw(b"data: {not json at all\n\n", "text/event-stream"), []),  # an SSE line that is not JSON
    (Raw(b"this is not an event stream\n\n", "text/event-stream"), []),  # a stream with no events at all
], ids=["truncated-json", "html", "bad-sse-line", "empty-stream"])
def test_a_broken_reply_is_one_error_event_and_the_session_goes_on(tmp_path: Path, fault: Raw,
                                                                   flags: list[str]) -> None:
    # A stream with no events is asked again as a plain request (some servers only answer those): the
    # same garbage then is the one error.
    retried = [fault] if fault.body.startswith(b"this is not an event stream") else []
    with ScriptedOpenAIServer(scripted(fault, *retried, Reply("second answer"))) as server:
        code, events, stderr = _chat(tmp_path, server.base_url, ["first", "second"], *flags)
    assert code == 0 and "Traceback" not in stderr, stderr
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1 and "not a chat completion" in errors[0]["message"], events
    replies = [e["text"] for e in events if e["type"] == "assistant"]
    assert replies == ["second answer"]  # the next message got its answer


def test_a_silent_server_is_given_up_on_within_the_budget_the_error_states(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "rlpilot.toml").write_text("[agent]\nrequest_timeout_s = 1\nrequest_budget_s = 3\n")
    with ScriptedOpenAIServer(scripted(*[Reply("late", delay=30)] * 5, Reply("on time"))) as server:
        code, events, stderr = _chat(tmp_path, server.base_url, ["first"], "--no-stream")
        attempts = len(server.requests)
    assert code == 1 and "Traceback" not in stderr, stderr  # its one message never got an answer
    [error] = [e for e in events if e["type"] == "error"]
    assert "did not answer in time" in error["message"] and "budget of 3 s" in error["message"]
    assert "request_timeout_s" in error["message"]  # and says how to wait longer
    assert 1 <= attempts <= 4  # retries stopped at the budget, not after five 1 s attempts and their waits


def test_the_default_wait_is_at_most_a_minute_per_attempt_and_under_three_minutes_in_all() -> None:
    agent = tomllib.loads(BUNDLED.read_text())["agent"]
    assert agent["request_timeout_s"] <= 60 and agent["request_budget_s"] < 180
