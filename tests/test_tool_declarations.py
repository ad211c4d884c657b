"""A tool is declared in one place, and every surface finds it, gate included; agent/ names no tool."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated, Literal

from agent_support import Recorder, make_agent
from fakes.openai_server import Reply, ScriptedOpenAIServer
from pydantic import BaseModel, Field

from agent.chat.catalog import CATALOG
from agent.chat.context import openai_tool
from agent.cli.tool_cli import build_parser
from agent.surfaces.common import slash, slash_help
from agent.surfaces.mcp_server import TOKEN_FIELD, mcp_tool
from tools.catalog import Effect, ToolEntry
from tools.framework.contract import Arg, Context, ToolResult, arg_of, load

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED: list[dict] = []


class ToyInput(BaseModel):
    name: Annotated[str, Arg(positional=True), Field(description="The toy.")]
    visibility: Annotated[Literal["PUBLIC", "PRIVATE"] | None,
                          Arg(asks="visibility", prompt="Publish the toy {name} ({size} bytes)?")] = None
    yes: Annotated[bool, Arg(user_decision=True)] = False


class ToyResult(ToolResult):
    name: str
    size: int
    published: bool

    def binding(self) -> str:
        return f"{self.name}:{self.size}"


def toy_publish(args: ToyInput, ctx: Context) -> ToyResult:
    if args.yes:
        PUBLISHED.append(args.model_dump())
    return ToyResult(name=args.name, size=len(args.name), published=args.yes)


# The one place: a catalog entry (here outside CATALOG, so that no other test sees the toy) and its function.
TOY = ToolEntry("toy_publish", ("toy", "publish"), f"{__name__}:toy_publish", Effect.EXTERNAL,
                "Publish a toy.", slash="/toy")


def test_a_tool_declared_once_is_on_every_surface_with_its_gate(tmp_path):
    tool = load(TOY)
    cli = build_parser(tool).format_help()
    assert "--visibility" in cli and "--yes" in cli
    schema = openai_tool(tool)["function"]
    assert schema["name"] == "toy_publish" and set(schema["parameters"]["properties"]) == {"name", "visibility"}
    listed = mcp_tool(tool)
    assert listed.annotations.open_world_hint and TOKEN_FIELD in listed.input_schema["properties"]

    PUBLISHED.clear()
    with ScriptedOpenAIServer(lambda request: Reply("")) as server:
        recorder = Recorder(answers=["PRIVATE", "yes"])
        agent = make_agent(tmp_path, server.base_url, [], recorder)
        agent.tools = {tool.name: tool}
        assert "/toy" in slash_help(agent)
        slash(agent, recorder.emit, "/toy ducky")
    visibility, confirm = recorder.questions
    assert visibility.kind == "visibility" and visibility.prompt == "Publish the toy ducky (5 bytes)?"
    assert confirm.kind == "confirm" and confirm.binding == "ducky:5"
    assert PUBLISHED == [{"name": "ducky", "visibility": "PRIVATE", "yes": True}]


def test_the_models_choice_is_only_the_suggestion_of_the_declared_question(tmp_path):
    PUBLISHED.clear()
    script = [Reply(tool_calls=[{"name": "toy_publish", "arguments": {"name": "rex", "visibility": "PUBLIC",
                                                                       "yes": True}}]), Reply("done")]
    with ScriptedOpenAIServer(lambda request: script.pop(0) if script else Reply("")) as server:
        recorder = Recorder(answers=[])  # the person answers nothing
        agent = make_agent(tmp_path, server.base_url, [], recorder)
        agent.tools = {"toy_publish": load(TOY)}
        agent.budget.schemas = [openai_tool(load(TOY))]
        agent.send("publish rex")
    [question] = recorder.questions
    assert question.kind == "visibility" and question.suggestion == "PUBLIC"
    assert PUBLISHED == []


def _tool_name_literals(path: Path, names: set[str]) -> list[str]:
    """String constants in the file that are a tool's name; event types, event keys and titles spelled
    like one (the `report` event) are not."""
    tree = ast.parse(path.read_text())
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            allowed |= {id(v) for k, v in zip(node.keys, node.values, strict=True)
                        if isinstance(k, ast.Constant) and k.value == "type"}
            allowed |= {id(k) for k in node.keys if k is not None}
        if isinstance(node, ast.keyword) and node.arg == "title":
            allowed.add(id(node.value))
        # A name looked up in the catalog by `typed` (which fails for a name no tool has) is known by its declaration.
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "typed":
            allowed |= {id(a) for a in node.args}
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "kind":
            allowed |= {id(c) for c in node.comparators}
            allowed |= {id(e) for c in node.comparators if isinstance(c, ast.Tuple) for e in c.elts}
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed]


def test_agent_code_names_no_tool_outside_the_catalog():
    names = {entry.name for entry in CATALOG}
    declared = ROOT / "agent" / "chat" / "catalog.py"  # the agent's own tools are declared there
    found = [hit for path in sorted((ROOT / "agent").rglob("*.py")) if path != declared
             for hit in _tool_name_literals(path, names)]
    assert found == [], "tools are known by their declarations, not by name:\n" + "\n".join(found)


def test_the_literal_finder_sees_a_tool_name_but_not_an_event_type(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('if name == "env_push":\n    pass\nevent = {"type": "report", "report": {}}\n'
                       'if kind == "report":\n    show(title="report")\n')
    assert _tool_name_literals(planted, {entry.name for entry in CATALOG}) == ["planted.py:1: 'env_push'"]


def test_a_tool_confirms_in_its_catalog_entry_exactly_when_its_input_takes_the_persons_yes():
    """A confirming entry is asked in the chat and on MCP, and its docs say "It asks you first"; on the command
    line only a `yes` that a person sets (`Confirmation`, `--yes`) holds the action back, so the two agree."""
    def takes_yes(entry: ToolEntry) -> bool:
        info = load(entry).input_model.model_fields.get("yes")
        return info is not None and arg_of(info).confirms and arg_of(info).user_decision

    unasked = [entry.name for entry in CATALOG if entry.confirms and not takes_yes(entry)]
    undeclared = [entry.name for entry in CATALOG if takes_yes(entry) and not entry.confirms]
    assert unasked == [], f"their catalog entry confirms, but the command line acts without --yes: {unasked}"
    assert undeclared == [], f"they take --yes, but their catalog entry does not confirm: {undeclared}"
