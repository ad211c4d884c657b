"""verifiers v0 support in one place (`load_environment`, verifiers <= 0.3).

The runtime.
verifiers v0 environments (`load_environment`, verifiers <= 0.3): how to tell one from its source, and the
verifiers<0.4 runtime rlpilot makes for it with uv under its state folder (never rlpilot's interpreter nor
the workspace's). Used by `env check`/`env push` (tools.envs.v0, tools.envs.package) and `eval run`.

verifiers 0.3.1 (PyPI, 2026-08-24; the last before 0.4) is checked: `import verifiers as vf` still
answers with the v0 API (aliased to `verifiers.legacy`), its `vf-eval` is the v0 CLI
(`vf-eval ENV -m MODEL -b URL -k KEYVAR -n N -r R -c C -s -o DIR -d`), and it writes
`DIR/evals/<env>--<model>/<id>/results.jsonl` + `metadata.json`.

Training.
Training a verifiers v0 environment on a prime-rl that no longer can: said by `config check`, `config
tune` and `train launch` before anything runs.

prime-rl dropped v0 environments on 2026-08-10 (commit 03f12ef, "feat!: drop v0 env compat", PR #3226,
before v0.9.0): `EnvConfig` lost its `[legacy]` block and the v0 bridge went (docs/sources.md, "prime-rl
v0.9.0 and later main"). prime-rl v0.8.0's config classes still have `LegacyEnvConfig`; main of 2026-08-21's
have none. Whether Hosted Training still trains v0 environments is not published: it runs prime-rl configs
on dedicated clusters (prime 0.18.0's `prime train`; docs/sources.md, "Hosted Training: the prime CLI
0.18.0") without saying which prime-rl.

Kept apart from tools/configs (which calls it) so it reads only plain values: the config's data, its
dialect, the checkout, the workspace.
"""

from __future__ import annotations

import ast
import hashlib
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.framework.eras import Dialect, dialect_for_prime_rl
from tools.framework.errors import BadInput, ToolError
from tools.framework.findings import Finding
from tools.framework.workspace import rlpilot_home
from tools.io import files, process
from tools.verifiers.refs import local_env_dir, parse_env_ref
from tools.verifiers.source import Grammar, base_name, module_file, parse, project, running_grammar

V0_REQUIREMENT = "verifiers<0.4"
INSTALL_TIMEOUT = 900.0
SOURCE_MARK = ".rlpilot-source"  # which environment folder a runtime was made for
RUNTIME_GRACE_S = 3600.0


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


def detect(source: Path, grammar: Grammar | None = None) -> Generation:
    """Which verifiers API the environment's source is written for, and why we think so."""
    folder = source if source.is_dir() else source.parent
    module = module_file(source)
    signs: list[str] = []
    loads = exports_taskset = False
    if module is not None:
        # Which API the code is written for does not hang on its Python floor: without a grammar from the
        # caller, the most permissive one (rlpilot's) reads it, and requires-python is not read (packaging).
        tree = parse(module, grammar or running_grammar()).tree or ast.Module(body=[], type_ignores=[])
        loads = _defines_load_environment(tree)
        exports_taskset = _exports_taskset(tree)
        if loads:
            signs.append(f"{module.name} defines `load_environment`")
        if exports_taskset:
            signs.append(f"{module.name} exports a Taskset")
    if exports_taskset:  # whatever its pyproject pins: the code decides, and the pin is not read (packaging's start-up)
        return Generation("v1", signs)
    below = _requirement_below_v1(folder)
    if below:
        signs.append(f"it requires {below!r}")
    if loads or below:
        return Generation("v0", signs)
    return Generation(None, signs)


def _defines_load_environment(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "load_environment":
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == "load_environment" for a in node.names):
            return node.module != "verifiers"  # re-exporting verifiers' own loader is not an environment
    return False


