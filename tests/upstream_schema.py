"""prime-rl's config keys of each release, read from its published JSON Schemas (shared data).

`../shared/prime-rl-schemas/schemas/prime-rl-REF.schema.json` maps each config kind to the JSON
Schema pydantic exports for its root class. `graph(ref)` turns one release into the graph that
`tools/configs/upstream_keys.json` stores: the root class of each kind, and for each class its
fields, the classes a field's table may be (every member of a union), whether its keys are free
names (`dict[str, Model]`), and whether the class is open (upstream takes any key there: no
`additionalProperties: false`).

`python tests/upstream_schema.py` rewrites tools/configs/upstream_keys.json; the test
tests/test_config_schema.py fails when the stored graph and the schemas disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import SHARED  # the one resolver of ../shared

SCHEMAS = SHARED / "prime-rl-schemas/schemas"
STORED = Path(__file__).resolve().parents[1] / "tools/configs/upstream_keys.json"
# rlpilot's release names and the schema files they are read from.
REFS = {"v0.3.0": "v0.3.0", "v0.4.0": "v0.4.0", "v0.5.0": "v0.5.0", "v0.6.0": "v0.6.0", "v0.7.0": "v0.7.0",
        "v0.8.0": "v0.8.0", "main": "main-2026-08-21"}
# Other names a field takes (pydantic's `validation_alias=AliasChoices(...)`): a JSON Schema names
# only the first, so these are read from each release's config source. {ref: {class: {alias: field}}},
# where `class@kind` is that kind's own class of the name (sft's deployment is not rl's).
ALIASES: dict[str, dict[str, dict[str, str]]] = {
    "v0.3.0": {"OnlineEvalConfig": {"skip_eval_on_restart": "skip_eval_on_resume"}},
    "v0.4.0": {"OnlineEvalConfig": {"skip_eval_on_restart": "skip_eval_on_resume"}},
    "v0.5.0": {"EvalConfig": {"skip_eval_on_restart": "skip_eval_on_resume"}},
    "v0.6.0": {"OrchestratorConfig": {"rollouts_per_example": "group_size", "model": "student",
                                      "teacher_model": "teacher"},
               "EvalConfig": {"rollouts_per_example": "group_size"},
               "EnvConfig": {"timeout_seconds": "timeout"},
               "TrainEnvConfig": {"rollouts_per_example": "group_size", "timeout_seconds": "timeout"},
               "EvalEnvConfig": {"rollouts_per_example": "group_size", "timeout_seconds": "timeout"},
               "TrainSamplingConfig": {"max_tokens": "max_completion_tokens"},
               "EvalSamplingConfig": {"max_tokens": "max_completion_tokens"}},
    "v0.7.0": {"OrchestratorConfig": {"rollouts_per_example": "group_size"},
               "EvalConfig": {"rollouts_per_example": "group_size"},
               "TrainEnvConfig": {"rollouts_per_example": "group_size"},
               "EvalEnvConfig": {"rollouts_per_example": "group_size"},
               "TrainSamplingConfig": {"max_tokens": "max_completion_tokens"},
               "EvalSamplingConfig": {"max_tokens": "max_completion_tokens"}},
    "main": {"SingleNodeDeploymentConfig@sft": {"num_eval_gpus": "num_infer_gpus"},
             "MultiNodeDeploymentConfig@sft": {"num_eval_nodes": "num_infer_nodes"}},
}
# The schema files name kinds as Python identifiers; rlpilot's kinds are the CLI's words.
KIND_NAMES = {"env_server": "env-server"}


# verifiers' environment block (the class with a `taskset` or `harness`) is subclassed per
# environment: prime-rl's loader imports the environment package to narrow it, so its keys are
# the package's, not the schema's (prime-rl-schemas/README.md). rlpilot leaves it open.
_NARROWED = {"taskset", "harness"}


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


class _Reader:
    """One kind's schema: each `$defs` entry is a class, the document itself the root class."""

    def __init__(self, document: dict[str, Any]):
        self.defs = document.get("$defs", {})
        self.classes: dict[str, dict[str, Any]] = {}

    def walk_class(self, name: str, schema: dict[str, Any]) -> str:
        if name not in self.classes:
            entry: dict[str, Any] = {"open": schema.get("additionalProperties", True) is not False
                                     or bool(_NARROWED & schema.get("properties", {}).keys()), "fields": {}}
            self.classes[name] = entry
            for field, field_schema in sorted(schema.get("properties", {}).items()):
                found = {"tables": set(), "map": False, "open": False}
                self.tables(field_schema, found)
                entry["fields"][field] = ({"tables": sorted(found["tables"]), "map": found["map"],
                                           "open": found["open"]}
                                          if found["tables"] or found["open"] or found["map"] else None)
        return name

    def tables(self, schema: dict[str, Any], found: dict[str, Any]) -> None:
        """Collect the classes a value of this schema may be into `found` (tables, map, open)."""
        if "$ref" in schema:
            name = _ref_name(schema["$ref"])
            found["tables"].add(self.walk_class(name, self.defs[name]))
            return
        for union in ("anyOf", "oneOf", "allOf"):
            for member in schema.get(union, []):
                self.tables(member, found)
        if schema.get("type") == "array" or "items" in schema or "prefixItems" in schema:
            for item in [schema.get("items") or {}, *schema.get("prefixItems", [])]:
                if item:
                    self.tables(item, found)
        if schema.get("type") == "object" and "properties" not in schema:
            values = schema.get("additionalProperties", True)
            inner = {"tables": set(), "map": False, "open": False}
            if isinstance(values, dict):
                self.tables(values, inner)
            if inner["tables"] or inner["open"]:
                found["map"] = True
                found["tables"] |= inner["tables"]
                found["open"] |= inner["open"]
            else:
                found["open"] = True  # a free dict of values, e.g. `extra_body`
        elif schema == {} or (not schema.keys() - {"default", "title", "description"}):
            found["open"] = True  # Any: upstream takes whatever is written here


