"""Validate configs with prime-rl's own config classes; run by another interpreter, never imported.

`python schema_worker.py REQUEST.json` in the environment of a prime-rl checkout (or a cached
`prime-rl-configs` install), with that schema on PYTHONPATH. The request is a list of
`{"path", "kind", "data"}`; stdout is one JSON list of `{"path", "errors": [{"loc", "msg"}],
"unresolved": [...]}`, or `{"load_error": "..."}` when the classes cannot be imported. Only the
standard library and the schema's own dependencies are used here: rlpilot is not installed in
that environment.

Environment packages named in a config (taskset and harness ids) resolve by import; one that is
not installed is stood in for by an empty plugin, and what upstream says inside its block is
reported as unresolved rather than as an error (what `prime train validate` does by deferring
the env sources).
"""

from __future__ import annotations

import importlib
import json
import sys
import types

# Where each kind's root class lives: the slim package (v0.5 on), then the older modules.
ROOTS = {
    "rl": [("prime_rl.configs.rl", "RLConfig"), ("prime_rl.rl", "RLConfig")],
    "trainer": [("prime_rl.configs.trainer", "TrainerConfig"), ("prime_rl.trainer.rl.config", "RLTrainerConfig")],
    "orchestrator": [("prime_rl.configs.orchestrator", "OrchestratorConfig"),
                     ("prime_rl.orchestrator.config", "OrchestratorConfig")],
    "inference": [("prime_rl.configs.inference", "InferenceConfig"), ("prime_rl.inference.config", "InferenceConfig")],
    "env-server": [("prime_rl.configs.env_server", "EnvServerConfig")],
    "sft": [("prime_rl.configs.sft", "SFTConfig"), ("prime_rl.trainer.sft.config", "SFTTrainerConfig")],
    "eval": [("prime_rl.configs.evals", "EvalsConfig")],
}
UNRESOLVED: list[str] = []


def _lenient_plugins() -> None:
    """Stand in for environment packages that are not installed, and note their ids."""
    try:
        from verifiers.v1.utils import loaders
    except ImportError:
        return
    original = loaders._import_plugin

    def import_plugin(plugin_id, kind, group):
        try:
            return original(plugin_id, kind, group)
        except ModuleNotFoundError:
            bases = {"taskset": getattr(loaders, "Taskset", None), "harness": getattr(loaders, "Harness", None)}
            base = bases.get(kind)
            if base is None:
                raise
            UNRESOLVED.append(f"{kind} {plugin_id!r}")
            stub = types.ModuleType(f"unresolved_{kind}")
            stub.Unresolved = type("Unresolved", (base,), {"__module__": stub.__name__})
            stub.__all__ = ["Unresolved"]
            return stub

    loaders._import_plugin = import_plugin


def _root(kind: str):
    for module, name in ROOTS.get(kind, []):
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as error:
            if not (error.name or "").startswith("prime_rl"):
                raise
    return None


def main(request_path: str) -> None:
    from pydantic import ValidationError

    with open(request_path) as handle:
        request = json.load(handle)
    _lenient_plugins()
    results = []
    for entry in request:
        try:
            cls = _root(entry["kind"])
        except Exception as error:  # the classes themselves do not load: say so, once
            print(json.dumps({"load_error": f"{type(error).__name__}: {error}"}))
            return
        result = {"path": entry["path"], "errors": [], "unresolved": [], "skipped": cls is None}
        UNRESOLVED.clear()
        if cls is not None:
            try:
                cls.model_validate(entry["data"])
            except ValidationError as error:
                result["errors"] = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in error.errors()]
            except Exception as error:  # a validator that raised something else still refused it
                result["errors"] = [{"loc": [], "msg": f"{type(error).__name__}: {error}"}]
        result["unresolved"] = sorted(set(UNRESOLVED))
        results.append(result)
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
