"""`rlpilot env check`: the playbook's environment-quality rules, before any model is spent.

- Gold answers must score and untouched (no-op) tasks must not: verifiers 0.4's model-free
  `vf-validate`, run on this machine (`--runtime.type subprocess`; its default is a Prime sandbox).
- Rewards must be deterministic checks or judges, not keyword heuristics: reward functions are
  read (never imported) and substring or keyword matching in them is reported.
- Environments must be self-contained after install: code that needs a service the user must
  run (a database, a local server) is reported.
- Degenerate replies (empty, the prompt echoed, a bare "yes", ...) must not earn reward: they are
  scored by the environment's own rubric through the real `vf-eval` (tools/envs/shortcuts.py).
Each finding names its file and line.

What the source says comes first, and nothing is run that it rules out: a folder that is no
environment is refused in one line; a package that cannot build (tools/envs/build.py) or does not
parse (in the grammar of the Python its `requires-python` names) is named and not loaded; the roles
its EnvConfig declares (tools/verifiers/source.py) are the ones the shortcut pass gives flags to.
"""

from __future__ import annotations

import ast
import json
import os
import re
import time
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.envs.identity import Identity, Reading, identify
from tools.envs.rewards import call_name, keyword_findings
from tools.envs.shortcuts import ShortcutCheck, check_shortcuts
from tools.envs.v0 import V0Load, check_v0
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.errors import BadInput
from tools.framework.findings import Finding, errors, render
from tools.framework.timing import Stopwatch, TimingSplit
from tools.framework.workspace import Interpreter, rlpilot_home, search_path, workspace_interpreter
from tools.io import files, process
from tools.verifiers.refs import local_env_dir, parse_env_ref, shown
from tools.verifiers.source import (
    Grammar,
    grammar_of,
    interpreter_grammar,
    module_origin,
    parse,
    project,
    read_roles,
)
from tools.verifiers.v0 import detect

# Client libraries of services someone has to run next to the environment.
SERVICE_MODULES = {"redis", "psycopg", "psycopg2", "pymongo", "pymysql", "mysql", "elasticsearch", "qdrant_client",
                   "weaviate", "pika", "kafka", "sqlalchemy", "chromadb", "pinecone", "milvus", "pymilvus"}
# chromadb runs in the environment's own process (PersistentClient, EphemeralClient) unless it is told to reach a
# server (docs.trychroma.com, "Running Chroma in Client-Server Mode").
_EMBEDDED_MODES = {"chromadb": {"HttpClient", "AsyncHttpClient", "CloudClient"}}
_SERVICE_URL = re.compile(r"(?i)\b(?:(?:redis|postgres(?:ql)?|mysql|mongodb|amqp|kafka)://|"
                          r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+)?)")
_SERVICE_VARIABLE = re.compile(r"(?i)_(URL|URI|HOST|PORT|ENDPOINT|DSN)$")
_MAX_PER_CODE = 5
VALIDATE_TIMEOUT = 600
_NOT_FOUND = "not found (tried to import"  # verifiers 0.4's loader, on any ModuleNotFoundError while importing
# A shortcut is a property of the rubric, not of one task: a few tasks show it, and each costs
# one rollout per degenerate reply.
SHORTCUT_TASKS = 5
# The HOME of the check's children, in rlpilot's state and kept between checks (never the person's). verifiers
# 0.4 keeps its harness's chat program under ~/.cache/verifiers (SubprocessRuntime.scripts_dir) and uv keys
# the program's environment by that path: under a HOME new to each check, every check made it again (`uv sync
# --script`, then each rollout byte-compiling its imports: 35 CPU-s for a 30-rollout check instead of 30) and
# left one more environment in the person's uv cache.
CHILDREN_HOME = "home"


