"""The `rlpilot` command: every tool as a subcommand, built from its input model.

`rlpilot --help` must stay fast, so it reads only the catalog (`agent.chat.catalog`, the tools'
and the agent's own); a tool's module (and pydantic) is imported only once its subcommand is chosen.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path

from agent.chat.catalog import CATALOG, find
from tools.catalog import GROUPS
from tools.framework.errors import json_error

# The command's start, as near the process's own as rlpilot's code gets: the time a tool reports as its
# own (tools/framework/timing.py) includes the imports and argument parsing that come after it.
STARTED = time.monotonic()

USAGE = "usage: rlpilot COMMAND [ARGS] [--json]"

# Commands that are not tools: the surfaces, and the session list.
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("agent.surfaces.terminal:main", "Chat with rlpilot (offline: slash commands over the same tools)."),
    "sessions": ("agent.cli.sessions:main",
                 "List chat sessions; resume one with `rlpilot chat --session ID`."),
    "mcp": ("agent.surfaces.mcp_server:main", "Serve the tools to an IDE assistant over MCP (stdio)."),
    "acp": ("agent.surfaces.acp_agent:main", "Run as an Agent Client Protocol agent on stdio (Zed and other editors)."),
    "slack": ("agent.surfaces.slack_app:main", "Run the Slack bot (Socket Mode, or --http with signed requests)."),
    "bench": ("agent.bench.runner:main", "Score a model as rlpilot's brain: `rlpilot bench brain --endpoint ALIAS` "
                                        "plays the playbook scenarios through the real agent."),
    "skill": ("agent.skill.skill:main", "Write the playbook as an Agent Skill for this stack; --check FILE names a "
                                        "skill's commands that no longer work."),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # here, so that a reader who has gone is met inside the handler below
    except KeyboardInterrupt:
        print("rlpilot: interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        # The reader stopped early (`| head -1`): what it wanted it has. Later writes, and the
        # interpreter's last flush, go nowhere instead of raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    # The interpreter's last collection walks every object the imports made, a tenth of a quick command's
    # time: the process is ending and its memory goes back whole. Everything rlpilot writes is closed by
    # now (the files door closes what it opens), and the exit handlers still run.
    gc.freeze()
    sys.exit(code)


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_overview())
        return 0
    if argv[0] == "--version":
        from importlib.metadata import version

        print(f"rlpilot {version('rlpilot')}")
        return 0
    if argv[0] in COMMANDS:
        import importlib

        from agent.cli.surface_args import PARSERS

        if argv[0] in PARSERS:  # --help and a wrong option answered before the surface's heavy imports
            PARSERS[argv[0]]().parse_args(argv[1:])
        module, func = COMMANDS[argv[0]][0].split(":")
        return getattr(importlib.import_module(module), func)(argv[1:])
    entry, used = find(argv)
    if entry is None:
        group = [e for e in CATALOG if e.command[0] == argv[0]]
        if group and (len(argv) == 1 or argv[1] in ("-h", "--help")):
            print(_overview(argv[0]))
            return 0
        return _unknown(argv, group)
    from agent.cli.tool_cli import run_command

    return run_command(entry, argv[used:], started=STARTED)


def _unknown(argv: list[str], group: list) -> int:
    """Name only the word that is unknown (a group's subcommand, or the command), never its arguments,
    and the nearest command there is."""
    if group:
        typed, known = " ".join(argv[:2]), [" ".join(e.command) for e in group]
    else:
        typed, known = argv[0], [*COMMANDS, *dict.fromkeys(e.command[0] for e in CATALOG)]
    import difflib  # only for a word that is unknown: most runs never need it

    close = difflib.get_close_matches(typed, known, n=1, cutoff=0.6)
    hint = f"did you mean `rlpilot {close[0]}`?" if close else "run `rlpilot --help` for the list"
    print(f"rlpilot: unknown command {typed!r}; {hint}\n{USAGE}", file=sys.stderr)
    if "--json" in argv:
        print(json_error("unknown-command", f"unknown command {typed!r}", hint))
    return 2


def _overview(group: str | None = None) -> str:
    rows = [(" ".join(e.command), e.summary) for e in CATALOG if group is None or e.command[0] == group]
    if group is None:
        rows = [(name, summary) for name, (_, summary) in COMMANDS.items()] + rows
    width = max(len(name) for name, _ in rows) + 2
    lines = [USAGE, ""]
    if group:
        lines += [GROUPS.get(group, ""), ""]
    else:
        lines += ["rlpilot trains language models with RL on verifiers environments.", "", "commands:"]
    lines += [f"  {name:<{width}}{summary}" for name, summary in rows]
    lines += ["", "`rlpilot COMMAND --help` shows a command's options; --json prints the result as JSON.",
              f"state: {Path('.rlpilot')} in the workspace, or RLPILOT_HOME"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
