"""Run one tool from the command line: flags from its input model, output by the Output rules.

With `--json`, stdout carries exactly one JSON document: the result model, or on an error
`{"ok": false, "error": {code, message, hint}}` (the error's line still goes to stderr);
progress goes to stderr.
Exit codes: 0 success, 1 the check found errors or the action failed, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import io
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.chat.outcome import os_error
from tools.catalog import ToolEntry
from tools.framework.contract import Context, Event, Tool, arg_of, load
from tools.framework.errors import BadInput, ToolError, json_error
from tools.io import files
from tools.text.secrets import redact

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"rlpilot {self.prog.split(' ', 1)[-1]}: {message}\n{self.format_usage()}")


def build_parser(tool: Tool) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"rlpilot {' '.join(tool.entry.command)}", description=tool.entry.summary)
    for name, info in tool.input_model.model_fields.items():
        arg = arg_of(info)
        kind, many = _base_type(info.annotation)
        if arg.choice_flags:
            group = parser.add_mutually_exclusive_group(required=info.is_required())
            for choice in _choices(kind) or []:
                group.add_argument(f"--{choice}", dest=name, action="store_const", const=choice,
                                   help=f"{name}: {choice}")
            continue
        options: dict[str, Any] = {"help": info.description, "dest": name}
        if arg.metavar:
            options["metavar"] = arg.metavar
        if kind is bool:
            options["action"] = argparse.BooleanOptionalAction if info.default else "store_true"
        elif kind is dict:
            options.update(nargs="+", metavar=arg.metavar or "KEY=VALUE")
        else:
            choices = _choices(kind)
            if choices:
                options["choices"] = choices
            if many:
                options["nargs"] = "+" if info.is_required() else "*"
        if arg.positional:
            options.pop("dest")
            if not info.is_required() and "nargs" not in options:
                options["nargs"] = "?"
            parser.add_argument(name, **options)
        else:
            flags = [arg.flag or "--" + name.replace("_", "-")] + ([arg.short] if arg.short else [])
            if info.is_required():
                options["required"] = True
            parser.add_argument(*flags, **options)
    parser.add_argument("--json", action="store_true", dest="as_json", help="print the result as JSON on stdout")
    return parser


def parse_arguments(tool: Tool, argv: list[str]) -> tuple[dict[str, Any], bool]:
    """The tool's arguments from a command line, and whether --json was asked for.

    Usage errors exit (argparse's way, code 2); a malformed KEY=VALUE raises BadInput.
    """
    namespace = vars(build_parser(tool).parse_args(argv))
    as_json = namespace.pop("as_json")
    arguments = {k: _from_cli(tool, k, v) for k, v in namespace.items() if v is not None}
    return arguments, as_json


def run_command(entry: ToolEntry, argv: list[str], started: float | None = None) -> int:
    tool = load(entry)
    name = f"rlpilot {' '.join(entry.command)}"
    # Known before parsing, so that a usage error is a JSON document too.
    as_json = "--json" in argv
    progress = _Progress(_terminal() if sys.stderr.isatty() and not as_json else None)
    ctx = Context(workspace=Path.cwd(), emit=progress, started=started)
    usage = io.StringIO()
    try:
        with contextlib.redirect_stderr(usage) if as_json else contextlib.nullcontext():
            arguments, as_json = parse_arguments(tool, argv)
    except SystemExit as done:
        if as_json and done.code:
            text = usage.getvalue().strip()
            print(text, file=sys.stderr)
            message = text.splitlines()[0] if text else f"{name}: bad arguments"
            print(json_error("usage", message.removeprefix(f"{name}: "), f"run `{name} --help` for its options"))
        raise
    except ToolError as error:
        return _report_error(name, error, as_json)
    try:
        try:
            result = tool.call(arguments, ctx)
        finally:
            progress.close()
    except ToolError as error:
        return _report_error(name, error, as_json)
    except OSError as error:  # a file name too long, a file too large for this system, a full disk
        return _report_error(name, os_error(error), as_json)
    except RecursionError:  # tables or arrays nested thousands deep
        return _report_error(name, BadInput("too-deep", "the input is nested too deeply to read; nothing was done",
                                            "a config nests a few tables deep: check that file"), as_json)
    print(redact(result.model_dump_json(indent=2) if as_json else result.render()))
    return result.exit_code()


def _terminal() -> Console:
    # rich is imported only for a terminal: a pipe or a log (scripts, CI, the benches) gets plain lines and
    # does not pay rich's import, a tenth of a quick command's time.
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _report_error(name: str, error: ToolError, as_json: bool) -> int:
    print(redact(f"{name}: {error.one_line()}"), file=sys.stderr)
    if as_json:
        print(redact(json_error(error.code, error.message, error.hint)))
    return error.exit_code


def _from_cli(tool: Tool, name: str, value: Any) -> Any:
    kind, _ = _base_type(tool.input_model.model_fields[name].annotation)
    if kind is dict:
        return dict(_key_value(item) for item in value)
    return value


def _key_value(item: str) -> tuple[str, Any]:
    """`trainer.optim.lr=3e-6` -> ("trainer.optim.lr", 3e-06): values are TOML, else text."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise BadInput("bad-argument", f"{item!r} is not KEY=VALUE", "write e.g. orchestrator.batch_size=256")
    try:
        return key.strip(), files.parse_toml(f"v = {raw}", key.strip())["v"]
    except BadInput as refused:
        if refused.code == "invalid-toml":
            return key.strip(), raw
        # an integer of thousands of digits, or arrays nested thousands deep
        raise BadInput("bad-value", f"{key.strip()}: the value ({len(raw)} characters) is too large or too deeply "
                       "nested for a config", "give a plain value, e.g. orchestrator.batch_size=256") from None


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """The flag's element type, and whether it takes several values."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _base_type(inner[0])
    if origin is typing.Annotated:
        return _base_type(typing.get_args(annotation)[0])
    if origin in (list, tuple, set):
        return typing.get_args(annotation)[0], True
    if origin is dict:
        return dict, False
    return annotation, False


def _choices(kind: Any) -> list[str] | None:
    if typing.get_origin(kind) is typing.Literal:
        return [str(v) for v in typing.get_args(kind)]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return [str(m.value) for m in kind]
    return None


# What makes one log line differ from its repeat: a timestamp, an id, a logged key=number (vf-eval's "rollout
# done: id=... task=3 reward=1.000"). A number in running text ("step 10/100") tells lines apart.
_VARYING = re.compile(r"(?<=\bid=)\S+|\b\d{4}-\d\d-\d\d\b|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?|(?<==)-?[\d.]+\b")


class _Progress:
    """A command's events on stderr: progress as a bar on a terminal, else a line each (a pipe, a log); a log
    line said before (numbers and ids aside: vf-eval's "model call failed: id=..." once per rollout) is
    counted, not repeated, and said again once at the end with its count."""

    def __init__(self, console: Console | None):
        self.console = console  # None: not a terminal
        self.bar: RichProgress | None = None
        self.said: dict[str, list[Any]] = {}  # a line's shape -> [the line first said, how often]

    def __call__(self, event: Event) -> None:
        if event.get("type") == "progress":
            if self.console is None:
                self._line(f"  {event.get('label', 'progress')}: {event.get('done')}/{event.get('total') or '?'}")
                return
            if self.bar is None:
                from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress

                self.bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                        MofNCompleteColumn(), TimeElapsedColumn(), console=self.console)
                self.bar.add_task("", total=None)
                self.bar.start()
            self.bar.update(self.bar.tasks[0].id, completed=event.get("done") or 0, total=event.get("total"),
                            description=event.get("label", "progress"))
            return
        line = f"  {event.get('line', '')}" if event.get("type") == "log" else f"  {json.dumps(event)}"
        if event.get("finding"):  # a finding of `train watch` is news each time
            self._line(line)
            return
        seen = self.said.setdefault(_VARYING.sub("#", line), [line, 0])
        seen[1] += 1
        if seen[1] == 1:
            self._line(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        for line, count in self.said.values():
            if count > 1:
                self._line(f"{line} (x{count})")
        self.said.clear()

    def _line(self, text: str) -> None:
        if self.console is not None:  # above the bar, which stays at the bottom
            self.console.print(redact(text), markup=False, highlight=False)
        else:
            print(redact(text), file=sys.stderr)