class EnvCheckInput(BaseModel):
    env: Annotated[str, Arg(positional=True),
                   Field(description="The environment: a local name (environments/<name>), its folder, or an "
                                     "installed package name.")]
    num_examples: Annotated[int, Arg(short="-n"), Field(ge=1, description="Tasks vf-validate checks.")] = 20
    shortcuts: Annotated[bool, Arg(cli_only=True), Field(
        description=f"Also score degenerate replies (empty, echoed prompt, \"yes\", ...) on up to {SHORTCUT_TASKS} "
                    "tasks with vf-eval and a loopback policy; --no-shortcuts skips it (a minute or two).")] = True
    yes: Annotated[bool, Arg(user_decision=True), Field(
        description="Let the check use the network (the user confirmed): a verifiers v0 environment's verifiers<0.4 "
                    "runtime is made from the package index, and a dataset not in the local cache is downloaded.")] \
        = False


class Validation(BaseModel):
    tasks: int
    valid: int
    gold_failed: int
    noop_passed: int
    unchecked: int
    errored: int
    results: str


class EnvCheckResult(ToolResult):
    env: str
    source: str
    taskset_id: str
    validation: Validation | None
    shortcuts: ShortcutCheck | None = None
    api: str | None = Field(None, description="The verifiers API the source is written for: v0 "
                                             "(load_environment, verifiers <= 0.3) or v1 (a Taskset, 0.4).")
    v0: V0Load | None = Field(None, description="A v0 environment loaded in rlpilot's verifiers<0.4 runtime.")
    identity: Identity | None = Field(None, description="What the input is, as verifiers would load it, on what "
                                                       "evidence: said first.")
    roles: list[str] | None = Field(None, description="The roles its EnvConfig declares (verifiers 0.4), each played "
                                                      "by a chat loop in the shortcut check; None when unread.")
    findings: list[Finding]
    timing: TimingSplit = Field(description="Where the time went: vf-validate's and vf-eval's own (their "
                                            "processes' wall times), and rlpilot's around them.")

    def render(self) -> str:
        lines = [f"env        {self.taskset_id}  ({self.source})"]
        if self.identity:
            lines.append(f"is         {self.identity.shown()}")
        if self.roles is not None and self.api != "v0":
            lines.append(f"roles      {', '.join(self.roles) or 'none'}")
        if self.v0:
            v = self.v0
            gold = f"; gold answers scoring 1: {v.gold_passed}/{v.gold_tasks}" if v.gold_tasks else ""
            lines.append(f"v0         load_environment() -> {v.env_class} with {v.rows} rows (verifiers {v.verifiers},"
                         f" {v.python}){gold}")
        if self.validation:
            v = self.validation
            lines.append(f"validate   {v.valid}/{v.tasks} valid; gold failed {v.gold_failed}, no-op passed "
                         f"{v.noop_passed}, unchecked {v.unchecked}, errored {v.errored}  ({v.results})")
        if self.shortcuts:
            scored = ", ".join(f"{s.kind} {s.max:g}" for s in self.shortcuts.scores if s.max is not None)
            lines.append(f"shortcuts  best reward of each degenerate reply over {self.shortcuts.tasks} tasks: "
                         f"{scored or 'none scored'}  ({self.shortcuts.traces})")
        if not self.findings:
            lines.append("no findings")
        lines += [render(f) for f in self.findings]
        lines.append(f"took       {self.timing.seconds:.0f} s: {self.timing.render()}")
        return "\n".join(lines)

    def exit_code(self) -> int:
        return 1 if errors(self.findings) else 0


def env_check(args: EnvCheckInput, ctx: Context) -> EnvCheckResult:
    """What is read from the source comes first (can it build, does it parse, which roles), then what
    must load it (vf-validate, the shortcut check), and only while nothing before rules it out."""
    clock = Stopwatch(ctx.started)
    result = _check(args, ctx, clock)
    if not args.yes:
        result.findings = [_uncached_dataset(finding, args.env) for finding in result.findings]
    result.timing = clock.split()  # again, now that the check is done
    return result


