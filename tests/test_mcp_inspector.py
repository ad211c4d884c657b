"""A client no one here wrote: the MCP Inspector's CLI (npm) against `rlpilot mcp` on stdio.

Inspector 2.x needs node >= 22.19; 1.0.3 runs on node 20 and speaks the 2025-11-25 handshake,
which the SDK's server still answers. It comes from npm's cache (`npx --offline`), never the
network during the test: without node, npx or a cached copy the test skips, saying how to get one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from ops_support import RLPILOT, env_package, prime_env

from agent.bench.standin import PrimeAPI

REPO = Path(__file__).resolve().parents[1]
INSPECTOR = "@modelcontextprotocol/inspector@1.0.3"

pytestmark = pytest.mark.slow


def _inspector(workspace: Path, env: dict[str, str], *method: str) -> dict:
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        pytest.skip("node and npx are not installed")
    # The user's npm cache, found before HOME moves to the test's own.
    cache = subprocess.run([npx, "--yes", "npm", "config", "get", "cache"], capture_output=True, text=True,
                           timeout=60).stdout.strip()
    env = {**env, "npm_config_cache": cache} if cache else env
    done = subprocess.run([npx, "--offline", "--yes", INSPECTOR, "--cli", str(RLPILOT), "mcp", "--workspace",
                           str(workspace), *method], cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0 and ("ENOTCACHED" in done.stderr or "ETARGET" in done.stderr):
        pytest.skip(f"{INSPECTOR} is not in npm's cache; fetch it once with `npx --yes {INSPECTOR} --help`")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout[done.stdout.index("{"):])


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shutil.copy(REPO / "configs" / "training" / "tiny-arith.toml", workspace / "rl.toml")
    env_package(workspace, "echo-env")
    return workspace


def _env(tmp_path: Path, api: PrimeAPI) -> dict[str, str]:
    env = prime_env(tmp_path / "home", api)
    env.pop("HTTP_PROXY"), env.pop("HTTPS_PROXY")  # npm honours them too; --offline keeps it off the network
    return env


def test_the_inspector_lists_the_tools_renders_a_prompt_and_reads_a_resource(tmp_path):
    workspace = _workspace(tmp_path)
    with PrimeAPI() as api:
        env = _env(tmp_path, api)
        tools = _inspector(workspace, env, "--method", "tools/list")
        listed = _inspector(workspace, env, "--method", "prompts/list")
        prompt = _inspector(workspace, env, "--method", "prompts/get", "--prompt-name", "tune-config",
                            "--prompt-args", "config=rl.toml")
        check = _inspector(workspace, env, "--method", "resources/read", "--uri", "rlpilot://config-check/rl.toml")
    assert {"stack_info", "env_push", "config_check"} <= {t["name"] for t in tools["tools"]}
    assert {p["name"] for p in listed["prompts"]} == {"start-environment", "tune-config", "diagnose-run",
                                                      "write-report"}
    assert "**Tune by rule.**" in prompt["messages"][0]["content"]["text"]
    assert "prime-rl-current" in check["contents"][0]["text"]


def test_the_inspector_gets_a_preview_with_a_token(tmp_path):
    workspace = _workspace(tmp_path)
    with PrimeAPI() as api:
        push = _inspector(workspace, _env(tmp_path, api), "--method", "tools/call", "--tool-name", "env_push",
                          "--tool-arg", "env=echo-env", 'answers={"visibility": "PRIVATE"}')
        pushed = [r for r in api.requests if r["method"] != "GET"]
    assert push["isError"] and push["structuredContent"]["confirm_token"]
    assert "Confirmation needed" in push["content"][0]["text"] and "PRIVATE" in push["content"][0]["text"]
    assert pushed == []  # a preview sends nothing
