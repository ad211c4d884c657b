"""The tool contract: one typed function per capability.

A tool is a function `(args: InputModel, ctx: Context) -> ResultModel`, listed once in
`tools.catalog`. The CLI subcommand, the JSON schema the language model sees and the MCP tool
are all derived from that function's two models, so they cannot drift apart.
"""

from __future__ import annotations

import importlib
import json
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ValidationError

from tools.catalog import Effect, ToolEntry
from tools.framework.errors import BadInput
from tools.framework.workspace import rlpilot_home

if TYPE_CHECKING:
    from configs.settings import Settings


@dataclass(frozen=True)
class Arg:
    """CLI and schema hints for one input field, attached with `Annotated[T, Arg(...)]`.

    `user_decision` marks a field that only a person may set (`--yes`, `--force`, skipping an
    upload): it becomes a CLI flag but never appears in the schema the model sees. `cli_only`
    hides a field the agent fills in itself (such as the current session). `choice_flags` gives
    each value of a Literal field a flag of its own (`--hosted` / `--local` for `target`).

    `asks` declares the gate question (a question kind of agent/chat/gates.py) whose answer sets this field:
    the user answers, and a value the model passes is only the question's suggestion. `prompt`
    is that question, formatted with the fields of the tool's preview and arguments; the
    question is not asked when the user set the field, or one of `answered_by`, themselves.

    `confirms` marks the person's yes to the tool's plan (the `Confirmation` field): a tool whose catalog
    entry confirms has one, and no other tool does (tests/test_tool_declarations.py).
    """

    positional: bool = False
    short: str | None = None
    flag: str | None = None
    metavar: str | None = None
    user_decision: bool = False
    cli_only: bool = False
    choice_flags: bool = False
    asks: str | None = None
    prompt: str = ""
    answered_by: tuple[str, ...] = ()
    confirms: bool = False


# The `yes` of a tool whose catalog entry confirms (`yes: Annotated[Confirmation, Field(description=...)] = False`).
# Only a person sets it: `--yes` on the command line, the chat's and MCP's gate after their yes. Without it
# the tool returns its plan and does nothing, with `not_confirmed` as its next step.
Confirmation = Annotated[bool, Arg(user_decision=True, confirms=True)]


def not_confirmed(action: str, nothing: str = "nothing was done") -> str:
    """The `next` of a plan returned without the person's yes: what was not done, and how to do it."""
    return f"{nothing}: run it again with --yes to {action}"


def arg_of(info: Any) -> Arg:
    return next((m for m in info.metadata if isinstance(m, Arg)), Arg())


class ToolResult(BaseModel):
    """Base of every result model. `render` is the human view; `--json` prints the model."""

    def render(self) -> str:
        return self.model_dump_json(indent=2)

    def exit_code(self) -> int:
        return 0

    def refused(self) -> bool:
        """True when a preview already shows the action cannot run, so nobody is asked to confirm it."""
        return False

    def binding(self) -> str | None:
        """For a preview: a hash of exactly what would run or be sent, which the confirmation binds."""
        return None


Event = dict[str, Any]


@dataclass
class Context:
    """What a tool may use besides its input: where it works, and a way to report progress.

    Events are plain dicts (`{"type": "progress", "done": 3, "total": 60, "label": ...}`,
    `{"type": "log", "line": ...}`) so every surface can render them its own way.
    """

    workspace: Path = field(default_factory=Path.cwd)
    emit: Callable[[Event], None] = lambda event: None
    session_id: str | None = None  # set when a chat session calls the tool
    # A person typing an `rlpilot` subcommand may name any path; paths from a model, an MCP
    # client, a Slack user or a chat slash command must stay inside the workspace.
    confined: bool = False
    # When the command began (time.monotonic()), for the tools that say where their time went
    # (tools/framework/timing.py): the CLI's own start, so its imports count as rlpilot's time; None where
    # the command is the call itself (a chat's tool call, MCP).
    started: float | None = None

    @property
    def settings(self) -> Settings:
        """rlpilot's settings for this workspace (configs/rlpilot.toml, the workspace's copy first)."""
        # Imported here: most tools never read the settings, and their models cost every command that
        # imports this module (`config check`; bench/bench_config_check.py).
        from configs.settings import SettingsError, load_settings

        try:
            return load_settings(self.workspace.resolve())
        except SettingsError as error:
            raise BadInput("bad-settings", str(error), "fix that file, or remove it to use rlpilot's defaults") \
                from None

    def resolve(self, path: Path | str) -> Path:
        """A user path, relative to the workspace; outside it (symlinks followed) is refused when confined."""
        path = Path(path).expanduser()
        absolute = path if path.is_absolute() else self.workspace / path
        if self.confined and not _inside(absolute, self.workspace):
            raise BadInput("outside-workspace", f"{path} is outside the workspace {self.workspace}",
                           "name a file inside the workspace, or run the `rlpilot` command yourself for other paths")
        return absolute


    def resolve_folder(self, path: Path | str) -> Path:
        """A folder whose code may be read, imported or run (an environment, a prime-rl checkout):
        resolved like any path and, when confined, refused when anything in it links outside."""
        folder = self.resolve(path)
        if self.confined and folder.is_dir():
            link = _link_out(folder, self.workspace)
            if link is not None:
                raise BadInput("outside-workspace", f"{link} (in {path}) links to {link.resolve()}, outside the "
                               f"workspace {self.workspace}", "copy what it links to into the workspace, or run "
                               "the `rlpilot` command yourself")
        return folder

    def confine(self, args: BaseModel, writes: bool) -> None:
        """Check every path argument of a call (its `Path` fields) before anything reads, imports or
        runs it, and, for a tool that changes things (`writes`), refuse rlpilot's own trust files:
        a no-op for a person on the command line, who may name any path."""
        if not self.confined:
            return
        for name in type(args).model_fields:
            value = getattr(args, name)
            if isinstance(value, Path):
                path = self.resolve_folder(value)
                why = trust_file(path, self.workspace) if writes else None
                if why:
                    raise BadInput("trust-file", f"{value} is {why}: a tool call from a model or a chat may not "
                                   "change it", "a person changes it in an editor, or types "
                                   f"`rlpilot config set {value} KEY=VALUE` in a terminal")