def _exports_taskset(tree: ast.Module) -> bool:
    """A class of the module deriving from Taskset, or an `__all__` name imported from a submodule.

    Read here rather than through tools.envs.package, which asks this module first (no import cycle);
    the source readers both use are in tools.verifiers.source.
    """
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    bases = {base_name(b) for node in classes for b in node.bases}
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    exported = {e.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                and isinstance(node.value, ast.List | ast.Tuple)
                for e in node.value.elts if isinstance(e, ast.Constant)}
    return "Taskset" in bases or any(name in imported and "Taskset" in str(name) for name in exported)


def _requirement_below_v1(folder: Path) -> str | None:
    """The verifiers requirement of the folder's pyproject.toml when it excludes 0.4 (`<0.4`, `==0.3.1`,
    `~=0.2.0`), else None."""
    from packaging.requirements import InvalidRequirement, Requirement  # as in source.grammar_of: start-up
    from packaging.version import Version

    dependencies = project(folder).get("dependencies")
    for text in dependencies if isinstance(dependencies, list) else []:
        if not isinstance(text, str):
            continue
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
                            + (files.read_bytes_if_present(pyproject) or b"")).hexdigest()[:12]
    return rlpilot_home(workspace, environ) / "v0-runtimes" / f"{env_dir.name}-{digest}"


def _uv_environ(environ: Mapping[str, str]) -> dict[str, str]:
    # uv must act on our venv only, never on a venv the caller's shell has active.
    return {k: v for k, v in environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "CONDA_PREFIX")}


def ensure_runtime(env_dir: Path, workspace: Path, environ: Mapping[str, str], ctx: Any = None, *,
                   confirmed: bool) -> Path:
    """The interpreter of rlpilot's v0 venv for this environment, made on first use; ToolError when it cannot.

    Making it installs packages from the index into rlpilot's state: only once the person said yes
    (`confirmed`); without it, ToolError `v0-runtime-needs-yes` says what would be installed."""
    name = env_dir.name
    if not (env_dir / "pyproject.toml").is_file():
        raise ToolError("v0-runtime-unavailable", f"{v0_message(name)}, and rlpilot can only make a v0 runtime "
                        f"from the environment's source folder ({env_dir} has no pyproject.toml)",
                        f"pass its source folder (e.g. `prime env pull OWNER/{name}`), or {v0_options(name)}")
    venv = runtime_dir(env_dir, workspace, environ)
    python = venv / "bin" / "python"
    ready = venv / ".rlpilot-ready"
    if ready.is_file() and python.exists():
        files.touch(ready)  # in use: a newer runtime of the same folder leaves it alone for a while
        return python
    if not confirmed:
        raise ToolError("v0-runtime-needs-yes", f"{v0_message(name)}; checking it needs a {V0_REQUIREMENT} runtime, "
                        f"which rlpilot would make in {venv} by installing {V0_REQUIREMENT} and the dependencies in "
                        f"{env_dir / 'pyproject.toml'} from the package index; nothing was installed",
                        "run the command again with --yes to make it (once per dependency list), or "
                        + v0_options(name))
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
    files.write_text(venv / SOURCE_MARK, str(env_dir.resolve()))
    files.write_text(ready, time.strftime("%Y-%m-%dT%H:%M:%S"))
    _remove_replaced_runtimes(venv, env_dir)
    return python


def _remove_replaced_runtimes(current: Path, env_dir: Path) -> None:
    """A changed pyproject gets a fresh runtime (a few hundred MB); the ones it replaces go, unless one
    was used within the hour (an eval of the old dependencies may still be running in it)."""
    source = str(env_dir.resolve())
    for other in current.parent.glob(f"{env_dir.name}-*"):
        mark, ready = other / SOURCE_MARK, other / ".rlpilot-ready"
        try:
            replaced = other != current and files.read_text_bounded(mark) == source
            idle = time.time() - (ready.stat().st_mtime if ready.exists() else mark.stat().st_mtime)
        except (OSError, BadInput):  # a runtime another rlpilot is making or removing: left for a later pass
            continue
        if replaced and idle > RUNTIME_GRACE_S:
            files.remove(other, best_effort=True)

