"""A command's `--help` imports none of the heavy SDKs: they cost `rlpilot mcp --help` and its kin seconds
where the help itself takes milliseconds (issue 46: every `--help` under 0.3 s; bench/bench_help.py times it).

Each command runs in a child Python of its own, so what the test process imported does not count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "mcp", "acp", "slack_bolt", "torch", "vllm", "verifiers")
# A tool's --help needs its input model only, and `sessions` one SQLite file: no HTTP client, no terminal
# renderer (a pipe gets plain text).
TOOL_HEAVY = (*HEAVY, "httpx", "rich")
MARK = "imported:"
# The child runs the command as `rlpilot` would, then names the heavy modules it has imported.
CHILD = f"""
import json, sys
from agent.cli.main import _dispatch
try:
    _dispatch(sys.argv[1:])
except SystemExit:
    pass
print({MARK!r} + json.dumps(sorted(name for name in {TOOL_HEAVY!r} if name in sys.modules)))
"""


def heavy_imports(argv: list[str], cwd: Path | None = None, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=env)
    last = done.stdout.splitlines()[-1]
    assert last.startswith(MARK), f"{argv}: the child did not finish: {done.stderr[-2000:]}"
    return [name for name in json.loads(last.removeprefix(MARK)) if name in heavy]


@pytest.mark.parametrize("command", ["slack", "acp", "mcp", "sessions", "skill", "chat", "bench", "bench brain"])
def test_help_imports_no_sdk(command):
    assert heavy_imports([*command.split(), "--help"]) == []


# One child answers every tool's --help in turn and names, after each, the heavy modules it then holds.
EVERY_TOOL = f"""
import contextlib, io, json, sys
from agent.chat.catalog import CATALOG
from agent.cli.main import _dispatch
held = {{}}
for entry in CATALOG:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        _dispatch([*entry.command, "--help"])
    held[" ".join(entry.command)] = sorted(name for name in {TOOL_HEAVY!r} if name in sys.modules)
print({MARK!r} + json.dumps(held))
"""


def test_every_tool_help_imports_no_client_nor_renderer():
    done = subprocess.run([sys.executable, "-c", EVERY_TOOL], capture_output=True, text=True, timeout=300)
    held = json.loads(done.stdout.splitlines()[-1].removeprefix(MARK))
    assert len(held) >= 30  # every tool answered
    first = next(((command, names) for command, names in held.items() if names), None)
    assert first is None, f"`rlpilot {first[0]} --help` imported {first[1]}"


def test_listing_sessions_reads_the_store_without_the_chat(tmp_path):
    """`rlpilot sessions` reads one SQLite file: the chat's model client and renderer are not its to load."""
    assert heavy_imports(["sessions"], cwd=tmp_path, heavy=TOOL_HEAVY) == []


def test_a_wrong_option_is_refused_before_the_sdk():
    assert heavy_imports(["mcp", "--no-such-option"]) == []


def test_the_check_sees_an_sdk_imported():
    """The check itself can fail: running the MCP server's module does import mcp."""
    assert "mcp" in heavy_imports(["mcp", "--workspace", "/nonexistent-folder"])
