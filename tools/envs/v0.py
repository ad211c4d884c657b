"""verifiers v0 environments: packages exposing `load_environment(...)`, loadable by verifiers <= 0.3 only.

verifiers 0.4 imports a package's one exported Taskset; a v0 package has none, so 0.4's loader
says "taskset not found", which tells the user nothing true. rlpilot tells them what it is, and
runs it with a release that can load it: a venv of its own under its state folder (`uv venv` +
`uv pip install 'verifiers<0.4' -e ENV`), never rlpilot's interpreter and never the workspace's.

verifiers 0.3.1 (PyPI, 2026-08-24; the last before 0.4) is checked here: `import verifiers as vf`
still answers with the v0 API (aliased to `verifiers.legacy`), its `vf-eval` is the v0 CLI
(`vf-eval ENV -m MODEL -b URL -k KEYVAR -n N -r R -s -o DIR -d`), and it writes
`DIR/evals/<env>--<model>/<id>/results.jsonl` + `metadata.json`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version
from pydantic import BaseModel

from tools import process
from tools.contract import Context
from tools.envs.shortcuts import KINDS, DegeneratePolicy, ShortcutCheck, judge, missing_module, reply_text
from tools.errors import ToolError
from tools.findings import Finding
from tools.workspace import rlpilot_home

V0_REQUIREMENT = "verifiers<0.4"
INSTALL_TIMEOUT = 900.0
PROBE_TIMEOUT = 300.0
EVAL_TIMEOUT = 600.0
GOLD = "gold"
KEY_VARIABLE = "RLPILOT_LOOPBACK_KEY"  # the v0 client wants a key; the loopback policy ignores it
MODEL = "rlpilot-degenerate-replies"


def v0_message(name: str) -> str:
    return (f"{name} is a verifiers v0 environment (it defines `load_environment` and exports no Taskset); "
            "verifiers 0.4 cannot load it")


def v0_options(name: str) -> str:
    return (f"your options: keep v0 and pin `{V0_REQUIREMENT}` in the workspace (`uv add '{V0_REQUIREMENT}'`), "
            f"or port it to a Taskset with `vf-init {name}` (verifiers 0.4) and move its dataset and rubric there")


@dataclass
class Generation:
    api: str | None  # "v0", "v1", or None when the source says neither
    signs: list[str] = field(default_factory=list)

    @property
    def is_v0(self) -> bool:
        return self.api == "v0"


def detect(source: Path) -> Generation:
    """Which verifiers API the environment's source is written for, and why we think so."""
    folder = source if source.is_dir() else source.parent
    module = _module_file(source)
    signs: list[str] = []
    loads = exports_taskset = False
    if module is not None:
        try:
            tree = ast.parse(module.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        loads = _defines_load_environment(tree)
        exports_taskset = _exports_taskset(tree)
        if loads:
            signs.append(f"{module.name} defines `load_environment`")
        if exports_taskset:
            signs.append(f"{module.name} exports a Taskset")
    below = _requirement_below_v1(folder / "pyproject.toml")
    if below:
        signs.append(f"it requires {below!r}")
    if exports_taskset:
        return Generation("v1", signs)
    if loads or below:
        return Generation("v0", signs)
    return Generation(None, signs)


def _module_file(source: Path) -> Path | None:
    if source.is_file():
        return source
    if (source / "__init__.py").is_file():  # an installed package's folder
        return source / "__init__.py"
    name = None
    try:
        name = tomllib.loads((source / "pyproject.toml").read_text()).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        pass
    module = (name or source.name).replace("-", "_").lower()
    for candidate in (f"{module}.py", f"{module}/__init__.py", f"src/{module}.py", f"src/{module}/__init__.py"):
        if (source / candidate).is_file():
            return source / candidate
    return None


def _defines_load_environment(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "load_environment":
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == "load_environment" for a in node.names):
            return node.module != "verifiers"  # re-exporting verifiers' own loader is not an environment
    return False


def _exports_taskset(tree: ast.Module) -> bool:
    """A class of the module deriving from Taskset, or an `__all__` name imported from a submodule."""
    from tools.envs.package import _all_names, _imported_names, _taskset_classes

    exported = _all_names(tree) or []
    tasksets = _taskset_classes(tree)
    imported = _imported_names(tree) - {"load_environment"}
    return bool(tasksets) or any(name in imported and "Taskset" in name for name in exported)


def _requirement_below_v1(pyproject: Path) -> str | None:
    """The verifiers requirement when it excludes 0.4 (`<0.4`, `==0.3.1`, `~=0.2.0`), else None."""
    try:
        dependencies = tomllib.loads(pyproject.read_text()).get("project", {}).get("dependencies", [])
    except (OSError, tomllib.TOMLDecodeError):
        return None
    for text in dependencies:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.name.lower() == "verifiers" and requirement.specifier and not any(
                requirement.specifier.contains(Version(v), prereleases=True) for v in ("0.4.0", "0.4.1", "0.5", "1")):
            return text
    return None


# -- the runtime rlpilot makes for a v0 environment --------------------------------------------


def runtime_dir(env_dir: Path, workspace: Path, environ: Mapping[str, str]) -> Path:
    """One venv per environment folder and pyproject: a changed dependency list gets a fresh one."""
    pyproject = env_dir / "pyproject.toml"
    digest = hashlib.sha256(str(env_dir.resolve()).encode() + b"\0" + V0_REQUIREMENT.encode() + b"\0"
                            + (pyproject.read_bytes() if pyproject.is_file() else b"")).hexdigest()[:12]
    return rlpilot_home(workspace, environ) / "v0-runtimes" / f"{env_dir.name}-{digest}"


def _uv_environ(environ: Mapping[str, str]) -> dict[str, str]:
    # uv must act on our venv only, never on a venv the caller's shell has active.
    return {k: v for k, v in environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "CONDA_PREFIX")}


