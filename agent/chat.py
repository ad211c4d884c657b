"""`rlpilot chat`: talk to the agent in a terminal, or drive it line by line from a pipe.

When stdin is not a terminal each line is the next user message, except that a pending
question takes the next line as its answer, and end of input ends the session. `--json` prints
one event per line. Without a model endpoint the chat still serves slash commands, through the
same tools and gates.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agent.gates import Question, match_answer
from agent.loop import Agent, Surface
from agent.sessions import SessionNotFound, Store
from agent.surfaces.common import add_endpoint_options, available_tools, endpoint_of, start_conversation
from tools.contract import BadInput, Context, ToolError
from tools.workspace import rlpilot_home

SLASH = {
    "/stack": "stack_info", "/check": "config_check", "/tune": "config_tune", "/eval": "eval_run",
    "/summarize": "eval_summarize", "/diagnose": "diagnose", "/push": "env_push", "/train": "train_launch",
    "/plot": "metrics_plot", "/report": "report",
}
# A conversation that touched these is a tuning or training one: it ends with the report.
_REPORTABLE = {"config_set", "config_tune", "config_migrate", "eval_run", "eval_summarize", "diagnose",
               "train_launch"}
OFFLINE = ("no model endpoint is configured, so only slash commands work (/help lists them). "
           "To talk to a model: export OPENAI_API_KEY (or PRIME_API_KEY), or pass --base-url URL --model M, "
           "or --endpoint ALIAS from configs/endpoints.toml.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rlpilot chat", description="Chat with rlpilot.")
    add_endpoint_options(p)
    p.add_argument("--session", help="resume this session (see `rlpilot sessions`)")
    p.add_argument("--json", action="store_true", help="print one JSON event per line")
    p.add_argument("--no-stream", action="store_true", help="ask the model for whole replies")
    return p


class Chat:
    def __init__(self, lines: Iterator[str], as_json: bool, interactive: bool):
        self.lines = lines
        self.as_json = as_json
        self.interactive = interactive
        self.streamed = False

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
        elif kind in ("error", "notice"):
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

    def reprompt(self, question: Question) -> None:
        print(f"  please answer with one of: {', '.join(question.options)}")

    def ask(self, question: Question) -> str | None:
        self.emit(question.event())
        if not self.as_json:
            self.show_question(question)
        while True:
            text = next(self.lines, None)
            answer = match_answer(question, text)
            if answer is not None or text is None or not self.interactive:
                self.emit({"type": "answer", "value": answer})
                return answer
            self.reprompt(question)


def main(argv: list[str] | None = None) -> int:
    options = parser().parse_args(argv)
    workspace = Path.cwd()
    interactive = sys.stdin.isatty()
    if interactive and sys.stdout.isatty() and not options.json:
        from agent.surfaces.terminal import RichChat

        chat: Chat = RichChat(_input_lines(interactive))
    else:
        chat = Chat(_input_lines(interactive), options.json, interactive)
    store = Store(rlpilot_home(workspace))
    try:
        from agent.model import ModelClient

        session = store.open(options.session) if options.session else store.create("terminal")
        endpoint = endpoint_of(options, workspace)
    except SessionNotFound:
        print(f"rlpilot chat: no session {options.session} (see `rlpilot sessions`)", file=sys.stderr)
        return 2
    except BadInput as error:
        print(f"rlpilot chat: {error.one_line()}", file=sys.stderr)
        return 2
    client = ModelClient(endpoint, stream=not options.no_stream) if endpoint else None
    agent = Agent(session, Surface(chat.emit, chat.ask, chat.on_text), Context(workspace=workspace), client,
                  available_tools())
    chat.emit({"type": "session", "id": session.id,
               "model": f"{endpoint.model} at {endpoint.base_url} ({endpoint.source})" if endpoint else None})
    if client is None:
        chat.emit({"type": "notice", "message": OFFLINE})
    start_conversation(agent)

    for line in chat.lines:
        text = line.strip()
        if not text:
            continue
        if text in ("/quit", "/exit"):
            break
        if text.startswith("/"):
            try:
                slash(agent, chat.emit, text)
            except KeyboardInterrupt:  # as in a model turn: the command ends, the session goes on
                chat.emit({"type": "error", "message": "turn cancelled"})
        elif client is None:
            chat.emit({"type": "notice", "message": "offline: no model to answer that; /help lists the commands"})
        else:
            agent.send(text)
    _close_with_report(agent)
    return 0


def slash(agent: Agent, emit: Callable[[dict[str, Any]], None], text: str) -> None:
    """Run a slash command: the tool's CLI arguments, through the same gates as the model's calls."""
    name, *argv = shlex.split(text)
    if name == "/watch":  # a watch that keeps watching, in the background of the conversation
        from agent.watching import watch_in_background

        return watch_in_background(agent.ctx, emit, argv)
    if name == "/help" or name not in SLASH:
        lines = [f"{command:<11} rlpilot {' '.join(agent.tools[tool].entry.command)} ..."
                 for command, tool in SLASH.items() if tool in agent.tools]
        lines.append(f"{'/watch':<11} RUN [--budget-usd X] [--every 5m]: follow a run while we talk")
        emit({"type": "notice", "message": "slash commands take the CLI's arguments:\n" + "\n".join(lines)})
        return
    tool = agent.tools.get(SLASH[name])
    if tool is None:
        emit({"type": "error", "message": f"{name} is not available in this rlpilot"})
        return
    from agent.tool_cli import parse_arguments

    try:
        arguments, _ = parse_arguments(tool, argv)
    except SystemExit:  # argparse has printed the usage problem
        return
    except ToolError as error:
        emit({"type": "error", "message": error.one_line()})
        return
    agent.run_tool(tool, arguments)


def _close_with_report(agent: Agent) -> None:
    names = [record["name"] for record in agent.session.tool_calls(ok_only=False)]
    if "report" in agent.tools and _REPORTABLE & set(names) and names[-1] != "report":
        agent.run_tool(agent.tools["report"], {})


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


def failure_text(event: dict[str, Any]) -> str:
    if event.get("declined"):
        return f"declined: {event['message']}"
    error = event.get("error") or {}
    return f"failed: {error.get('message')} ({error.get('code')}); {error.get('hint', '')}"


def sessions_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rlpilot sessions", description="List chat sessions, newest first.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    options = p.parse_args(argv)
    sessions = Store(rlpilot_home(Path.cwd())).list()
    if options.json:
        print(json.dumps(sessions, indent=2))
        return 0
    import datetime

    for s in sessions:
        when = datetime.datetime.fromtimestamp(s["updated"]).strftime("%Y-%m-%d %H:%M")
        print(f"{s['id']}  {when}  {s['surface']:<9} {s['messages']:>4} messages  {s['title']}")
    if not sessions:
        print("no sessions yet: start one with `rlpilot chat`")
    return 0
