"""Gates: what only the user may decide, enforced in code before a tool body runs.

The model proposes; the user answers. A gate asks a question through the surface, and no
answer means no action. Nothing the model says or a tool returns can answer a gate: answers come
only from the surface's `ask`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agent.sessions import Session
from configs import defaults
from tools.catalog import Effect
from tools.contract import Context, Tool, ToolResult, arg_of

CONFIRM_OPTIONS = ["yes", "no"]


@dataclass
class Question:
    kind: str  # "visibility" | "model-family" | "confirm" | "choice"
    prompt: str
    options: list[str]
    suggestion: str | None = None
    detail: str = ""

    def event(self) -> dict[str, Any]:
        event = {"type": "question", "kind": self.kind, "prompt": self.prompt, "options": self.options}
        if self.suggestion:
            event["suggestion"] = self.suggestion
        if self.detail:
            event["detail"] = self.detail
        return event


def match_answer(question: Question, text: str | None) -> str | None:
    """An option matched case-insensitively, or by its 1-based number; y/n answer a confirm."""
    if text is None:
        return None
    answer = text.strip().lower()
    for number, option in enumerate(question.options, start=1):
        if answer in (option.lower(), str(number)):
            return option
    if question.kind == "confirm" and answer in ("y", "n"):
        return "yes" if answer == "y" else "no"
    return None


# A surface's way to ask: returns the matched option, or None when the user gave no usable answer.
Ask = Callable[[Question], str | None]


class Declined(Exception):
    """The user said no, or did not answer: the tool must not run."""


class Refused(Exception):
    """The tool's own preview says it cannot run: its result goes back, and nobody is asked."""

    def __init__(self, preview: ToolResult):
        super().__init__("the preview refused the action")
        self.preview = preview


@dataclass
class Gatekeeper:
    session: Session
    ask: Ask
    ctx: Context = field(default_factory=Context)

    def _ask(self, question: Question) -> str | None:
        answer = self.ask(question)
        self.session.record_question(question.kind, question.prompt, question.options, answer)
        return answer

    def _remember(self, key: str, value: Any) -> None:
        self.session.put(key, value)

    def _confirm(self, prompt: str, detail: str) -> None:
        if self._ask(Question("confirm", prompt, CONFIRM_OPTIONS, detail=detail)) != "yes":
            raise Declined("the user did not confirm; nothing was done")

    def admit(self, tool: Tool, args: BaseModel) -> BaseModel:
        """Ask every question this call needs; return the arguments the user's answers imply."""
        if tool.name == "env_push":
            return self._visibility(args)
        if tool.name == "eval_run":
            return self._model_family(args)
        if tool.effect is Effect.EXTERNAL:
            return self._confirmed(tool, args)
        return args

    def _visibility(self, args: BaseModel) -> BaseModel:
        suggestion = args.model_dump(mode="json").get("visibility")
        question = Question("visibility", f"Push {getattr(args, 'env', 'the environment')} to the Hub as PUBLIC "
                            "or PRIVATE?", ["PUBLIC", "PRIVATE"], suggestion=suggestion)
        answer = self._ask(question)
        if answer is None:
            raise Declined("the user did not choose a visibility; nothing was pushed")
        return _with(args, visibility=answer)

    def _model_family(self, args: BaseModel) -> BaseModel:
        family = self.session.get("model_family")
        if family is None:
            answer = self._ask(Question(
                "model-family", "Validate with an instruct or a reasoning model?", ["instruct", "reasoning"],
                detail="instruct: " + ", ".join(defaults.go_to_models("instruct"))
                + "; reasoning: " + ", ".join(defaults.go_to_models("reasoning"))))
            if answer is None:
                raise Declined("the user did not choose a model family; no eval was run")
            family = answer
            self._remember("model_family", family)
        if getattr(args, "model", None) is None and getattr(args, "endpoint", None) is None:
            return _with(args, endpoint=defaults.go_to_models(family)[0])
        return args

    def _confirmed(self, tool: Tool, args: BaseModel) -> BaseModel:
        """External actions: show what will happen, then run only on a yes.

        A tool with a `yes` decision field previews itself when called without it, so the
        summary the user confirms is the tool's own account of what it would do.
        """
        decisions = {name for name, info in tool.input_model.model_fields.items() if arg_of(info).user_decision}
        if "yes" in decisions:
            preview = tool.func(args, self.ctx)
            if preview.refused():
                raise Refused(preview)
            self._confirm(f"Run {tool.name}?", preview.render())
            return _with(args, yes=True)
        self._confirm(f"Run {tool.name}?", json.dumps(args.model_dump(mode="json"), indent=2))
        return args


def _with(args: BaseModel, **update: Any) -> BaseModel:
    """A copy with the user's answers, validated like any other input."""
    return type(args).model_validate({**args.model_dump(), **update})
