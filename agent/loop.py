"""The agent loop: the model chooses tools, the tools decide, the transcript is the history.

One user message -> model -> tool calls (validated, gated, run) -> model ... until the model
answers without calling a tool or the round limit is reached. Nothing a tool or the model does
can crash the session: every failure becomes a tool result the model can read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from agent.gates import Ask, Declined, Gatekeeper, Refused
from agent.model import ModelClient, ModelError, ToolCall
from agent.sessions import Session
from configs import defaults
from tools.catalog import CATALOG
from tools.contract import Context, Event, Tool, ToolError, load
from tools.secrets import redact, redacted


@dataclass
class Surface:
    """How the agent reaches the person: events out, answers to gate questions back."""

    emit: Callable[[Event], None]
    ask: Ask
    on_text: Callable[[str], None] | None = None  # streamed assistant text, as it arrives


def openai_tool(tool: Tool) -> dict[str, Any]:
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.entry.summary, "parameters": tool.model_schema()}}


class Agent:
    def __init__(self, session: Session, surface: Surface, ctx: Context, client: ModelClient | None = None,
                 tools: list[Tool] | None = None):
        self.session = session
        # Every event a tool, a gate or the loop emits, and every question a gate asks (its detail
        # may quote a config or a README), reaches the surface through the redactor.
        self.surface = Surface(lambda event: surface.emit(redacted(event)),
                               lambda question: surface.ask(replace(question, prompt=redact(question.prompt),
                                                                    detail=redact(question.detail))),
                               surface.on_text)
        self.client = client
        self.ctx = Context(workspace=ctx.workspace, emit=self.surface.emit, session_id=session.id)
        self.tools = {tool.name: tool for tool in (tools or [load(entry) for entry in CATALOG])}
        self.schemas = [openai_tool(tool) for tool in self.tools.values()]
        self.gates = Gatekeeper(session, self.surface.ask, self.ctx)
        self.max_rounds = defaults.agent_setting("max_tool_rounds")
        self.max_chars = defaults.agent_setting("max_tool_result_chars")

    def send(self, text: str) -> None:
        """One user turn. Ctrl-C ends the turn (and the runner kills what it started)."""
        assert self.client is not None, "offline sessions take slash commands only"
        self.session.add_message({"role": "user", "content": text})
        try:
            for _ in range(self.max_rounds):
                reply = self.client.complete(self.session.messages(), self.schemas, self.surface.on_text)
                self.session.record_usage(self.client.endpoint.model, reply.prompt_tokens, reply.completion_tokens)
                self.session.add_message(reply.message())
                if reply.text:
                    self.surface.emit({"type": "assistant", "text": reply.text})
                if not reply.tool_calls:
                    return
                for call in reply.tool_calls:
                    outcome = self._model_call(call)
                    self.session.add_message({"role": "tool", "tool_call_id": call.id,
                                              "content": self._for_model(outcome)})
            self.surface.emit({"type": "error", "message": f"stopped after {self.max_rounds} tool rounds; "
                               "say how to go on"})
        except ModelError as error:
            self.surface.emit({"type": "error", "message": str(error)})
        except KeyboardInterrupt:
            self.surface.emit({"type": "error", "message": "turn cancelled"})

    def _model_call(self, call: ToolCall) -> dict[str, Any]:
        tool = self.tools.get(call.name)
        if tool is None:
            return _failure("unknown-tool", f"there is no tool named {call.name!r}",
                            "use one of: " + ", ".join(self.tools))
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as error:
            return _failure("bad-arguments", f"the arguments for {call.name} are not valid JSON ({error})",
                            "send a JSON object matching the tool's schema")
        if not isinstance(arguments, dict):
            return _failure("bad-arguments", f"the arguments for {call.name} must be a JSON object",
                            "send a JSON object matching the tool's schema")
        # Hidden fields are not in the model's schema; one the model sends anyway is dropped.
        return self.run_tool(tool, {k: v for k, v in arguments.items() if k not in tool.hidden_fields})

    def run_tool(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate, gate and run one tool call, from the model or a slash command alike."""
        self.surface.emit({"type": "tool_call", "name": tool.name, "arguments": arguments})
        result = None
        try:
            args = self.gates.admit(tool, tool.parse(arguments))
            result = tool.func(args, self.ctx)
            outcome = {"ok": result.exit_code() == 0, "result": result.model_dump(mode="json")}
        except Refused as refused:
            result = refused.preview
            outcome = {"ok": False, "result": result.model_dump(mode="json")}
        except Declined as declined:
            outcome = {"ok": False, "declined": True, "message": str(declined)}
        except ToolError as error:
            outcome = {"ok": False, "error": error.to_dict()}
        except Exception as error:  # a bug in a tool must not end the user's session
            outcome = _failure("internal-error", f"{tool.name} failed: {type(error).__name__}: {error}",
                               "this is a bug in rlpilot; the session goes on")
        outcome = redacted(outcome)  # what the session stores, the surface shows and the model reads
        self.session.record_tool_call(tool.name, arguments, "result" in outcome, outcome.get("result"),
                                      outcome.get("error") or ({"declined": outcome["message"]}
                                                               if outcome.get("declined") else None))
        event = {"type": "tool_result", "name": tool.name, **outcome}
        if result is not None:
            event["text"] = result.render()
        self.surface.emit(event)
        if tool.name == "report" and result is not None:
            self.surface.emit({"type": "report", "report": outcome["result"]})
        return outcome

    def _for_model(self, outcome: dict[str, Any]) -> str:
        text = json.dumps(outcome)  # redacted by run_tool
        if len(text) <= self.max_chars:
            return text
        cut = len(text) - self.max_chars
        return text[: self.max_chars] + f" ... [cut {cut} of {len(text)} characters; ask for less detail]"


def _failure(code: str, message: str, hint: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message, "hint": hint}}
