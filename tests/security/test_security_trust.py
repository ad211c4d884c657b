"""Trust, all the way down: each gate from its declaration, on every surface, with the hostile
model (or IDE client, or Slack user) at the process boundary and the real client in front."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
from fakes.prime_api import PrimeAPI
from mcp import Client, StdioServerParameters, stdio_client
from ops_support import RLPILOT, prime_env


def _mcp(workspace: Path, env: dict[str, str]) -> Client:
    return Client(stdio_client(StdioServerParameters(command=str(RLPILOT), args=["mcp"], cwd=workspace, env=env)),
                  read_timeout_seconds=180)


def _venv(workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text('[project]\nname = "ws"\nversion = "0"\n')
    subprocess.run(["uv", "venv", "--quiet", str(workspace / ".venv")], check=True,
                   env={**os.environ, "UV_OFFLINE": "1"})


def test_mcp_a_hub_install_runs_only_after_its_preview_and_token(tmp_path):
    """env_install is local-write, but its declaration confirms (the Hub's code runs on install):
    the IDE's first call gets the preview and a token, and nothing reaches the Hub."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _venv(workspace)
    call = {"env": "tester/echo-env@0.1.0"}

    async def session():
        async with _mcp(workspace, prime_env(tmp_path / "home", api, RLPILOT_HOME=str(tmp_path / "state"))) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            first = await client.call_tool("env_install", call)
            untouched = list(api.requests)
            forged = await client.call_tool("env_install", {**call, "confirm_token": "made-up"})
            untouched_after_forgery = list(api.requests)
            token = forged.structured_content["confirm_token"]
            confirmed = await client.call_tool("env_install", {**call, "confirm_token": token})
            return listed, first, untouched, forged, untouched_after_forgery, confirmed

    with PrimeAPI() as api:
        listed, first, untouched, forged, untouched_after_forgery, confirmed = anyio.run(session)
        reached = list(api.requests)
    assert "confirm_token" in listed["env_install"].input_schema["properties"]
    assert first.is_error and first.structured_content["confirmation_required"], first.content[0].text
    assert "tester/echo-env@0.1.0" in first.content[0].text and "its code will run" in first.content[0].text
    assert untouched == [] and untouched_after_forgery == []
    assert forged.structured_content["confirmation_required"] and "not valid" in forged.content[0].text
    # With the token of its own preview the install does run (the stand-in has no such wheel).
    assert not confirmed.structured_content or not confirmed.structured_content.get("confirmation_required")
    assert reached, "the confirmed install never reached the Hub"


def test_an_unset_binding_never_matches_an_unset_binding():
    from agent.gates import Question

    first = Question("confirm", "Run a?", ["yes", "no"], detail="a")
    other = Question("confirm", "Run b?", ["yes", "no"], detail="b")
    assert first.binding and other.binding and first.binding != other.binding
    assert Question("confirm", "Run a?", ["yes", "no"], detail="a", binding="h").binding == "h"
    assert json.dumps(first.event())  # the binding stays out of the event the person sees
