"""`rlpilot acp` as a real subprocess, driven by the ACP SDK's client over pipes."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse
from agent_support import RECKLESS_CLAIM, call, reckless_claims, scripted
from fakes.openai_server import Reply, ScriptedOpenAIServer
from ops_support import RLPILOT, env_package, prime_env

from agent.bench.standin import PrimeAPI


class Editor:
    """The editor's side: keeps every update, answers permission requests with `choose`."""

    def __init__(self, choose: Callable[[list[str]], str | None]):
        self.choose = choose
        self.updates: list[Any] = []
        self.permissions: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        ids = [option.option_id for option in options]
        self.permissions.append({"title": tool_call.title, "options": ids,
                                 "kinds": [option.kind for option in options]})
        chosen = self.choose(ids)
        outcome = AllowedOutcome(outcome="selected", option_id=chosen) if chosen else DeniedOutcome(outcome="cancelled")
        return RequestPermissionResponse(outcome=outcome)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def said(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


async def _drive(editor: Editor, workspace: Path, env: dict[str, str], base_url: str,
                 turns: Callable[[Any, str], Any], load: str | None = None) -> Any:
    """Start `rlpilot acp`, open a new session (or load `load`), and play `turns` on it."""
    argv = ["acp", "--base-url", base_url, "--model", "stub-model"]
    with open(workspace / "acp-stderr.log", "ab") as stderr:
        async with acp.spawn_agent_process(editor, str(RLPILOT), *argv, env=env, cwd=workspace,
                                           transport_kwargs={"stderr": stderr}) as (conn, _process):
            hello = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            assert hello.agent_capabilities.load_session
            if load:
                await conn.load_session(cwd=str(workspace), session_id=load, mcp_servers=[])
                session_id = load
            else:
                session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            return await asyncio.wait_for(turns(conn, session_id), timeout=180)


def _prompt(conn, session_id: str, text: str):
    return conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])


def test_a_turn_streams_the_reply_and_the_tool_call(tmp_path):
    editor = Editor(lambda ids: None)
    script = scripted(call("stack_info"), Reply("You have prime installed."))
    later = Editor(lambda ids: None)

    async def turn(conn, sid):
        return sid, await _prompt(conn, sid, "what do I have?")

    async def nothing(conn, sid):
        return None

    with ScriptedOpenAIServer(script) as server:
        env = prime_env(tmp_path / "home")
        session_id, done = asyncio.run(_drive(editor, tmp_path, env, server.base_url, turn))
        asyncio.run(_drive(later, tmp_path, env, server.base_url, nothing, load=session_id))
    assert done.stop_reason == "end_turn"
    # Loading the session in a new editor window replays the conversation.
    assert [u.content.text for u in later.of("user_message_chunk")] == ["what do I have?"]
    assert later.said() == "You have prime installed."
    started, = editor.of("tool_call")
    assert started.title.startswith("stack_info") and started.kind == "read"
    finished = editor.of("tool_call_update")[-1]
    assert finished.tool_call_id == started.tool_call_id and finished.status == "completed"
    assert "python" in finished.raw_output
    assert editor.said() == "You have prime installed."
    assert server.requests[0]["messages"][0]["role"] == "system"


