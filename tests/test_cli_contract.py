"""The tool contract as users and other surfaces see it: every catalog entry, the CLI rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.chat.catalog import CATALOG
from tools.catalog import Effect
from tools.framework.contract import ToolResult, arg_of, load

RLPILOT = Path(sys.executable).parent / "rlpilot"
REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "vllm", "verifiers", "openai", "pydantic")


def _run_cli_in_process(argv: list[str], watched: tuple[str, ...], cwd: Path | None = None
                        ) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run `rlpilot ARGV` in a fresh interpreter; which of `watched` it imported."""
    code = (
        "import sys, json\n"
        f"sys.argv = {['rlpilot', *argv]!r}\n"
        "from agent.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {watched!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd)
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def test_help_imports_no_heavy_module():
    done, imported = _run_cli_in_process(["--help"], HEAVY)
    assert imported == []
    assert "stack" in done.stdout


def test_config_check_reads_without_tomlkit_or_a_lock(tmp_path: Path):
    """tomlkit is for edits; a check reads with the standard library (bench/bench_config_check.py)."""
    config = REPO / "configs/training/tiny-arith.toml"
    done, imported = _run_cli_in_process(["config", "check", str(config)], ("tomlkit", "filelock"), tmp_path)
    assert "0 errors" in done.stdout, done.stderr
    assert imported == []


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.name)
def test_every_catalog_entry_loads_with_typed_models(entry):
    tool = load(entry)
    assert issubclass(tool.result_model, ToolResult)
    assert isinstance(entry.effect, Effect)
    schema = tool.model_schema()
    assert schema["type"] == "object"
    for name, info in tool.input_model.model_fields.items():
        if arg_of(info).user_decision or arg_of(info).cli_only:
            assert name not in schema.get("properties", {}), f"{entry.name}: {name} is hidden from models"


def test_tool_names_are_unique():
    names = [e.name for e in CATALOG]
    commands = [e.command for e in CATALOG]
    assert len(set(names)) == len(names) and len(set(commands)) == len(commands)


