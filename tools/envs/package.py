"""Is this folder a package the Hub will list as a verifiers 0.4 environment?

Checked before `prime env push` builds and uploads anything:
- `pyproject.toml` with `[project].name` (the CLI refuses to push without it);
- a module named after the project (`-` -> `_`, as verifiers imports it) whose `__all__`
  exports exactly one Taskset subclass: verifiers 0.4's plugin rule
  (verifiers/v1/utils/loaders.py, `taskset_class`). The module is imported the way the Hub loads
  it, by verifiers' own loader in the workspace's interpreter (a subprocess), so any class whose
  MRO reaches `Taskset` counts, a generic base `vf.Taskset[Task, Config]` included. Where it
  cannot be imported here (verifiers or a dependency not installed), the source is read instead
  and a warning says so: that alone never stops a push;
- a verifiers requirement with a floor of 0.2 or more: prime 0.18 lists a bare `verifiers`, or a
  lower floor, as "legacy verifiers v0", and a package with none as "Unclassified"
  (prime_cli/utils/environment_runtime.py).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel

from tools.envs.build import build_findings, pyproject_data
from tools.envs.identity import UNDECLARED, Identity, identify
from tools.framework.errors import BadInput
from tools.framework.findings import Finding, errors
from tools.io import files, process
from tools.verifiers.source import base_name, exported_names, parse

FIRST_V1_VERIFIERS = Version("0.2.0")
SUGGESTED_REQUIREMENT = "verifiers>=0.4"


class PackageReport(BaseModel):
    path: str
    name: str | None
    version: str | None
    module: str | None
    findings: list[Finding]
    api: str | None = None  # "v0" for a load_environment package (verifiers <= 0.3), else the v1 checks apply
    identity: Identity | None = None  # what it is, as verifiers would load it

    @property
    def ok(self) -> bool:
        return not errors(self.findings)


IMPORT_TIMEOUT = 180.0

# Run by the workspace's interpreter: verifiers' own plugin loader, on the folder holding the
# module. Its exceptions are the loader's verdicts (AttributeError: no `__all__`, TypeError: no
# Taskset subclass, ValueError: several); anything raised while importing means "cannot tell here".
_LOADER_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
try:
    from verifiers.v1.utils import loaders
    loaders.import_taskset(sys.argv[2])
except BaseException as error:
    print(json.dumps({"verdict": "unimportable", "message": f"{type(error).__name__}: {error}"}))
    raise SystemExit(0)
try:
    found = loaders.taskset_class(sys.argv[2])
except (AttributeError, TypeError, ValueError) as error:
    print(json.dumps({"verdict": type(error).__name__, "message": str(error)}))
else:
    print(json.dumps({"verdict": "ok", "message": found.__name__}))
"""
_LOADER_VERDICTS = {"AttributeError": "no-all", "TypeError": "no-taskset-export", "ValueError": "several-tasksets"}


def check_package(env_dir: Path, python: Path | None = None, environ: Mapping[str, str] | None = None) -> PackageReport:
    """Check the package in `env_dir`; with `python`, its Taskset export is judged by importing it there."""
    report = PackageReport(path=str(env_dir), name=None, version=None, module=None, findings=[])

    def finding(code: str, message: str, fix: str, severity: Literal["error", "warning"] = "error") -> None:
        report.findings.append(Finding(code=code, severity=severity, message=message, fix=fix))

    pyproject = env_dir / "pyproject.toml"
    try:
        data = pyproject_data(env_dir)
    except BadInput as refused:
        if refused.code not in files.NOT_TOML:
            raise
        finding("bad-pyproject", refused.message, refused.hint)
        return report
    if data is None:
        finding("no-pyproject", f"{pyproject} does not exist",
                "create the environment with `vf-init NAME`, or point --path at its folder")
        return report
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    report.name, report.version = project.get("name"), project.get("version")
    if not report.name:
        finding("no-project-name", f"{pyproject} has no [project].name", 'add `name = "my-env"` under [project]')
        return report
    if not report.version:
        finding("no-project-version", f"{pyproject} has no [project].version",
                'add `version = "0.1.0"` under [project]: the Hub keeps one entry per version')

    unbuildable = build_findings(env_dir)
    if errors(unbuildable):  # named before anything else: nothing after it could be true of a package not built
        report.findings += unbuildable
        return report
    module_name = report.name.replace("-", "_").lower()
    reading = identify(env_dir)
    report.identity = reading.identity
    if reading.identity.kind == "not-an-environment":
        finding("not-an-environment", f"{env_dir} is {reading.identity.shown()}",
                "push an environment's folder (one with load_environment or an exported Taskset)")
        return report
    # What stops it loading comes first; a missing verifiers requirement is said below, with its floor.
    blockers = [b for b in reading.blockers if b.code != UNDECLARED]
    report.findings += blockers
    module_file = Path(reading.identity.module_file) if reading.identity.module_file else None
    from tools.verifiers.v0 import V0_REQUIREMENT, detect, v0_message, v0_options

    if blockers:
        module_file = None  # the export checks would only restate why it does not load
    elif module_file is not None and (reading.identity.api == "v0" or detect(env_dir).is_v0):
        # Published as what it is (`prime env push --runtime v0`): a Taskset and a 0.4 floor would be wrong here.
        report.api, report.module = "v0", str(module_file.relative_to(env_dir))
        finding("verifiers-v0", v0_message(report.name), f"it is published as a legacy verifiers v0 environment "
                f"(runtime {V0_REQUIREMENT}); {v0_options(report.name)}", severity="info")
        return report
    elif module_file is not None:
        report.module = str(module_file.relative_to(env_dir))
        search_root = module_file.parent.parent if module_file.name == "__init__.py" else module_file.parent
        verdict = _imported_verdict(python, search_root, module_name, environ) if python else None
        if verdict and verdict[0] == "unimportable":
            finding("package-not-importable", f"{module_name} could not be imported with {python} ({verdict[1]}), "
                    "so its Taskset export was read from the source instead", "install the environment's "
                    f"dependencies in the workspace (`rlpilot env install {report.name}`) for the exact check",
                    severity="warning")
            verdict = None
        problem = verdict if verdict else _taskset_export_problem(module_file)
        if problem and problem[0] != "ok":
            finding(problem[0], problem[1], "export the Taskset subclass, and only it: "
                    "`__all__ = [\"MyTaskset\"]`")

    finding_for_verifiers = _verifiers_problem(project.get("dependencies", []))
    if finding_for_verifiers and reading.identity.api == "v0" and finding_for_verifiers[0] != \
            "no-verifiers-requirement":
        finding_for_verifiers = None  # a v0 environment is published as v0: a floor below 0.2 is what it needs
    if finding_for_verifiers:
        code, message = finding_for_verifiers
        finding(code, message, f"declare `{SUGGESTED_REQUIREMENT}` in [project].dependencies of {pyproject}")
    return report


