"""`rlpilot chat`: the terminal chat, plain (a pipe, `--json`) or rich (a person at a terminal).

When stdin is not a terminal each line is the next user message, except that a pending
question takes the next line as its answer, and end of input ends the session. `--json` prints
one event per line. Without a model endpoint the chat still serves slash commands, through the
same tools and gates.

With a person at the terminal, replies stream as Markdown, each tool call is a line and its
result a panel (config edits as a coloured diff, a run's metrics as terminal plots), progress
events drive a progress bar, gate questions are panels with numbered choices, and the report is
rendered as Markdown. Input, answers and Ctrl-C handling are the plain chat's.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.text import Text

from agent.chat.catalog import shows
from agent.chat.gates import Question, match_answer
from agent.chat.loop import Agent, Surface
from agent.chat.outcome import failure_text
from agent.chat.sessions import SessionNotFound, Store
from agent.cli import surface_args
from agent.surfaces.common import (
    OFFLINE,
    QUIT,
    available_tools,
    close_with_report,
    endpoint_of,
    model_client,
    slash,
    start_conversation,
)
from agent.surfaces.plots import curves_of
from tools.catalog import Shows
from tools.framework.contract import Context
from tools.framework.errors import BadInput
from tools.framework.workspace import rlpilot_home

# A streamed reply's block still arriving is redrawn at most this often (seconds).
REDRAW_S = 0.05


class Chat:
    def __init__(self, lines: Iterator[str], as_json: bool, interactive: bool):
        self.lines = lines
        self.as_json = as_json
        self.interactive = interactive
        self.streamed = False
        self._held: list[str] = []  # a piped line that answered no question: the next message after all

    def messages(self) -> Iterator[str]:
        while (line := self._next_line()) is not None:
            yield line

    def _next_line(self) -> str | None:
        return self._held.pop(0) if self._held else next(self.lines, None)

    def emit(self, event: dict[str, Any]) -> None:
        if self.as_json:
            print(json.dumps(event), flush=True)
            return
        kind = event.get("type")
        if kind == "assistant" and not self.streamed:
            print(event["text"])
        elif kind == "assistant":
            print()
        elif kind == "tool_call":
            print(f"  > {event['name']} {json.dumps(event['arguments'])}")
        elif kind == "tool_result":
            print(_indent(event.get("text") or failure_text(event)))
        elif kind == "progress":
            print(f"  {event.get('label', 'progress')}: {event.get('done')}/{event.get('total') or '?'}")
        elif kind == "log" and event.get("finding"):  # a new finding while `train watch` follows a run
            print(f"  ! {event['line']}")
        elif kind in ("error", "notice", "caveat"):
            print(f"rlpilot: {event['message']}", file=sys.stderr if kind == "error" else sys.stdout)
        self.streamed = False

    def on_text(self, delta: str) -> None:
        if not self.as_json:
            self.streamed = True
            print(delta, end="", flush=True)

    def show_question(self, question: Question) -> None:
        if question.detail:
            print(_indent(question.detail))
        suggestion = f" (suggested: {question.suggestion})" if question.suggestion else ""
        options = " / ".join(f"{i}. {o}" for i, o in enumerate(question.options, 1))
        print(f"? {question.prompt}{suggestion}\n  {options}")

    def reprompt(self, question: Question, text: str) -> None:
        print(f"  {not_an_answer(question, text)}")

    def ask(self, question: Question) -> str | None:
        self.emit(question.event())
        if not self.as_json:
            self.show_question(question)
        while True:
            text = self._next_line()
            answer = match_answer(question, text)
            if answer is None and text is not None and not self.interactive:
                # Piped input was written before the question existed: a line that answers none of
                # its options is the person's next message, not a no to lose.
                self._held.append(text)
                self.emit({"type": "notice", "message": f"{text.strip()[:60]!r} is no answer to that question, so "
                           "nothing was done; it is taken as your next message"})
            if answer is not None or text is None or not self.interactive:
                self.emit({"type": "answer", "value": answer})
                return answer
            self.reprompt(question, text or "")


class RichChat(Chat):
    def __init__(self, lines, console: Console | None = None):
        super().__init__(lines, as_json=False, interactive=True)
        self.console = console or Console(highlight=False)
        self._live: Live | None = None
        self._streamed = ""  # the block of the reply still arriving; earlier blocks are printed
        self._drawn = 0.0
        self._progress: Progress | None = None
        self._last_result = ""

    def on_text(self, delta: str) -> None:
        """A streamed piece. Each finished block (up to a blank line outside a code fence) is printed
        once, as Markdown, into the scrollback; only the block still arriving is redrawn, at most
        REDRAW_S apart, cropped to the screen: the cost of a piece does not grow with the reply."""
        self._streamed += delta
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=False, transient=True, vertical_overflow="crop")
            self._live.start()
        done, blank, rest = self._streamed.rpartition("\n\n")
        if blank and done.count("```") % 2 == 0:
            self._live.console.print(Markdown(done))
            self._streamed = rest
        if time.monotonic() - self._drawn >= REDRAW_S:
            self._live.update(Markdown(self._streamed), refresh=True)
            self._drawn = time.monotonic()

    def _settle(self) -> None:
        """End a streamed reply (its last block printed once) or a progress bar (its last frame kept)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
            if self._streamed.strip():
                self.console.print(Markdown(self._streamed))
            self._streamed = ""
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
            if shows(event["name"]) is not Shows.REPORT:  # the report event shows it whole
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
        elif kind == "caveat":  # under the answer whose claims the tool record does not hold
            print_(Text(f"rlpilot: {event['message']}", style="bold yellow"))

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

    def reprompt(self, question: Question, text: str) -> None:
        self.console.print(Text(not_an_answer(question, text), style="yellow"))


