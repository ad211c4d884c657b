"""An environment's source, read without importing it: which module verifiers imports, the grammar
it is written in, what its `__all__` exports, what its classes derive from, and the roles its
`EnvConfig` declares. Below `tools.envs`, `tools.evals` and `tools.configs`, which each read it.

Roles (verifiers 0.4, PrimeIntellect-ai/verifiers@a60a606 `verifiers/v1/env.py`, `utils/loaders.py`):
the Env a run plays is the one the taskset's package exports in `__all__`, else `SingleAgentEnv`,
whose `SingleAgentEnvConfig` declares the one role `agent`. A multi-agent Env binds its config as
`Env[MyEnvConfig]`, and each top-level `AgentConfig` field of that config is a role, addressed on
the command line as `--env.<role>.*` (code_golf's `golfer`, kuhn_poker's `player0`/`player1`,
proposer_solver's `proposer`/`solver`). A flag for a role the config does not declare is refused
("Extra inputs are not permitted").
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.framework.errors import BadInput
from tools.io import files, process

_NEWEST_MINOR = 20  # requires-python floors are looked for among 3.0 .. 3.20


def exported_names(tree: ast.Module) -> list[str] | None:
    """The names of a literal `__all__` (a list or tuple of strings); None when there is none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
                return [e.value for e in value.elts]
    return None


def base_name(base: ast.expr) -> str | None:
    """A base class's own name: `Taskset`, `vf.Taskset` and `vf.Taskset[Task, Config]` are all `Taskset`."""
    if isinstance(base, ast.Subscript):
        base = base.value
    return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)


# -- which module, and which grammar ---------------------------------------------------------------

def project(folder: Path) -> dict:
    """`[project]` of the folder's pyproject.toml; empty when there is none, it is not TOML or its `project` is
    no table. A pyproject.toml past the files door's bounds is BadInput naming it: it is not guessed past."""
    try:
        table = files.read_toml(folder / "pyproject.toml").get("project")
    except BadInput as refused:
        if refused.code in files.ABSENT | files.NOT_TOML:
            return {}
        raise
    return table if isinstance(table, dict) else {}


def module_file(source: Path) -> Path | None:
    """The file verifiers imports for the environment in `source` (a folder, or a module file): the
    module named after the project (`-` as `_`, lowercased, as verifiers' loader imports it)."""
    if source.is_file():
        return source
    if (source / "__init__.py").is_file():  # an installed package's folder
        return source / "__init__.py"
    name = (project(source).get("name") or source.name).replace("-", "_").lower()
    for candidate in (f"{name}.py", f"{name}/__init__.py", f"src/{name}.py", f"src/{name}/__init__.py"):
        if (source / candidate).is_file():
            return source / candidate
    return None


@dataclass(frozen=True)
class Grammar:
    version: tuple[int, int]
    why: str  # where the version comes from, as a person would say it


def running_grammar() -> Grammar:
    return Grammar(sys.version_info[:2], f"rlpilot's Python {sys.version_info[0]}.{sys.version_info[1]}")


def grammar_of(source: Path, fallback: Grammar | None = None) -> Grammar:
    """The oldest Python the environment's `requires-python` admits (the grammar its code must parse
    with), else `fallback` (the workspace interpreter's), else rlpilot's own."""
    folder = source if source.is_dir() else source.parent
    for candidate in (folder, *list(folder.parents)[:2]):
        if not (candidate / "pyproject.toml").is_file():
            continue
        text = project(candidate).get("requires-python")
        # packaging is imported here, not above: config check imports this module and never reads a grammar,
        # and packaging's regexes are a tenth of that command's start-up.
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(text) if isinstance(text, str) else None
        except InvalidSpecifier:
            spec = None
        if spec is not None:
            # `3.M.99` stands for the minor line: `>=3.11.2` admits 3.11, `==3.12.*` admits 3.12.
            floor = next((minor for minor in range(_NEWEST_MINOR + 1) if spec.contains(f"3.{minor}.99")), None)
            if floor is not None:
                return Grammar((3, floor), f"requires-python {text!r} in {candidate / 'pyproject.toml'}")
        break
    return fallback or running_grammar()


def interpreter_grammar(python: Path) -> Grammar | None:
    """A venv interpreter's version from its pyvenv.cfg, read rather than asked (no subprocess)."""
    try:
        lines = files.read_text_bounded(python.parent.parent / "pyvenv.cfg").splitlines()
    except BadInput:  # no venv's file to read (or none worth reading): the grammar is found another way
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() in ("version_info", "version"):
            parts = value.strip().split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return Grammar((int(parts[0]), int(parts[1])), f"the workspace's Python {parts[0]}.{parts[1]}")
    return None


@dataclass
class Parsed:
    tree: ast.Module | None
    error: SyntaxError | None = None  # a syntax error in the grammar the environment is written for
    unread: str | None = None  # why the file could not be judged here (a grammar newer than rlpilot's)


