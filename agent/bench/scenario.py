"""A scenario of `rlpilot bench brain`, read from its folder (`scenario.toml` and a `workspace/`):
what the user says, how the scripted user answers each gate question, the checks on what the model
did, and the platform the stand-in is seeded with. Every mistake in a pack is named before any
scenario plays.

scenario.toml:
    description = "..."
    request = "the user's opening message"
    follow_ups = ["later messages", ...]
    gated = ["train_launch"]  # the gated actions the request calls for; proposing any other is critical
    [answers]               # by question kind: "" (or absent) is no answer; a table answers by tool
    model-family = "instruct"
    confirm = "no"          # or: [answers.confirm] train_launch = "no"
    [[check]]               # kinds: see CHECK_KINDS (agent/bench/scenarios/README.md says each)
    kind = "called"
    tool = "eval_run"
    critical = true         # optional: a failed critical check is listed in critical_failures
    [platform]              # optional: the stand-in's account, Hub environments and hosted runs
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.chat.catalog import CATALOG
from agent.chat.record import acted
from tools.framework.errors import BadInput
from tools.io import files

SCENARIOS = Path(__file__).parent / "scenarios"
# Each kind of check, and the keys its table must have.
CHECK_KINDS = {"called": ("tool",), "called_any": ("tools",), "not_called": ("tools",), "before": ("tool", "others"),
               "at_most": ("tool", "times"), "asked": ("question",), "answer_has": ("any",),
               "answer_lacks": ("none",), "answer_quotes": ("tool", "field"), "commands_exist": (),
               "called_with": ("tool", "arguments")}


# The actions a scenario's `gated` may name: the report's (external, or confirmed by the person).
GATED = [entry.name for entry in CATALOG if acted({"name": entry.name})]


class ScenarioError(Exception):
    """A scenario folder that cannot be read."""


@dataclass
class Scenario:
    name: str
    folder: Path
    description: str
    request: str
    follow_ups: list[str]
    answers: dict[str, Any]
    checks: list[dict[str, Any]]
    seconds_cap: float
    # The gated actions (external or confirmed) the request calls for; None: the scenario does not say,
    # and the gated actions a brain proposes are not judged.
    gated: list[str] | None = None
    platform: dict[str, Any] = field(default_factory=dict)
    installed: list[str] = field(default_factory=list)  # workspace folders installed in its .venv
    # Installing runs the package's build code: allowed for the scenarios that ship with rlpilot, and for
    # a pack given with --scenarios only when the person passed --install-environments.
    install_allowed: bool = False

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    @property
    def platform_files(self) -> Path:
        """Where the files the `[platform]` table names are: beside the workspace, out of the agent's reach."""
        return self.folder / "platform"


def load_scenario(folder: Path) -> Scenario:
    try:
        data = files.read_toml(folder / "scenario.toml", root=folder)
    except BadInput as error:
        raise ScenarioError(error.one_line()) from None
    checks = data.get("check", [])
    for number, check in enumerate(checks, start=1):
        if check.get("kind") not in CHECK_KINDS:
            raise ScenarioError(f"{folder.name}: check {number} has kind {check.get('kind')!r}; "
                                f"one of {sorted(CHECK_KINDS)}")
        missing = [key for key in CHECK_KINDS[check["kind"]] if key not in check]
        if missing:
            raise ScenarioError(f"{folder.name}: check {number} ({check['kind']}) needs "
                                + ", ".join(f"`{key}`" for key in missing))
    if not data.get("request") or not checks:
        raise ScenarioError(f"{folder.name}: a scenario needs a request and at least one [[check]]")
    gated = data.get("gated")
    unknown = [name for name in gated or [] if not acted({"name": name})]
    if unknown:
        raise ScenarioError(f"{folder.name}: gated names {', '.join(unknown)}, which are no gated actions; "
                            f"one of {', '.join(GATED)}")
    scenario = Scenario(folder.name, folder, data.get("description", ""), data["request"], data.get("follow_ups", []),
                        data.get("answers", {}), checks, float(data.get("seconds_cap", 300)), gated, {},
                        data.get("installed", []), folder.resolve().is_relative_to(SCENARIOS.resolve()))
    if scenario.workspace.exists():
        try:  # copied for each play: a link in it would take the copy (and the agent) out of the pack
            files.regular_tree(scenario.workspace)
        except BadInput as error:
            raise ScenarioError(f"{folder.name}: {error.one_line()}") from None
    if scenario.installed and not (scenario.workspace / "pyproject.toml").is_file():
        raise ScenarioError(f"{folder.name}: a workspace with installed environments is a project: its .venv is "
                            "found beside workspace/pyproject.toml, which is missing")
    for name in scenario.installed:
        # Installing runs the package's build code: only the pack's own packages, never a path out of it.
        if not isinstance(name, str) or not (scenario.workspace / name).resolve().is_relative_to(
                scenario.workspace.resolve()):
            raise ScenarioError(f"{folder.name}: installed names {name!r}, which is not a folder of the pack's "
                                f"workspace {scenario.workspace}")
        if not (scenario.workspace / name / "pyproject.toml").is_file():
            raise ScenarioError(f"{folder.name}: installed names {name}, which is no package (pyproject.toml) "
                                f"in {scenario.workspace}")
    scenario.platform = _load_platform(scenario, data.get("platform", {}))
    return scenario


