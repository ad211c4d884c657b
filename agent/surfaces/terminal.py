"""The terminal chat's face when a person sits at it: rich rendering of the same events.

Replies stream as Markdown, each tool call is a line and its result a panel (config edits as a
coloured diff, a run's metrics as terminal plots), progress events drive a progress bar, gate
questions are panels with numbered choices, and the report is rendered as Markdown. Input,
answers and Ctrl-C handling stay with `agent.chat.Chat`, which this only re-renders.
"""

from __future__ import annotations

import json
from pathlib import Path
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

_BARS = "▁▂▃▄▅▆▇█"
# The curves worth a glance in a chat, in the order the playbook looks at them.
CURVES = ("reward_mean", "reward_std", "entropy", "response_length", "truncated_frac", "mismatch_kl", "grad_norm")
_CURVE_TOOLS = {"diagnose", "train_metrics", "train_status"}


def sparkline(values: list[float], width: int = 40) -> str:
    """Values as a row of block characters, averaged into at most `width` buckets."""
    size = max(1, -(-len(values) // width))
    buckets = [sum(values[i:i + size]) / len(values[i:i + size]) for i in range(0, len(values), size)]
    low, high = min(buckets), max(buckets)
    span = (high - low) or 1.0
    return "".join(_BARS[round((v - low) / span * (len(_BARS) - 1))] for v in buckets)


def curves(source: str) -> Text | None:
    """Terminal plots of a run's main series, read with the diagnose readers; None when unreadable."""
    from tools.contract import ToolError
    from tools.diagnose.readers import read

    try:
        _, run = read(Path(source))
    except (ToolError, OSError):
        return None
    lines = Text()
    for name in CURVES:
        series = run.series.get(name)
        if series is None or len(series) < 2:
            continue
        values = [float(v) for v in series.values]
        lines.append(f"{name:<16}", style="bold")
        lines.append(f"{values[0]:>9.4g} ")
        lines.append(sparkline(values), style="cyan")
        lines.append(f" {values[-1]:.4g}  (steps {series.steps[0]}..{series.steps[-1]})\n")
    return lines if lines.plain else None


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
            result = event.get("result") or {}
            source = result.get("source") or (result.get("metrics") or {}).get("source")
            plot = curves(source) if event["name"] in _CURVE_TOOLS and source else None
            if plot is not None:
                print_(Panel(plot, title="curves", title_align="left", border_style="cyan"))
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