# Workspace files that decide where a key goes or what runs: endpoint aliases, rlpilot's
# settings (the assistant's own URL and key variable), and the project uv installs and syncs.
TRUST_FILES = {"configs/endpoints.toml": "rlpilot's endpoint aliases (where each key is sent)",
               "configs/rlpilot.toml": "rlpilot's settings (the assistant's URL and key variable)",
               "pyproject.toml": "the workspace's project (what uv installs and runs)",
               "uv.lock": "the workspace's lock file (what uv installs and runs)"}


def trust_file(path: Path, workspace: Path) -> str | None:
    """Why `path` (links followed) is one of rlpilot's trust files, or None. rlpilot's own state
    and every hidden folder of the workspace (`.venv`, `.git` with its hooks) count too."""
    real, root, home = path.resolve(), workspace.resolve(), rlpilot_home(workspace).resolve()
    if home != root and real.is_relative_to(home):
        return f"rlpilot's own state (under {home})"
    if not real.is_relative_to(root):
        return None
    relative = real.relative_to(root)
    if any(part.startswith(".") for part in relative.parts):
        return "inside a hidden folder of the workspace (an environment, git, rlpilot's state)"
    return TRUST_FILES.get(relative.as_posix())


def _link_out(folder: Path, workspace: Path) -> Path | None:
    """The first symbolic link under `folder` that resolves outside the workspace. Hidden folders
    (a checkout's `.venv`, `.git`) are left out: what they hold is tooling, not what is imported."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in (*dirs, *files):
            entry = Path(root, name)
            if entry.is_symlink() and not _inside(entry, workspace):
                return entry
    return None


def _inside(path: Path, folder: Path) -> bool:
    real = path.resolve()
    return any(real.is_relative_to(root.resolve()) for root in (folder, rlpilot_home(folder)))


@dataclass(frozen=True)
class Tool:
    entry: ToolEntry
    func: Callable[[Any, Context], ToolResult]
    input_model: type[BaseModel]
    result_model: type[ToolResult]

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def effect(self) -> Effect:
        return self.entry.effect

    @property
    def decisions(self) -> set[str]:
        return {name for name, info in self.input_model.model_fields.items() if arg_of(info).user_decision}

    @property
    def asked_fields(self) -> dict[str, Arg]:
        """The fields whose value is a gate question's answer, in declaration order."""
        return {name: arg_of(info) for name, info in self.input_model.model_fields.items() if arg_of(info).asks}

    @property
    def writes(self) -> bool:
        return self.entry.effect is not Effect.READ

    @property
    def gated(self) -> bool:
        """Whether a person decides something before this tool runs: a confirmation or a question."""
        return self.entry.confirms or bool(self.asked_fields)

    def preview(self, args: BaseModel, ctx: Context) -> ToolResult | None:
        """What the call would do, with nothing done: the entry's preview function, or the tool
        itself without the user's `yes`. None for a tool that cannot preview itself."""
        if self.entry.preview:
            return import_target(self.entry.preview)(args, ctx)
        if "yes" in self.decisions:
            return self.func(type(args).model_validate({**args.model_dump(), "yes": False}), ctx)
        return None

    @property
    def hidden_fields(self) -> set[str]:
        """Fields a model may not set: the user's decisions, and what the agent fills in."""
        return {name for name, info in self.input_model.model_fields.items()
                if arg_of(info).user_decision or arg_of(info).cli_only}

    def model_schema(self) -> dict[str, Any]:
        """The input schema offered to a language model or an MCP client: no hidden fields.

        Compacted, because every schema is sent with every model request: titles repeat the
        property names, and an optional field is simply one that is not required.
        """
        schema = _inline_choices(_compact(self.input_model.model_json_schema()))
        for name in self.hidden_fields:
            schema.get("properties", {}).pop(name, None)
            if name in schema.get("required", []):
                schema["required"].remove(name)
        return schema

    def parse(self, arguments: dict[str, Any]) -> BaseModel:
        try:
            return self.input_model.model_validate(arguments)
        except ValidationError as error:
            raise BadInput("bad-argument", describe_validation_error(error), self.usage_hint()) from None

    def call(self, arguments: dict[str, Any], ctx: Context | None = None) -> ToolResult:
        return self.func(self.parse(arguments), ctx or Context())

    def usage_hint(self) -> str:
        return f"see `rlpilot {' '.join(self.entry.command)} --help`"