def parse(path: Path, grammar: Grammar | None = None) -> Parsed:
    """Parse with the grammar the environment is written for. A grammar newer than rlpilot's own
    Python is tried with rlpilot's (most newer code parses alike); where that fails, the file is
    unread, never a syntax error: rlpilot cannot tell."""
    grammar = grammar or grammar_of(path)
    try:
        text = files.read_text_bounded(path, files.SOURCE_LIMIT, hint="a module that large holds data, not code; "
                                       "move the data to a file the environment loads")
    except BadInput as refused:  # the file is reported unread, as one that cannot be opened always was
        return Parsed(None, unread=f"{refused.message}; {refused.hint}")
    running = sys.version_info[:2]
    try:
        if grammar.version <= running:
            return Parsed(ast.parse(text, filename=str(path), feature_version=max(grammar.version, (3, 7))))
        return Parsed(ast.parse(text, filename=str(path)))
    except SyntaxError as error:
        if grammar.version <= running:
            return Parsed(None, error=error)
        return Parsed(None, unread=f"it is written for Python {grammar.version[0]}.{grammar.version[1]} "
                                   f"({grammar.why}), and rlpilot's Python {running[0]}.{running[1]} cannot parse "
                                   f"line {error.lineno}")
    except (ValueError, RecursionError) as error:  # a NUL byte, a nesting too deep for the parser
        return Parsed(None, unread=f"{path} could not be parsed ({error})")


# -- roles -----------------------------------------------------------------------------------------

@dataclass
class Roles:
    names: list[str] | None  # None: the declaration could not be read
    why: str  # how they were read, or why they could not be

    def flags(self, settings: list[tuple[str, str]]) -> list[str]:
        """`--env.<role>.<key> value` for every declared role; nothing when the roles are unknown."""
        return [word for role in self.names or [] for key, value in settings
                for word in (f"--env.{role}.{key}", value)]

    def shown(self) -> str:
        if self.names is None:
            return f"unknown ({self.why})"
        return f"{', '.join(self.names) or 'none'} ({self.why})"


SINGLE_AGENT = Roles(["agent"], "no Env exported: verifiers plays it with SingleAgentEnv's one `agent`")
_LOOKUPS = 12  # modules followed while resolving one environment's classes


def read_roles(source: Path, grammar: Grammar | None = None, python: Path | None = None) -> Roles:
    """The roles of the environment in `source` (its folder, or the module file verifiers imports).
    With `python`, names it imports from installed packages (verifiers' own TextArenaEnv) are read
    from that interpreter's site-packages."""
    module = module_file(source)
    if module is None:
        return Roles(None, f"no module of the environment found in {source}")
    grammar = grammar or grammar_of(source, interpreter_grammar(python) if python else None)
    reader = ClassReader(module, grammar, site_packages(python) if python else [])
    top = reader.tree(module)
    if top is None:
        return Roles(None, f"{module.name} could not be read: {reader.problem}")
    exported = exported_names(top)
    if exported is None:
        return SINGLE_AGENT
    envs, unsure = [], []
    for name in exported:
        found = reader.find(name, module)
        if found is None:
            unsure += [name] if "Env" in name else []
        elif reader.derives(found, {"Env", "SingleAgentEnv"}):
            envs.append(found)
    if len(envs) > 1:
        return Roles(None, f"{module.name} exports {len(envs)} Env subclasses; verifiers refuses more than one")
    if not envs:
        if unsure:
            return Roles(None, f"{module.name} exports {', '.join(unsure)} from outside its package, which may be "
                               "an Env that rlpilot cannot read")
        return SINGLE_AGENT
    return reader.env_roles(envs[0])


def site_packages(python: Path) -> list[Path]:
    """Where `python` finds installed packages: a venv's lib/pythonX.Y/site-packages, or rlpilot's own."""
    if Path(python) == Path(sys.executable):
        return [Path(p) for p in sys.path if p.endswith("site-packages")]
    return sorted(Path(python).parent.parent.glob("lib/python3*/site-packages"))


@dataclass
class ClassInfo:
    node: ast.ClassDef
    module: Path


