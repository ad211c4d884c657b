"""What an environment is, from how it would load: said first by every env command, with its evidence.

- The files: what the build backend would put in the wheel (tools/envs/build.py), never running it; a
  folder without pyproject.toml is taken as it is (an installed package's folder, a source folder).
- The module verifiers imports: the taskset id with `-` as `_`, lowercased by verifiers 0.4
  (`verifiers/v1/utils/loaders.py` `_import_plugin`), as written by verifiers 0.3 and before
  (`verifiers/utils/env_utils.py` `load_environment`: `env_id.replace("-", "_")`).
- The entry point in that module's namespace: v1's `__all__` exporting a Taskset (or an Env) subclass
  (`_plugin_class`: it reads `module.__all__`), or v0's `load_environment` attribute (`getattr(module,
  "load_environment")`), defined there or imported into it.
- The import closure of that module: the package's own modules it imports, transitively (a package's
  `__init__.py` runs first). Only these are judged: a helper script beside them that nothing imports is
  not part of what runs.
- What stops it loading, each named: the module missing from the wheel (or a module it imports), an
  entry point defined in the package but not in the module's namespace, `verifiers` imported but not
  declared. A folder with no entry point at all is "not an environment", with what it looks like.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, Field

from tools.envs.build import MAX_FILES, Wheel, wheel
from tools.framework.findings import Finding
from tools.verifiers.source import ClassInfo, ClassReader, Grammar, exported_names, parse, project

ENTRY_CODE = "entry-not-exported"
NOT_PACKAGED = "module-not-packaged"
UNDECLARED = "verifiers-undeclared"
_TASKSET_BASES = {"Taskset"}
_MAX_SCANNED = 500  # files read when looking for an entry point anywhere in a folder


class Identity(BaseModel):
    """What the input is, as verifiers would load it, and on what evidence."""
    kind: Literal["environment", "not-an-environment"]
    api: Literal["v0", "v1"] | None = Field(None, description="v0: load_environment (verifiers <= 0.3); v1: an "
                                                             "exported Taskset (0.4).")
    module: str | None = Field(None, description="The module verifiers imports.")
    env_id: str | None = Field(None, description="The id verifiers loads it by, where it is not the project name.")
    module_file: str | None = None
    entry: str | None = Field(None, description="The entry point: `load_environment`, or the exported Taskset.")
    packaged_by: str | None = Field(None, description="How the file list was read: the backend and its settings.")
    closure: list[str] = Field(default_factory=list, description="The files the entry module imports, itself "
                                                                 "included: the only ones judged.")
    evidence: list[str] = Field(default_factory=list)
    looks_like: str | None = Field(None, description="For a folder that is no environment: what it looks like.")
    unread: str | None = Field(None, description="Why its entry module could not be read here, if it could not.")

    def shown(self) -> str:
        if self.kind == "not-an-environment":
            return f"not an environment: {self.looks_like} ({'; '.join(self.evidence)})"
        api = {"v0": "a verifiers v0 environment", "v1": "a verifiers v1 environment"}.get(
            self.api or "", "an environment whose entry point is not read here" if self.unread else
            "an environment with no entry point verifiers can load")
        entry = f", entry point {self.entry} in {self.module}" if self.entry else ""
        return f"{api}{entry} ({'; '.join(self.evidence)})"


@dataclass
class Reading:
    identity: Identity
    blockers: list[Finding] = field(default_factory=list)  # what stops it loading, each an error
    files: list[Path] = field(default_factory=list)  # the closure's source files, to judge


def identify(source: Path, grammar: Grammar | None = None, taskset_id: str | None = None) -> Reading:
    """What `source` (an environment's folder, an installed package's folder or module file) is."""
    if source.is_file():
        return _judge(source, {source.name: source}, source.stem, f"the installed module {source}", grammar, [])
    built = wheel(source)
    if built is None:
        name = (taskset_id or source.name).replace("-", "_")
        files = _folder_files(source, source.name if (source / "__init__.py").is_file() else "")
        how = (f"the package folder {source.name}/ as it is (no pyproject.toml)" if (source / "__init__.py").is_file()
               else "the folder as it is (no pyproject.toml)")
        return _judge(source, files, name, how, grammar, [])
    name = str(project(source).get("name") or taskset_id or source.name)
    reading = _judge(source, built.files, name.replace("-", "_"), built.how, grammar, built.problems, built)
    return reading


def _judge(source: Path, files: dict[str, Path], name: str, how: str, grammar: Grammar | None,
           problems: list[Finding], built: Wheel | None = None) -> Reading:
    folder = source if source.is_dir() else source.parent
    v0_name, v1_name = name, name.lower()
    module = next((m for m in dict.fromkeys((v1_name, v0_name)) if _module_path(files, m)), None)
    identity = Identity(kind="environment", packaged_by=how, evidence=[f"files: {how}"])
    evidence = identity.evidence
    reading = Reading(identity, blockers=list(problems))
    if module is None or _entry_point(_module_path(files, module), grammar) is None:
        # The project's name is not the environment's: `name = "src"` beside a py-module that has the entry
        # point. verifiers loads that module by its own name (`vf-eval swe-grep-oss-env`).
        loadable = [m for m in _top_level(files) if m != module and _entry_point(_module_path(files, m), grammar)]
        if len(loadable) == 1:
            evidence.append(f"the project is named {name!r}, but the one top-level module with an entry point is "
                            f"`{loadable[0]}`, loaded as {loadable[0].replace('_', '-')!r}")
            module, identity.env_id = loadable[0], loadable[0].replace("_", "-")
    if module == "verifiers":
        return _not_an_environment(reading, "the verifiers library itself", "its own loader is no environment")
    if module is None:
        entries, unread = _entries_anywhere(folder, grammar)
        packages = _nested_packages(folder, entries)
        if packages:
            return _not_an_environment(reading, f"a folder of {len(packages)} environment "
                                       f"package{'s' if len(packages) != 1 else ''} "
                                       f"({', '.join(packages[:4])}{', ...' if len(packages) > 4 else ''})",
                                       "each has its own pyproject.toml; pass one of them")
        if not entries and not unread:
            return _not_an_environment(reading, looks_like(folder), f"no load_environment and no Taskset in its "
                                       f"{_count_py(folder)} Python files")
        if problems:
            return reading  # it does not build: that it lacks the module follows
        pyproject = (folder / "pyproject.toml").is_file()
        identity.module = v1_name
        in_folder = next((p for p in (folder / f"{v0_name}.py", folder / v0_name / "__init__.py",
                                      folder / "src" / f"{v0_name}.py", folder / "src" / v0_name / "__init__.py")
                          if p.is_file()), None)
        shipped = ", ".join(_top_level(files)) or "nothing"
        if in_folder is not None and built is not None:
            reading.blockers.append(Finding(
                code=NOT_PACKAGED, severity="error", file=str(folder / "pyproject.toml"),
                message=f"verifiers imports `{v1_name}`, which is in the folder ({in_folder.relative_to(folder)}) but "
                        f"not in what the build backend packages ({how}: {shipped}): installed, it is not there",
                fix=f"make the backend package {in_folder.relative_to(folder)} (for hatchling, "
                    "[tool.hatch.build.targets.wheel] packages or include)"))
        else:
            where = ", ".join(f"{path.relative_to(folder)} ({what})" for path, what in entries[:3])
            reading.blockers.append(Finding(
                code="no-module", severity="error", file=str(folder / "pyproject.toml") if pyproject else str(folder),
                message=f"verifiers imports the module `{v1_name}` (the project name, `-` as `_`), which "
                        f"{'the package does not have' if built else folder.name + ' does not have'} (it has "
                        f"{shipped}); the entry point is in {where or 'none of its files'}",
                fix=f"name the module after the project ({v1_name}), or the project after the module"))
        return reading
    entry_file = _module_path(files, module)
    identity.module, identity.module_file = module, str(entry_file)
    closure, unpackaged = _closure(files, module, folder if built is not None else None, grammar)
    reading.files = closure
    identity.closure = [str(p) for p in closure]
    evidence.append(f"verifiers imports `{module}` ({_shown(entry_file, folder)})")
    evidence.append(f"judged: the {len(closure)} of {len(files)} Python files it imports")
    reading.blockers += unpackaged
    entry = _entry_point(entry_file, grammar)
    unread = parse(entry_file, grammar).unread
    if unread:
        identity.unread = unread
        evidence.append(f"its entry point is not read: {unread}")
    elif entry is not None and entry[0] == "v0" and not _declares_verifiers(folder) \
            and not _imports_verifiers(closure, grammar):
        return _not_an_environment(reading, looks_like(folder), f"{module}'s load_environment builds no verifiers "
                                   "environment: nothing it imports is verifiers, and it declares none")
    elif entry is not None:
        identity.api, identity.entry = entry
        evidence.append(f"{module} {'exports the Taskset' if entry[0] == 'v1' else 'has'} `{entry[1]}`")
    else:
        elsewhere = [(path, what) for path in closure[1:] + _rest(files, closure) for what in _defines_entry(path,
                                                                                                            grammar)]
        uses_verifiers = _declares_verifiers(folder) or _imports_verifiers(closure, grammar)
        if not elsewhere and not uses_verifiers and not _entries_anywhere(folder, grammar)[1]:
            return _not_an_environment(reading, looks_like(folder), f"{module} has no load_environment and exports "
                                       "no Taskset, and no file of it defines one")
        if elsewhere:
            path, what = elsewhere[0]
            identity.api = "v0" if what == "load_environment" else "v1"
            reading.blockers.append(Finding(
                code=ENTRY_CODE, severity="error", file=str(entry_file),
                message=f"{what} is defined in {_shown(path, folder)}, but `{module}` does not export it: verifiers "
                        f"imports {module} and " + ("finds no `load_environment` there (verifiers <= 0.3 calls "
                                                    "getattr(module, 'load_environment'))" if what == "load_environment"
                                                    else "reads its `__all__` for the Taskset subclass"),
                fix=(f"import it in {_shown(entry_file, folder)}: `from .{_dotted(path, entry_file)} import "
                     f"{what}`" if what == "load_environment" else
                     f"import it in {_shown(entry_file, folder)} and list it: `__all__ = [\"{what}\"]`")))
        else:
            evidence.append(f"{module} has no load_environment and exports no Taskset")
    if _imports_verifiers(closure, grammar) and (folder / "pyproject.toml").is_file() \
            and not _declares_verifiers(folder):
        reading.blockers.append(Finding(
            code=UNDECLARED, severity="error", file=str(folder / "pyproject.toml"),
            message="its code imports verifiers, which [project].dependencies does not declare: installed on its "
                    "own (the Hub, `prime env install`), the import fails",
            fix="declare verifiers in [project].dependencies (`verifiers>=0.4` for a Taskset, `verifiers<0.4` for "
                "load_environment)"))
    return reading


def _not_an_environment(reading: Reading, looks: str, why: str) -> Reading:
    reading.identity.kind, reading.identity.looks_like = "not-an-environment", looks
    reading.identity.evidence.append(why)
    reading.blockers = []  # what would stop it loading means nothing for what is not loaded
    return reading


def _nested_packages(folder: Path, entries: list[tuple[Path, str]]) -> list[str]:
    """The sub-folders with a pyproject.toml of their own that hold the entry points found: other packages."""
    found = set()
    for path, _ in entries:
        for parent in path.parents:
            if parent == folder or not parent.is_relative_to(folder):
                break
            if (parent / "pyproject.toml").is_file():
                found.add(str(parent.relative_to(folder)))
                break
    return sorted(found)


def _module_path(files: dict[str, Path], module: str) -> Path | None:
    return files.get(f"{module}/__init__.py") or files.get(f"{module}.py")


def _top_level(files: dict[str, Path]) -> list[str]:
    return sorted({path.split("/")[0].removesuffix(".py") for path in files})


def _shown(path: Path, folder: Path) -> str:
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)


def _dotted(path: Path, package_init: Path) -> str:
    relative = path.relative_to(package_init.parent) if path.is_relative_to(package_init.parent) else path
    return ".".join(relative.with_suffix("").parts).removesuffix(".__init__")


def _rest(files: dict[str, Path], closure: list[Path]) -> list[Path]:
    return [path for path in files.values() if path not in closure]


def _folder_files(folder: Path, package: str) -> dict[str, Path]:
    """A folder without pyproject.toml, by the path each file imports as (under `package` when the folder
    is itself a package)."""
    found: dict[str, Path] = {}
    for path in _python_files(folder):
        relative = path.relative_to(folder).as_posix()
        found[f"{package}/{relative}" if package else relative] = path
    return found


def _python_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules"))
        found += [Path(root) / n for n in sorted(names) if n.endswith(".py")]
        if len(found) > MAX_FILES:
            break
    return found


def _count_py(folder: Path) -> int:
    return len(_python_files(folder))


# -- the import closure ------------------------------------------------------------------------------------

def _closure(files: dict[str, Path], module: str, folder: Path | None,
             grammar: Grammar | None) -> tuple[list[Path], list[Finding]]:
    """The package's files that importing `module` runs, and, for a package that is built (`folder`, its
    project folder), a finding for each import of a module that is in that folder but not in the wheel."""
    by_source = {source: wheel_path for wheel_path, source in files.items()}
    start = _module_path(files, module)
    order, queue, blockers = [start], [start], []
    while queue:
        current = queue.pop(0)
        tree = parse(current, grammar).tree
        if tree is None:
            continue
        for name, line, guarded in _imports(tree, by_source[current]):
            targets = _resolve(files, name)
            left_out = _left_out(targets, name, folder)
            if left_out is not None and not guarded:
                blockers.append(_not_packaged(
                    current, line, f"imports `{name}`, whose {_shown(left_out, folder)} is in the folder",
                    _shown(left_out, folder),
                    "for setuptools, list the subpackage in packages, or include `NAME*` in packages.find"))
            if not targets:
                beside = _beside(folder, name) if folder is not None else None
                if beside is not None and not guarded and name.split(".")[0] not in _top_level(files):
                    blockers.append(_not_packaged(
                        current, line, f"imports `{name}`, which is in the folder ({_shown(beside, folder)})",
                        _shown(beside, folder),
                        "for hatchling, list it in [tool.hatch.build] include or the wheel's packages"))
                continue
            for target in targets:
                if target not in order:
                    order.append(target)
                    queue.append(target)
    return order, blockers


def _not_packaged(module: Path, line: int, what: str, shown: str, how: str) -> Finding:
    """An import of something in the folder that the build backend leaves out of what it packages."""
    return Finding(code=NOT_PACKAGED, severity="error", file=str(module), line=line,
                   message=f"{what} but not in what the build backend packages: installed, the import fails",
                   fix=f"make the backend package {shown} too ({how})")


def _imports(tree: ast.Module, wheel_path: str) -> list[tuple[str, int, bool]]:
    """(absolute module name, line, inside a try) for every import in the file, relative ones resolved
    against the file's own package. `from a import b` names `a.b` too, which may be a submodule."""
    package = wheel_path.removesuffix(".py").split("/")
    package = package[:-1]  # a module's package; for `pkg/__init__` that is `pkg`
    found = []
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) and t.handlers for b in t.body
               for n in ast.walk(b)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, id(node) in guarded) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level - 1 <= len(package) else []
                stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                stem = node.module or ""
            if stem:
                found.append((stem, node.lineno, id(node) in guarded))
            found += [(f"{stem}.{alias.name}" if stem else alias.name, node.lineno, True)
                      for alias in node.names if alias.name != "*"]  # a name, or a submodule: never a blocker
    return found


