"""`rlpilot skill`: the playbook as an Agent Skill for the user's installed stack, and `--check` for any skill.

IDE assistants (Claude Code, Codex, Cursor) load skills: a SKILL.md with `name`/`description`
front matter. The seed playbook is one, written for the stack of early 2026, and most of its
commands now fail. The skill written here is the chat's own playbook (prompts/system.md, not a
copy), the stack as `stack` found it, and the command of each tool the playbook names; every
command in it is checked before it is shown: rlpilot's against its own parser, prime's (and uv's,
vf-*'s) against the installed program's `--help`. `--check FILE` runs that check on any skill.

A skill is data: checking one runs nothing it names. Only the programs in PROGRAMS are asked for their
`--help` (never with the arguments a `run` would hand on), a `uv run X` of another program is judged by
prime-rl's table of scripts, and anything else is "unchecked". `--write` never writes through a symlink.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from tools.framework.errors import BadInput
from tools.io import files

if TYPE_CHECKING:
    from tools.stack.info import StackResult

NAME = "train-with-environments"  # the seed's name, so that this one takes its place
LAYOUTS = {
    "claude": Path(".claude/skills") / NAME / "SKILL.md",
    "codex": Path(".codex/skills") / NAME / "SKILL.md",
    # Cursor reads rules, not skills: the same text, with the front matter its rules take.
    "cursor": Path(".cursor/rules") / f"{NAME}.mdc",
}
DESCRIPTION = ("Train models with RL on verifiers environments, on Hosted Training or prime-rl, through rlpilot: "
               "smoke-eval and judge an environment, publish it, check and tune a config, launch, watch and "
               "diagnose a run, and write the four-part report. Use when asked to configure, run or debug RL "
               "training on environments.")
# Programs whose commands a skill names and this check can judge: the only ones it runs (with --help).
PROGRAMS = ("rlpilot", "prime", "uv", "vf-eval", "vf-init", "vf-validate")
# What replaced a command that is gone (docs/sources.md: "Hosted Training: the prime CLI 0.18.0" and
# "verifiers 0.4 and vf-eval").
INSTEAD = {
    ("prime", "lab"): "add verifiers to your own project (`uv add verifiers`), then `rlpilot stack`",
    ("prime", "env", "init"): "`vf-init NAME` scaffolds an environment",
    ("prime", "eval", "run"): "`rlpilot eval run ENV` runs the smoke eval the way this stack does (vf-eval locally); "
                              "hosted: `prime eval run OWNER/ENV --hosted`",
    ("uv", "run", "prime-rl"): "`rlpilot train launch CONFIG --local` (prime-rl's `uv run rl @ CONFIG`)",
}


@dataclass
class Verdict:
    command: str
    line: int
    status: str  # "ok", "gone" (fails on this stack) or "unchecked" (nothing here to judge it by)
    why: str = ""
    instead: str = ""

    def text(self) -> str:
        tail = f": {self.why}" if self.why else ""
        return f"{self.status:<9} line {self.line}: `{self.command}`{tail}" + (
            f"\n          instead: {self.instead}" if self.instead else "")


_NOT_KNOWN = ("rlpilot checks only commands of " + ", ".join(PROGRAMS) + "; it runs nothing else a skill names, "
              "so `{}` is not judged")
# How a CLI says a subcommand does not exist (click/typer, clap, argparse): not an argument it refused.
_NO_SUBCOMMAND = re.compile(r"No such command|unrecognized subcommand|invalid choice")
_FENCE = re.compile(r"```([\w-]*)(.*?)```", re.S)
# Where a second command starts on a line (a skill flattened onto one line still names each one).
_NEXT = re.compile(r"(?<!install )(?<!run )(?<![\w/.-])(?=(?:" + "|".join(map(re.escape, PROGRAMS)) + ") )")


def commands(markdown: str) -> list[tuple[int, str]]:
    """(line, command) for each command a skill names: lines of shell blocks, and inline code that
    starts with a program this check knows (`configs/endpoints.toml` or `--skip-upload` is no command)."""
    found: list[tuple[int, str]] = []

    def line_of(offset: int) -> int:
        return markdown.count("\n", 0, offset) + 1

    for block in _FENCE.finditer(markdown):
        if block.group(1) not in ("", "bash", "sh", "shell", "console"):
            continue
        start = block.start(2)
        for text in block.group(2).split("\n"):
            for part in _NEXT.split(text.strip().removeprefix("$ ")):
                if part.strip() and not part.strip().startswith("#"):
                    found.append((line_of(start), part.strip()))
            start += len(text) + 1
    prose = _FENCE.sub(lambda block: re.sub(r"[^\n]", " ", block.group(0)), markdown)
    for span in re.finditer(r"`([^`\n]+)`", prose):
        words = span.group(1).split()
        if words and words[0] in PROGRAMS:
            found.append((line_of(span.start()), span.group(1).strip()))
    return sorted(found)


# sys.stdout and sys.stderr are one per process: two checks redirecting them at once would each restore
# the other's buffer, and the skill itself would then print into it.
_REDIRECTING = threading.Lock()


class Checker:
    """Judges commands against the stack of one workspace (its PATH, its prime, its prime-rl)."""

    def __init__(self, workspace: Path):
        from tools.stack.prime_cli import prime_environment

        self.workspace = workspace
        self.environ = prime_environment(workspace)
        self.environ.update(COLUMNS="200", NO_COLOR="1", TERM="dumb")  # help text unwrapped, without colour
        # One `--help` per command words, however many threads need it: a playbook names `prime login` three
        # times, and three prime start-ups at once cost seconds on a small machine.
        self._helps: dict[tuple[str, ...], Future[tuple[int, str]]] = {}
        self._asking = threading.Lock()

    def check(self, line: int, command: str) -> Verdict:
        try:
            argv = [word for word in shlex.split(command) if word not in ("...", "\\")]
        except ValueError as error:
            return Verdict(command, line, "unchecked", f"cannot read it ({error})")
        instead = next((text for prefix, text in INSTEAD.items() if tuple(argv[:len(prefix)]) == prefix), "")
        if not argv:
            return Verdict(command, line, "unchecked", "no command")
        if argv[:2] == ["uv", "run"] and len(argv) > 2:
            argv = argv[2:]
            status, why = self._rlpilot(argv) if argv[0] == "rlpilot" else self._script(argv)
        elif argv[0] == "rlpilot":
            status, why = self._rlpilot(argv)
        elif argv[0] in PROGRAMS:
            status, why = self._by_help(argv)
        else:
            status, why = "unchecked", _NOT_KNOWN.format(argv[0])
        return Verdict(command, line, status, why, instead if status != "ok" else "")

    def _help(self, argv: list[str]) -> tuple[int, str]:
        with self._asking:
            asked = self._helps.get(tuple(argv))
            mine = asked is None
            if mine:
                asked = self._helps[tuple(argv)] = Future()
        if mine:
            try:
                asked.set_result(self._ask_help(argv))
            except BaseException as error:  # the waiting threads get it too
                asked.set_exception(error)
        return asked.result()

    def _ask_help(self, argv: list[str]) -> tuple[int, str]:
        from tools.io import process

        program = process.which(argv[0], self.environ)
        if program is None:
            return 127, f"{argv[0]} is not installed here"
        done = process.run([program, *argv[1:], "--help"], env=self.environ, timeout=60)
        return done.returncode, "\n".join([*done.stdout_tail, *done.stderr_tail])

    def _by_help(self, argv: list[str], words: list[str] | None = None) -> tuple[str, str]:
        """A command exists when its `--help` works and is no deprecation notice, every flag it uses
        is in that help, and it has every option the usage line requires."""
        words = words or [argv[0], *_leading_words(argv[1:])]
        code, text = self._help(words)
        if code == 127:
            return "unchecked", text
        name = " ".join(words)
        if code != 0:
            said = next((line.strip(" │") for line in text.splitlines() if _NO_SUBCOMMAND.search(line)), "")
            parent_code, parent = self._help(words[:-1]) if len(words) > 1 else (1, "")
            if not said and parent_code == 0 and not re.search(rf"(?<![\w-]){re.escape(words[-1])}(?![\w-])", parent):
                # Its last word, which the help above it does not list, is an argument that `--help` loaded and
                # refused (vf-eval's taskset id: "taskset 'bar' not found"): the command is there, judged by its
                # own help; the argument is not here.
                status, why = self._by_help(argv, words[:-1])
                return (status, why) if status == "gone" else (
                    "unchecked", f"`{name} --help` refused `{words[-1]}`: {_last_line(text)[:300]}")
            return "gone", said or _first_line(text) or f"`{name} --help` fails"
        removed = next((line.strip(" │") for line in text.splitlines()
                        if re.search(r"\(deprecated\)|\bRemoved\b|was removed", line)), "")
        if removed:
            return "gone", removed
        flags = [w.split("=")[0] for w in argv[len(words):] if re.match(r"^--?[A-Za-z]", w)]
        unknown = [f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)]
        usage = next((line for line in text.splitlines() if line.strip().startswith("Usage:")), "")
        required = [w for w in re.sub(r"\[[^\]]*\]", "", usage).split() if w.startswith("--")]
        lacking = [f for f in required if f not in flags]
        problems = ([f"`{name}` has no option {', '.join(unknown)}"] if unknown else []) + (
            [f"`{name}` runs only with {', '.join(lacking)} ({usage.strip()})"] if lacking else [])
        return ("gone", "; ".join(problems)) if problems else ("ok", "")

    def _script(self, argv: list[str]) -> tuple[str, str]:
        """`uv run X`: one of PROGRAMS by its help, else a script of the prime-rl checkout (never run)."""
        from tools.stack.installed import find_prime_rl

        if argv[0] in PROGRAMS:
            return self._by_help(argv)
        checkout = find_prime_rl(None, self.workspace, self.environ)
        if checkout is None:
            return "unchecked", (f"`{argv[0]}` is not installed here, and no prime-rl checkout (RLPILOT_PRIME_RL) "
                                 "is here to check it against")
        project = files.read_toml(Path(checkout.path) / "pyproject.toml").get("project")
        scripts = project.get("scripts") if isinstance(project, dict) else None
        scripts = scripts if isinstance(scripts, dict) else {}
        if argv[0] in scripts:
            return "ok", ""
        return "gone", f"prime-rl {checkout.version} has no `{argv[0]}` script (it has: {', '.join(sorted(scripts))})"

    def _rlpilot(self, argv: list[str]) -> tuple[str, str]:
        from agent.chat.catalog import CATALOG, find
        from agent.cli.main import COMMANDS

        words = _concrete(argv[1:])
        if not words or (words[0] in {e.command[0] for e in CATALOG} and len(words) == 1):
            return "ok", ""
        if words[0] in COMMANDS:
            return self._own_help(words)
        entry, used = find(words)
        if entry is None:
            return "gone", f"rlpilot has no command `{' '.join(words[:2])}`"
        from agent.cli.tool_cli import parse_arguments
        from tools.framework.contract import load

        tool = load(entry)
        printed = io.StringIO()
        try:
            with _REDIRECTING, contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                arguments, _ = parse_arguments(tool, words[used:])
            tool.parse(arguments)
        except SystemExit:
            return "gone", _last_line(printed.getvalue()) or "its arguments are refused"
        except Exception as error:  # the input model refused the values
            return "gone", " ".join(str(error).split())[:300]
        return "ok", ""

    def _own_help(self, words: list[str]) -> tuple[str, str]:
        """A surface or `skill`: its flags must be in its own `--help` (parsing it would start it)."""
        from agent.cli.main import main as rlpilot

        printed = io.StringIO()
        with _REDIRECTING, contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), \
                contextlib.suppress(SystemExit):
            rlpilot([words[0], "--help"])
        unknown = [w for w in words[1:] if w.startswith("-") and w.split("=")[0] not in printed.getvalue()]
        return ("gone", f"rlpilot {words[0]} has no option {', '.join(unknown)}") if unknown else ("ok", "")


def _leading_words(argv: list[str]) -> list[str]:
    """The subcommand words: up to the first flag, and never past `run`, whose next word is a program
    that `--help` would be handed to (`uv tool run X --help` runs X)."""
    words = []
    for word in argv:
        if word.startswith("-"):
            break
        words.append(word)
        if word in ("run", "exec", "x"):
            break
    return words


def _concrete(words: list[str]) -> list[str]:
    """A usage line as a person would type it: optional brackets dropped, the first of alternatives."""
    return [w.split("|")[0] for w in (w.replace("[", "").replace("]", "") for w in words) if w]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def check_text(markdown: str, workspace: Path, checker: Checker | None = None) -> list[Verdict]:
    """Each command judged on its own thread: most of the time is the `--help` of a CLI that takes a second
    to start, and a playbook names a dozen of them."""
    checker = checker or Checker(workspace)
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda found: checker.check(*found), commands(markdown)))


def tool_commands(names: list[str]) -> list[str]:
    """`tool`: `rlpilot ...` lines for the tools the playbook names, what the CLI's own parser requires."""
    from agent.chat.catalog import by_name
    from agent.cli.tool_cli import build_parser
    from tools.framework.contract import load

    lines = []
    for name in names:
        entry = by_name(name)
        parser = build_parser(load(entry))
        words = ["rlpilot", *entry.command]
        for action in parser._actions:  # the parser is the truth about what the command needs
            if not action.option_strings:
                words.append(str(action.metavar or action.dest.upper()))
            elif action.required:
                words.append(f"{action.option_strings[0]} {action.metavar or action.dest.upper()}")
        words += [group._group_actions[0].option_strings[0] for group in parser._mutually_exclusive_groups
                  if group.required]
        # The summary is a description, not commands to run: its code spans are not checked, so not marked.
        lines.append(f"- `{name}`: `{' '.join(words)}` ({entry.summary.rstrip('.').replace('`', '')})")
    return lines