def graph(ref: str) -> dict[str, Any]:
    """One release's roots and classes. A class name that means different tables in two kinds
    (rare: a kind's own `TrainerConfig` and the rl file's) is told apart by its kind."""
    documents = json.loads((SCHEMAS / f"prime-rl-{REFS[ref]}.schema.json").read_text())
    roots: dict[str, str] = {}
    classes: dict[str, dict[str, Any]] = {}
    for schema_kind, document in sorted(documents.items()):
        if document is None:
            continue
        kind = KIND_NAMES.get(schema_kind, schema_kind)
        reader = _Reader(document)
        root = reader.walk_class(document["title"], document)
        for name, entry in reader.classes.items():
            aliases = ALIASES.get(ref, {})
            for alias, field in (aliases.get(f"{name}@{kind}") or aliases.get(name) or {}).items():
                if field in entry["fields"]:
                    entry["fields"].setdefault(alias, entry["fields"][field])
        clashes = {name for name, entry in reader.classes.items() if name in classes and classes[name] != entry}
        while True:  # a class that refers to a told-apart class is told apart too
            more = {name for name, entry in reader.classes.items() if name in classes and name not in clashes
                    and any(set(shape["tables"]) & clashes for shape in entry["fields"].values() if shape)}
            if not more:
                break
            clashes |= more
        rename = {name: f"{name}@{kind}" for name in clashes}
        for name, entry in reader.classes.items():
            for shape in entry["fields"].values():
                if shape:
                    shape["tables"] = sorted(rename.get(t, t) for t in shape["tables"])
            classes[rename.get(name, name)] = entry
        roots[kind] = rename.get(root, root)
    return {"roots": dict(sorted(roots.items())), "classes": dict(sorted(classes.items()))}


# prime-rl v0.9.0 (2026-08-24) and the main after it, which no schema here covers: main-2026-08-21's
# classes with the orchestrator's changes, read in upstream's `packages/prime-rl-configs/src/
# prime_rl/configs/orchestrator.py` of that era (code index, read 2026-12-03; research/prime-rl.md
# section 7). {class: (fields removed, {field added: its shape})}; a shape is None (a value),
# "open" (verifiers' own block: `vf.SelectConfig`, `vf.SharedEnvConfig`) or "Class.field" (the
# shape main gives that field). Applied to every kind's class of the name. One table serves the
# release and the main after it, so a key one of them takes is taken: `filter_zero_advantages`
# stays (v0.9.0 has it; main removed it on 2026-09-01, prime-rl #3463, which `CHANGES` says).
V09_REF = "v0.9"
V09_CHANGES: dict[str, tuple[tuple[str, ...], dict[str, str | None]]] = {
    "OrchestratorConfig": (("group_size", "algo", "token_batch_size", "env_server_base_port"),
                           {"constant_trainer_batch_size": None}),
    "TrainConfig": ((), {"group_size": None, "algo": "OrchestratorConfig.algo", "select": "open", "env": "open"}),
    "TrainSourceConfig": (("curriculum",), {"sampler": "CurriculumConfig.sampler", "min_abs_advantage": None,
                                            "select": "open"}),
    "TrainSamplingConfig": ((), {"top_p": None, "top_k": None}),
    "EvalConfig": (("num_examples",), {"select": "open", "env": "open"}),
    "EvalSourceConfig": (("num_examples", "ratio"), {"select": "open"}),
}


def graph_v09() -> dict[str, Any]:
    main = graph("main")
    classes = json.loads(json.dumps(main["classes"]))
    shapes = {f"{name.split('@')[0]}.{field}": shape for name, entry in main["classes"].items()
              for field, shape in entry["fields"].items()}
    for name, entry in classes.items():
        removed, added = V09_CHANGES.get(name.split("@")[0], ((), {}))
        for field in removed:
            del entry["fields"][field]
        for field, shape in added.items():
            entry["fields"][field] = ({"tables": [], "map": False, "open": True} if shape == "open"
                                      else shapes[shape] if shape else None)
        entry["fields"] = dict(sorted(entry["fields"].items()))
    # its eval entrypoint is a new `uv run eval` config with no schema here: left unjudged
    roots = {kind: root for kind, root in main["roots"].items() if kind != "eval"}
    return {"roots": roots, "classes": classes}


def graph_all() -> dict[str, Any]:
    return {**{ref: graph(ref) for ref in REFS}, V09_REF: graph_v09()}


if __name__ == "__main__":
    STORED.write_text(json.dumps({"_about": "prime-rl's config classes per release, read from its JSON "
                                            "Schemas (shared/prime-rl-schemas) by tests/upstream_schema.py; "
                                            "do not edit by hand",
                                  **graph_all()}, indent=1) + "\n")
    print(f"wrote {STORED} ({STORED.stat().st_size} bytes)", file=sys.stderr)