# Bounds a field's name already implies (a count is at least 1, a step at least 0, a budget above 0, a
# name not empty): the tool still checks them, and a call out of them gets its error.
IMPLIED_BOUNDS = {("minimum", 0), ("minimum", 1), ("exclusiveMinimum", 0), ("minLength", 1)}


def _compact(node: Any) -> Any:
    """A JSON schema without titles, `format: path`, empty defaults, implied bounds or JSON Schema's own
    defaults; optional fields unwrapped."""
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    compact: dict[str, Any] = {}
    for key, value in node.items():
        # An omitted flag is off, an omitted option unset and an omitted mapping empty: those defaults say
        # nothing; nor does `additionalProperties: true`, which any object allows unless told otherwise.
        silent = (key == "default" and (value is None or value is False or value in ({}, []))) \
            or (key == "additionalProperties" and value is True) \
            or (type(value) is int and (key, value) in IMPLIED_BOUNDS)
        if key == "title" or (key == "format" and value == "path") or silent:
            continue
        if key == "properties":  # its keys are names, which may be "title" too
            compact[key] = {name: _compact(sub) for name, sub in value.items()}
        elif key == "$defs":  # shared types: the fields that use them say what they mean
            compact[key] = {name: {k: v for k, v in _compact(sub).items() if k != "description"}
                            for name, sub in value.items()}
        else:
            compact[key] = _compact(value)
    variants = compact.get("anyOf")
    if variants and len(variants) == 2 and {"type": "null"} in variants:
        (kept,) = [v for v in variants if v != {"type": "null"}]
        compact = {**kept, **{k: v for k, v in compact.items() if k != "anyOf"}}
    if "enum" in compact and compact.get("type") == "string":  # the values say it
        del compact["type"]
    return compact


def _inline_choices(schema: dict[str, Any]) -> dict[str, Any]:
    """Shared types that are only a list of choices, written where they are used: a reference
    costs more tokens than the choices it names."""
    defs = schema.get("$defs", {})
    choices = {f"#/$defs/{name}": body for name, body in defs.items() if set(body) == {"enum"}}
    for prop in schema.get("properties", {}).values():
        body = choices.get(prop.get("$ref", ""))
        if body is not None:
            del prop["$ref"]
            prop.update(body)
    rest = {key: value for key, value in schema.items() if key != "$defs"}
    kept = {name: body for name, body in defs.items() if f"#/$defs/{name}" in json.dumps(rest)}
    return {**rest, "$defs": kept} if kept else rest


def describe_validation_error(error: ValidationError) -> str:
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"]) or "input"
        # A validator's own sentence, without pydantic's "Value error, " in front of it.
        parts.append(f"{where}: {problem['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


_loaded: dict[str, Tool] = {}


def load(entry: ToolEntry) -> Tool:
    """Import a catalog entry's function and read its two models from the type hints."""
    if entry.name in _loaded:
        return _loaded[entry.name]
    func = import_target(entry.target)
    hints = typing.get_type_hints(func)
    params = [hints[name] for name in func.__code__.co_varnames[: func.__code__.co_argcount]]
    tool = Tool(entry=entry, func=func, input_model=params[0], result_model=hints["return"])
    _loaded[entry.name] = tool
    return tool


def import_target(target: str) -> Callable[..., Any]:
    module_name, func_name = target.split(":")
    return getattr(importlib.import_module(module_name), func_name)