def _resolve(files: dict[str, Path], name: str) -> list[Path]:
    """The files importing `name` runs: each package's `__init__.py` on the way, then the module."""
    parts = name.split(".")
    found = []
    for depth in range(1, len(parts) + 1):
        path = "/".join(parts[:depth])
        target = files.get(f"{path}/__init__.py") or files.get(f"{path}.py")
        if target is None:
            break
        found.append(target)
    return found


def _left_out(found: list[Path], name: str, folder: Path | None) -> Path | None:
    """For `import pkg.sub` where the wheel has `pkg` but not `sub`: sub's file in the folder, if it is there."""
    parts = name.split(".")
    if folder is None or not found or len(found) >= len(parts) or found[-1].name != "__init__.py":
        return None
    below = found[-1].parent / parts[len(found)]
    return next((p for p in (below / "__init__.py", below.with_suffix(".py")) if p.is_file()), None)


def _beside(folder: Path, name: str) -> Path | None:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names:
        return None
    return next((p for p in (folder / f"{top}.py", folder / top / "__init__.py") if p.is_file()), None)


# -- the entry point ---------------------------------------------------------------------------------------

def _entry_point(module_file: Path | None, grammar: Grammar | None) -> tuple[Literal["v0", "v1"], str] | None:
    """("v1", the exported Taskset) or ("v0", "load_environment") from the module's own namespace; None for a
    folder the wheel has without its `__init__.py` (a namespace package: nothing runs on import)."""
    if module_file is None:
        return None
    tree = parse(module_file, grammar).tree
    if tree is None:
        return None
    reader = ClassReader(module_file, grammar)
    for name in exported_names(tree) or []:
        found = reader.find(name, module_file)
        if found is not None and reader.derives(found, _TASKSET_BASES):
            return "v1", name
    if _has_load_environment(tree):
        return "v0", "load_environment"
    return None


