"""`rlpilot sessions`: the chat sessions of this workspace, newest first.

Its own module, not the chat surface's: listing reads one SQLite file and must not wait on the chat's
imports (the model client, rich, the loop), about half a second.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.chat.sessions import Store, with_content
from agent.cli import surface_args
from tools.framework.workspace import rlpilot_home


def main(argv: list[str] | None = None) -> int:
    options = surface_args.sessions().parse_args(argv)
    sessions = with_content(Store(rlpilot_home(Path.cwd())).list())
    if options.json:
        print(json.dumps(sessions, indent=2))
        return 0
    import datetime

    for s in sessions:
        when = datetime.datetime.fromtimestamp(s["updated"]).strftime("%Y-%m-%d %H:%M")
        calls = f"{s['tool_calls']} tool call{'s' if s['tool_calls'] != 1 else ''}"
        print(f"{s['id']}  {when}  {s['surface']:<9} {s['messages']:>4} messages, {calls:<13} {s['title']}")
    if not sessions:
        print("no sessions yet: start one with `rlpilot chat`")
    return 0