def installed(workspace: Path) -> StackResult:
    from tools.framework.contract import Context
    from tools.stack.info import StackInput, stack_info

    return stack_info(StackInput(), Context(workspace=workspace))


def render(stack: StackResult, layout: str) -> str:
    import prompts
    from agent.chat.catalog import by_name
    from agent.surfaces.mcp_playbook import ENTRIES, PLAYBOOK_URI, RESOURCES, asks
    from tools.framework.contract import load

    named = list(dict.fromkeys(name for step in prompts.steps() for name in step.tools()))
    # Only the tools the playbook names: loading every tool's module would be most of the command's time.
    tools = {name: load(by_name(name)) for name in named}
    front = [f"name: {NAME}", f"description: {DESCRIPTION}"] + (["alwaysApply: false"] if layout == "cursor" else [])
    lines = ["---", *front, "---", "", "# Train with environments, on this stack", "",
             f"Written by `rlpilot skill` on {date.today().isoformat()} for the stack below; every command here "
             "was checked against it. After an upgrade, `rlpilot skill --check FILE` names what no longer works.",
             "", "## Act through rlpilot's MCP server",
             "Prefer the tools of the rlpilot MCP server (`rlpilot mcp --workspace .` on stdio): they check, ask "
             "the person and confirm in code, and record what the report is built from. Its prompts "
             f"({', '.join(e.name for e in ENTRIES)}) give each part of the playbook; {PLAYBOOK_URI} and "
             f"{', '.join(r.uri for r in RESOURCES)} are resources to attach. Without the server, run the "
             "commands below; those that act outside this machine ask on the terminal.",
             "", "## The stack", stack.brief(),
             f"Write configs in the `{stack.config_dialect.dialect}` dialect unless told otherwise. "
             + prompts.stack_rule(), "", prompts.playbook().strip(), "",
             "## Ask the person", "Before these act, the person decides; never answer for them:",
             *asks(named, tools), "", "## The tools and their commands", *tool_commands(named), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rlpilot skill",
        description="Write rlpilot's playbook as an Agent Skill for the stack installed here (shown; written "
                    "with --write), or --check which commands of a skill no longer exist on this stack.")
    parser.add_argument("--for", dest="layout", choices=sorted(LAYOUTS), default="claude",
                        help="the client's layout: " + ", ".join(f"{k} -> {v}" for k, v in LAYOUTS.items()))
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="the project the skill is for")
    parser.add_argument("--write", action="store_true", help="write it (otherwise it is only shown)")
    parser.add_argument("--force", action="store_true", help="replace a different file already there")
    parser.add_argument("--check", type=Path, metavar="FILE", help="check a skill's commands against this stack")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print the result as JSON")
    options = parser.parse_args(argv)
    workspace = options.workspace.resolve()
    if options.check:
        return _check(options.check, workspace, options.as_json)
    checker = Checker(workspace)
    stack = installed(workspace)
    with ThreadPoolExecutor(max_workers=8) as early:
        # The stack's own commands (`prime login`, `prime train`) are asked at once, while the rest is rendered:
        # each `--help` of prime takes most of a second to start, longer than the render; the check finds them
        # answered.
        for command in dict.fromkeys(command for _, command in commands(stack.brief())):
            early.submit(checker.check, 0, command)
        text = render(stack, options.layout)
        gone = [v for v in check_text(text, workspace, checker) if v.status == "gone"]
    if gone:  # a bug here, never the user's: the skill names only what the stack has
        print("rlpilot skill: the skill would name commands this stack lacks:\n"
              + "\n".join(v.text() for v in gone), file=sys.stderr)
        return 1
    target = workspace / LAYOUTS[options.layout]
    try:
        files.no_link(target)  # dangling or not: writing would create or change the file it points to
        exists = os.path.lexists(target) and files.read_text_bounded(target, root=workspace) != text
    except BadInput as error:
        print(f"rlpilot skill: {error.one_line()}", file=sys.stderr)
        return 1
    if options.as_json:
        print(json.dumps({"path": str(target), "text": text, "written": options.write and (not exists or
                                                                                           options.force)}))
    else:
        print(text)
    if not options.write:
        print(f"rlpilot skill: shown, not written; `--write` writes it to {target}", file=sys.stderr)
        return 0
    if exists and not options.force:
        print(f"rlpilot skill: {target} exists and differs; `--force` replaces it", file=sys.stderr)
        return 1
    try:
        files.write_text(target, text, root=workspace)
    except BadInput as error:  # a symlink there, dangling or not, or a folder that leads out
        print(f"rlpilot skill: {error.one_line()}", file=sys.stderr)
        return 1
    print(f"rlpilot skill: wrote {target}", file=sys.stderr)
    return 0


def _check(path: Path, workspace: Path, as_json: bool) -> int:
    try:
        text = files.read_text_bounded(path)
    except BadInput as error:
        print(f"rlpilot skill: {error.one_line()}", file=sys.stderr)
        return 2
    verdicts = check_text(text, workspace)
    gone = [v for v in verdicts if v.status == "gone"]
    if as_json:
        print(json.dumps({"path": str(path), "commands": [asdict(v) for v in verdicts], "gone": len(gone)}, indent=2))
    else:
        print("\n".join(v.text() for v in verdicts) or "no commands found")
        unjudged = sum(v.status == "unchecked" for v in verdicts)
        print(f"\n{len(gone)} of {len(verdicts)} commands no longer work on this stack" if gone
              else f"\nno command is gone; {unjudged} of {len(verdicts)} could not be judged here" if unjudged
              else f"\nevery command works on this stack ({len(verdicts)} checked)")
    return 1 if gone else 0
