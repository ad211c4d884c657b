"""prime-rl's config schema of each release, read from ../shared/upstream without importing it.

`walk(ref)` reads the pydantic config classes of one release (an AST walk: the older config
modules import torch and parts of prime-rl that are not there) and returns the graph that
`tools/configs/upstream_keys.json` stores: the root class of each config kind, and for each
class its fields, the classes a field's table may be, whether its keys are free names
(`dict[str, Model]`), and whether the class is open (extra keys allowed, or defined outside
prime-rl, like verifiers' `EnvConfig`).

`python tests/upstream_schema.py` rewrites tools/configs/upstream_keys.json; the test
tests/test_config_schema.py fails when the stored graph and upstream disagree.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any

SHARED = Path(os.environ.get("RLPILOT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
UPSTREAM = SHARED / "upstream"
STORED = Path(__file__).resolve().parents[1] / "tools/configs/upstream_keys.json"

_SLIM = {"rl": "configs.rl:RLConfig", "trainer": "configs.trainer:TrainerConfig",
         "orchestrator": "configs.orchestrator:OrchestratorConfig", "inference": "configs.inference:InferenceConfig",
         "env-server": "configs.env_server:EnvServerConfig", "sft": "configs.sft:SFTConfig"}
_OLD = {"rl": "rl:RLConfig", "trainer": "trainer.rl.config:RLTrainerConfig",
        "orchestrator": "orchestrator.config:OrchestratorConfig", "inference": "inference.config:InferenceConfig",
        "sft": "trainer.sft.config:SFTTrainerConfig"}
REFS: dict[str, tuple[str, dict[str, str]]] = {
    "v0.3.0": ("prime-rl-config-modules-v0.3.0", _OLD),
    "v0.4.0": ("prime-rl-config-modules-v0.4.0", _OLD),
    "v0.5.0": ("prime-rl-config-modules-v0.5.0", _SLIM),
    "v0.6.0": ("prime-rl-configs-v0.6.0", _SLIM),
    "v0.7.0": ("prime-rl-configs-v0.7.0", _SLIM),
    "v0.8.0": ("prime-rl-configs-v0.8.0", _SLIM),
    "main": ("prime-rl-configs-main-2026-08-21", {**_SLIM, "eval": "configs.evals:EvalsConfig"}),
}

# Names an annotation may use that are values, not tables.
_SCALARS = {"str", "int", "float", "bool", "bytes", "Path", "Literal", "None", "Any", "datetime", "timedelta",
            "NonNegativeInt", "PositiveInt", "NonNegativeFloat", "PositiveFloat", "Enum"}
_WRAPPERS = {"Optional", "Union", "list", "List", "tuple", "Tuple", "set", "Sequence", "SerializeAsAny", "ClassVar"}
_PYDANTIC_BASES = {"BaseModel", "BaseConfig", "BaseSettings", "PydanticBaseSettings", "StrEnum", "Enum"}


class _Module:
    def __init__(self, name: str, path: Path):
        self.name = name
        tree = ast.parse(path.read_text())
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.imports: dict[str, tuple[str, str]] = {}
        self.aliases: dict[str, ast.expr] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (alias.name, "")
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.aliases[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.aliases[node.target.id] = node.value


class _Walker:
    def __init__(self, src: Path):
        self.src = src
        self.modules: dict[str, _Module | None] = {}
        self.classes: dict[str, dict[str, Any]] = {}

    def module(self, name: str) -> _Module | None:
        if name not in self.modules:
            base = self.src / Path(*name.split("."))
            path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
            self.modules[name] = _Module(name, path) if name.startswith("prime_rl") and path.is_file() else None
        return self.modules[name]

    def resolve(self, module: _Module, name: str) -> tuple[str, Any]:
        """("class", id) | ("alias", (module, expr)) | ("external", name) | ("scalar", name)."""
        if name in module.classes:
            return "class", f"{module.name}:{name}"
        if name in module.aliases:
            return "alias", (module, module.aliases[name])
        if name in module.imports:
            source, original = module.imports[name]
            other = self.module(source)
            if other is None:
                known = original in _SCALARS or original in _PYDANTIC_BASES or source in ("typing", "pathlib")
                return ("scalar" if known else "external"), original or name
            return self.resolve(other, original)
        return "scalar", name

    def tables(self, module: _Module, node: ast.expr | None, found: dict[str, Any]) -> None:
        """Collect the classes an annotation may hold into `found` (tables, map, open)."""
        if node is None:
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.tables(module, ast.parse(node.value, mode="eval").body, found)
        elif isinstance(node, ast.BinOp):
            self.tables(module, node.left, found)
            self.tables(module, node.right, found)
        elif isinstance(node, ast.Subscript):
            head = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Literal":
                return
            if head == "Annotated":
                self.tables(module, items[0], found)
            elif head in ("dict", "Dict", "Mapping"):
                inner: dict[str, Any] = {"tables": set(), "map": False, "open": False}
                self.tables(module, items[-1], inner)
                if inner["tables"] or inner["open"]:
                    found["map"] = True
                    found["tables"] |= inner["tables"]
                    found["open"] |= inner["open"]
                else:
                    found["open"] = True  # a free dict of values, e.g. `extra_body`
            else:
                for item in items:
                    self.tables(module, item, found)
        elif isinstance(node, ast.Attribute):
            found["open"] = True  # `vf.EnvConfig`: a schema that is not prime-rl's
        elif isinstance(node, ast.Name):
            kind, what = self.resolve(module, node.id)
            if kind == "class":
                found["tables"].add(self.walk_class(what))
            elif kind == "alias":
                self.tables(what[0], what[1], found)
            elif kind == "external":
                found["open"] = True
            elif what == "Any" or what in ("dict", "Dict"):
                found["open"] = True

    def walk_class(self, class_id: str) -> str:
        if class_id in self.classes:
            return class_id
        module_name, _, name = class_id.partition(":")
        module = self.module(module_name)
        node = module.classes[name]
        entry: dict[str, Any] = {"open": False, "fields": {}}
        self.classes[class_id] = entry
        for base in node.bases:
            base_name = base.id if isinstance(base, ast.Name) else None
            kind, what = self.resolve(module, base_name) if base_name else ("external", "")
            if kind == "class":
                parent = self.classes[self.walk_class(what)]
                entry["open"] |= parent["open"]
                entry["fields"].update(parent["fields"])
            elif kind == "external" or (kind == "scalar" and what not in _PYDANTIC_BASES):
                entry["open"] = True
        for statement in node.body:
            if isinstance(statement, ast.Assign) and any(getattr(t, "id", "") == "model_config"
                                                         for t in statement.targets):
                if "extra='allow'" in ast.unparse(statement.value).replace('"', "'"):
                    entry["open"] = True
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            field = statement.target.id
            if field == "model_config" or field.startswith("_") or "ClassVar" in ast.unparse(statement.annotation):
                continue
            found: dict[str, Any] = {"tables": set(), "map": False, "open": False}
            self.tables(module, statement.annotation, found)
            shape = None
            if found["tables"] or found["open"] or found["map"]:
                shape = {"tables": sorted(found["tables"]), "map": found["map"], "open": found["open"]}
            for key in [field, *_aliases(statement)]:
                entry["fields"][key] = shape
        return class_id


def _aliases(statement: ast.AnnAssign) -> list[str]:
    """Other names a field accepts: `validation_alias=AliasChoices(...)` or `alias=`."""
    names: list[str] = []
    for node in ast.walk(statement):
        if isinstance(node, ast.keyword) and node.arg in ("alias", "validation_alias"):
            names += [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return names


def walk(ref: str) -> dict[str, Any]:
    folder, roots = REFS[ref]
    walker = _Walker(UPSTREAM / folder / "src")
    found_roots = {kind: walker.walk_class("prime_rl." + root) for kind, root in roots.items()}
    return {"roots": found_roots, "classes": dict(sorted(walker.classes.items()))}


def walk_all() -> dict[str, Any]:
    return {ref: walk(ref) for ref in REFS}


if __name__ == "__main__":
    STORED.write_text(json.dumps({"_about": "prime-rl's config classes per release, walked from its source by "
                                            "tests/upstream_schema.py; do not edit by hand", **walk_all()},
                                 indent=1, sort_keys=False) + "\n")
    print(f"wrote {STORED} ({STORED.stat().st_size} bytes)", file=sys.stderr)
