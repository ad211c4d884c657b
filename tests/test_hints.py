"""Every `rlpilot ...` command rlpilot prints for a person to run (hints, next steps, help texts) runs as printed.

The commands are collected from the source, so a hint added anywhere is checked too: each one that
names a tool is parsed by that tool's real CLI parser and input model, each other command runs with
`--help`. Placeholders a hint fills in at run time (`{ref.name}`) and metavars left for the person
(`ENV`, `RUN`) get a sample value each; a new one fails here until it has one.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes.openai_server import Reply, ScriptedOpenAIServer
from ops_support import RLPILOT, prime_env

from agent.chat.catalog import CATALOG, find
from agent.cli.main import COMMANDS
from agent.cli.tool_cli import parse_arguments
from tools.framework.contract import load

REPO = Path(__file__).resolve().parents[1]
CONFIG = "configs/training/tiny-arith.toml"
# What a hint's f-string fills in, by the name of the value it formats.
FILLED_IN = {"name": "tiny-arith", "text": "tiny-arith", "hub_id": "tester/tiny-arith", "config": CONFIG,
             "run": "run-1", "run_id": "run-1", "new_run": "run-1", "source": "outputs/run-1/metrics.jsonl",
             "visibility": "PRIVATE", "traces": "outputs/run-1/traces.jsonl", "id": "run-1",
             "path": "environments/tiny_arith", "target": "hosted", "following": "smoke", "step": "50", "at_step": "50",
             "newer": "prime-rl-v0.9", "value": CONFIG,
             "ctx.settings.go_to('instruct')[0]": "gpt-4.1-mini", "trained": "tiny-arith", "env": "tiny-arith",
             "close": "stack"}  # the nearest command to a typo
# What the person fills in: the metavars hints leave in capitals.
METAVARS = {"ENV": "tiny-arith", "CONFIG": CONFIG, "RUN": "run-1", "RUN_A": "run-0", "ID": "abc123",
            "PATH": CONFIG, "DIR": "environments/tiny_arith", "CHECKPOINT": "outputs/run-1/step_50"}
# Patterns that describe how to write a command, not a command to run. A bare command name
# ("`rlpilot config migrate` does this") is a mention: it only has to exist.
PATTERNS = {"rlpilot COMMAND --help", "rlpilot GROUP", "rlpilot {' '.join(self.entry.command)} --help"}


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                                    ast.AsyncFunctionDef)))]
    return {id(n.body[0].value) for n in nodes
            if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _text(node: ast.AST) -> str | None:
    """A string literal's text, an f-string's with `{expr}` where it formats a value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
                       for part in node.values)
    return None


def printed_commands() -> dict[str, str]:
    """Each backquoted `rlpilot ...` in a string of tools/ or agent/ (docstrings aside), with where it is."""
    found: dict[str, str] = {}
    for file in sorted([*(REPO / "tools").rglob("*.py"), *(REPO / "agent").rglob("*.py")]):
        tree = ast.parse(file.read_text())
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            text = None if id(node) in skip else _text(node)
            for command in re.findall(r"`(rlpilot(?: [^`]*)?)`", text or ""):
                found.setdefault(command, f"{file.relative_to(REPO)}:{node.lineno}")
    return found


def concrete(command: str) -> list[str]:
    """The argv a person would run: placeholders filled, the first of alternatives, optional parts kept."""
    def filled(match: re.Match) -> str:
        if match.group(1) in FILLED_IN:
            return FILLED_IN[match.group(1)]
        node = ast.parse(match.group(1), mode="eval").body
        if isinstance(node, ast.BoolOp):  # `a or b`: the first is what a user typed
            node = node.values[0]
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            if isinstance(node, ast.Attribute):
                return FILLED_IN[node.attr]
            node = node.value
        return FILLED_IN[node.id]

    text = re.sub(r"\{([^{}]+)\}", filled, command).replace("[", "").replace("]", "")
    words = [word.split("|")[0] if "|" in word else word for word in shlex.split(text)]
    return [METAVARS.get(word, word) for word in words[1:]]