def _imported_verdict(python: Path, search_root: Path, module: str,
                      environ: Mapping[str, str] | None) -> tuple[str, str]:
    """("ok", class name), a loader finding (code, message), or ("unimportable", why)."""
    probe = process.run([python, "-c", _LOADER_PROBE, search_root, module], cwd=search_root, env=environ,
                        timeout=IMPORT_TIMEOUT)
    try:
        answer = json.loads(probe.stdout_tail[-1])
    except (IndexError, ValueError):
        why = "timed out" if probe.timed_out else " | ".join(probe.stderr_tail[-2:]) or f"exit {probe.returncode}"
        return "unimportable", why
    return _LOADER_VERDICTS.get(answer["verdict"], answer["verdict"]), answer["message"]


def _taskset_export_problem(module_file: Path) -> tuple[str, str] | None:
    parsed = parse(module_file)
    if parsed.error is not None:
        return "module-syntax-error", f"{module_file} does not parse: {parsed.error.msg} (line {parsed.error.lineno})"
    tree = parsed.tree
    if tree is None:
        return None  # written for a newer Python than rlpilot's: verifiers' loader is the check there
    exported = exported_names(tree)
    if exported is None:
        return "no-all", f"{module_file.name} defines no literal `__all__`; verifiers loads the Taskset it exports"
    tasksets = _taskset_classes(tree)
    imported = _imported_names(tree)
    found = [name for name in exported if name in tasksets]
    unknown = [name for name in exported if name in imported]
    if len(found) > 1:
        return "several-tasksets", f"`__all__` of {module_file.name} exports {len(found)} Taskset subclasses " \
                                   f"({', '.join(found)}); verifiers refuses more than one"
    if not found and not unknown:
        return "no-taskset-export", f"`__all__` of {module_file.name} exports no Taskset subclass " \
                                    f"(found {exported})"
    return None


def _taskset_classes(tree: ast.Module) -> set[str]:
    """Classes of the module that derive from `Taskset` (`vf.Taskset`, `vf.Taskset[Task, Config]`, or a
    local subclass)."""
    found: set[str] = set()
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    changed = True
    while changed:
        changed = False
        for node in classes:
            bases = {base_name(b) for b in node.bases}
            if node.name not in found and ("Taskset" in bases or bases & found):
                found.add(node.name)
                changed = True
    return found


def _imported_names(tree: ast.Module) -> set[str]:
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def _verifiers_problem(dependencies: list[str]) -> tuple[str, str] | None:
    for text in dependencies:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.name.lower() != "verifiers" or requirement.url:
            continue
        floors = []
        for spec in requirement.specifier:
            if spec.operator in (">=", "==", "~=", ">", "==="):
                try:
                    floors.append(Version(spec.version.rstrip(".*")))
                except InvalidVersion:
                    continue
        if not floors:
            return "verifiers-unpinned", f"the requirement {text!r} has no lower bound, so the Hub lists " \
                                         "the package as legacy verifiers v0"
        if max(floors) < FIRST_V1_VERIFIERS:
            return "verifiers-floor-low", f"the requirement {text!r} allows verifiers before 0.2, so the Hub " \
                                          "lists the package as legacy verifiers v0"
        return None
    return "no-verifiers-requirement", "no verifiers requirement, so the Hub lists the package as Unclassified"