def _rlpilot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([RLPILOT, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_unknown_command_and_bad_flag_exit_2(tmp_path):
    unknown = _rlpilot("frobnicate", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown command" in unknown.stderr and unknown.stdout == ""
    bad_flag = _rlpilot("stack", "--no-such-flag", cwd=tmp_path)
    assert bad_flag.returncode == 2 and "unrecognized arguments" in bad_flag.stderr


@pytest.mark.parametrize(("argv", "named", "suggested"), [
    (["diagnos", "outputs/fake-run"], "'diagnos'", "rlpilot diagnose"),
    (["config", "chek", "rl.toml"], "'config chek'", "rlpilot config check"),
    (["sesions"], "'sesions'", "rlpilot sessions"),
])
def test_a_typo_names_only_the_unknown_word_and_the_nearest_command(tmp_path, argv, named, suggested):
    done = _rlpilot(*argv, "--json", cwd=tmp_path)
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert f"unknown command {named}" in first and f"did you mean `{suggested}`?" in first
    assert argv[-1] not in first or len(argv) == 1  # its arguments are not glued into the name
    assert json.loads(done.stdout)["error"]["hint"] == f"did you mean `{suggested}`?"


def test_json_output_is_exactly_one_document(tmp_path):
    done = _rlpilot("stack", "--json", cwd=tmp_path)
    assert done.returncode == 0
    assert isinstance(json.loads(done.stdout), dict)


def test_subcommand_help_lists_flags_from_the_input_model(tmp_path):
    done = _rlpilot("stack", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "--prime-rl PATH" in done.stdout and "--json" in done.stdout


def test_model_schemas_are_compact_but_lose_nothing():
    from typing import Any, Literal

    from pydantic import BaseModel, Field

    from tools.catalog import ToolEntry
    from tools.framework.contract import Tool
    from tools.framework.errors import BadInput

    class Sample(BaseModel):
        title: str = Field(description="a property that happens to be called title")
        count: int = 0
        label: str | None = None
        mode: Literal["a", "b"] = "a"
        force: bool = False
        # Bounds a name implies go; a bound that tells the model something stays.
        rollouts: int = Field(default=3, ge=1, le=50)
        step: int | None = Field(default=None, ge=0)
        budget: float | None = Field(default=None, gt=0)
        name: str = Field(default="x", min_length=1, max_length=64)
        # An empty mapping is what an omitted one is; any object takes more keys unless told otherwise.
        changes: dict[str, Any]
        reasons: dict[str, str] = {}

    entry = ToolEntry("sample", ("sample",), "x:y", Effect.READ, "A sample.")
    schema = Tool(entry, lambda a, c: None, Sample, ToolResult).model_schema()
    assert schema == {
        "properties": {
            "title": {"description": "a property that happens to be called title", "type": "string"},
            "count": {"default": 0, "type": "integer"},
            "label": {"type": "string"},
            "mode": {"default": "a", "enum": ["a", "b"]},
            "force": {"type": "boolean"},
            "rollouts": {"default": 3, "maximum": 50, "type": "integer"},
            "step": {"type": "integer"},
            "budget": {"type": "number"},
            "name": {"default": "x", "maxLength": 64, "type": "string"},
            "changes": {"type": "object"},
            "reasons": {"additionalProperties": {"type": "string"}, "type": "object"},
        },
        "required": ["title", "changes"],
        "type": "object",
    }
    # The tool still holds a call to the bounds the schema leaves out.
    with pytest.raises(BadInput, match="rollouts"):
        Tool(entry, lambda a, c: None, Sample, ToolResult).parse({"title": "t", "changes": {}, "rollouts": 0})


def _closed_pipe_run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`rlpilot ARGV` writing into a pipe whose reader has already gone (`| head -1` once head exits)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([RLPILOT, *argv], cwd=cwd, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["eval", "--help"],
    ["diagnose", "--help"],
    ["diagnose", str(REPO / "environments/tiny_arith/examples/rl-run"), "--json"],
    ["eval", "summarize", str(REPO / "environments/tiny_arith/examples/smoke-eval"), "--json"],
    ["config", "check", str(REPO / "configs/training/tiny-arith.toml")],
    ["eval", "summarize", "nowhere", "--json"],  # the error document too
], ids=" ".join)
def test_a_reader_that_stopped_early_ends_it_quietly(tmp_path, argv):
    done = _closed_pipe_run(argv, tmp_path)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    # A reader that stopped early has what it wanted; an error still has its line on stderr.
    assert done.returncode == 0 and ("does not exist" in done.stderr) == ("nowhere" in argv), done.stderr


def test_head_of_the_help_is_the_usage_line_and_exit_0(tmp_path):
    done = subprocess.run(["bash", "-o", "pipefail", "-c", f"{RLPILOT} --help | head -1"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "usage: rlpilot COMMAND [ARGS] [--json]\n", "")


_EVERY_COMMAND = """
import contextlib, io, json, sys
from agent.cli.main import main
found = {}
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as done:
            code = done.code
    found[" ".join(argv)] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(found))
"""


def test_every_command_with_json_prints_its_error_as_one_document(tmp_path):
    """Usage errors of every command, and tool errors, each as {ok: false, error: {code, message, hint}}."""
    failing = {(*entry.command, "--no-such-flag", "--json"): "usage" for entry in CATALOG}
    failing |= {
        ("eval", "summarize", "nowhere", "--json"): "no-such-path",
        ("eval", "samples", "nowhere", "--json"): "no-such-path",
        ("diagnose", "nowhere", "--json"): None,
        ("config", "check", "nowhere.toml", "--json"): None,
        ("config", "set", "rl.toml", "x", "--json"): "bad-argument",
        ("frobnicate", "--json"): "unknown-command",
    }
    done = subprocess.run([sys.executable, "-c", _EVERY_COMMAND, json.dumps([list(a) for a in failing])],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for argv, expected in failing.items():
        code, out, err = results[" ".join(argv)]
        assert code == 2 or (code == 1 and expected is None), (argv, code, err)
        document = json.loads(out)  # exactly one document, nothing around it
        assert document["ok"] is False and set(document["error"]) == {"code", "message", "hint"}, argv
        assert expected is None or document["error"]["code"] == expected, (argv, document)
        assert document["error"]["message"] and document["error"]["message"] in err.replace("\n", " ")