COMMANDS_PRINTED = printed_commands()


def test_the_collection_finds_the_hints_it_must_check():
    assert "rlpilot eval run {ref.name} --endpoint {ctx.settings.go_to('instruct')[0]} --num-examples 5" \
        in COMMANDS_PRINTED, "f-strings are read with their placeholders"
    assert any(c.startswith("rlpilot env push {ref.text} --visibility") for c in COMMANDS_PRINTED)
    assert len(COMMANDS_PRINTED) >= 30


@pytest.mark.parametrize("command", sorted(set(COMMANDS_PRINTED) - PATTERNS))
def test_a_printed_command_is_one_the_cli_accepts(command, tmp_path):
    where = COMMANDS_PRINTED[command]
    argv = concrete(command)
    entry, used = find(argv)
    if entry is None:  # a surface, the session list, the overview or a group: its --help must work
        assert not argv or argv[0] in COMMANDS or argv[0] == "--help" or argv[0] in {e.command[0] for e in CATALOG}, \
            f"{where}: `{command}` names no rlpilot command"
        done = subprocess.run([RLPILOT, *argv[:1], "--help"], capture_output=True, text=True, cwd=tmp_path,
                              timeout=60)
        assert done.returncode == 0, f"{where}: `{command}`: {done.stderr}"
        return
    if used == len(argv):
        return  # a mention of the command by name ("`rlpilot config migrate` does this"): it exists
    tool = load(entry)
    try:
        arguments, _ = parse_arguments(tool, argv[used:])
    except SystemExit:
        pytest.fail(f"{where}: `{command}` is refused by `rlpilot {' '.join(entry.command)}` (run as {argv})")
    tool.parse(arguments)


def test_the_next_step_after_an_install_runs_as_printed(tmp_path):
    """`env install` then its `next` command, word for word, against a local model behind the alias it names."""
    workspace = tmp_path / "ws"
    shutil.copytree(REPO / "environments" / "tiny_arith", workspace / "environments" / "tiny_arith",
                    ignore=shutil.ignore_patterns("__pycache__", "examples"))
    env = prime_env(tmp_path / "home", OPENAI_API_KEY="sk-test-local")
    installed = subprocess.run([RLPILOT, "env", "install", "tiny_arith", "--create-venv", "--yes", "--json"],
                               cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr
    printed = re.search(r"`(rlpilot [^`]+)`", json.loads(installed.stdout)["next"]).group(1)
    alias = printed.split("--endpoint ")[1].split()[0]
    # vf-eval prepares its harness from the package index before each run (as every vf-eval run does);
    # every other host stays behind the closed proxy.
    env.update(NO_PROXY=env["NO_PROXY"] + ",pypi.org,files.pythonhosted.org")
    del env["UV_OFFLINE"]
    with ScriptedOpenAIServer(lambda request: Reply("The answer is 42.")) as server:
        (workspace / "configs").mkdir()
        (workspace / "configs" / "endpoints.toml").write_text(
            f'[[endpoint]]\nendpoint_id = "{alias}"\nmodel = "stub-model"\nurl = "{server.base_url}"\n'
            'key = "OPENAI_API_KEY"\n')
        planned = subprocess.run([RLPILOT, *shlex.split(printed)[1:]], cwd=workspace, env=env,
                                 capture_output=True, text=True, timeout=600)
        assert planned.returncode == 1 and not server.requests, planned.stderr  # as printed: its plan, nothing run
        assert planned.stdout.splitlines()[-1] == "next: nothing was done: run it again with --yes to run the eval"
        ran = subprocess.run([RLPILOT, *shlex.split(printed)[1:], "--yes", "--json"], cwd=workspace, env=env,
                             capture_output=True, text=True, timeout=600)
    assert ran.returncode in (0, 1), ran.stderr  # it ran; the reward says how the stub model did
    result = json.loads(ran.stdout)
    assert result["model"] == "stub-model" and result["summary"]["rollouts"] == 5 * 3, result
    assert len(server.requests) == 5 * 3
