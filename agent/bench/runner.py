"""`rlpilot bench brain`: playbook scenarios that score a model as rlpilot's brain.

Each scenario is a folder (`scenario.toml` and a `workspace/`): what the user says, how the
scripted user answers each gate question, and checks on what the model did. The runner plays it
through the real agent (the chat's system prompt, tool schemas, gates and tools) in a temporary
copy of the workspace, and scores it by its checks: deterministic, no judge model.

The platform the tools reach is a stand-in of the Prime API on loopback (agent/bench/standin.py),
started for each scenario and seeded with the scenario's `[platform]`: a scenario never acts on a
real account, and what the brain sent the platform is in its result (`platform_writes`).

The scenario format is agent/bench/scenario.py's, and the scoring agent/bench/scoring.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.bench.scenario import SCENARIOS, Scenario, ScenarioError, load_scenarios, refuse_installs
from agent.bench.scoring import score_play
from agent.chat.gates import Question, match_answer
from tools.io import files, process

BOUNDARY = ("# rlpilot bench: the end of the search for a project above a scenario's workspace; nothing here.\n"
            "[tool.uv]\n")

# What the person's shell may set that a scenario must not inherit: the platform and account the prime
# CLI reads (during a scenario they name the stand-in), an active Python environment (the scenario's
# workspace has its own, or none), and rlpilot's state folder (a scenario's sessions and run records stay
# in its workspace, never among the person's runs). All are put back after it.
PERSONS_VARS = ("PRIME_API_BASE_URL", "PRIME_BASE_URL", "PRIME_API_KEY", "PRIME_TEAM_ID", "PRIME_USER_ID",
                "PRIME_CONTEXT", "PRIME_FRONTEND_URL", "PRIME_TRACES_URL", "PRIME_INFERENCE_URL", "VIRTUAL_ENV",
                "UV_PROJECT_ENVIRONMENT", "RLPILOT_HOME")
CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens there: a call fails at once, on this machine


class ScenarioCapReached(KeyboardInterrupt):
    """Raised from the surface when a scenario runs past its cap: the loop ends the turn as on Ctrl-C."""


@dataclass
class ScriptedUser:
    """The surface: answers gate questions from the scenario, keeps what happened."""

    answers: dict[str, Any]
    deadline: float
    calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments", "status", "result", ...}
    questions: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)  # what the answer check found in the answers

    def emit(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "tool_call":
            if time.monotonic() > self.deadline:
                raise ScenarioCapReached()
            self.calls.append({"name": event["name"], "arguments": event.get("arguments", {}), "questions": []})
        elif kind == "tool_result" and self.calls and self.calls[-1]["name"] == event["name"] \
                and "ok" not in self.calls[-1]:
            self.calls[-1].update(ok=event.get("ok"), declined=bool(event.get("declined")),
                                  result=event.get("result"), error=event.get("error"))
        elif kind == "assistant":
            self.texts.append(event.get("text", ""))
        elif kind == "error":
            self.errors.append(event.get("message", ""))
        elif kind == "caveat":
            self.caveats.append(event.get("message", ""))

    def ask(self, question: Question) -> str | None:
        tool = self.calls[-1]["name"] if self.calls else None
        planned = self.answers.get(question.kind, "")
        if isinstance(planned, dict):
            planned = planned.get(tool or "", planned.get("*", ""))
        answer = match_answer(question, planned or None)
        record = {"kind": question.kind, "tool": tool, "prompt": question.prompt, "answer": answer}
        self.questions.append(record)
        if self.calls:
            self.calls[-1]["questions"].append(record)
        return answer



def run_scenario(scenario: Scenario, client, tools) -> dict[str, Any]:
    """Play one scenario through the real agent and score it."""
    return score_play(scenario, play_scenario(scenario, client, tools))


def play_scenario(scenario: Scenario, client, tools) -> dict[str, Any]:
    """Play one scenario through the real agent in a temporary copy of its workspace: what happened, as JSON
    data, so that the play and its scoring can run in different processes (the verifiers environment
    `environments/rlpilot_brain` plays in its harness and scores in its task)."""
    from agent.chat.loop import Agent, Surface
    from agent.chat.sessions import Store
    from agent.surfaces.common import start_conversation
    from tools.framework.contract import Context
    from tools.framework.workspace import rlpilot_home

    started = time.monotonic()
    user = ScriptedUser(scenario.answers, started + scenario.seconds_cap)
    with files.scratch_dir(prefix=f"rlpilot-brain-{scenario.name}-") as temp, \
            scenario_platform(scenario) as platform:
        # Tools look upward from the workspace for a project (its .venv, uv's project): the temp space may
        # sit inside someone's project (TMPDIR), so the search ends here, above a workspace without its own.
        files.write_text(Path(temp) / "pyproject.toml", BOUNDARY)
        workspace = Path(temp) / "workspace"
        if scenario.workspace.is_dir():
            files.copy_tree(scenario.workspace, workspace)
        else:
            files.make_dirs(workspace)
        redirect_model_aliases(workspace, platform.inference_url)
        if scenario.installed and not scenario.install_allowed:
            user.errors.append(f"not installed: {', '.join(scenario.installed)} (their build code would run; "
                               "`--install-environments` allows it)")
        elif scenario.installed:
            user.errors += install_environments(workspace, scenario.installed, Path(temp) / "home")
        # Where the tools look for it too (`report` reads the session of the workspace it runs in).
        session = Store(rlpilot_home(workspace)).create("bench")
        agent = Agent(session, Surface(user.emit, user.ask), Context(workspace=workspace), client, tools)
        start_conversation(agent)
        turns = 0
        for text in [scenario.request, *scenario.follow_ups]:
            if turns and time.monotonic() > user.deadline:  # the opening request is always sent
                user.errors.append(f"stopped at the scenario's cap of {scenario.seconds_cap:g} s")
                break
            agent.send(text)
            turns += 1
        tokens = session.usage()
        # Whether each call's body ran (not refused by its preview, declined, or failed before it):
        # the session records every call the loop admitted, in the order the surface saw them.
        for record, seen in zip(session.tool_calls(ok_only=False), user.calls, strict=False):
            seen["ran"] = record["ok"] and record["name"] == seen["name"]
        writes = platform.writes()
    confirming = sorted(tool.name for tool in tools if tool.entry.confirms or tool.asked_fields)
    return {"scenario": scenario.name, "calls": user.calls, "questions": user.questions, "texts": user.texts,
            "errors": user.errors, "caveats": user.caveats, "turns": turns, "tokens": tokens, "confirming": confirming,
            "platform_writes": writes, "seconds": round(time.monotonic() - started, 2)}



def redirect_model_aliases(workspace: Path, url: str) -> None:
    """Every model alias the workspace knows (its own configs/endpoints.toml, then rlpilot's) answers
    from the stand-in: a smoke eval of a model the brain or the scripted user picked by family
    (`gpt-4.1-mini`) must not reach OpenAI with the person's key."""
    import tomlkit

    from tools.evals.endpoints import WORKSPACE_FILE, load_registry, registry_files

    aliases: dict[str, Any] = {}
    for path in registry_files(workspace):
        for name, alias in load_registry(path).items():
            aliases.setdefault(name, {"endpoint_id": name, "model": alias.model, "url": url, "key": "PRIME_API_KEY"})
    header = "# Written by `rlpilot bench brain`: every alias answers from the scenario's stand-in.\n"
    files.write_text(workspace / WORKSPACE_FILE, header + tomlkit.dumps({"endpoint": list(aliases.values())}))


def install_environments(workspace: Path, folders: list[str], home: Path) -> list[str]:
    """Give the workspace a .venv with these environment packages in it, as a user who ran
    `rlpilot env install NAME --create-venv` has (uv, from its cache when warm): what failed, if anything.

    Their build code runs, so it runs without the person's keys or HOME (`home` stands in, holding only the
    person's installer settings); only uv's cache is shared, so that a warm cache keeps the install off the
    network."""
    uv = process.which("uv", os.environ)
    if not uv:
        return ["the scenario installs environments with uv, which is not on PATH: smoke evals will not find them"]
    venv = workspace / ".venv"
    steps = [[uv, "venv", "-q", str(venv), "--python", sys.executable],
             [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
              *[arg for name in folders for arg in ("-e", str(workspace / name))]]]
    files.make_dirs(home, private=True)
    environ = process.minimal_environment({"HOME": str(home)})
    for argv in steps:
        done = process.run(argv, env=environ, timeout=600)
        if not done.ok:
            return [f"installing {', '.join(folders)} failed: {' '.join(done.stderr_tail[-3:])}"]
    return []


@contextmanager
def scenario_platform(scenario: Scenario) -> Iterator[Any]:
    """The Prime API every tool and child process reaches during the scenario: a stand-in on loopback,
    seeded with the scenario's platform and logged in with its own key. Prime Inference (smoke evals' model)
    is the stand-in too (it answers with the scenario's replies): nothing a tool does leaves the machine."""
    from agent.bench.standin import PrimeAPI

    saved = {name: os.environ[name] for name in PERSONS_VARS if name in os.environ}
    with PrimeAPI() as api:
        try:
            for name in PERSONS_VARS:
                os.environ.pop(name, None)
            api.seed(scenario.platform)
            os.environ.update(PRIME_API_BASE_URL=api.url, PRIME_API_KEY=api.api_key,
                              PRIME_INFERENCE_URL=api.inference_url, PRIME_FRONTEND_URL=CLOSED_PORT,
                              PRIME_TRACES_URL=CLOSED_PORT)
            yield api
        finally:
            for name in PERSONS_VARS:
                os.environ.pop(name, None)
            os.environ.update(saved)


def parser() -> argparse.ArgumentParser:
    from agent.cli.surface_args import add_endpoint_options

    p = argparse.ArgumentParser(prog="rlpilot bench brain",
                                description="Score a model as rlpilot's brain on playbook scenarios.")
    add_endpoint_options(p)
    p.add_argument("--scenarios", type=Path, default=SCENARIOS, help="a folder of scenario folders "
                   "(default: the scenarios that ship with rlpilot)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these scenarios")
    p.add_argument("--install-environments", action="store_true", help="let the packs' scenarios install the "
                   "environments their `installed` names (their build code runs, without your keys or HOME)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "brain":
        asked = bool(args) and args[0] in ("-h", "--help")
        print("usage: rlpilot bench brain (--endpoint ALIAS | --base-url URL --model M) [--scenarios DIR] "
              "[--only NAME...] [--json]\n\nbenches:\n  brain  score a model as rlpilot's brain on the "
              "playbook scenarios (`rlpilot bench brain --help`)", file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    options = parser().parse_args(args[1:])
    from agent.surfaces.common import available_tools, endpoint_of, model_client
    from tools.framework.errors import ToolError

    workspace = Path.cwd()
    try:
        scenarios = load_scenarios(options.scenarios, options.only)
        refuse_installs(scenarios, options.install_environments)
        endpoint = endpoint_of(options, workspace) if (options.endpoint or options.base_url) else None
    except ScenarioError as error:
        print(f"rlpilot bench brain: {error}", file=sys.stderr)
        return 2
    except ToolError as error:
        print(f"rlpilot bench brain: {error.one_line()}", file=sys.stderr)
        return 2
    if endpoint is None:
        print("rlpilot bench brain: name the model to score: --endpoint ALIAS, or --base-url URL --model M",
              file=sys.stderr)
        return 2
    client = model_client(endpoint, workspace, stream=True)
    tools = available_tools()
    results = run_all(scenarios, client, tools, quiet=options.json)
    total = round(sum(r["score"] for r in results) / len(results), 3)
    if options.json:
        print(json.dumps({"model": endpoint.model, "base_url": endpoint.base_url, "scenarios": results,
                          "score": total}, indent=2))
    else:
        print(render(results, total, endpoint.model))
    return 0


def run_all(scenarios: list[Scenario], client, tools, quiet: bool) -> list[dict[str, Any]]:
    """Every scenario in turn, each one's score shown as it finishes: under a progress bar on a
    terminal, one line each in a log."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    live = console.is_terminal and not quiet
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not live) as progress:
        bar = progress.add_task("", total=len(scenarios))
        for number, scenario in enumerate(scenarios, start=1):
            progress.update(bar, description=scenario.name)
            result = run_scenario(scenario, client, tools)
            results.append(result)
            progress.advance(bar)
            if not quiet:
                line = f"[{number}/{len(scenarios)}] {scenario.name}: {result['score']:.2f} ({result['seconds']:.1f} s)"
                if live:
                    progress.console.print(line, highlight=False)
                else:
                    print(line, file=sys.stderr, flush=True)
    return results


def render(results: list[dict[str, Any]], total: float, model: str) -> str:
    lines = [f"rlpilot brain bench: {model}", ""]
    width = max(len(r["scenario"]) for r in results) + 2
    for result in results:
        lines.append(f"{result['scenario']:<{width}}{result['score']:.2f}  ({result['seconds']:.1f} s, "
                     f"{len(result['tool_calls'])} tool calls)")
        for check in result["checks"]:
            mark = "pass" if check["passed"] else ("FAIL!" if check["critical"] else "FAIL")
            lines.append(f"    {mark:<6}{check['name']}: {check['why']}")
        if result["gated_actions_run"]:
            lines.append(f"    GATED ACTIONS RAN WITHOUT A YES: {', '.join(result['gated_actions_run'])}")
    lines += ["", f"score {total:.2f} over {len(results)} scenario(s)"]
    return "\n".join(lines)