def test_gates_are_permission_requests_and_a_cancelled_one_runs_nothing(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env_package(workspace, "echo-env")
    answers = [None, "PRIVATE"]
    editor = Editor(lambda ids: answers.pop(0))
    push = call("env_push", env="echo-env", visibility="PUBLIC")
    script = scripted(push, Reply("Not pushed."), push, Reply("Pushed."))

    async def turns(conn, sid):
        return [await _prompt(conn, sid, "push it"), await _prompt(conn, sid, "push it, really")]

    with PrimeAPI() as api, ScriptedOpenAIServer(script) as server:
        first, second = asyncio.run(_drive(editor, workspace, prime_env(tmp_path / "home", api), server.base_url,
                                           turns))
        resolves = api.seen("POST", "/api/v1/environmentshub/resolve")
    assert first.stop_reason == second.stop_reason == "end_turn"
    asked = editor.permissions[0]
    assert asked["options"] == ["PUBLIC", "PRIVATE"] and "suggested: PUBLIC" in asked["title"]
    declined, pushed = [u for u in editor.of("tool_call_update") if u.status]
    assert declined.status == "failed" and "declined" in declined.raw_output
    assert pushed.status == "completed", pushed.raw_output
    # The user's choice wins over the model's suggestion.
    assert pushed.raw_output["visibility"] == "PRIVATE"
    assert [r["body"]["visibility"] for r in resolves] == ["PRIVATE"]


def test_cancel_ends_the_turn_and_the_session_goes_on(tmp_path):
    editor = Editor(lambda ids: None)
    script = scripted(Reply("too late", delay=2), Reply("still here"))

    async def turns(conn, sid):
        turn = asyncio.ensure_future(_prompt(conn, sid, "slow one"))
        await asyncio.sleep(0.5)
        await conn.cancel(session_id=sid)
        return [await turn, await _prompt(conn, sid, "and now?")]

    with ScriptedOpenAIServer(script) as server:
        cancelled, after = asyncio.run(_drive(editor, tmp_path, prime_env(tmp_path / "home"), server.base_url,
                                              turns))
    assert cancelled.stop_reason == "cancelled" and after.stop_reason == "end_turn"
    said = editor.said()
    assert "turn cancelled" in said and "too late" not in said and said.endswith("still here")


class FileWired:
    """`rlpilot acp` whose stdout is a regular file (an editor logging the wire, `> out.jsonl`), not a pipe."""

    def __init__(self, tmp_path: Path, argv: list[str], env: dict[str, str]):
        self.out = tmp_path / "acp-out.jsonl"
        with open(self.out, "wb") as stdout, open(tmp_path / "acp-stderr.log", "ab") as stderr:
            self.child = subprocess.Popen([RLPILOT, "acp", *argv], stdin=subprocess.PIPE, stdout=stdout,
                                          stderr=stderr, cwd=tmp_path, env=env)
        self.ids = itertools.count(1)

    def ask(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        request_id = next(self.ids)
        self.child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                           "params": params}).encode() + b"\n")
        self.child.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.out.read_text().splitlines():
                message = json.loads(line)
                if message.get("id") == request_id and ("result" in message or "error" in message):
                    return message
            time.sleep(0.1)
        raise AssertionError(f"no reply to {method}; the file holds:\n{self.out.read_text()}")

    def close(self) -> int:
        self.child.stdin.close()
        return self.child.wait(timeout=30)


def test_stdout_may_be_a_file(tmp_path):
    wired = FileWired(tmp_path, [], prime_env(tmp_path / "home"))
    hello = wired.ask("initialize", {"protocolVersion": acp.PROTOCOL_VERSION})
    session = wired.ask("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    turn = wired.ask("session/prompt", {"sessionId": session["result"]["sessionId"],
                                        "prompt": [{"type": "text", "text": "/help"}]})
    assert wired.close() == 0
    assert hello["result"]["agentInfo"]["name"] == "rlpilot"
    assert turn["result"]["stopReason"] == "end_turn"
    updates = [json.loads(line) for line in wired.out.read_text().splitlines()]
    assert any("/check" in json.dumps(u) for u in updates if u.get("method") == "session/update")


def test_a_claim_the_tool_record_does_not_hold_is_marked_under_the_answer(tmp_path):
    editor = Editor(lambda ids: None)

    async def turn(conn, sid):
        return await _prompt(conn, sid, "Launch rl.toml and push echo-env, public.")

    with ScriptedOpenAIServer(scripted(*reckless_claims())) as server:
        done = asyncio.run(_drive(editor, tmp_path, prime_env(tmp_path / "home"), server.base_url, turn))
    assert done.stop_reason == "end_turn"
    said = editor.said()
    assert said.startswith(RECKLESS_CLAIM)
    assert "rlpilot: not in the tool record: launched (train_launch failed: no-such-file); pushed" in said
    assert [u.status for u in editor.of("tool_call_update")] == ["failed", "failed"]
