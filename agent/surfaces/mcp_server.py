"""`rlpilot mcp`: the deterministic tools as an MCP server on stdio (the official SDK, version 2).

The playbook comes with them (instructions, prompts, resources): see mcp_playbook.

Each catalog tool is an MCP tool with the same input schema the agent's model sees (no hidden
fields) and its result model as the output schema, so results come back as structured content.

Tools whose declaration has a question or a confirmation (whatever their effect: an install
runs code from elsewhere) work in two steps. Many clients answer elicitation requests with a
silent decline, and the 2026-07-28 protocol has no server-initiated requests at all, so the gate
cannot ask the user itself. Instead the first call runs the gate's questions against the call's
own arguments and returns the preview, with a one-time token, as an error result saying that
confirmation is needed; only a second call with the same arguments and that token runs the tool.
A token is used up by any attempt, is bound to the exact arguments, and expires.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import secrets
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from agent.chat.catalog import shows
from agent.chat.gates import Declined, Gatekeeper, Question, Refused, match_answer
from agent.chat.loop import Agent, Surface
from agent.chat.outcome import Outcome
from agent.chat.sessions import Store
from agent.cli import surface_args
from agent.report.report import call_text
from agent.surfaces.common import available_tools
from agent.surfaces.mcp_playbook import handlers, instructions
from tools.catalog import Effect, Shows
from tools.framework.contract import Context, Event, Tool
from tools.framework.errors import ToolError
from tools.framework.workspace import rlpilot_home
from tools.io import files
from tools.text.secrets import redact, redacted

TOKEN_FIELD = "confirm_token"
ANSWERS_FIELD = "answers"
TOKEN_TTL_S = 600.0

_ANNOTATIONS = {
    Effect.READ: types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    Effect.LOCAL_WRITE: types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    Effect.EXTERNAL: types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
}


class Confirmations:
    """One-time tokens, each standing for the user's yes to one exact call, for a few minutes."""

    def __init__(self, ttl_s: float = TOKEN_TTL_S, clock: Callable[[], float] = time.monotonic):
        self.ttl_s = ttl_s
        self.clock = clock
        self._issued: dict[str, tuple[str, frozenset[str], float]] = {}

    @staticmethod
    def _call(name: str, arguments: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps([name, arguments], sort_keys=True).encode()).hexdigest()

    def issue(self, name: str, arguments: dict[str, Any], preview: frozenset[str] = frozenset()) -> str:
        """A token for this call, bound also to what its preview asked about (`preview`, the questions' hashes)."""
        token = secrets.token_urlsafe(16)
        self._issued[token] = (self._call(name, arguments), preview, self.clock() + self.ttl_s)
        return token

    def redeem(self, token: str, name: str, arguments: dict[str, Any]) -> tuple[bool, frozenset[str]]:
        """(valid, the preview's hashes): valid when the token was issued for this very call and is
        still fresh. It is gone either way."""
        call, preview, expires = self._issued.pop(token, ("", frozenset(), 0.0))
        return call == self._call(name, arguments) and self.clock() < expires, preview


_WHY = {Effect.EXTERNAL: "acts outside this machine", Effect.LOCAL_WRITE: "changes this machine or runs code from "
        "elsewhere", Effect.READ: "asks the user first"}


def mcp_tool(tool: Tool) -> types.Tool:
    schema = tool.model_schema()
    if tool.gated:
        properties = schema.setdefault("properties", {})
        properties[TOKEN_FIELD] = {
            "type": "string",
            "description": "The one-time token from this tool's preview; pass it only after the user said yes "
                           "to that preview, with the same arguments.",
        }
        properties[ANSWERS_FIELD] = {
            "type": "object", "additionalProperties": {"type": "string"},
            "description": "The user's answers to the preview's questions, by question kind "
                           "(e.g. {\"model-family\": \"instruct\"}).",
        }
    return types.Tool(name=tool.name, description=tool.entry.summary, input_schema=schema,
                      output_schema=_output_schema(tool), annotations=_ANNOTATIONS[tool.effect])


# What an error result (a preview with its token, a question, a refusal) carries as structured
# content. Strict clients (the TypeScript SDK's) hold even an error's structured content to the
# output schema, so the schema admits these besides the tool's result.
_NOT_A_RESULT = {"type": "object", "anyOf": [{"required": ["confirmation_required"]}, {"required": ["needs_answer"]},
                                              {"required": ["error"]}]}


