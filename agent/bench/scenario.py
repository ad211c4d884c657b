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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

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
# All the files one scenario's `[platform]` names (runs' metrics and logs), together: each is held in memory
# by the stand-in for the whole play, and a pack may name one file any number of times (100 logs of 8 MiB
# each came to 838 MiB). The largest pack shipped names a few KiB.
PLATFORM_BYTES = 64 * files.MiB


# The shape of scenario.toml, strict: a string where a list is meant (`tools = "train_launch"`) is refused at
# load, naming the file, the key and its line, where scoring would have iterated its characters.
class _Table(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _Check(_Table):
    kind: Literal[tuple(CHECK_KINDS)]  # type: ignore[valid-type]
    name: str | None = None
    critical: bool = False
    tool: str | None = None
    tools: list[str] | None = None
    others: list[str] | None = None
    times: int | None = None
    question: str | None = None
    any: list[str] | None = None
    none: list[str] | None = None
    field: str | None = None
    arguments: dict[str, Any] | None = None


class _Run(_Table):
    model_config = ConfigDict(extra="allow")  # the rest is the run's record, as `prime train get` shows it
    id: str
    metrics: str | None = None
    logs: dict[str, str] = {}
    spend_usd: float = 0.0
    checkpoints: list[dict[str, Any]] = []


class _Environment(_Table):
    id: str
    version: str | None = None
    hash: str = ""
    visibility: str = "PRIVATE"


class _Inference(_Table):
    replies: list[str]


class _Platform(_Table):
    username: str = ""
    gpu_types: list[str] = []
    inference: _Inference | None = None
    environment: list[_Environment] = []
    run: list[_Run] = []


class _ScenarioFile(_Table):
    description: str = ""
    request: str
    follow_ups: list[str] = []
    gated: list[str] | None = None
    answers: dict[str, str | dict[str, str]] = {}
    seconds_cap: float = 300
    installed: list[str] = []
    check: list[_Check]
    platform: _Platform = _Platform()


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


def _where(loc: tuple[int | str, ...]) -> tuple[str, str]:
    """A pydantic error's location as a person names it: the entry (`check 2`, `platform.run 1`) and the key,
    in backquotes (`tools`, or `installed` item 2 for one item of a list)."""
    entry, key = "", []
    item = f" item {loc[-1] + 1}" if loc and isinstance(loc[-1], int) else ""
    for part in loc[:-1] if item else loc:
        if isinstance(part, int):
            entry, key = f"{'.'.join([entry, *key] if entry else key)} {part + 1}", []
        else:
            key.append(part)
    return entry, f"`{'.'.join(key)}`{item}"


def _line(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of scenario.toml a location is at: its entry's `[[...]]` header, then the entry's key below it
    (None when the key is not written on a line of its own, as in an inline table)."""
    lines, start, tables = text.splitlines(), -1, []
    for part in loc:
        if isinstance(part, int):
            header = f"[[{'.'.join(tables)}]]"
            heads = [n for n, line in enumerate(lines) if n > start and line.split("#")[0].strip() == header]
            start, tables = (heads[part], []) if part < len(heads) else (start, tables)
        else:
            tables.append(part)
    for number in range(start + 1, len(lines)):
        if lines[number].lstrip().startswith("["):
            break
        if tables and re.match(rf"\s*{re.escape(tables[0])}\s*=", lines[number]):
            return number + 1
    return start + 1 if start >= 0 else None


def _validated(path: Path) -> dict[str, Any]:
    """scenario.toml read through the files door and checked against its shape (`_ScenarioFile`)."""
    text = files.read_toml_text(path, root=path.parent)
    data = files.parse_toml(text, path)
    try:
        return _ScenarioFile.model_validate(data).model_dump(exclude_unset=True)
    except ValidationError as error:
        first = error.errors()[0]
        entry, key = _where(first["loc"])
        line = _line(text, first["loc"])
        where = f"{path.parent.name}/scenario.toml" + (f":{line}" if line else "")
        said = (f"{entry or 'the file'} needs {key}" if first["type"] == "missing" else
                f"{entry or 'the file'} has {key}, which is no key of it" if first["type"] == "extra_forbidden"
                else f"{entry + ' ' if entry else ''}{key}: {first['msg'].lower()}, not {first['input']!r:.80}")
        raise ScenarioError(f"{where}: {said}; see agent/bench/scenarios/README.md for the format of each key") \
            from None


def load_scenario(folder: Path) -> Scenario:
    try:
        data = _validated(folder / "scenario.toml")
    except BadInput as error:
        raise ScenarioError(error.one_line()) from None
    checks = data.get("check", [])
    for number, check in enumerate(checks, start=1):
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
        if not (scenario.workspace / name).resolve().is_relative_to(
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
    left = PLATFORM_BYTES

    def read(run: dict[str, Any], name: str) -> str:
        """A file of the pack's platform folder: `../x`, an absolute path or a link out of it is refused, and
        so is one past what is left of PLATFORM_BYTES."""
        nonlocal left
        try:  # the folder itself a link (`platform -> /`) would make any file one of it
            files.inside(scenario.platform_files, scenario.folder)
            data = files.read_bytes_bounded(scenario.platform_files / name, left, root=scenario.platform_files)
        except BadInput as error:
            why = (f", which is not in {scenario.platform_files}" if error.code == "no-such-file" else
                   f", past the {files.describe_size(PLATFORM_BYTES)} all the files of one [platform] may come to "
                   f"({files.describe_size(PLATFORM_BYTES - left)} read before it); name smaller files"
                   if error.code == "file-too-large" else f": {error.one_line()}")
            raise ScenarioError(f"{where} run {run['id']} names {name}{why}") from None
        left -= len(data)
        return data.decode("utf-8", errors="replace")

    def rows(run: dict[str, Any]) -> list[dict[str, Any]]:
        found = []
        for number, line in enumerate(read(run, run["metrics"]).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as error:  # also too deep, or an integer of too many digits
                why = error.msg if isinstance(error, json.JSONDecodeError) else str(error).split(":")[0]
                raise ScenarioError(f"{where} run {run['id']}: {run['metrics']} line {number} is not JSON "
                                    f"({why})") from None
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
