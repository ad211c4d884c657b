"""What the package's build backend would put in the wheel, read from its pyproject.toml; nothing runs.

A package that cannot build cannot be installed, pushed or trained, and every later check would only
report a consequence ("taskset not found"). And what the wheel holds is what an installed environment
can import: a module beside it in the folder that the backend leaves out is not there once installed.

Each backend's own rules, as its source has them (read from the releases named):
- `[build-system]`: a `build-backend` needs `requires` that provide it (PEP 517/518: the backend is
  imported in an environment holding only `requires`); the known backends' object paths are exact.
  No `[build-system]` at all is setuptools' legacy backend (PEP 517, "Fallback").
- hatchling 1.33 (`builders/wheel.py` `default_file_selection_options`, `builders/config.py`):
  `packages`, `only-include` and `include` of `[tool.hatch.build.targets.wheel]`, else of
  `[tool.hatch.build]`; a package's parent folder is dropped (`packages = ["src/foo"]` ships `foo`);
  with none of them, `NAME/__init__.py`, `src/NAME/__init__.py`, `NAME.py` or one `*/NAME/__init__.py`
  (NAME: the project name, `[^\\w.]+` as `_`), else it refuses to build.
- setuptools 84 (`discovery.py`): `packages` (a list, or `find` with `where`/`include`/`exclude`),
  `package-dir`, `py-modules`; with none, every folder under `src/` (src layout), else the top-level
  folders with identifier names that are not reserved (`tests`, `docs`, `utils`, ...), else the
  top-level modules; more than one top-level package (or module) in that flat layout is refused.
- uv_build (docs.astral.sh/uv/concepts/build-backend): `module-root` (default `src`) and
  `module-name` (default the project name, `-` and `.` as `_`), which must exist.
- flit_core 3 (`common.py` `Module`): `[tool.flit.module] name` (default the project name, `-` as `_`),
  as `NAME/__init__.py` or `NAME.py`, at the root or under `src/`.
- poetry-core: `[tool.poetry] packages` (`include`, `from`), else the project's module at the root or
  under `src/`.
Another backend is read as hatchling's defaults would read it, and the evidence says so.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from tools.framework.errors import BadInput
from tools.framework.findings import Finding
from tools.io import files

# Backend module -> (the distribution that provides it, the backend objects it has).
KNOWN_BACKENDS = {
    "hatchling": ("hatchling", {"hatchling.build", "hatchling.ouroboros"}),
    "setuptools": ("setuptools", {"setuptools.build_meta", "setuptools.build_meta:__legacy__"}),
    "flit_core": ("flit-core", {"flit_core.buildapi"}),
    "poetry": ("poetry-core", {"poetry.core.masonry.api"}),
    "pdm": ("pdm-backend", {"pdm.backend"}),
    "uv_build": ("uv-build", {"uv_build"}),
    "maturin": ("maturin", {"maturin"}),
    "scikit_build_core": ("scikit-build-core", {"scikit_build_core.build"}),
    "mesonpy": ("meson-python", {"mesonpy"}),
}
CODE = "package-unbuildable"
# setuptools' reserved top-level names in a flat layout (discovery.py, FlatLayoutPackageFinder/ModuleFinder).
_FLAT_RESERVED_PACKAGES = {
    "ci", "bin", "debian", "doc", "docs", "documentation", "manpages", "news", "newsfragments", "changelog", "test",
    "tests", "unit_test", "unit_tests", "example", "examples", "scripts", "tools", "util", "utils", "python",
    "build", "dist", "venv", "env", "requirements", "tasks", "fabfile", "site_scons", "benchmark", "benchmarks",
    "exercise", "exercises", "htmlcov"}
_FLAT_RESERVED_MODULES = {
    "setup", "conftest", "test", "tests", "example", "examples", "build", "toxfile", "noxfile", "pavement", "dodo",
    "tasks", "fabfile", "conanfile", "manage", "benchmark", "benchmarks", "exercise", "exercises"}
_NEVER_WALKED = {"__pycache__", "node_modules", ".git", ".venv", "venv"}
MAX_FILES = 20_000  # a folder with more is not an environment's source; the walk stops there


@dataclass
class Wheel:
    """The Python files an installed package would have, by their path inside the wheel."""
    backend: str  # the backend's module, "setuptools" for a pyproject without [build-system]
    how: str  # what decided the file list, as a person would say it
    files: dict[str, Path] = field(default_factory=dict)  # "pkg/mod.py" -> the source file
    problems: list[Finding] = field(default_factory=list)  # why it cannot build

    def module(self, name: str) -> Path | None:
        """The source file of top-level module `name` in the wheel (a package's `__init__.py`)."""
        return self.files.get(f"{name}/__init__.py") or self.files.get(f"{name}.py")

    def top_level(self) -> list[str]:
        return sorted({path.split("/")[0].removesuffix(".py") for path in self.files})

    def source_of(self, wheel_path: str) -> Path | None:
        return self.files.get(wheel_path)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_data(folder: Path) -> dict | None:
    """The pyproject.toml of `folder`, read by the files door's TOML reader; None when there is none.
    BadInput when it is not TOML (codes `files.NOT_TOML`) or passes a bound."""
    try:
        return files.read_toml(folder / "pyproject.toml")
    except BadInput as refused:
        if refused.code in files.ABSENT:
            return None
        raise


def build_findings(folder: Path) -> list[Finding]:
    """Why the package in `folder` cannot build; empty when nothing says it cannot."""
    built = wheel(folder)
    return built.problems if built else []


def wheel(folder: Path) -> Wheel | None:
    """What the backend would package from `folder`; None when it has no pyproject.toml."""
    pyproject = folder / "pyproject.toml"
    try:
        data = pyproject_data(folder)
    except BadInput as refused:
        if refused.code not in files.NOT_TOML:
            raise
        problem = _unbuildable(pyproject, refused.message, refused.hint)
        return Wheel("unknown", "pyproject.toml is not TOML", problems=[problem])
    if data is None:
        return None
    system = data.get("build-system") if isinstance(data.get("build-system"), dict) else {}
    backend = system.get("build-backend") if isinstance(system.get("build-backend"), str) else None
    top = backend.split(".")[0].split(":")[0] if backend else "setuptools"
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    name = str(project.get("name") or folder.name)
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    reader = _Reader(folder, pyproject, tool, name)
    read = {"hatchling": reader.hatchling, "setuptools": reader.setuptools, "uv_build": reader.uv_build,
            "flit_core": lambda: reader.flit(project), "poetry": reader.poetry}.get(top)
    if read is not None:
        read()
    else:
        reader.hatchling(f"build-backend {backend!r} is not read here; its files are guessed by hatchling's defaults",
                         str(backend))
    built = Wheel(top, reader.how, reader.files, reader.problems)
    if backend:
        built.problems[:0] = _backend_findings(pyproject, system, backend)
    return built


def _backend_findings(pyproject: Path, system: dict, backend: str) -> list[Finding]:
    requires = system.get("requires")
    if not isinstance(requires, list) or not requires:
        return [_unbuildable(pyproject, f"[build-system] names build-backend {backend!r} but no `requires` to "
                             "install it from", f"add `requires = [\"{_dist_of(backend)}\"]` under [build-system]")]
    names = set()
    for text in requires:
        try:
            names.add(_normal(Requirement(str(text)).name))
        except InvalidRequirement:
            return [_unbuildable(pyproject, f"[build-system] requires {text!r}, which is not a requirement",
                                 "write it as a package name with an optional version (`hatchling>=1.25`)")]
    top = backend.split(".")[0].split(":")[0]
    dist, objects = KNOWN_BACKENDS.get(top, (None, set()))
    if system.get("backend-path"):
        return []  # an in-tree backend: imported from the package's own folders
    if dist is None:
        return [] if _normal(top) in names else [Finding(
            code=CODE, severity="warning", file=str(pyproject),
            message=f"build-backend {backend!r} is not one rlpilot knows, and no requirement in [build-system] "
                    f"requires is named like it ({', '.join(sorted(names))}): whether it builds is not known here",
            fix="`uv build` in the folder tells")]
    if _normal(dist) not in names:
        return [_unbuildable(pyproject, f"build-backend {backend!r} comes from {dist}, which [build-system] "
                             f"requires does not list ({', '.join(sorted(names))})",
                             f"add \"{dist}\" to [build-system] requires")]
    if backend not in objects:
        return [_unbuildable(pyproject, f"build-backend {backend!r} is not a backend {dist} provides",
                             f"use {' or '.join(sorted(objects))}")]
    return []


class _Reader:
    """One backend's file selection, into `files` (wheel path -> source) with `how` and `problems`."""

    def __init__(self, folder: Path, pyproject: Path, tool: dict, name: str):
        self.folder, self.pyproject, self.tool, self.name = folder, pyproject, tool, name
        self.module = re.sub(r"[^\w.]+", "_", name)  # hatchling's normalize_file_name_component
        self.files: dict[str, Path] = {}
        self.how = ""
        self.problems: list[Finding] = []
        self._walked: list[str] | None = None

    def section(self, *keys: str) -> dict:
        table = self.tool
        for key in keys:
            table = table.get(key) if isinstance(table, dict) else None
        return table if isinstance(table, dict) else {}

    def python_files(self) -> list[str]:
        """Every .py file under the folder, relative and with `/`, outside caches and hidden folders."""
        if self._walked is None:
            found: list[str] = []
            for root, dirs, names in os.walk(self.folder):
                dirs[:] = sorted(d for d in dirs if d not in _NEVER_WALKED and not d.startswith("."))
                relative = Path(root).relative_to(self.folder).as_posix()
                found += [n if relative == "." else f"{relative}/{n}" for n in sorted(names) if n.endswith(".py")]
                if len(found) > MAX_FILES:
                    break
            self._walked = found
        return self._walked

    def add_tree(self, source: str, target: str) -> None:
        """Every .py file at or under `source` (relative to the folder), shipped under `target`."""
        prefix = source.strip("/")
        for path in self.python_files():
            if path == prefix or not prefix or path.startswith(prefix + "/"):
                rest = path[len(prefix):].lstrip("/") if prefix else path
                self.files[f"{target}/{rest}".strip("/") if rest else target] = self.folder / path

    def missing(self, declared: str, names: list[str], consequence: str = "") -> None:
        self.problems.append(_unbuildable(
            self.pyproject, f"{declared} names {', '.join(names)}, which {self.folder} does not have{consequence}",
            f"point {declared} at the folder that holds the module, or move the module there"))

    # -- hatchling --

    def hatchling(self, guessed: str = "", backend: str = "hatchling") -> None:
        wheel_table = self.section("hatch", "build", "targets", "wheel")
        build_table = self.section("hatch", "build")

        def option(key: str) -> list:
            value = wheel_table.get(key, build_table.get(key, []))
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        where = "[tool.hatch.build.targets.wheel]" if any(
            k in wheel_table for k in ("packages", "only-include", "include")) else "[tool.hatch.build]"
        packages, only, include, exclude = option("packages"), option("only-include"), option("include"), \
            option("exclude")
        forced = wheel_table.get("force-include", build_table.get("force-include", {}))
        for source, target in (forced.items() if isinstance(forced, dict) else []):
            if isinstance(target, str):
                self.add_tree(str(source), target.strip("/"))
        if packages or only or include:
            roots = only or packages
            absent = [p for p in roots if not (self.folder / p).exists()]
            if absent:
                self.missing(f"{where} {'only-include' if only else 'packages'}", absent,
                             " (hatchling builds a wheel without them, which installs no module of the package)")
            sources = {os.path.dirname(p.strip("/")): "" for p in packages if os.path.dirname(p.strip("/"))}
            sources.update(self._hatch_sources(wheel_table if "sources" in wheel_table else build_table))
            candidates = [p for p in self.python_files() if not roots or any(
                p == r.strip("/") or r.strip("/") in ("", ".") or p.startswith(r.strip("/") + "/") for r in roots)]
            for path in candidates:
                if include and not any(_gitignore_match(pattern, path) for pattern in include):
                    continue
                if any(_gitignore_match(pattern, path) for pattern in exclude):
                    continue
                self.files[_rewrite(path, sources)] = self.folder / path
            said = [f"{key} {value}" for key, value in (("packages", packages), ("only-include", only),
                                                       ("include", include)) if value]
            said += [f"force-include {sorted(forced)}"] if forced else []
            self.how = guessed or f"hatchling: {where} {', '.join(said)}"
            return
        for name in dict.fromkeys((self.module, self.module.lower().replace(".", "_"))):
            if (self.folder / name / "__init__.py").is_file():
                self.add_tree(name, name)
                self.how = guessed or f"hatchling: no file selection, so the package {name}/ named after the project"
                return
            if (self.folder / "src" / name / "__init__.py").is_file():
                self.add_tree(f"src/{name}", name)
                self.how = guessed or f"hatchling: no file selection, so the package src/{name}/ named after the " \
                                      "project"
                return
            if (self.folder / f"{name}.py").is_file():
                self.files[f"{name}.py"] = self.folder / f"{name}.py"
                self.how = guessed or f"hatchling: no file selection, so the module {name}.py named after the project"
                return
            spaces = sorted(self.folder.glob(f"*/{name}/__init__.py"))
            if len(spaces) == 1:
                namespace = spaces[0].parent.parent.name
                self.add_tree(namespace, namespace)
                self.how = guessed or f"hatchling: no file selection, so the folder {namespace}/ holding {name}/"
                return
        if forced:
            self.how = guessed or f"hatchling: only its force-include {sorted(forced)}"
            return
        self.how = guessed or "hatchling: no file selection and nothing named after the project"
        self.problems.append(_unbuildable(
            self.pyproject, f"{backend} finds nothing to put in the wheel: no {self.module}/__init__.py, "
            f"src/{self.module}/__init__.py or {self.module}.py in {self.folder}, and no "
            "[tool.hatch.build.targets.wheel] packages", f"name the module after the project ({self.module}), or "
            "list its folder in [tool.hatch.build.targets.wheel] packages"))

    @staticmethod
    def _hatch_sources(table: dict) -> dict[str, str]:
        raw = table.get("sources")
        if isinstance(raw, list):
            return {str(s).strip("/"): "" for s in raw if isinstance(s, str)}
        if isinstance(raw, dict):
            return {str(k).strip("/"): str(v).strip("/") for k, v in raw.items() if isinstance(v, str)}
        return {}

    # -- setuptools --

    def setuptools(self) -> None:
        table = self.section("setuptools")
        roots = table.get("package-dir") if isinstance(table.get("package-dir"), dict) else {}
        root = str(roots.get("", "")).strip("/")
        packages = table.get("packages")
        modules = [m for m in table.get("py-modules", []) if isinstance(m, str)] \
            if isinstance(table.get("py-modules"), list) else None
        said = []
        if isinstance(packages, list):
            said.append(f"[tool.setuptools] packages {packages}")
            absent = []
            for package in (p for p in packages if isinstance(p, str)):
                where = str(roots[package]) if package in roots else "/".join(filter(None, [root,
                                                                                           package.replace(".", "/")]))
                if not (self.folder / where).is_dir():
                    absent.append(package)
                    continue
                self._add_package(where, package.replace(".", "/"))
            if absent:
                self.missing("[tool.setuptools] packages", absent)
        elif isinstance(packages, dict) and isinstance(packages.get("find"), dict):
            find = packages["find"]
            wheres = [w for w in find.get("where", ["."]) if isinstance(w, str)] or ["."]
            absent = [w for w in wheres if not (self.folder / w).is_dir()]
            if absent:
                self.missing("[tool.setuptools.packages.find] where", absent)
            include = [p for p in find.get("include", ["*"]) if isinstance(p, str)]
            exclude = [p for p in find.get("exclude", []) if isinstance(p, str)]
            namespaces = find.get("namespaces", True) is not False
            for where in wheres:
                for package in self._packages_under(where, namespaces):
                    if any(fnmatch.fnmatchcase(package, p) for p in include) and not any(
                            fnmatch.fnmatchcase(package, p) for p in exclude):
                        source = f"{where}/{package.replace('.', '/')}".removeprefix("./")
                        self._add_package(source, package.replace(".", "/"), nested=False)
            said.append(f"[tool.setuptools.packages.find] where {wheres}")
        if modules is not None:
            said.append(f"[tool.setuptools] py-modules {modules}")
            for module in modules:  # a missing one is skipped with a warning (setuptools' build_py), not refused
                path = "/".join(filter(None, [root, f"{module.replace('.', '/')}.py"]))
                if (self.folder / path).is_file():
                    self.files[f"{module.replace('.', '/')}.py"] = self.folder / path
        if said:
            self.how = "setuptools: " + ", ".join(said)
            return
        explicit = {k: v for k, v in roots.items() if k}
        if explicit:
            for package, where in explicit.items():
                self._add_package(str(where), package.replace(".", "/"))
            self.how = f"setuptools: [tool.setuptools] package-dir {explicit}"
            return
        src = root or "src"
        if (self.folder / src).is_dir():
            for package in self._packages_under(src, True):
                self._add_package(f"{src}/{package.replace('.', '/')}", package.replace(".", "/"), nested=False)
            for module in self._modules_under(src, set()):
                self.files[f"{module}.py"] = self.folder / src / f"{module}.py"
            self.how = f"setuptools: automatic discovery, src layout ({src}/)"
            return
        top = [p for p in self._packages_under(".", True) if "." not in p and p not in _FLAT_RESERVED_PACKAGES
               and not p.startswith("_")]
        if len(top) > 1:
            self.how = f"setuptools: automatic discovery, flat layout: several top-level packages {top}"
            self.problems.append(_unbuildable(
                self.pyproject, f"setuptools' automatic discovery finds several top-level packages in the flat "
                f"layout of {self.folder} ({', '.join(top)}) and refuses to build", "list the package in "
                "[tool.setuptools] packages (or py-modules), or move it under src/"))
            return
        if top:
            self._add_package(top[0], top[0])
            self.how = f"setuptools: automatic discovery, flat layout: the one top-level folder {top[0]}/"
            return
        modules = self._modules_under(".", _FLAT_RESERVED_MODULES)
        if len(modules) > 1:
            self.how = f"setuptools: automatic discovery, flat layout: several top-level modules {modules}"
            self.problems.append(_unbuildable(
                self.pyproject, f"setuptools' automatic discovery finds several top-level modules in the flat "
                f"layout of {self.folder} ({', '.join(modules)}) and refuses to build",
                "list the modules in [tool.setuptools] py-modules"))
            return
        for module in modules:
            self.files[f"{module}.py"] = self.folder / f"{module}.py"
        found = f"the module {modules[0]}.py" if modules else "nothing"
        self.how = f"setuptools: automatic discovery, flat layout: {found}"

    def _packages_under(self, where: str, namespaces: bool) -> list[str]:
        """Dotted package names under `where`, as setuptools' finders see them: with namespaces on, any
        folder with an identifier name, whatever it holds (an `outputs/` of JSON files too)."""
        base = self.folder / where
        found = []
        for root, dirs, _ in os.walk(base):
            dirs[:] = sorted(d for d in dirs if "." not in d and d not in _NEVER_WALKED and d.isidentifier()
                             and (namespaces or (Path(root) / d / "__init__.py").is_file()))
            relative = Path(root).relative_to(base)
            if relative.parts:
                found.append(".".join(relative.parts))
            if len(found) > MAX_FILES:
                break
        return found

    def _modules_under(self, where: str, reserved: set[str]) -> list[str]:
        base = self.folder / where
        return sorted(p.stem for p in base.glob("*.py") if p.stem.isidentifier() and p.stem not in reserved
                      and not p.stem.startswith(("_", ".")))

    def _add_package(self, source: str, target: str, nested: bool = True) -> None:
        """A package's own .py files; with `nested`, its subpackages too (setuptools lists each)."""
        prefix = source.strip("/").removeprefix("./")
        for path in self.python_files():
            inside = path.startswith(prefix + "/") if prefix not in ("", ".") else True
            if inside and (nested or "/" not in path[len(prefix) + 1:]):
                self.files[f"{target}/{path[len(prefix) + 1:]}"] = self.folder / path

    # -- uv_build, flit, poetry --

    def uv_build(self) -> None:
        table = self.section("uv", "build-backend")
        raw = table.get("module-name") or self.name.replace("-", "_").replace(".", "_")
        names = [str(n) for n in raw] if isinstance(raw, list) else [str(raw)]
        root = str(table.get("module-root", "src")).strip("/")
        self.how = f"uv_build: module-root {root!r}, module-name {names}"
        absent = []
        for name in names:
            path = "/".join(filter(None, [root, name.replace(".", "/")]))
            if (self.folder / path / "__init__.py").is_file() or table.get("namespace") is True and \
                    (self.folder / path).is_dir():
                self.add_tree(path, name.replace(".", "/"))
            elif (self.folder / f"{path}.py").is_file():
                self.files[f"{name.replace('.', '/')}.py"] = self.folder / f"{path}.py"
            else:
                absent.append(f"{path}/__init__.py")
        if absent:
            self.missing("[tool.uv.build-backend] module-root and module-name", absent)

    def flit(self, project: dict) -> None:
        name = str(self.section("flit", "module").get("name") or self.name.replace("-", "_"))
        if "description" not in project and "description" not in project.get("dynamic", []):
            self.problems.append(_unbuildable(  # flit_core/config.py, ConfigError
                self.pyproject, "flit_core requires a description under [project] (or `dynamic = "
                "[\"description\"]`, read from the module's docstring)", 'add `description = "..."` under [project]'))
        found = [c for c in (f"{name}/__init__.py", f"{name}.py", f"src/{name}/__init__.py", f"src/{name}.py")
                 if (self.folder / c).is_file()]
        self.how = f"flit_core: the module {name}" + (" ([tool.flit.module] name)" if self.section("flit", "module")
                                                      else " named after the project")
        if not found:
            self.missing("flit's module name", [name])
            return
        first = found[0]
        if first.endswith("__init__.py"):
            self.add_tree(first.removesuffix("/__init__.py"), name)
        else:
            self.files[f"{name}.py"] = self.folder / first

    def poetry(self) -> None:
        includes = self.section("poetry").get("packages")
        if not isinstance(includes, list):
            self.hatchling("poetry-core: no [tool.poetry] packages, so the module named after the project",
                           "poetry-core")
            return
        self.how = "poetry-core: [tool.poetry] packages"
        absent = []
        for entry in (p for p in includes if isinstance(p, dict) and isinstance(p.get("include"), str)):
            base = str(entry.get("from", ".")).strip("/")
            include = entry["include"]
            if "*" in include:
                continue
            source = "/".join(filter(None, [base if base != "." else "", include]))
            if not (self.folder / source).exists():
                absent.append(f"{base}/{include}")
            self.add_tree(source, include.removesuffix(".py") + (".py" if include.endswith(".py") else ""))
        if absent:
            self.missing("[tool.poetry] packages", absent)


def _rewrite(path: str, sources: dict[str, str]) -> str:
    """hatchling's `sources`: the longest matching prefix is replaced."""
    for prefix in sorted(sources, key=len, reverse=True):
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            return "/".join(filter(None, [sources[prefix], path[len(prefix):].lstrip("/")]))
    return path


def _gitignore_match(pattern: str, path: str) -> bool:
    """Whether a gitignore-style pattern (hatchling's include/exclude) selects the file `path` or a
    folder above it."""
    pattern = pattern.strip()
    if not pattern or pattern.startswith(("#", "!")):
        return False
    folder_only = pattern.endswith("/")
    anchored = "/" in pattern.rstrip("/")  # a slash at the start or in the middle ties it to the root
    pattern = pattern.strip("/")
    regex = re.compile(("" if anchored else "(?:.*/)?") + _glob_regex(pattern) + r"\Z")
    parts = path.split("/")
    candidates = ["/".join(parts[:n]) for n in range(1, len(parts))] + ([] if folder_only else [path])
    return any(regex.match(candidate) for candidate in candidates)


def _glob_regex(pattern: str) -> str:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return out


def _dist_of(backend: str) -> str:
    return KNOWN_BACKENDS.get(backend.split(".")[0], (backend.split(".")[0],))[0]


def _unbuildable(pyproject: Path, message: str, fix: str) -> Finding:
    return Finding(code=CODE, severity="error", file=str(pyproject),
                   message=f"the package cannot build: {message}", fix=fix)
