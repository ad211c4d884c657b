#!/usr/bin/env python3
"""Write prime-rl's config history as a table of facts: tools/configs/prime_rl_history.json.gz.

Usage: python scripts/prime_rl_history.py GIT_DIR [--output PATH]

GIT_DIR is a clone (or bare git directory) of PrimeIntellect-ai/prime-rl. Every first-parent
commit of its main line that changed a config module, from its first release (v0.1, 2025-07) on,
is read statically: each module's source is parsed with `ast` (nothing upstream is imported or
run), the pydantic classes and their fields are collected, and from each entrypoint's root class
(`RLConfig`, `OrchestratorConfig`, ...) the tree of TOML keys is walked. The table holds, per
config kind and key path, its type and default (as of the last commit that had it), the spans of
commits in which it existed, and its successor where it was renamed or moved (a key that left in
the commit where a key of the same leaf name arrived elsewhere, or where a close name arrived in
the same table, or whose table was renamed). Facts only: no upstream code is kept.

Key paths: tables are dotted; the entries of an array of tables (`[[orchestrator.env]]`) add no
segment; a table of free names (`dict[str, Model]`) adds `*`.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import gzip
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "tools/configs/prime_rl_history.json.gz"
FIRST_RELEASE = "v0.1"
# Where the config classes lived: zeroband (2025-07), src/prime_rl/*/config.py and rl.py
# (2025-07 to 2026-03), src/prime_rl/configs (2026-03), packages/prime-rl-configs (2026-06 on).
MODULES = re.compile(r"^(src/(zeroband|prime_rl)/(.+/)?config\.py|src/prime_rl/(rl|\w+_config)\.py"
                     r"|src/prime_rl/configs/\w+\.py|src/prime_rl/utils/pydantic_config\.py"
                     r"|packages/prime-rl-configs/src/prime_rl/.+\.py)$")
PATHSPECS = ["src", "packages/prime-rl-configs/src"]
# Each entrypoint's root class, by name (and where a name is ambiguous, the module it sits in).
ROOTS: dict[str, list[tuple[str, str]]] = {
    "rl": [("", "RLConfig")],
    "trainer": [("", "RLTrainerConfig"), (r"(\.trainer\.config|configs\.trainer)$", "TrainerConfig"),
                (r"training\.config$", "Config")],
    "orchestrator": [("", "OrchestratorConfig")],
    "inference": [("", "InferenceConfig")],
    "sft": [("", "SFTTrainerConfig"), ("", "SFTConfig")],
    "eval": [("", "EvalsConfig"), ("", "OfflineEvalConfig"), (r"(^|\.)eval\.config$", "EvalConfig")],
    "env-server": [("", "EnvServerConfig")],
}
MAX_DEPTH = 12


@dataclass
class Field_:
    type: str
    default: Any
    names: list[str]  # the names its annotation refers to (classes, aliases)
    map: bool  # dict[str, Model]: its keys are free names
    foreign: bool  # typed by another package's class (verifiers' `vf.EnvConfig`, `renderers`'), or Any


@dataclass
class Module:
    name: str
    classes: dict[str, tuple[list[str], dict[str, Field_]]] = field(default_factory=dict)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True,
                          text=True).stdout


class Blobs:
    """Reads blobs through one `git cat-file --batch` process."""

    def __init__(self, git_dir: Path):
        self.process = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, sha: str) -> str:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(sha.encode() + b"\n")
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        size = int(header[2])
        data = self.process.stdout.read(size + 1)[:-1]
        return data.decode("utf-8", "replace")


def module_name(path: str) -> str:
    name = path.split("src/", 1)[1].removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _names(node: ast.AST) -> list[str]:
    """The plain names an expression refers to, forward references (`'VLMConfig | None'`) too;
    not the values of a `Literal[...]`, nor `module.Name` (a class of another package, such as
    verifiers' `vf.EnvConfig`, is none of prime-rl's)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _names(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
        return ["Literal"]
    return [name for child in ast.iter_child_nodes(node) for name in _names(child)]


def _callee(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _strip_annotated(node: ast.expr) -> tuple[ast.expr, list[ast.expr]]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node, []
    if isinstance(node, ast.Subscript) and _callee(node.value) == "Annotated":
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return parts[0], list(parts[1:])
    return node, []


def _field_default(value: ast.expr | None, metadata: list[ast.expr]) -> Any:
    """The default as a JSON value where it is a literal, else `{"expr": source}`; None-as-missing
    is `{"required": true}`."""
    call = value if isinstance(value, ast.Call) and _callee(value.func) == "Field" else None
    if call is None and value is not None:
        return _literal(value)
    calls = [call] if call else [m for m in metadata if isinstance(m, ast.Call) and _callee(m.func) == "Field"]
    for c in calls:
        for keyword in c.keywords:
            if keyword.arg == "default":
                return _literal(keyword.value)
            if keyword.arg == "default_factory":
                return {"expr": ast.unparse(keyword.value) + "()"}
        if c.args and not (isinstance(c.args[0], ast.Constant) and c.args[0].value is Ellipsis):
            return _literal(c.args[0])
    return {"required": True}


def _literal(node: ast.expr) -> Any:
    try:
        value = ast.literal_eval(node)
        json.dumps(value)
        return value
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return {"expr": ast.unparse(node)}


def parse_module(name: str, source: str) -> Module:
    module = Module(name)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return module
    package = name.rsplit(".", 1)[0]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module is not None or node.level):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                module.imports[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and not isinstance(node, ast.ClassDef):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                module.aliases[targets[0].id] = _names(node.value)
        elif hasattr(ast, "TypeAlias") and isinstance(node, ast.TypeAlias):
            module.aliases[node.name.id] = _names(node.value)
        elif isinstance(node, ast.ClassDef):
            fields: dict[str, Field_] = {}
            for item in node.body:
                if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                    continue
                key = item.target.id
                if key.startswith("_") or key == "model_config" or "ClassVar" in _names(item.annotation):
                    continue
                annotation, metadata = _strip_annotated(item.annotation)
                is_map = isinstance(annotation, ast.Subscript) and _callee(annotation.value) in ("dict", "Dict")
                fields[key] = Field_(ast.unparse(annotation), _field_default(item.value, metadata),
                                     _names(annotation), is_map, _foreign(annotation, module.imports))
            module.classes[node.name] = ([ast.unparse(b) for b in node.bases], fields)
    return module


# Names from the standard library and pydantic that type a value, never a table of its own.
_PLAIN = re.compile(r"^(typing|typing_extensions|pydantic|pydantic_settings|pydantic_config|pathlib|datetime|enum"
                    r"|collections.*)$")


def _foreign(annotation: ast.expr, imports: dict[str, tuple[str, str]]) -> bool:
    """Whether a field's table belongs to another package (its keys are that package's to judge)."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Attribute) and node.attr[:1].isupper():
            return True
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Name) and node.id in imports:
            source = imports[node.id][0]
            if not source.startswith(("prime_rl", "zeroband")) and not _PLAIN.match(source) and node.id[:1].isupper():
                return True
    return False


class Commit:
    """The classes of one commit, with names resolved through each module's imports."""

    def __init__(self, modules: dict[str, Module]):
        self.modules = modules

    def resolve(self, module: str, name: str, depth: int = 0) -> list[tuple[str, str]]:
        found = self.modules.get(module)
        if found is None or depth > 8:
            return []
        if name in found.classes:
            return [(module, name)]
        if name in found.aliases:
            return [c for n in found.aliases[name] if n != name for c in self.resolve(module, n, depth + 1)]
        if name in found.imports:
            source, original = found.imports[name]
            return self.resolve(source, original, depth + 1)
        return []

    def fields(self, class_id: tuple[str, str], depth: int = 0) -> dict[str, tuple[str, Field_]]:
        """Every field of a class with its bases' (the class's own win), with the module it is read in."""
        module, name = class_id
        bases, own = self.modules[module].classes[name]
        merged: dict[str, tuple[str, Field_]] = {}
        for base in bases if depth < 8 else []:
            for resolved in self.resolve(module, base.split("[")[0]):
                if resolved != class_id:
                    merged.update(self.fields(resolved, depth + 1))
        merged.update({key: (module, value) for key, value in own.items()})
        return merged

    def foreign_base(self, class_id: tuple[str, str], depth: int = 0) -> bool:
        """Whether a class takes fields from another package's class (`class X(vf.EnvConfig)`)."""
        module, name = class_id
        found = self.modules[module]
        for base in found.classes[name][0]:
            base = base.split("[")[0]
            if "." in base:
                return True
            resolved = self.resolve(module, base)
            if any(depth < 8 and self.foreign_base(r, depth + 1) for r in resolved if r != class_id):
                return True
            source = found.imports.get(base, ("", ""))[0]
            if not resolved and source and not source.startswith(("prime_rl", "zeroband")) and not _PLAIN.match(
                    source):
                return True
        return False

    def root(self, kind: str) -> tuple[str, str] | None:
        for pattern, name in ROOTS[kind]:
            for module in sorted(self.modules):
                if name in self.modules[module].classes and re.search(pattern, module):
                    return module, name
        return None

    def keys(self, kind: str) -> dict[str, tuple[str, Any, bool]]:
        root = self.root(kind)
        found: dict[str, tuple[str, Any, bool]] = {}
        if root is not None:
            self._walk(root, "", found, (root,))
        return found

    def _walk(self, class_id: tuple[str, str], prefix: str, found: dict[str, tuple[str, Any, bool]],
              seen: tuple[tuple[str, str], ...]) -> None:
        for key, (module, value) in self.fields(class_id).items():
            path = f"{prefix}{key}"
            children = [c for n in dict.fromkeys(value.names) for c in self.resolve(module, n)]
            foreign = value.foreign or any(self.foreign_base(c) for c in dict.fromkeys(children))
            found[path] = (value.type, value.default, foreign)
            below = f"{path}.*." if value.map else f"{path}."
            for child in dict.fromkeys(children):
                if child not in seen and len(seen) < MAX_DEPTH:
                    self._walk(child, below, found, (*seen, child))


def commits(git_dir: Path) -> list[tuple[str, str]]:
    start = git(git_dir, "log", "-1", "--format=%cI", FIRST_RELEASE).strip()
    lines = git(git_dir, "log", "--first-parent", "--reverse", f"--since={start}", "--format=%H %cs", "HEAD",
                "--", *PATHSPECS).split("\n")
    return [(sha, date) for sha, date in (line.split() for line in lines if line.strip())]


def history(git_dir: Path) -> dict[str, Any]:
    blobs = Blobs(git_dir)
    parsed: dict[str, Module] = {}
    timeline = commits(git_dir)
    kept: list[tuple[str, str]] = []
    spans: dict[str, dict[str, list[list[int]]]] = {kind: {} for kind in ROOTS}
    latest: dict[str, dict[str, tuple[str, Any, bool]]] = {kind: {} for kind in ROOTS}
    defaults: dict[str, dict[str, list[list[Any]]]] = {kind: {} for kind in ROOTS}
    opened: dict[str, set[str]] = {kind: set() for kind in ROOTS}
    previous_blobs: tuple[str, ...] | None = None
    for sha, date in timeline:
        tree = git(git_dir, "ls-tree", "-r", sha, "--", *PATHSPECS)
        files = [(line.split()[2], line.split("\t", 1)[1]) for line in tree.splitlines()]
        files = [(blob, path) for blob, path in files if MODULES.match(path)]
        signature = tuple(sorted(blob for blob, _ in files))
        if signature == previous_blobs:
            continue  # no config module changed
        previous_blobs = signature
        modules = {}
        for blob, path in files:
            if blob not in parsed:
                parsed[blob] = parse_module(module_name(path), blobs.read(blob))
            modules[module_name(path)] = parsed[blob]
        commit = Commit(modules)
        index = len(kept)
        kept.append((sha[:10], date))
        for kind in ROOTS:
            for path, fact in commit.keys(kind).items():
                runs = spans[kind].setdefault(path, [])
                if runs and runs[-1][1] == index - 1:
                    runs[-1][1] = index
                else:
                    runs.append([index, index])
                if path not in latest[kind] or latest[kind][path][1] != fact[1]:
                    defaults[kind].setdefault(path, []).append([index, fact[1]])
                latest[kind][path] = fact
                if fact[2]:
                    opened[kind].add(path)
    last = len(kept) - 1
    table: dict[str, Any] = {}
    for kind in ROOTS:
        entries = {}
        for path in sorted(spans[kind]):
            type_, default, _ = latest[kind][path]
            entries[path] = {"type": type_, "default": default, "spans": spans[kind][path]}
            if len(defaults[kind][path]) > 1:
                entries[path]["defaults"] = defaults[kind][path]  # [commit index, default from then on]
            if path in opened[kind]:
                entries[path]["open"] = True  # its keys are another package's (on some date)
        _successors(entries, last)
        table[kind] = entries
    return {"_about": "prime-rl's config keys per commit, read statically (ast) from PrimeIntellect-ai/prime-rl "
                      "(Apache-2.0) by scripts/prime_rl_history.py; do not edit by hand. `spans` index `commits` "
                      "(first-parent commits of main that changed a config module); `default` is the last "
                      "one, `defaults` its changes; `successor` is inferred.",
            "commits": kept, "tags": _tags(git_dir, kept), "kinds": table}


def _successors(entries: dict[str, dict[str, Any]], last: int) -> None:
    """Where a key went when it left: a key of the same leaf name that arrived in that commit
    (moved), else its table's successor, else a close name that arrived in the same table."""
    arrived: dict[int, list[str]] = {}
    for path, entry in entries.items():
        for start, _ in entry["spans"]:
            arrived.setdefault(start, []).append(path)
    for path in sorted(entries, key=lambda p: p.count(".")):
        entry = entries[path]
        end = entry["spans"][-1][1]
        if end == last:
            continue
        new = [p for p in arrived.get(end + 1, []) if p != path]
        leaf = path.rsplit(".", 1)[-1]
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        same_leaf = [p for p in new if p.rsplit(".", 1)[-1] == leaf]
        successor = None
        parent_successor = entries.get(parent, {}).get("successor") if parent else None
        if parent_successor and f"{parent_successor}.{leaf}" in entries:
            successor = f"{parent_successor}.{leaf}"
        elif same_leaf:
            successor = max(same_leaf, key=lambda p: difflib.SequenceMatcher(None, p, path).ratio())
        else:
            siblings = [p for p in new if (p.rsplit(".", 1)[0] if "." in p else "") == parent]
            close = difflib.get_close_matches(leaf, [p.rsplit(".", 1)[-1] for p in siblings], n=1, cutoff=0.7)
            # A new name for the same thing: the one key that arrived beside it with its type and default.
            alike = [p for p in siblings if (entries[p]["type"], entries[p]["default"]) == (entry["type"],
                                                                                         entry["default"])]
            if close:
                successor = f"{parent}.{close[0]}" if parent else close[0]
            elif len(alike) == 1:
                successor = alike[0]
        if successor:
            entry["successor"] = successor


def _tags(git_dir: Path, kept: list[tuple[str, str]]) -> dict[str, int]:
    """Each release tag as the index of the last kept commit it contains."""
    index = {sha: i for i, (sha, _) in enumerate(kept)}
    found = {}
    for tag in git(git_dir, "tag", "--list", "v*").split():
        if not re.fullmatch(r"v\d+\.\d+(\.\d+)?", tag):
            continue
        ancestors = [index[sha[:10]] for sha in git(git_dir, "rev-list", tag).split() if sha[:10] in index]
        if ancestors:
            found[tag] = max(ancestors)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", type=Path)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    table = history(args.git_dir)
    data = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    args.output.write_bytes(gzip.compress(data, mtime=0))
    sizes = {kind: len(keys) for kind, keys in table["kinds"].items()}
    print(f"{len(table['commits'])} commits, keys per kind {sizes}, {args.output.stat().st_size} bytes "
          f"-> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