def ensure_runtime(env_dir: Path, workspace: Path, environ: Mapping[str, str], ctx: Context | None = None) -> Path:
    """The interpreter of rlpilot's v0 venv for this environment, made on first use; ToolError when it cannot."""
    name = env_dir.name
    if not (env_dir / "pyproject.toml").is_file():
        raise ToolError("v0-runtime-unavailable", f"{v0_message(name)}, and rlpilot can only make a v0 runtime "
                        f"from the environment's source folder ({env_dir} has no pyproject.toml)",
                        f"pass its source folder (e.g. `prime env pull OWNER/{name}`), or {v0_options(name)}")
    venv = runtime_dir(env_dir, workspace, environ)
    python = venv / "bin" / "python"
    ready = venv / ".rlpilot-ready"
    if ready.is_file() and python.exists():
        return python
    uv = process.which("uv", dict(environ)) or "uv"
    steps = [[uv, "venv", "--quiet", "--clear", "--python", sys.executable, str(venv)],
             [uv, "pip", "install", "--quiet", "--python", str(python), V0_REQUIREMENT, "-e", str(env_dir)]]
    for argv in steps:
        if ctx:
            ctx.emit({"type": "log", "line": "making the v0 runtime: " + " ".join(argv)})
        outcome = process.run(argv, cwd=env_dir, env=_uv_environ(environ), timeout=INSTALL_TIMEOUT)
        if not outcome.ok:
            why = " | ".join(line for line in outcome.stderr_tail[-3:] if line.strip()) or f"exit {outcome.returncode}"
            offline = any(w in why.lower() for w in ("offline", "dns", "connect", "network"))
            raise ToolError("v0-runtime-unavailable", f"{v0_message(name)}; rlpilot could not make a "
                            f"{V0_REQUIREMENT} runtime for it in {venv}: `{' '.join(argv[:3])} ...` failed: {why}",
                            ("uv needs the package index (or a cache holding verifiers<0.4) once; connect and run "
                             "again, or " if offline else "fix the environment's dependencies, or ") + v0_options(name))
    ready.write_text(time.strftime("%Y-%m-%dT%H:%M:%S"))
    return python


# -- checks --------------------------------------------------------------------------------------

# Run by the v0 runtime's interpreter: import, load_environment(), and the rows the checks serve.
_PROBE = """
import json, sys
try:
    import verifiers as vf
    env = vf.load_environment(sys.argv[1])
    data = getattr(env, "eval_dataset", None) or getattr(env, "dataset", None)
    rows = []
    for row in (data.select(range(min(len(data), int(sys.argv[2])))) if data is not None else []):
        prompt = row.get("prompt") or []
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"] if isinstance(prompt, list) \\
            else [{"content": prompt}]
        content = users[-1].get("content") if users else row.get("question", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        rows.append({"prompt": content or "", "answer": row.get("answer")})
    print(json.dumps({"ok": True, "verifiers": getattr(vf, "__version__", "?"), "env": type(env).__name__,
                      "rows": len(data) if data is not None else 0,
                      "columns": list(getattr(data, "column_names", []) or []), "sample": rows}))
except BaseException as error:
    print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
"""


class V0Load(BaseModel):
    verifiers: str
    env_class: str
    rows: int
    columns: list[str]
    python: str
    gold_tasks: int = 0
    gold_passed: int = 0


