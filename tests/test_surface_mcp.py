"""`rlpilot mcp` as a real subprocess, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import anyio
from agent_support import RECKLESS_CLAIM, endpoint_alias
from eval_support import use_environments_venv
from fakes.openai_server import Reply, ScriptedOpenAIServer
from mcp import Client, StdioServerParameters, stdio_client
from ops_support import RLPILOT, env_package, prime_env

from agent.bench.standin import PrimeAPI
from agent.surfaces.mcp_server import Confirmations


def _client(workspace: Path, env: dict[str, str]) -> Client:
    return Client(stdio_client(StdioServerParameters(command=str(RLPILOT), args=["mcp"], cwd=workspace, env=env)),
                  read_timeout_seconds=120)


def test_tools_are_listed_without_hidden_fields_and_answer_with_structured_content(tmp_path):
    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home")) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            stack = await client.call_tool("stack_info", {})
            report = await client.call_tool("report", {"session": "someone-else"})
            missing = await client.call_tool("eval_summarize", {"path": str(tmp_path / "nope")})
        return listed, stack, report, missing

    listed, stack, report, missing = anyio.run(session)
    assert {"stack_info", "report", "env_push"} <= set(listed)
    assert listed["stack_info"].annotations.read_only_hint and listed["env_push"].annotations.open_world_hint
    assert "confirm_token" in listed["env_push"].input_schema["properties"]
    assert "confirm_token" not in listed["stack_info"].input_schema["properties"]
    assert "session" not in listed["report"].input_schema["properties"]  # the agent fills it in
    assert listed["stack_info"].output_schema["anyOf"][0]["properties"]["python"]  # the result; [1] a preview
    assert not stack.is_error and stack.structured_content["python"]
    # A hidden field sent anyway is dropped: the report is on the server's own session.
    assert not report.is_error and report.structured_content["session"] != "someone-else"
    assert missing.is_error and "nope" in missing.content[0].text


def test_a_push_runs_only_with_the_token_of_its_own_preview(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env_package(workspace, "echo-env")
    call = {"env": "echo-env", "answers": {"visibility": "PRIVATE"}}

    async def session():
        async with _client(workspace, prime_env(tmp_path / "home", api)) as client:
            preview = await client.call_tool("env_push", call)
            token = preview.structured_content["confirm_token"]
            nothing_yet = [r for r in api.requests if r["method"] != "GET"]
            other_args = await client.call_tool("env_push", {**call, "answers": {"visibility": "PUBLIC"},
                                                             "confirm_token": token})
            used_up = await client.call_tool("env_push", {**call, "confirm_token": token})
            fresh = used_up.structured_content["confirm_token"]
            pushed = await client.call_tool("env_push", {**call, "confirm_token": fresh})
            again = await client.call_tool("env_push", {**call, "confirm_token": fresh})
        return preview, nothing_yet, other_args, used_up, pushed, again

    with PrimeAPI() as api:
        preview, nothing_yet, other_args, used_up, pushed, again = anyio.run(session)
        resolves = api.seen("POST", "/api/v1/environmentshub/resolve")
    assert preview.is_error and "Confirmation needed" in preview.content[0].text
    assert "PRIVATE" in preview.content[0].text and nothing_yet == []
    # The question names what is pushed: the package, its version and its folder.
    assert "echo-env 0.1.0 from" in preview.content[0].text
    assert other_args.is_error and other_args.structured_content["confirmation_required"]
    assert used_up.is_error and "not valid for this call" in used_up.content[0].text
    assert not pushed.is_error, pushed.content[0].text
    assert pushed.structured_content["hub_id"] == "tester/echo-env"
    assert pushed.structured_content["visibility"] == "PRIVATE"
    assert [r["body"] for r in resolves] == [{"name": "echo-env", "visibility": "PRIVATE"}]
    assert again.is_error and "not valid" in again.content[0].text


def test_a_question_the_arguments_do_not_answer_comes_back_first(tmp_path):
    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home")) as client:
            push = await client.call_tool("env_push", {"env": "echo-env"})
            family = await client.call_tool("eval_run", {"env": "tiny-arith"})
            answered = await client.call_tool("eval_run", {"env": "tiny-arith", "answers": {"model-family": "2"}})
        return push, family, answered

    push, family, answered = anyio.run(session)
    assert push.is_error and "confirm_token" not in (push.structured_content or {})
    assert family.is_error and family.structured_content["needs_answer"]["kind"] == "model-family"
    # With the family answered, the preview makes the eval's own checks: here the environment is missing.
    assert answered.is_error and "confirm_token" not in (answered.structured_content or {})
    assert answered.structured_content["error"]["code"] == "env-not-installed"


def test_a_visibility_the_model_only_suggested_gets_a_question_never_a_token(tmp_path):
    env_package(tmp_path, "echo-env")

    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home", api)) as client:
            return await client.call_tool("env_push", {"env": "echo-env", "visibility": "PUBLIC"})

    with PrimeAPI() as api:
        push = anyio.run(session)
    assert push.is_error and "confirm_token" not in (push.structured_content or {})
    asked = push.structured_content["needs_answer"]
    assert asked["kind"] == "visibility" and asked["suggestion"] == "PUBLIC"
    assert "echo-env 0.1.0" in asked["prompt"] and '"visibility"' in push.content[0].text
    assert [r for r in api.requests if r["method"] != "GET"] == []


def test_tokens_are_single_use_bound_to_arguments_and_expire():
    now = [0.0]
    tokens = Confirmations(ttl_s=60, clock=lambda: now[0])
    call = {"env": "a", "visibility": "PRIVATE"}
    first = tokens.issue("env_push", call)
    assert not tokens.redeem(first, "env_push", {**call, "visibility": "PUBLIC"})[0]
    assert not tokens.redeem(first, "env_push", call)[0]  # the wrong try used it up
    second = tokens.issue("env_push", call)
    assert not tokens.redeem(second, "eval_run", call)[0]
    third = tokens.issue("env_push", call)
    now[0] = 61
    assert not tokens.redeem(third, "env_push", call)[0]
    fourth = tokens.issue("env_push", call, preview=frozenset({"hash-of-the-preview"}))
    assert tokens.redeem(fourth, "env_push", call) == (True, frozenset({"hash-of-the-preview"}))
    assert not tokens.redeem(fourth, "env_push", call)[0]


def test_progress_reaches_a_client_that_asked_for_it(tmp_path):
    seen = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home", api)) as client:
            return await client.call_tool("train_watch", {"run": "run-flat", "every": "1s"},
                                          progress_callback=on_progress)

    with PrimeAPI() as api:
        api.runs["run-flat"] = {"id": "run-flat", "userId": "u", "status": "RUNNING", "maxSteps": 200,
                                "createdAt": "2026-12-01T08:00:00Z", "updatedAt": "2026-12-01T08:00:00Z"}
        api.metrics["run-flat"] = [{"step": s, "train/agg/all/agent/reward/mean": 0.0} for s in range(1, 81)]
        watched = anyio.run(session)
    assert not watched.is_error and watched.structured_content["stop_suggested"]
    assert seen and seen[0][:2] == (80.0, 200.0) and "run-flat" in seen[0][2]


def test_a_launch_previews_its_plan_and_runs_only_with_the_token(tmp_path, shared_fixtures):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shutil.copy(shared_fixtures / "prime-rl/main-2026-08-21/examples/basic/reverse-text/rl.toml", workspace / "rl.toml")
    call = {"config": "rl.toml", "target": "hosted"}

    async def session():
        async with _client(workspace, prime_env(tmp_path / "home", api, RLPILOT_HOME=str(tmp_path / "state"))) as c:
            preview = await c.call_tool("train_launch", call)
            before = api.seen("POST", "/api/v1/training/runs")
            launched = await c.call_tool("train_launch", {**call, "confirm_token":
                                                          preview.structured_content["confirm_token"]})
        return preview, before, launched

    with PrimeAPI() as api:
        preview, before, launched = anyio.run(session)
        created = api.seen("POST", "/api/v1/training/runs")
    # The preview is the tool's own plan (it runs without `yes`), and nothing was submitted.
    assert preview.is_error and "Qwen3-0.6B-Reverse-Text-SFT" in preview.content[0].text and before == []
    assert not launched.is_error, launched.content[0].text
    assert launched.structured_content["launched"] and launched.structured_content["run"] in api.payloads
    assert len(created) == 1


def test_a_launch_its_own_preview_refuses_gets_no_token(tmp_path, shared_fixtures):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shutil.copy(shared_fixtures / "hosted-lab/reverse-text-rl.toml", workspace / "rl.toml")

    async def session():
        async with _client(workspace, prime_env(tmp_path / "home", api, RLPILOT_HOME=str(tmp_path / "state"))) as c:
            return await c.call_tool("train_launch", {"config": "rl.toml", "target": "hosted"})

    with PrimeAPI() as api:
        refused = anyio.run(session)
    assert "confirm_token" not in (refused.structured_content or {})
    assert refused.structured_content["launched"] is False
    assert "config migrate" in refused.structured_content["problems"][0]["fix"]
    assert not api.seen("POST", "/api/v1/training/runs")


def test_a_preview_records_no_answer_in_the_session(tmp_path, tmp_path_factory, monkeypatch):
    from agent.chat.sessions import Store

    venv = use_environments_venv(tmp_path_factory, monkeypatch)
    env = prime_env(tmp_path / "home", RLPILOT_HOME=str(tmp_path / "state"), VIRTUAL_ENV=str(venv))

    async def session():
        async with _client(tmp_path, env) as client:
            return await client.call_tool("eval_run", {"env": "tiny-arith", "answers": {"model-family": "instruct"}})

    with ScriptedOpenAIServer(lambda request: Reply("4")) as server:
        # The skill's go-to instruct model, served here: the preview checks that its endpoint answers.
        endpoint_alias(tmp_path, "gpt-4.1-mini", server.base_url, "STUB_API_KEY")
        preview = anyio.run(session)
    assert preview.structured_content["confirm_token"], preview.content[0].text
    assert server.base_url in preview.content[0].text and "$STUB_API_KEY" in preview.content[0].text
    store = Store(tmp_path / "state")
    [listed] = store.list()
    assert store.open(listed["id"]).get("model_family") is None  # nobody confirmed yet


def test_a_plot_comes_back_as_image_content_and_is_written_where_output_says(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "reward/mean": s / 20}) + "\n"
                                                    for s in range(20)))

    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home")) as client:
            return await client.call_tool("metrics_plot", {"source": "metrics.jsonl", "output": "out/curves.png"})

    plotted = anyio.run(session)
    assert not plotted.is_error, plotted.content[0].text
    [image] = [c for c in plotted.content if c.type == "image"]
    written = (tmp_path / "out" / "curves.png").read_bytes()
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == written
    assert written.startswith(b"\x89PNG")


def test_the_report_never_carries_a_claim_the_tool_record_does_not_hold(tmp_path):
    """Over MCP the client's model writes the answer; what reaches rlpilot of its words is the report's notes."""
    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home")) as client:
            launch = await client.call_tool("train_launch", {"config": "rl.toml", "target": "hosted"})
            return launch, await client.call_tool("report", {"notes": RECKLESS_CLAIM + " Fix the config path."})

    launch, report = anyio.run(session)
    assert launch.is_error
    assert report.structured_content["notes"] == "Fix the config path." and report.structured_content["actions"] == []
    text = report.content[0].text
    # A gated call that never got past its preview is no call in the session's record.
    assert "Left out of the notes, not in the tool record: launched (no train_launch or train_restart" in text
    assert RECKLESS_CLAIM not in text and "pushed (no env_push call was made)" in text


def test_an_ide_session_is_titled_by_its_first_command(tmp_path):
    from agent.chat.sessions import Store

    async def session():
        async with _client(tmp_path, prime_env(tmp_path / "home", RLPILOT_HOME=str(tmp_path / "state"))) as client:
            await client.call_tool("stack_info", {})
            await client.call_tool("eval_summarize", {"path": "nope"})

    anyio.run(session)
    [listed] = Store(tmp_path / "state").list()
    assert listed["title"] == "rlpilot stack"  # the command a person would type, not the tool's name


def test_a_picture_past_its_bound_is_said_in_words_not_attached(tmp_path):
    """The picture was read whole to attach it: /dev/zero's kin or a data file named as the output filled memory."""
    from agent.chat.outcome import Outcome
    from agent.surfaces.mcp_server import _result
    from tools.diagnose.plot import PlotResult
    from tools.io.files import PICTURE_LIMIT

    picture = tmp_path / "curves.png"
    with picture.open("wb") as out:
        out.truncate(PICTURE_LIMIT + 1)  # sparse: nothing is written
    answer = _result(Outcome.ran("metrics_plot", PlotResult(output=str(picture), series=["reward"], steps=[0, 9])))
    assert [c.type for c in answer.content] == ["text", "text"]
    assert "the picture is not attached: " in answer.content[1].text
    assert "curves.png is 32 MiB, over the 32 MiB rlpilot reads whole" in answer.content[1].text