def _load_platform(scenario: Scenario, table: dict[str, Any]) -> dict[str, Any]:
    """The `[platform]` table with the files it names read in (a run's metrics as rows, its logs as
    text), as the stand-in is seeded with it; its mistakes named before any scenario plays."""
    where = f"{scenario.name}: [platform]"
    for kind in ("run", "environment"):
        for number, entry in enumerate(table.get(kind, []), start=1):
            if "id" not in entry:
                raise ScenarioError(f"{where} {kind} {number} needs an `id`")

    def read(run: dict[str, Any], name: str) -> str:
        """A file of the pack's platform folder: `../x`, an absolute path or a link out of it is refused."""
        try:
            return files.read_text_bounded(scenario.platform_files / name, files.LINE_LIMIT,
                                           root=scenario.platform_files)
        except BadInput as error:
            why = f", which is not in {scenario.platform_files}" if error.code == "no-such-file" else \
                f": {error.one_line()}"
            raise ScenarioError(f"{where} run {run['id']} names {name}{why}") from None

    def rows(run: dict[str, Any]) -> list[dict[str, Any]]:
        found = []
        for number, line in enumerate(read(run, run["metrics"]).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ScenarioError(f"{where} run {run['id']}: {run['metrics']} line {number} is not JSON "
                                    f"({error.msg})") from None
            if not isinstance(row, dict):
                raise ScenarioError(f"{where} run {run['id']}: {run['metrics']} line {number} is not an "
                                    "object (one JSON object per step)")
            found.append(row)
        return found

    runs = [{**run, "logs": {part: read(run, name) for part, name in run.get("logs", {}).items()},
             **({"metrics": rows(run)} if "metrics" in run else {})} for run in table.get("run", [])]
    return {**table, "run": runs}


def load_scenarios(folder: Path, only: list[str] | None = None) -> list[Scenario]:
    found = sorted(path.parent for path in folder.glob("*/scenario.toml"))
    if only:
        unknown = set(only) - {path.name for path in found}
        if unknown:
            raise ScenarioError(f"no scenario named {', '.join(sorted(unknown))} in {folder}")
        found = [path for path in found if path.name in only]
    if not found:
        raise ScenarioError(f"no scenarios (*/scenario.toml) in {folder}")
    return [load_scenario(path) for path in found]


def refuse_installs(scenarios: list[Scenario], allowed: bool) -> None:
    """A pack's scenario that installs environments plays only with --install-environments."""
    asking = [s for s in scenarios if s.installed and not s.install_allowed]
    if asking and not allowed:
        raise ScenarioError("these scenarios install environments from their pack, which runs the packages' "
                            "build code: " + "; ".join(f"{s.name} ({', '.join(s.installed)})" for s in asking)
                            + ". Pass --install-environments to allow it, or --only the others")
    for scenario in asking:
        scenario.install_allowed = True