class ClassReader:
    """Follows names through the environment's own package: `from .taskset import X`, `from pkg.x import X`."""

    def __init__(self, module: Path, grammar: Grammar | None = None, installed: list[Path] | None = None):
        self.grammar = grammar or grammar_of(module)
        package = module.parent if module.name == "__init__.py" else None
        # The folder the top module is imported from, then the interpreter's installed packages.
        self.roots = [(package or module).parent, *(installed or [])]
        self.trees: dict[Path, ast.Module | None] = {}
        self.problem = ""

    def tree(self, path: Path) -> ast.Module | None:
        if path not in self.trees:
            if len(self.trees) >= _LOOKUPS:
                return None
            parsed = parse(path, self.grammar)
            self.trees[path] = parsed.tree
            if parsed.tree is None:
                self.problem = parsed.unread or f"syntax error at line {parsed.error.lineno}: {parsed.error.msg}"
        return self.trees[path]

    def find(self, name: str, module: Path, depth: int = 0) -> ClassInfo | None:
        tree = self.tree(module)
        if tree is None or depth > 4:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return ClassInfo(node, module)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        target = self._module_of(node, module)
                        return self.find(alias.name, target, depth + 1) if target else None
        return None

    def _module_of(self, node: ast.ImportFrom, importer: Path) -> Path | None:
        """The file of an imported module under the roots; None for any other (not installed, built in)."""
        bases = [importer.parents[node.level - 1]] if node.level else self.roots
        parts = node.module.split(".") if node.module else []
        for base in bases:
            for candidate in ([base.joinpath(*parts).with_suffix(".py")] if parts else []) + \
                    [base.joinpath(*parts, "__init__.py")]:
                if candidate.is_file() and any(candidate.is_relative_to(root) for root in self.roots):
                    return candidate
        return None

    def derives(self, found: ClassInfo, names: set[str], depth: int = 0) -> bool:
        for base in found.node.bases:
            if base_name(base) in names:
                return True
            local = self.find(base_name(base) or "", found.module)
            if local is not None and depth < 8 and self.derives(local, names, depth + 1):
                return True
        return False

    def env_roles(self, env: ClassInfo) -> Roles:
        where = f"{env.node.name}'s config"
        for base in env.node.bases:
            if base_name(base) == "SingleAgentEnv":
                return Roles(["agent"], f"{env.node.name} is a SingleAgentEnv")
            if base_name(base) == "Env":
                if not isinstance(base, ast.Subscript):
                    return Roles([], f"{env.node.name} binds no EnvConfig, so it declares no AgentConfig field; "
                                     "verifiers refuses it ('declares no agents')")
                config = base.slice
                name = config.id if isinstance(config, ast.Name) else None
                found = self.find(name, env.module) if name else None
                if found is None:
                    return Roles(None, f"{env.node.name}'s EnvConfig ({ast.unparse(config)}) is not defined in its "
                                       "package")
                return self.config_roles(found, where)
            local = self.find(base_name(base) or "", env.module)
            if local is not None:
                return self.env_roles(local)
        return Roles(None, f"{env.node.name} derives from an Env rlpilot cannot read")

    def config_roles(self, config: ClassInfo, where: str, depth: int = 0) -> Roles:
        names: list[str] = []
        for base in config.node.bases:
            name = base_name(base)
            if name == "SingleAgentEnvConfig":
                names.append("agent")
            elif name not in ("EnvConfig", "BaseConfig", "BaseModel"):
                local = self.find(name or "", config.module)
                if local is None or depth > 8:
                    return Roles(None, f"{config.node.name} derives from {name}, which rlpilot cannot read")
                inherited = self.config_roles(local, where, depth + 1)
                if inherited.names is None:
                    return inherited
                names += inherited.names
        for node in config.node.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and self._is_agent(
                    node.annotation, config.module) and node.target.id not in names:
                names.append(node.target.id)
        why = f"the AgentConfig fields of {config.node.name}"
        return Roles(names, why if names else f"{config.node.name} declares no AgentConfig field")

    def _is_agent(self, annotation: ast.expr, module: Path) -> bool:
        name = base_name(annotation)
        if name == "AgentConfig":
            return True
        local = self.find(name or "", module) if isinstance(annotation, ast.Name | ast.Attribute) else None
        return local is not None and self.derives(local, {"AgentConfig"})


def module_origin(python: Path, module: str, environ: Mapping[str, str]) -> Path | None:
    """Where `python` would import `module` from, asked in a subprocess; None when it cannot.

    Asked of the workspace's interpreter, not rlpilot's: environments are installed there.
    """
    # The current directory is dropped from the search: console scripts such as vf-eval never see it.
    # Part by part, never importing: find_spec("pkg.env") would run pkg/__init__.py to find env.
    code = ("import importlib.machinery as m, importlib.util as u, sys; "
            "sys.path[:] = [p for p in sys.path if p not in ('', '.')]; top, *rest = sys.argv[1].split('.'); "
            "s = u.find_spec(top)\nfor part in rest: s = s and s.submodule_search_locations and "
            "m.PathFinder.find_spec(part, s.submodule_search_locations)\n"
            "print('found:' + (s.origin or '') if s else 'missing')")
    probe = process.run([python, "-c", code, module], env=environ, timeout=60)
    answer = probe.stdout_tail[-1] if probe.ok and probe.stdout_tail else "missing"
    if not answer.startswith("found:"):
        return None
    return Path(answer.removeprefix("found:") or ".")