def _has_load_environment(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "load_environment":
            return True
        if isinstance(node, ast.ImportFrom) and node.module != "verifiers" and any(
                (a.asname or a.name) in ("load_environment", "*") for a in node.names):
            return True  # `from .env import *` brings it when env defines it: read as present
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "load_environment"
                                                for t in node.targets):
            return True
    return False


def _defines_entry(path: Path, grammar: Grammar | None) -> list[str]:
    """What entry point a file defines: `load_environment`, or the names of its Taskset subclasses."""
    tree = parse(path, grammar).tree
    if tree is None:
        return []
    # A `load_environment` that loads a .env file is no verifiers entry point: the file must use verifiers.
    found = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
             and n.name == "load_environment"] if _imports_verifiers([path], grammar) else []
    reader = ClassReader(path, grammar)
    found += [n.name for n in tree.body if isinstance(n, ast.ClassDef)
              and reader.derives(ClassInfo(n, path), _TASKSET_BASES)]
    return found


def _entries_anywhere(folder: Path, grammar: Grammar | None) -> tuple[list[tuple[Path, str]], int]:
    """The entry points defined anywhere in the folder, and how many files could not be read."""
    paths = _python_files(folder)[:_MAX_SCANNED]
    unread = sum(parse(path, grammar).tree is None for path in paths)
    return [(path, what) for path in paths for what in _defines_entry(path, grammar)], unread


