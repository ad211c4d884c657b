"""Validate configs with prime-rl's own config classes; run by the schema's interpreter, not rlpilot's.

`python schema_worker.py SOCKET IDLE_S` in the environment of a prime-rl checkout (or a cached
`prime-rl-configs` install), with that schema on PYTHONPATH. It listens on the Unix socket
SOCKET, detaches, and answers requests until it has been idle for IDLE_S seconds: importing
upstream's classes (verifiers, renderers and their clients) takes seconds, validating a file
takes milliseconds, so one warm worker serves every check until it goes idle.

A request is a JSON list of `{"path", "kind", "data"}`, sent whole and followed by end of
input; the answer is one JSON list of `{"path", "errors": [{"loc", "msg", "type"}], "unresolved":
[...], "skipped"}` (`type` is pydantic's error type), or `{"load_error": "..."}` when the classes cannot be imported, or
`{"stale": true}` when a module it has loaded changed on disk since (an edited environment
package, a schema copied with its old mtimes); after either the worker stops listening and
exits, so the next request gets a fresh one. TOML dates and times travel as
`{"__toml__": "date", "value": ISO}`. A connection that breaks, or sends nothing for a minute,
is dropped; the worker serves on. Only the standard library and the schema's own
dependencies are used here: rlpilot is not installed in that environment, so its daemons door
(tools/io/daemon.py) is loaded by its path.

Environment packages named in a config (taskset and harness ids) resolve by import; one that is
not installed is stood in for by an empty plugin, and what upstream says inside its block is
reported as unresolved rather than as an error (what `prime train validate` does by deferring
the env sources).
"""

from __future__ import annotations

import datetime
import importlib
import importlib.util
import json
import os
import socket
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
CONNECTION_TIMEOUT_S = 60.0
SEEN: dict[str, tuple[int, int]] = {}  # each loaded module's file: (mtime, size) when it was first seen
TOML_TIMES = {"datetime": datetime.datetime, "date": datetime.date, "time": datetime.time}


def _door() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rlpilot_daemon", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "io", "daemon.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


daemon = _door()


class LoadError(Exception):
    """Upstream's classes do not import in this environment."""


def _lenient_plugins() -> None:
    """Stand in for environment packages that are not installed, and note their ids. Only once
    the schema has imported verifiers: importing it for a schema that does not use it costs seconds."""
    if "verifiers" not in sys.modules:
        return
    try:
        from verifiers.v1.utils import loaders
    except ImportError:
        return
    original = loaders._import_plugin
    if getattr(original, "lenient", False):
        return

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

    import_plugin.lenient = True
    loaders._import_plugin = import_plugin


def _root(kind: str):
    try:
        for module, name in ROOTS.get(kind, []):
            try:
                return getattr(importlib.import_module(module), name)
            except ModuleNotFoundError as error:  # this era keeps the class elsewhere
                if error.name != "prime_rl" and not (error.name or "").startswith("prime_rl."):
                    raise
    except Exception as error:  # the classes themselves do not load
        raise LoadError(f"{type(error).__name__}: {error}") from error
    return None


def _module_files() -> dict[str, str]:
    return {path: name for name, module in list(sys.modules.items()) if (path := getattr(module, "__file__", None))}


def _state(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def changed_modules() -> list[str]:
    """Modules whose file differs from when this worker first saw it loaded."""
    return [name for path, name in _module_files().items() if path in SEEN and _state(path) != SEEN[path]]


def note_new_modules() -> None:
    """Remember the files of modules loaded since the last look (a request's tasksets, plugins)."""
    for path in _module_files():
        if path not in SEEN and (state := _state(path)) is not None:
            SEEN[path] = state


def from_wire(value: dict):
    kind = value.get("__toml__")
    return TOML_TIMES[kind].fromisoformat(value["value"]) if kind in TOML_TIMES else value


def answer(request: list[dict]) -> list[dict]:
    from pydantic import ValidationError

    importlib.invalidate_caches()  # an environment package installed since the last request
    results = []
    for entry in request:
        cls = _root(entry["kind"])
        _lenient_plugins()
        result = {"path": entry["path"], "errors": [], "unresolved": [], "skipped": cls is None}
        UNRESOLVED.clear()
        if cls is not None:
            try:
                cls.model_validate(entry["data"])
            except ValidationError as error:
                result["errors"] = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in error.errors()]
            except Exception as error:  # a validator that raised something else still refused it
                result["errors"] = [{"loc": [], "msg": f"{type(error).__name__}: {error}"}]
        result["unresolved"] = sorted(set(UNRESOLVED))
        results.append(result)
    return results


def _serve_one(connection: socket.socket, retire) -> bool:
    """Answer one request; True when the worker should end after it (it stops listening first,
    so the client that asks next starts a fresh one)."""
    connection.settimeout(CONNECTION_TIMEOUT_S)
    try:
        request = json.loads(daemon.receive_all(connection), object_hook=from_wire)
        if changed_modules():
            reply, stop = {"stale": True}, True
        else:
            try:
                reply, stop = answer(request), False
            except LoadError as error:
                reply, stop = {"load_error": str(error)}, True
            note_new_modules()  # what this request loaded is held to its state from now on
        if stop:
            retire()
        connection.settimeout(None)
        connection.sendall(json.dumps(reply).encode())
        return stop
    except (OSError, ValueError) as error:  # a client that left, hung up early, or sent half a request
        print(f"dropped a request: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        return False


def serve(path: str, idle_s: float) -> None:
    listener = daemon.listen(path)
    if listener is None:
        print("running", flush=True)
        return
    inode = os.stat(path).st_ino
    # The client connects once "started" is printed; its request waits in the backlog meanwhile.
    daemon.detach(lambda _: "started", path + ".log")
    daemon.write_private(path + ".pid", f"{os.getpid()}\n")

    def retire() -> None:
        daemon.retire(path, inode)
        listener.close()

    listener.settimeout(idle_s)
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                return
            with connection:
                if _serve_one(connection, retire):
                    return
    finally:
        retire()


if __name__ == "__main__":
    serve(sys.argv[1], float(sys.argv[2]))