def _output_schema(tool: Tool) -> dict[str, Any]:
    result = tool.result_model.model_json_schema(mode="serialization")
    defs = result.pop("$defs", None)  # `#/$defs/...` references resolve from the root
    return {"type": "object", **({"$defs": defs} if defs else {}), "anyOf": [result, _NOT_A_RESULT]}


def _error(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured,
                                is_error=True)


class ToolServer:
    """The tools behind one MCP connection, recorded in one rlpilot session (so `report` works)."""

    def __init__(self, workspace: Path, tools: list[Tool], confirmations: Confirmations | None = None):
        self.store = Store(rlpilot_home(workspace))
        self.session = self.store.create("mcp")
        self.confirmations = confirmations or Confirmations()
        self._answers: dict[str, str] = {}
        self._bindings: frozenset[str] = frozenset()  # what the redeemed token's preview asked about
        self._progress: Callable[[Event], None] | None = None
        self._lock = threading.Lock()  # one call at a time: the session, answers and progress are shared
        self.agent = Agent(self.session, Surface(self._on_event, self._answer), Context(workspace=workspace),
                           None, tools)

    def _on_event(self, event: Event) -> None:
        """Progress goes to the client (when it asked for it) and, with tool logs, to stderr, which
        clients show as the server's log; stdout is the protocol."""
        if event.get("type") == "progress":
            print(f"{event.get('label', 'progress')}: {event.get('done')}/{event.get('total') or '?'}",
                  file=sys.stderr)
            if self._progress:
                self._progress(event)
        elif event.get("type") == "log":
            print(redact(str(event.get("line", ""))), file=sys.stderr)

    def _answer(self, question: Question) -> str | None:
        """A gate question, answered only by an explicit `answers` entry, never by the model's own
        suggestion; a confirm is a yes only while what it binds (the preview's hash) is what the
        token was issued for. Without a redeemed token nothing matches."""
        if question.binding not in self._bindings:  # not asked in the preview, or changed since
            return None
        if question.kind == "confirm":
            return "yes"
        return match_answer(question, self._answers.get(question.kind))

    def call(self, name: str, arguments: dict[str, Any],
             progress: Callable[[Event], None] | None = None) -> types.CallToolResult:
        tool = self.agent.tools.get(name)
        if tool is None:
            return _error(f"there is no tool named {name!r}; use one of: {', '.join(self.agent.tools)}")
        arguments = {k: v for k, v in arguments.items() if k not in tool.hidden_fields}
        token = arguments.pop(TOKEN_FIELD, None)
        with self._lock:
            self._progress = progress
            self._answers = {str(k): str(v) for k, v in (arguments.get(ANSWERS_FIELD) or {}).items()}
            if tool.gated:
                valid, self._bindings = self.confirmations.redeem(str(token), name, arguments) if token else (
                    False, frozenset())
                if not valid:
                    return self._preview(tool, arguments, stale=token is not None)
                arguments.pop(ANSWERS_FIELD, None)
            self.session.title_once(call_text(name, arguments))  # an IDE's session has no message to be named by
            try:
                outcome = self.agent.call(tool, arguments)
            finally:
                self._bindings = frozenset()
            if outcome.status == "declined" and tool.entry.confirms:  # the preview's hash no longer holds
                return self._preview(tool, {**arguments, ANSWERS_FIELD: self._answers}, stale=True)
            return _result(outcome)

    def _preview(self, tool: Tool, arguments: dict[str, Any], stale: bool) -> types.CallToolResult:
        """Ask the gate's questions without running anything, and hand out a token for this exact call.

        Answering "yes" to a confirm here is safe: `admit` only returns the arguments the answers
        imply, and this method never calls the tool with them.
        """
        asked: list[tuple[Question, str | None]] = []

        def ask(question: Question) -> str | None:
            # A provisional yes: the token it earns runs only while the preview's hash still holds.
            answer = "yes" if question.kind == "confirm" else match_answer(question, self._answers.get(question.kind))
            asked.append((question, answer))
            return answer

        gates = _Preview(self.session, ask, self.agent.ctx)
        given = {k: v for k, v in arguments.items() if k != ANSWERS_FIELD}
        try:
            admitted = gates.admit(tool, tool.parse(given))
        except Refused as refused:  # the tool's own preview says it cannot run: nothing to confirm
            return _result(Outcome.refused(tool.name, refused.preview))
        except Declined:
            question = asked[-1][0]
            return _error(f"{tool.name} needs the user's answer first: {question.prompt} "
                          f"({' / '.join(question.options)}). Ask the user, then call {tool.name} again with "
                          f"{ANSWERS_FIELD}={{\"{question.kind}\": <their answer>}}; a value you pass yourself "
                          "is only a suggestion.",
                          {"needs_answer": question.event()})
        except ToolError as error:
            return _error(redact(error.one_line()), {"error": redacted(error.to_dict())})
        except Exception as error:  # a tool's preview that crashes is a bug to report, not a dead server
            return _error(redact(f"{tool.name} failed while previewing: {type(error).__name__}: {error}; "
                                 "this is a bug in rlpilot"))
        token = self.confirmations.issue(tool.name, arguments, frozenset(q.binding for q, _ in asked if q.binding))
        lines = ["That token is not valid for this call (used, expired, or issued for other arguments); "
                 "here is a new preview.", ""] if stale else []
        lines += [f"Confirmation needed: {tool.name} {_WHY[tool.effect]}. Show the user what it will do, "
                  f"and only if they say yes, call {tool.name} again with the same arguments and "
                  f"{TOKEN_FIELD}=\"{token}\" (valid once, for {int(self.confirmations.ttl_s // 60)} minutes).", ""]
        for question, answer in asked:
            if question.kind != "confirm":
                lines.append(f"{question.prompt} -> {answer}")
            if question.detail:
                lines.append(redact(question.detail))
        call = admitted.model_dump(mode="json", exclude=tool.hidden_fields, exclude_none=True)
        lines.append(f"It will run {tool.name} with: {redact(json.dumps(call))}")
        return _error("\n".join(lines), {"confirmation_required": True, TOKEN_FIELD: token, "tool": tool.name,
                                         "arguments": json.loads(redact(json.dumps(call))),
                                         "questions": [{**q.event(), "answer": a} for q, a in asked]})