def _imports_verifiers(files: list[Path], grammar: Grammar | None) -> bool:
    for path in files:
        tree = parse(path, grammar).tree
        for node in ast.walk(tree) if tree else []:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n.split(".")[0] == "verifiers" for n in names):
                return True
    return False


def _declares_verifiers(folder: Path) -> bool:
    for text in project(folder).get("dependencies", []) or []:
        try:
            if Requirement(str(text)).name.lower() == "verifiers":
                return True
        except InvalidRequirement:
            continue
    return False


# -- what a folder that is no environment looks like ---------------------------------------------------------

_DATA = {".json", ".jsonl", ".csv", ".tsv", ".parquet", ".arrow", ".txt", ".yaml", ".yml", ".zip"}
_DOCS = {".md", ".rst", ".pdf", ".html"}


def looks_like(folder: Path) -> str:
    """A folder by what it holds, as a person would name it."""
    if (folder / "pyproject.toml").is_file():
        name = project(folder).get("name") or folder.name
        uses = "that depends on verifiers" if _declares_verifiers(folder) else "that does not use verifiers"
        return f"a Python package `{name}` (pyproject.toml) {uses}"
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")]
        files += [Path(root) / n for n in names if not n.startswith(".")]
        if len(files) > MAX_FILES:
            break
    if not files:
        return "an empty folder"
    kinds = Counter(p.suffix.lower() for p in files)
    if kinds[".ipynb"]:
        return f"a notebook folder ({kinds['.ipynb']} notebook{'s' if kinds['.ipynb'] != 1 else ''})"
    if (folder / "__init__.py").is_file():
        return f"a Python package of {kinds['.py']} module{'s' if kinds['.py'] != 1 else ''} (no pyproject.toml)"
    data = sum(n for suffix, n in kinds.items() if suffix in _DATA)
    documents = sum(n for suffix, n in kinds.items() if suffix in _DOCS)
    if documents > len(files) / 2:
        return f"a folder of documents ({', '.join(sorted(s for s in kinds if s in _DOCS))})"
    if data > len(files) / 2:
        return f"a data folder ({', '.join(sorted(s for s in kinds if s in _DATA))})"
    if kinds[".py"]:
        return f"a folder of {kinds['.py']} Python script{'s' if kinds['.py'] != 1 else ''}"
    shown = ", ".join(f"{suffix or 'no suffix'}" for suffix, _ in kinds.most_common(3))
    return f"a folder of {len(files)} files ({shown})"