# What `datasets.load_dataset` raises for a Hub dataset found neither in its cache nor on the network (5.x, load.py:
# "Couldn't reach 'NAME' on the Hub (OfflineModeIsEnabled)"; 2.x: "Couldn't reach the Hugging Face Hub for dataset
# 'NAME': Offline mode is enabled."). A check without --yes runs its children offline, so this is a dataset never
# downloaded here, whichever part (vf-validate, the v0 load, the shortcut pass) met it.
_DATASET_UNREACHED = re.compile(r"Couldn't reach (?:the Hugging Face Hub for dataset )?'([^']+)'")


def _uncached_dataset(finding: Finding, env: str) -> Finding:
    """An error an offline check met loading a dataset, said as that, with the flag that lets it download."""
    found = _DATASET_UNREACHED.search(finding.message) if finding.severity == "error" else None
    if found is None:
        return finding
    return finding.model_copy(update={
        "code": "dataset-not-cached",
        "message": f"the dataset '{found.group(1)}' is not in the local Hugging Face cache, and env check runs "
                   f"offline unless you pass --yes ({finding.message})",
        "fix": f"check it with the network allowed: `rlpilot env check {env} --yes` downloads the dataset into the "
               "cache once; later checks read it from there, offline"})


def _check(args: EnvCheckInput, ctx: Context, clock: Stopwatch) -> EnvCheckResult:
    interpreter = workspace_interpreter(ctx.workspace)
    state = rlpilot_home(ctx.workspace)
    # Its children run the environment's code: none of the person's keys, and no network unless they said yes.
    environ = process.minimal_environment({"PATH": search_path(interpreter), "RLPILOT_HOME": str(state),
                                           "HOME": str(files.make_dirs(state / CHILDREN_HOME, private=True))},
                                          offline=not args.yes)
    with clock.part("reading the source"):
        source = _find_source(args.env, ctx, interpreter.python, environ)
        taskset_id = _taskset_id(args.env, source)
        grammar = grammar_of(source, interpreter_grammar(interpreter.python))
        reading = identify(source, grammar, taskset_id)
        identity = reading.identity
        taskset_id = identity.env_id or taskset_id
        if identity.kind == "not-an-environment":  # no install advice: there is nothing here to install
            raise BadInput("not-an-environment", f"{source} is {identity.shown()}",
                           "pass an environment's folder, or make one with `vf-init NAME`")
        _stage(ctx, 0, "reading its source")  # not before: a folder that is no environment gets its one line alone
        findings = list(reading.blockers) + source_findings(reading, grammar)
        api = identity.api or detect(source, grammar).api
    result = EnvCheckResult(env=args.env, source=str(source), taskset_id=taskset_id, api=api, identity=identity,
                            validation=None, findings=findings, timing=clock.split())
    findings = result.findings  # pydantic keeps a copy: what is added below goes there
    if errors(reading.blockers) or any(f.severity == "error" and f.code == "syntax-error" for f in findings):
        return result  # what would load it could only say it does not load
    module = Path(identity.module_file) if identity.module_file else None
    if api == "v0":
        # verifiers 0.4's vf-validate and vf-eval would only say "taskset not found".
        _stage(ctx, 1, "scoring gold and degenerate replies in a v0 runtime")
        result.v0, result.shortcuts, found = check_v0(source, taskset_id, args.num_examples, args.shortcuts, ctx,
                                                      environ, clock, yes=args.yes)
        findings += found
        return result
    with clock.part("reading its roles"):
        roles = read_roles(source, grammar, interpreter.python)
    result.roles = roles.names
    if roles.names is None:
        findings.append(Finding(code="roles-unknown", severity="info", file=str(module or source),
                                message=f"the roles of {taskset_id} could not be read: {roles.why}",
                                fix="the shortcut check passes no role flags, so each role keeps its own harness and "
                                    "runtime (verifiers' default runtime is a Prime sandbox)"))
    vf_validate = process.which("vf-validate", environ)
    if not vf_validate:
        findings.append(Finding(code="validate-unavailable", severity="warning",
                                message="vf-validate is not installed (verifiers >= 0.4 ships it)",
                                fix="add verifiers >= 0.4 to the workspace to check gold and no-op answers"))
        return result
    import_name = identity.module or taskset_id.replace("-", "_")
    with clock.part("finding where it is installed"):
        from_source = module_origin(interpreter.python, import_name, environ) is None
    if from_source:
        if not source.is_dir() or module is None:
            raise BadInput("env-not-installed", f"{taskset_id} is not installed in {interpreter.python}",
                           "install it (`rlpilot env install ENV`), or pass its source folder")
        # Checked from its source folder: vf-validate imports the module by name, not by install.
        root = module.parent.parent if module.name == "__init__.py" else module.parent
        environ["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [environ.get("PYTHONPATH")])])
    _stage(ctx, 1, "vf-validate: gold and no-op answers")
    result.validation, checks = _validate(vf_validate, taskset_id, args.num_examples, ctx, environ, clock)
    if from_source:
        # Its module is on the path, so what verifiers calls "not found" is a module it imports: one of its
        # dependencies, which are not installed either. That is the one story, not "taskset not found".
        unimportable = [c for c in checks if c.code == "validate-error" and _NOT_FOUND in c.message]
        findings.append(_not_installed(taskset_id, source, interpreter, ctx.workspace,
                                       result.validation is not None, bool(unimportable)))
        checks = [c for c in checks if c not in unimportable]
    findings += checks
    vf_eval = process.which("vf-eval", environ) if args.shortcuts and result.validation is not None else None
    if vf_eval:
        _stage(ctx, 2, "scoring degenerate replies")
        # The one part that cannot run offline: verifiers prepares the harness's uv script with UV_OFFLINE off.
        result.shortcuts, found = check_shortcuts(vf_eval, taskset_id, min(args.num_examples, SHORTCUT_TASKS),
                                                  rlpilot_home(ctx.workspace, environ) / "shortcuts", ctx,
                                                  process.online(environ), roles, clock)
        findings += found
    return result


def source_findings(reading: Reading, grammar: Grammar | None = None) -> list[Finding]:
    """Rewards and services in what loading the entry point imports: a helper script beside it never runs."""
    return [finding for path in reading.files for finding in scan_file(path, grammar)]


def _stage(ctx: Context, done: int, label: str) -> None:
    """A real check takes a minute: each surface says which of its three parts is running."""
    ctx.emit({"type": "progress", "done": done, "total": 3, "label": f"env check: {label}"})


def _not_installed(taskset_id: str, source: Path, interpreter: Interpreter, workspace: Path, validated: bool,
                   unimportable: bool) -> Finding:
    python = interpreter.python
    if interpreter.is_fallback:
        # rlpilot never installs into its own environment (README.md), so the fix makes the workspace one.
        where = f"the workspace, which has no Python environment of its own (only rlpilot's, {python})"
        if source.parent == (workspace / "environments").resolve():  # what `env install NAME` takes
            install = f"give it one and install there: `rlpilot env install {source.name} --create-venv`"
        else:
            install = (f"give it one (in {workspace}: `uv init --bare` where there is no pyproject.toml, then "
                       f"`uv venv`), then `uv pip install --python {workspace / '.venv' / 'bin' / 'python'} "
                       f"-e {source}`")
    else:
        where = f"the workspace's Python ({python})"
        install = f"`uv pip install --python {python} -e {source}`"
    if not unimportable:
        how = "validated from its source folder" if validated else "checked from its source folder"
        return Finding(code="not-installed", severity="warning", file=str(source),
                       message=f"{taskset_id} is not installed in {where}; it was {how}",
                       fix=f"install it before an eval: {install}")
    dependencies = [d for d in project(source).get("dependencies", []) if isinstance(d, str)
                    and not d.lower().startswith("verifiers")]
    needs = f" (it declares {', '.join(dependencies)})" if dependencies else ""
    return Finding(code="not-installed", severity="error", file=str(source),
                   message=f"{taskset_id} is not installed in {where}, and it could not be "
                           f"loaded from its source folder: a module it imports is not installed either{needs}",
                   fix=f"install it with its dependencies, then check again: {install}")


def _find_source(env: str, ctx: Context, python: Path, environ: dict[str, str]) -> Path:
    """The environment's folder (or module file). A folder named by a model or a chat is confined
    to the workspace, links included: its code is scanned and imported."""
    workspace = ctx.workspace
    as_path = Path(env) if Path(env).is_absolute() else workspace / env
    try:
        if as_path.is_dir():
            return ctx.resolve_folder(as_path)
    except OSError as error:  # a name too long for a file name, a folder we may not read
        raise BadInput("env-not-found", f"{shown(env)} is not an environment folder ({error.strerror})",
                       "pass an environment folder, or a local environment name") from None
    if env.startswith((".", "/", "~")) or env.count("/") > 1:
        raise BadInput("env-not-found", f"{as_path} is not a folder",
                       "pass an environment folder, or a local environment name")
    ref = parse_env_ref(env)  # a Hub id owner/name[@version] installs as the module of `name`
    local = local_env_dir(workspace, ref)
    if local.is_dir():
        return ctx.resolve_folder(local)
    origin = module_origin(python, ref.folder_name, environ)
    if origin is None or not origin.is_file():
        raise BadInput("env-not-found", f"no environment {env!r}: not in {workspace / 'environments'} and not "
                       f"installed in {python}", "pass its folder, or install it with `rlpilot env install`")
    return origin.parent if origin.name == "__init__.py" else origin


def _taskset_id(env: str, source: Path) -> str:
    name = project(source).get("name")
    if name:
        return str(name)
    return Path(env).name.split("@")[0].replace("_", "-")


def _validate(vf_validate: str, taskset_id: str, limit: int, ctx: Context, environ: dict[str, str],
              clock: Stopwatch) -> tuple[Validation | None, list[Finding]]:
    folder = rlpilot_home(ctx.workspace, environ) / "validate"
    name = f"{taskset_id}--validate--{time.strftime('%Y%m%d-%H%M%S')}"
    argv = [vf_validate, taskset_id, "--runtime.type", "subprocess", "-n", str(limit), "--no-rich",
            "--output-dir", str(folder), "--run.name", name]
    ctx.emit({"type": "log", "line": "running " + " ".join(argv)})

    def log(stream: str, line: str) -> None:
        if stream == "stderr":  # stdout repeats summary.json, which the result already holds
            ctx.emit({"type": "log", "line": line})

    outcome = process.run(argv, cwd=ctx.workspace, env=environ, timeout=VALIDATE_TIMEOUT, on_line=log)
    clock.program("vf-validate", outcome.seconds)
    results = folder / name / "results.jsonl"
    if not outcome.ok or not results.is_file():
        return None, [Finding(code="validate-error", severity="error",
                              message=f"vf-validate failed (exit {outcome.returncode}): {outcome.said(3)}",
                              fix="fix what it says; `vf-validate ID --runtime.type subprocess -n 2` reproduces it")]
    with files.BoundedLines(results) as lines:  # one line per task, each bounded: a runaway line is refused
        rows = [json.loads(line) for line in lines if line.strip()]
    return _judge_validation(rows, results)


def _judge_validation(rows: list[dict], results: Path) -> tuple[Validation, list[Finding]]:
    def check(row: dict, name: str) -> dict:
        return row.get(name) if isinstance(row.get(name), dict) else {}

    gold_failed = [r for r in rows if check(r, "gold").get("reason") == "invalid"]
    noop_passed = [r for r in rows if check(r, "noop").get("reason") == "invalid"]
    unchecked = [r for r in rows if check(r, "gold").get("reason") == "unchecked"]
    errored = [r for r in rows if r.get("reason") in ("error", "timeout")]
    validation = Validation(tasks=len(rows), valid=sum(r.get("valid") is True for r in rows),
                            gold_failed=len(gold_failed), noop_passed=len(noop_passed), unchecked=len(unchecked),
                            errored=len(errored), results=str(results))

    def tasks(group: list[dict]) -> str:
        shown = ", ".join(str(r.get("index")) for r in group[:_MAX_PER_CODE])
        return f"task idx {shown}" + (f" and {len(group) - _MAX_PER_CODE} more" if len(group) > _MAX_PER_CODE else "")

    findings = []
    if gold_failed:
        findings.append(Finding(code="gold-fails", severity="error", file=str(results),
                                message=f"{len(gold_failed)} of {len(rows)} gold answers do not pass "
                                        f"({tasks(gold_failed)})",
                                fix="fix the verifier or the answers: a gold answer that fails looks like a task "
                                    "too hard to learn"))
    if noop_passed:
        rewards = sorted({check(r, "noop").get("reward") for r in noop_passed}, key=str)
        findings.append(Finding(code="noop-passes", severity="error", file=str(results),
                                message=f"{len(noop_passed)} untouched tasks already pass (reward {rewards}; "
                                        f"{tasks(noop_passed)})",
                                fix="make the reward depend on the model's answer"))
    if errored:
        findings.append(Finding(code="validate-error", severity="error", file=str(results),
                                message=f"{len(errored)} tasks errored in validation ({tasks(errored)}): "
                                        f"{errored[0].get('error')}",
                                fix="fix the task's setup or scoring error"))
    if unchecked:
        findings.append(Finding(code="no-gold-check", severity="warning", file=str(results),
                                message=f"{len(unchecked)} tasks have no model-free gold check ({tasks(unchecked)})",
                                fix="implement Task.validate() to score the reference answer"))
    return validation, findings


def scan_file(path: Path, grammar: Grammar | None = None) -> list[Finding]:
    """Keyword-heuristic rewards and background services in one source file, parsed with the grammar of
    the Python the environment is written for."""
    parsed = parse(path, grammar)
    if parsed.error is not None:
        version = ".".join(map(str, (grammar or grammar_of(path)).version))
        return [Finding(code="syntax-error", severity="error", file=str(path), line=parsed.error.lineno,
                        message=f"does not parse as Python {version}: {parsed.error.msg}", fix="fix the syntax error")]
    if parsed.tree is None:
        return [Finding(code="source-unread", severity="info", file=str(path), message=f"not read: {parsed.unread}",
                        fix="its reward and service checks did not run; run rlpilot with that Python to read it")]
    return keyword_findings(parsed.tree, path) + _service_findings(parsed.tree, path)


def _service_findings(tree: ast.Module, path: Path) -> list[Finding]:
    findings = []

    def add(node: ast.AST, what: str) -> None:
        findings.append(Finding(code="background-service", severity="warning", file=str(path), line=node.lineno,
                                message=f"needs a service the user must run: {what}",
                                fix="keep the environment self-contained after install (an in-process or bundled "
                                    "resource), or start and stop the service inside the task's setup"))

    called = {call_name(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    # A client library with an in-process mode is a service only where its server client is made.
    embedded = {module for module, servers in _EMBEDDED_MODES.items() if not called & servers}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in SERVICE_MODULES - embedded:
                    add(node, f"imports `{name}`, a client of a separately run service")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SERVICE_URL.search(node.value):
            add(node, f"connects to `{_SERVICE_URL.search(node.value).group(0)}`")
        elif isinstance(node, ast.Call) and call_name(node) in ("getenv", "get") and node.args \
                and _is_env_read(node) and isinstance(node.args[0], ast.Constant) \
                and _SERVICE_VARIABLE.search(str(node.args[0].value)):
            add(node, f"reads the service address from ${node.args[0].value}")
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.slice, ast.Constant) \
                and _SERVICE_VARIABLE.search(str(node.slice.value)):
            add(node, f"reads the service address from ${node.slice.value}")
    return findings


def _is_env_read(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and (func.attr == "getenv" or _is_environ(func.value))


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" or isinstance(node, ast.Name) \
        and node.id == "environ"