class _Preview(Gatekeeper):
    """The gate's questions with provisional answers, kept out of the session's records and state:
    nobody has confirmed anything yet. The confirmed call asks and records them for real."""

    def _ask(self, question: Question) -> str | None:
        return self.ask(question)

    def _remember(self, key: str, value: Any) -> None:
        pass


def _result(outcome: Outcome) -> types.CallToolResult:
    if outcome.result is not None:
        # A check that found problems is still a good answer: the result model says so itself.
        content: list[Any] = [types.TextContent(text=redact(outcome.result.render()))]
        picture = Path(str(getattr(outcome.result, "output", "")))
        if shows(outcome.tool) is Shows.IMAGE and outcome.status == "ran" and picture.is_file():
            # The picture itself, for a client that shows images; the file stays where `output` says. One that
            # cannot be sent is said in words: the plot was drawn all the same.
            try:
                data = files.read_bytes_bounded(picture, files.PICTURE_LIMIT, hint=f"open {picture} itself")
            except ToolError as refused:
                content.append(types.TextContent(text=f"the picture is not attached: {refused.one_line()}"))
            else:
                content.append(types.ImageContent(data=base64.b64encode(data).decode(),
                                                  mimeType=mimetypes.guess_type(picture.name)[0] or "image/png"))
        return types.CallToolResult(content=content, structured_content=json.loads(redact(json.dumps(outcome.data))))
    return _error(redact(outcome.failure_text()), {"error": redacted(outcome.error)} if outcome.error else None)


def build_server(tools: ToolServer) -> Server:
    listed = [mcp_tool(tool) for tool in tools.agent.tools.values()]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        def progress(event: Event) -> None:  # from the tool's thread; a no-op unless the client asked
            anyio.from_thread.run(ctx.session.report_progress, float(event.get("done") or 0), event.get("total"),
                                  event.get("label"))

        return await anyio.to_thread.run_sync(tools.call, params.name, dict(params.arguments or {}), progress)

    from importlib.metadata import version

    # The playbook rides along: instructions, prompts and resources, from the chat's own sources.
    return Server("rlpilot", version=version("rlpilot"), on_list_tools=list_tools, on_call_tool=call_tool,
                  instructions=instructions(), **handlers(tools.agent.tools, tools.call))


def main(argv: list[str] | None = None) -> int:
    options = surface_args.mcp().parse_args(argv)
    if not options.workspace.is_dir():
        print(f"rlpilot mcp: --workspace {options.workspace} is not a folder", file=sys.stderr)
        return 2
    tools = ToolServer(options.workspace.resolve(), available_tools())
    server = build_server(tools)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)
    return 0
