"""The terminal chat's face when a person sits at it: rich rendering of the same events.

Replies stream as Markdown, each tool call is a line and its result a panel (config edits as a
coloured diff, a run's metrics as terminal plots), progress events drive a progress bar, gate
questions are panels with numbered choices, and the report is rendered as Markdown. Input,
answers and Ctrl-C handling stay with `agent.chat.Chat`, which this only re-renders.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.text import Text

from agent.chat import Chat, failure_text
from agent.gates import Question
from agent.surfaces.plots import curves_of


class RichChat(Chat):
    def __init__(self, lines, console: Console | None = None):
        super().__init__(lines, as_json=False, interactive=True)
        self.console = console or Console(highlight=False)
        self._live: Live | None = None
        self._streamed = ""
        self._progress: Progress | None = None
        self._last_result = ""

    def on_text(self, delta: str) -> None:
        self._streamed += delta
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=False, vertical_overflow="visible")
            self._live.start()
        self._live.update(Markdown(self._streamed), refresh=True)

    def _settle(self) -> None:
        """End a streamed reply or a progress bar, leaving their last frame on screen."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def emit(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "progress":
            self._show_progress(event)
            return
        if kind in ("log", "question", "answer") and not event.get("finding"):
            return  # tool chatter, and questions that show_question has already drawn
        was_streamed = self._live is not None
        self._settle()
        self._streamed = ""
        print_ = self.console.print
        if kind == "assistant" and not was_streamed:
            print_(Markdown(event["text"]))
        elif kind == "session":
            print_(Text(f"rlpilot session {event['id']} · {event.get('model') or 'offline'}", style="dim"))
        elif kind == "tool_call":
            print_(Text.assemble(("▸ ", "cyan"), (event["name"], "bold cyan"), " ",
                                 (json.dumps(event["arguments"]), "dim")))
        elif kind == "tool_result":
            self._last_result = event.get("text") or failure_text(event)
            if event["name"] != "report":  # the report event shows it whole
                print_(self._result_panel(event))
            plots = curves_of(event)
            if plots:
                print_(Panel(Text("\n".join(curve.line() for curve in plots)), title="curves", title_align="left",
                             border_style="cyan"))
        elif kind == "report":
            print_(Panel(Markdown(self._last_result), title="report", border_style="blue"))
        elif kind == "log" and event.get("finding"):  # a new finding while `train watch` follows a run
            print_(Text(f"! {event['line']}", style="bold yellow"))
        elif kind == "error":
            print_(Text(f"rlpilot: {event['message']}", style="bold red"))
        elif kind == "notice":
            print_(Text(event["message"], style="yellow"))

    def _result_panel(self, event: dict[str, Any]) -> Panel:
        ok = event.get("ok")
        title = f"{'✓' if ok else '✗'} {event['name']}"
        result = event.get("result") or {}
        body = (Syntax(self._last_result, "diff", theme="ansi_dark", word_wrap=True) if result.get("diff")
                else Text(self._last_result))
        return Panel(body, title=title, title_align="left", border_style="green" if ok else "red")

    def _show_progress(self, event: dict[str, Any]) -> None:
        if self._live is not None:
            self._settle()
        if self._progress is None:
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(), console=self.console,
                                      transient=True)
            self._progress.add_task(event.get("label", "working"), total=event.get("total"))
            self._progress.start()
        task = self._progress.tasks[0].id
        self._progress.update(task, completed=event.get("done") or 0, total=event.get("total"),
                              description=event.get("label", "working"))

    def show_question(self, question: Question) -> None:
        self._settle()
        parts: list[Any] = [Text(question.prompt, style="bold")]
        if question.suggestion:
            parts.append(Text(f"suggested: {question.suggestion}", style="dim"))
        if question.detail:
            parts.append(Text(question.detail))
        parts.append(Text("  ".join(f"[{number}] {option}" for number, option in enumerate(question.options, 1)),
                          style="bold magenta"))
        self.console.print(Panel(Group(*parts), title="your decision", title_align="left", border_style="magenta"))

    def reprompt(self, question: Question) -> None:
        self.console.print(Text(f"please answer with a number or one of: {', '.join(question.options)}",
                                style="yellow"))