DROPPED = "2026-08-10"
CODE = "env-is-v0"
_LEGACY_MARK = "LegacyEnvConfig"  # the `[legacy]` block's class, in prime-rl's config source up to the drop
# Every dialect's spelling of the environments a config trains and evaluates.
_ENTRY_LISTS = (("env",), ("orchestrator", "env"), ("orchestrator", "train", "env"),
                ("orchestrator", "train", "source"), ("orchestrator", "eval", "env"),
                ("orchestrator", "eval", "source"))
HOSTED = ("Hosted Training: unknown. It runs prime-rl configs on dedicated clusters (prime 0.18.0's `prime train`) "
          "without saying which prime-rl, so whether that prime-rl is from "
          f"before {DROPPED} is not known; `prime train validate CONFIG` asks the platform")


def environment_ids(data: dict[str, Any]) -> list[str]:
    """The environment (taskset) ids a config names, in every dialect's spelling."""
    ids = []
    for path in _ENTRY_LISTS:
        entries: Any = data
        for key in path:
            entries = entries.get(key) if isinstance(entries, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            taskset = entry.get("taskset") or (entry.get("env") or {}).get("taskset") or {}
            found = entry.get("id") or (taskset.get("id") if isinstance(taskset, dict) else None)
            if isinstance(found, str) and found not in ids:
                ids.append(found)
    return ids


def checkout_drops_v0(path: Path, version: str) -> bool | None:
    """Whether a prime-rl checkout is from the drop or later; None when it cannot be told."""
    dialect = dialect_for_prime_rl(version)
    if dialect == Dialect.V09:
        return True
    if dialect != Dialect.CURRENT:
        return False
    # v0.8.0 (2026-08-06) and main from 2026-08-10 share a version number: its config source tells.
    sources = [*path.glob("packages/prime-rl-configs/src/**/*.py"), *path.glob("src/prime_rl/**/config*.py")]
    if not sources:
        return None
    try:
        return not any(_LEGACY_MARK in files.read_text_bounded(source, files.SOURCE_LIMIT) for source in sources)
    except BadInput:  # a source that is no module of prime-rl's (a FIFO, megabytes) tells nothing
        return None


def v0_training_findings(data: dict[str, Any], dialect: Dialect | None, workspace: Path, target: str | None,
                         prime_rl_version: str | None, prime_rl_path: str | None) -> list[Finding]:
    """One finding per v0 environment the config would train where v0 is gone (an error) or may be (a
    warning). Environments without a source folder in the workspace are not judged here."""
    v0 = [(name, folder) for name in environment_ids(data)
          if (folder := local_env_dir(workspace, parse_env_ref(name))).is_dir() and detect(folder).is_v0]
    if not v0:
        return []
    if target == "hosted":
        drops, runner = None, "a hosted run goes to Hosted Training, whose prime-rl is not published"
    elif prime_rl_version and prime_rl_path:
        drops = checkout_drops_v0(Path(prime_rl_path), prime_rl_version)
        runner = f"the prime-rl {prime_rl_version} checkout at {prime_rl_path}" + (
            " is from after it" if drops else " may be from after it (its config source does not say)"
            if drops is None else " still has v0 support")
    elif dialect == Dialect.V09:
        drops, runner = True, "this config is written for prime-rl v0.9 or later, which have no v0 support"
    elif dialect == Dialect.CURRENT:
        drops, runner = None, ("this config is prime-rl-current, which v0.8.0 (with v0 support) and main from "
                               f"{DROPPED} on (without) both read")
    else:
        drops, runner = False, ""
    if drops is False:
        return []
    return [Finding(code=CODE, severity="error" if drops else "warning", file=str(folder),
                    message=f"{name} ({folder}) is a verifiers v0 environment (load_environment), and prime-rl "
                            f"dropped v0 environments on {DROPPED} (#3226: the `[legacy]` block and the v0 bridge "
                            f"are gone; v0.9.0 too); {runner}",
                    fix=f"port it to a Taskset (verifiers 0.4, `vf-init {folder.name}`: its dataset becomes the "
                        "Taskset's load(), its rubric functions @vf.reward methods of its Task, and the config names "
                        "it as env.taskset.id), or train it with a prime-rl from before "
                        f"{DROPPED} (v0.8.0: `git checkout v0.8.0` in the checkout). {HOSTED}")
            for name, folder in v0]