def check_v0(env_dir: Path, name: str, tasks: int, shortcuts: bool, ctx: Context,
             environ: Mapping[str, str]) -> tuple[V0Load | None, ShortcutCheck | None, list[Finding]]:
    """Import + `load_environment()` in the v0 runtime, then gold answers and degenerate replies through
    that release's own vf-eval against a loopback policy."""
    info = Finding(code="verifiers-v0", severity="info", file=str(env_dir), message=v0_message(name),
                   fix=f"checked with {V0_REQUIREMENT} in rlpilot's own runtime for it; {v0_options(name)}")
    try:
        python = ensure_runtime(env_dir, ctx.workspace, environ, ctx)
    except ToolError as error:
        return None, None, [Finding(code=error.code, severity="error", file=str(env_dir), message=error.message,
                                    fix=error.hint)]
    module = name.replace("-", "_")
    probe = process.run([str(python), "-c", _PROBE, module, str(tasks)], cwd=env_dir, env=_uv_environ(environ),
                        timeout=PROBE_TIMEOUT)
    answer = next((json.loads(line) for line in reversed(probe.stdout_tail) if line.startswith("{")), None)
    if not answer or not answer.get("ok"):
        why = answer["error"] if answer else (probe.last_lines(2) or f"exit {probe.returncode}")
        missing = missing_module(why)
        fix = (f"list what provides {missing!r} in the environment's dependencies, then run the check again"
               if missing else "fix what it says; it reproduces with "
               f"`{python} -c 'import verifiers as vf; vf.load_environment(\"{name}\")'`")
        return None, None, [info, Finding(code="v0-load-failed", severity="error", file=str(env_dir),
                                          message=f"load_environment() of {name} failed with verifiers<0.4: {why}",
                                          fix=fix)]
    load = V0Load(verifiers=answer["verifiers"], env_class=answer["env"], rows=answer["rows"],
                  columns=answer["columns"], python=str(python))
    findings = [info]
    if not load.rows:
        findings.append(Finding(code="v0-no-dataset", severity="error", file=str(env_dir),
                                message=f"{name}'s {load.env_class} has no dataset rows to evaluate",
                                fix="give load_environment() a dataset (or eval_dataset) with prompts"))
        return load, None, findings
    if not shortcuts:
        return load, None, findings
    answers = {row["prompt"]: str(row["answer"]) for row in answer["sample"] if row.get("answer") not in (None, "")}
    check, found = _score_replies(python, name, min(tasks, load.rows), answers, ctx, environ)
    for finding in found:
        if finding.code == "shortcut-rollouts-errored" and "EmptyModelResponseError" in finding.message:
            # verifiers v0 itself refuses an empty reply before the rubric sees it: not the environment's doing.
            finding.severity = "info"
            finding.fix = "verifiers v0 aborts a rollout with no content (EmptyModelResponseError); nothing to fix"
    findings += found
    if check is not None and answers:
        load.gold_tasks, load.gold_passed, gold = _gold(Path(check.traces), answers)
        findings += gold
    return load, check, findings


def _score_replies(python: Path, name: str, tasks: int, answers: dict[str, str], ctx: Context,
                   environ: Mapping[str, str]) -> tuple[ShortcutCheck | None, list[Finding]]:
    folder = rlpilot_home(ctx.workspace, environ) / "shortcuts" / f"{name}--v0--{time.strftime('%Y%m%d-%H%M%S')}"
    extra = {GOLD: lambda prompt: answers.get(prompt, "")} if answers else {}
    vf_eval = python.parent / "vf-eval"
    with DegeneratePolicy(extra) as policy:
        argv = [str(vf_eval), name, "-m", MODEL, "-b", policy.base_url, "-k", KEY_VARIABLE, "-n", str(tasks),
                "-r", str(len(KINDS) + len(extra)), "-c", "8", "-s", "-o", str(folder), "-d"]
        ctx.emit({"type": "log", "line": "scoring gold and degenerate replies: " + " ".join(argv)})
        outcome = process.run(argv, cwd=ctx.workspace, env={**_uv_environ(environ), KEY_VARIABLE: "loopback"},
                              timeout=EVAL_TIMEOUT,
                              on_line=lambda stream, line: ctx.emit({"type": "log", "line": line}))
        results = sorted(folder.glob("evals/*/*/results.jsonl"))
        if not outcome.ok or not results:
            return None, [Finding(code="shortcut-check-failed", severity="warning",
                                  message=f"verifiers {V0_REQUIREMENT}'s vf-eval could not score the replies (exit "
                                          f"{outcome.returncode}): {outcome.last_lines(3)}",
                                  fix="fix what it says; `rlpilot env check ENV --no-shortcuts` skips this check")]
        return judge(results[-1], policy.sent)


def _gold(results: Path, answers: dict[str, str]) -> tuple[int, int, list[Finding]]:
    """Rows whose reply was the dataset's own answer: the closest v0 has to a gold check."""
    from tools.evals.results import records

    gold = set(answers.values())
    scored = [(r.get("example_id"), r.get("reward")) for _, r, why in records(results)
              if why is None and reply_text(r).strip() in gold]
    failed = [example for example, reward in scored if not isinstance(reward, int | float) or reward < 1.0]
    findings = []
    if failed:
        findings.append(Finding(code="gold-fails", severity="warning", file=str(results),
                                message=f"{len(failed)} of {len(scored)} dataset answers, sent back as the reply, "
                                        f"do not score 1 (example_id {', '.join(map(str, failed[:5]))})",
                                fix="a v0 rubric may want a format around the answer (XML tags, \\boxed{}); if not, "
                                    "the answers or the reward are wrong"))
    return len(scored), len(scored) - len(failed), findings

