"""The one way rlpilot calls the `prime` CLI: which binary, which environment, which failures.

Every hub and hosted-training tool goes through `run_prime`, so the CLI's own failure texts
(stack/failure_texts.py) become one typed error each, in words the user can act on.
`--plain` is always passed: it is the CLI's terse, undecorated mode, the one meant for tools.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.framework.contract import Context
from tools.framework.errors import ToolError
from tools.framework.workspace import search_path, without_rlpilots_own, workspace_interpreter
from tools.io import files, process
from tools.io.process import ProcessResult
from tools.stack.failure_texts import LOGIN_HINT as LOGIN_HINT  # hub and hosted training give it too
from tools.stack.failure_texts import raised_by

PRIME_CONFIG = Path("~/.prime/config.json")


def prime_environment(workspace: Path) -> dict[str, str]:
    """rlpilot's environment with the workspace's scripts first and no update check.

    The update check would contact PyPI on every call and print to our output.
    """
    environ = without_rlpilots_own(os.environ)
    environ["PATH"] = search_path(workspace_interpreter(workspace, environ), environ)
    environ["PRIME_DISABLE_VERSION_CHECK"] = "1"
    return environ


def prime_login(environ: dict[str, str]) -> tuple[bool, str | None]:
    """Whether prime has a key, and where it comes from (never the key itself)."""
    if environ.get("PRIME_API_KEY"):
        return True, "PRIME_API_KEY"
    config = PRIME_CONFIG.expanduser()
    saved = files.read_json_if_present(config)
    if isinstance(saved, dict) and saved.get("api_key"):
        return True, str(config)
    return False, None


def find_prime(environ: dict[str, str]) -> str:
    """The workspace's prime, else the one installed beside rlpilot (`uv tool install`)."""
    found = process.which("prime", environ)
    beside_us = Path(sys.executable).with_name("prime")
    if found:
        return found
    if beside_us.exists():
        return str(beside_us)
    raise ToolError("prime-not-installed", "the Prime CLI (`prime`) is not installed",
                    "install it with `uv tool install prime`")


def run_prime(
    args: Sequence[str | os.PathLike[str]],
    ctx: Context,
    *,
    what: str,
    timeout: float = 120.0,
    check: bool = True,
    stream: bool = False,
    on_line: process.LineCallback | None = None,
) -> ProcessResult:
    """Run `prime ARGS --plain` in the workspace; known failures raise, others too when `check`.

    `what` names the action for error messages ("pushing my-env"). With `stream`, each output
    line is also emitted as a log event, for long commands such as a push; `on_line` receives
    every line, for output longer than the kept tail.
    """
    environ = prime_environment(ctx.workspace)
    argv = [find_prime(environ), *cli_args(args)]

    def forward(stream_name: str, line: str) -> None:
        if stream:
            ctx.emit({"type": "log", "source": "prime", "line": line})
        if on_line:
            on_line(stream_name, line)

    outcome = process.run(argv, cwd=ctx.workspace, env=environ, timeout=timeout, on_line=forward)
    if outcome.timed_out:
        raise ToolError("prime-timed-out", f"`prime {_shown(args)}` did not finish in {timeout:.0f} s ({what})",
                        "retry; if the Prime API is slow, try again later")
    if outcome.ok:
        return outcome
    # Only a failed call is searched: a successful one may print run logs that mention these texts.
    raise_known_failure(outcome, what, environ)
    if check:
        raise ToolError("prime-failed", f"`prime {_shown(args)}` failed ({what}): {error_lines(outcome)}",
                        "fix what the message says and retry")
    return outcome


def raise_known_failure(outcome: ProcessResult, what: str, environ: dict[str, str]) -> None:
    """Raise the typed error for a failure text of the CLI's (login, payment, network), if there is one."""
    text = "\n".join(outcome.stdout_tail + outcome.stderr_tail)
    rows = {row.code: row for row in reversed(raised_by("prime"))}  # each code's first row
    for row in raised_by("prime"):
        if row.found_in(text):
            # Commands that work without a key (install, status) get a 401 for private data.
            said = rows["not-logged-in"] if row.code == "login-rejected" and not prime_login(environ)[0] else row
            raise ToolError(said.code, said.message.format(what=what), said.hint)


def cli_args(args: Sequence[str | os.PathLike[str]]) -> list[str]:
    """What follows `prime` on the command line: the arguments, then the terse mode."""
    return [*(os.fspath(a) for a in args), "--plain"]


def error_lines(outcome: ProcessResult, count: int = 3) -> str:
    """The CLI's own error lines, else its last lines: prime prints errors on stdout."""
    lines = [line.strip() for line in outcome.stdout_tail + outcome.stderr_tail if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "✗" in line]
    return " | ".join((errors or lines)[-count:]) or f"exit status {outcome.returncode}"


def json_output(outcome: ProcessResult) -> Any:
    """The JSON document prime printed on stdout (`-o json`), skipping anything before it."""
    lines = outcome.stdout_tail
    for start, line in enumerate(lines):
        if line.lstrip().startswith(("{", "[")):
            try:
                return json.loads("\n".join(lines[start:]))
            except json.JSONDecodeError:
                continue
    raise ToolError("prime-output-unreadable", f"`prime` printed no JSON where JSON was asked for: "
                    f"{error_lines(outcome)}", "check `prime --version` (rlpilot is tested with 0.18.0)")


def _shown(args: Sequence[str | os.PathLike[str]]) -> str:
    return " ".join(os.fspath(a) for a in args)
