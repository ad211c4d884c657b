"""What the README and the docs pages say that test_newcomer.py does not run as shell lines: the editor
configurations (MCP, ACP) started as written, what the chat prints when piped, and the list of lines left unrun."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess

import acp
import anyio
from mcp import Client, StdioServerParameters, stdio_client
from ops_support import RLPILOT, prime_env
from readme_support import README, REPO, bash_commands, json_blocks, pages
from test_newcomer import NO_EXAMPLES, NOT_RUN, STAND_INS

READ = README.read_text()
SURFACES = (REPO / "docs" / "surfaces.md").read_text()


def _config(key: str) -> dict:
    """The one JSON block of the README or a docs page that configures `key` (`mcpServers`, `agent_servers`)."""
    found = [json.loads(b.body) for page in pages() for b in json_blocks(page.read_text()) if f'"{key}"' in b.body]
    assert len(found) == 1, f"the README and the docs should have one {key} block"
    return found[0][key]["rlpilot"]


def test_every_line_left_unrun_is_still_in_the_readme_or_the_docs_with_its_reason():
    lines = [c.text for page in pages() for c in bash_commands(page.read_text())]
    for prefix, why in NOT_RUN.items():
        assert any(line.startswith(prefix) for line in lines), f"NOT_RUN names {prefix!r}, which the pages lost"
        assert len(why) > 20
    assert set(STAND_INS) <= set(lines)
    for page, why in NO_EXAMPLES.items():
        assert (REPO / page).is_file() and len(why) > 20


def test_the_readme_says_how_to_install_run_and_test_and_links_every_docs_page():
    for command in ("uv sync", "uv run rlpilot chat", "uv run pytest"):
        assert command in [c.text.split("  #")[0].strip() for c in bash_commands(READ)], command
    docs = {page.relative_to(REPO).as_posix() for page in pages()[1:]}
    assert docs and docs == set(re.findall(r"\]\((docs/[\w-]+\.md)\)", READ))


def test_the_mcp_configuration_starts_the_server_on_the_workspace(tmp_path):
    server = _config("mcpServers")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    args = [a.replace("/path/to/rlpilot", str(REPO)).replace("/path/to/workspace", str(workspace))
            for a in server["args"]]
    env = {**prime_env(tmp_path / "home"), **{k: "pk-test" for k in server["env"]}}

    async def session():
        params = StdioServerParameters(command=shutil.which(server["command"]), args=args, cwd=tmp_path, env=env)
        async with Client(stdio_client(params), read_timeout_seconds=120) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            checked = await client.call_tool("config_check", {"path": "rl.toml"})
        return tools, checked

    shutil.copy(REPO / "configs" / "training" / "tiny-arith.toml", workspace / "rl.toml")
    tools, checked = anyio.run(session)
    assert {"stack_info", "env_push", "diagnose"} <= tools
    assert not checked.is_error and checked.structured_content["path"] == str(workspace / "rl.toml")


def test_the_acp_configuration_opens_a_session(tmp_path):
    agent = _config("agent_servers")
    assert agent["command"] == "rlpilot"  # installed as a tool; here, this checkout's own
    env = {**prime_env(tmp_path / "home"), **agent["env"]}
    env["PATH"] = os.pathsep.join([str(RLPILOT.parent), env["PATH"]])

    class Editor:
        async def session_update(self, session_id, update, **kwargs):
            pass

    async def session():
        async with acp.spawn_agent_process(Editor(), shutil.which(agent["command"], path=env["PATH"]),
                                           *agent["args"], env=env, cwd=tmp_path) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            return (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

    assert asyncio.run(asyncio.wait_for(session(), timeout=120))


def test_piped_chat_prints_what_the_docs_say(tmp_path):
    assert "prints plain text: each tool call as a `> name {arguments}` line" in " ".join(SURFACES.split())
    shutil.copytree(REPO / "environments" / "tiny_arith" / "examples" / "smoke-eval", tmp_path / "smoke-eval")
    env = prime_env(tmp_path / "home")

    def chat(*flags: str) -> list[str]:
        done = subprocess.run([RLPILOT, "chat", *flags], input="/summarize smoke-eval\n", cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    text = chat()
    assert any(line.strip().startswith('> eval_summarize {"path": "smoke-eval"}') for line in text), text
    assert any("verdict    ready" in line for line in text) and "\x1b[" not in "\n".join(text)
    assert not any(line.startswith("{") for line in text)
    events = [json.loads(line) for line in chat("--json")]
    assert {"tool_call", "tool_result"} <= {event["type"] for event in events}


def test_the_readme_names_its_sample_run_where_it_ships():
    run = REPO / "environments" / "tiny_arith" / "examples" / "rl-run"
    assert "rlpilot diagnose environments/tiny_arith/examples/rl-run" in READ
    done = subprocess.run([RLPILOT, "diagnose", str(run), "--json"], capture_output=True, text=True, timeout=120)
    codes = [f["code"] for f in json.loads(done.stdout)["findings"]]
    assert done.returncode == 0 and "entropy-collapse" in codes, done.stderr