def not_an_answer(question: Question, text: str) -> str:
    """Why `text` answered nothing, and the answers there are: a number out of range is named as one."""
    count = len(question.options)
    numbers = "1 or 2" if count == 2 else f"1 to {count}"
    typed = text.strip()
    why = f"there is no choice {typed}" if typed.isdigit() else f"{typed[:40]!r} is none of the choices"
    return f"{why}: please answer with a number ({numbers}) or one of: {', '.join(question.options)}"


def main(argv: list[str] | None = None) -> int:
    options = surface_args.chat().parse_args(argv)
    workspace = Path.cwd()
    interactive = sys.stdin.isatty()
    if interactive and sys.stdout.isatty() and not options.json:
        chat: Chat = RichChat(_input_lines(interactive))
    else:
        chat = Chat(_input_lines(interactive), options.json, interactive)
    store = Store(rlpilot_home(workspace))
    try:

        session = store.open(options.session) if options.session else store.create("terminal")
        endpoint = endpoint_of(options, workspace)
    except SessionNotFound:
        print(f"rlpilot chat: no session {options.session} (see `rlpilot sessions`)", file=sys.stderr)
        return 2
    except BadInput as error:
        print(f"rlpilot chat: {error.one_line()}", file=sys.stderr)
        return 2
    client = model_client(endpoint, workspace, stream=not options.no_stream)
    agent = Agent(session, Surface(chat.emit, chat.ask, chat.on_text), Context(workspace=workspace), client,
                  available_tools())
    chat.emit({"type": "session", "id": session.id,
               "model": f"{endpoint.model} at {endpoint.base_url} ({endpoint.source})" if endpoint else None})
    if client is None:
        chat.emit({"type": "notice", "message": OFFLINE})
    start_conversation(agent)
    model_failed = False  # the last message's turn: a chat whose model never answered exits 1

    for line in chat.messages():
        text = line.strip()
        if not text:
            continue
        if text in QUIT:
            break
        if text.startswith("/"):
            try:
                slash(agent, chat.emit, text)
            except KeyboardInterrupt:  # as in a model turn: the command ends, the session goes on
                chat.emit({"type": "error", "message": "turn cancelled"})
        elif client is None:
            chat.emit({"type": "notice", "message": "offline: no model to answer that; /help lists the commands"})
        else:
            model_failed = not agent.send(text)
    close_with_report(agent)
    return 1 if model_failed else 0


def _input_lines(interactive: bool) -> Iterator[str]:
    while True:
        try:
            yield input("you> ") if interactive else sys.stdin.readline() or _eof()
        except EOFError:
            return
        except KeyboardInterrupt:
            print("\n(Ctrl-C cancels a running turn; Ctrl-D or /quit ends the session)")


def _eof() -> str:
    raise EOFError


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
