"""Transition -> prime-rl-current (v0.8.0, then main), and back: environments as sources, vLLM's
arguments, batch filters, in-flight limits, and what main's validators want of a file."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table

from tools.configs import keytables
from tools.configs.dialects import KeyChange
from tools.configs.document import split_key
from tools.configs.migrations.run import Run
from tools.configs.toml_edit import get_item, inline, plain
from tools.io import files
from tools.verifiers.refs import local_env_dir, parse_env_ref
from tools.verifiers.source import Roles, read_roles


def to_sources(run: Run, change: KeyChange) -> None:
    """`[[orchestrator.train.env]]` (or `[[env]]`) entries -> `[[orchestrator.train.source]]`."""
    entries = run.pop(change.old)
    if not isinstance(entries, AoT | list):
        return
    converted = tomlkit.aot()
    for index, entry in enumerate(entries):
        table, notes = _source_entry(entry, run.workspace)
        converted.append(table)
        run.record(f"{change.old}[{index}]", "; ".join([change.why, *notes]), f"{change.new}[{index}]",
                   entry, table)
    run.put(change.new, converted)


# The agent prime-rl's examples give single-turn environments that run in-process; each role gets it.
LOCAL_AGENT = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
# verifiers 0.4's agent config defaults its runtime to PrimeConfig (verifiers/v1/configs/agent.py).
SANDBOX_UNLESS_RUNTIME = ("verifiers 0.4 runs each role in a Prime sandbox unless its `env.<role>.runtime` says "
                          "otherwise (`env.agent` for a plain taskset)")


def taskset_roles(taskset_id: str, workspace: Path | None) -> Roles:
    """The roles a taskset's EnvConfig declares, read from its source in the workspace's environments/."""
    folder = local_env_dir(workspace, parse_env_ref(taskset_id)) if workspace and taskset_id else None
    if folder is None or not folder.is_dir():
        return Roles(None, f"no source of {taskset_id or 'it'} in the workspace's environments/")
    return read_roles(folder)


def _source_entry(entry: Table, workspace: Path | None = None) -> tuple[Table, list[str]]:
    taskset, harness, runtime, rest = tomlkit.table(), tomlkit.table(), tomlkit.table(), []
    notes = []
    for key in list(entry.keys()):
        item = entry.item(key)
        if key == "id":
            taskset.append("id", item)
            if "/" in str(item):
                notes.append(f"the Hub id {item} became the taskset id; whether Hosted Training resolves Hub ids "
                             "there is unconfirmed: check with `prime train validate`")
        elif key in ("args", "taskset"):
            for name, value in plain(item).items():
                taskset[name] = value
            if key == "args":
                notes.append("the environment's `args` became taskset fields; some environments nest them "
                             "(alphabet-sort's `power_per_turn` is `taskset.task.power_per_turn`)")
        elif key == "harness":
            for name, value in plain(item).items():
                (runtime.update(value) if name == "runtime" else harness.__setitem__(name, value))
        elif key == "num_workers":
            # What transition's own `_migrate_num_workers` did: "auto" is the elastic default pool.
            if plain(item) != "auto":
                rest.append(("serve", inline({"pool": {"type": "static", "num_workers": plain(item)}})))
            notes.append("`num_workers` became the verifiers `serve.pool` (\"auto\" is its elastic default)")
        else:
            rest.append((key, item))
    table = tomlkit.table()
    for key, item in rest:
        table.append(key, item)
    if "name" not in table and "id" in taskset:
        table["name"] = str(taskset["id"]).rsplit("/", 1)[-1]
    roles = taskset_roles(str(taskset.get("id", "")), workspace)
    env = tomlkit.table(is_super_table=True)
    env.append("taskset", taskset)
    if not len(harness) and not len(runtime):
        if roles.names is None:
            notes.append(f"no harness or runtime was added: the roles of {taskset.get('id')} could not be read "
                         f"({roles.why}); {SANDBOX_UNLESS_RUNTIME}")
        else:
            harness.update(LOCAL_AGENT["harness"])
            runtime.update(LOCAL_AGENT["runtime"])
            notes.append(f"added harness `null` and runtime `subprocess` for each role ({', '.join(roles.names)}; "
                         f"{roles.why}) as prime-rl's own examples did: verifiers 0.4 otherwise runs them in a Prime "
                         "sandbox")
    # What the entry said of its one agent goes to each declared role (`agent` where they are not known).
    for role in roles.names or ["agent"] if len(harness) or len(runtime) else []:
        agent = tomlkit.table(is_super_table=True)
        if len(harness):
            agent.append("harness", harness.copy())
        if len(runtime):
            agent.append("runtime", runtime.copy())
        env.append(role, agent)
    table.append("env", env)
    return table, notes


def sources_back(run: Run, change: KeyChange) -> None:
    """`[[orchestrator.train.source]]` -> transition's `[[orchestrator.train.env]]` (v1 fields kept)."""
    entries = run.pop(change.new)
    if not isinstance(entries, AoT | list):
        return
    converted = tomlkit.aot()
    for index, entry in enumerate(entries):
        table = tomlkit.table()
        for key in list(entry.keys()):
            if key != "env":
                table.append(key, entry.item(key))
        env = plain(entry.get("env", {}))
        agent = env.get("agent", {})
        roles = [value for key, value in env.items() if key != "taskset"]
        if set(env.get("taskset", {})) == {"id"} and all(role == LOCAL_AGENT for role in roles):
            # What `_source_entry` makes of a flat v0 id goes back to one, comment and all.
            table.append("id", entry["env"]["taskset"].item("id"))
            agent, env = {}, {}
        if env.get("taskset"):
            table["taskset"] = tomlkit.inline_table()
            table["taskset"].update(env["taskset"])
        harness = dict(agent.get("harness", {}))
        if agent.get("runtime"):
            harness["runtime"] = agent["runtime"]
        if harness:
            table["harness"] = tomlkit.inline_table()
            table["harness"].update(harness)
        converted.append(table)
        run.record(f"{change.new}[{index}]", f"back to {change.origin}: {change.why}", f"{change.old}[{index}]",
                   entry, table)
    run.put(change.old, converted)


MAX_INFLIGHT_DEFAULT = 1024  # [orchestrator.concurrency] max_inflight on main


def oversampling(run: Run, change: KeyChange) -> None:
    factor = plain(get_item(run.doc, split_key(change.old)))
    if factor is None:
        return
    cap = "orchestrator.concurrency.max_inflight"
    if get_item(run.doc, split_key(change.new)) is not None or get_item(run.doc, split_key(cap)) is not None:
        run.remove(change.old, f"{change.why}; the in-flight limits are already set, so the factor had no effect",
                   "")
        return
    batch = plain(get_item(run.doc, ["orchestrator", "batch_size"])) or 128
    inflight = int(batch * factor)
    run.pop(change.old)
    run.put(change.new, inflight)
    run.record(change.old, f"{change.why}: {batch} x {factor:g}", change.new, factor, inflight)
    if inflight > MAX_INFLIGHT_DEFAULT:
        run.put(cap, inflight)
        run.record(change.old, f"{inflight} in flight is above the default `max_inflight` "
                   f"({MAX_INFLIGHT_DEFAULT})", cap, factor, inflight)


_VLLM_NAMES = {"name": "model", "tp": "tensor_parallel_size", "dp": "data_parallel_size"}


def vllm(run: Run, change: KeyChange) -> None:
    for old in ("inference.model", "inference.parallel"):
        table = run.pop(old)
        if table is None:
            continue
        for key, value in plain(table).items():
            new = f"inference.vllm.{_VLLM_NAMES.get(key, key)}"
            run.put(new, value)
            run.record(f"{old}.{key}", change.why, new, value, value)
    # vLLM's own arguments at the top of `[inference]` (and its `vllm_extra`) are `[inference.vllm]`'s on main.
    inference = get_item(run.doc, ["inference"])
    known = keytables.root("inference", ("main",)).keys()
    for key in [k for k in (inference.keys() if isinstance(inference, Table) else []) if k not in known]:
        value = plain(inference[key])
        if isinstance(value, dict) and key != "vllm_extra":
            continue
        run.pop(f"inference.{key}")
        for name, item in (value.items() if key == "vllm_extra" else [(key, value)]):
            run.put(f"inference.vllm.{name}", item)
            run.record(f"inference.{key}" + (f".{name}" if key == "vllm_extra" else ""),
                       "main passes vLLM's own arguments through `[inference.vllm]` (prime-rl #3202)",
                       f"inference.vllm.{name}", item, item)


def vllm_back(run: Run, change: KeyChange) -> None:
    table = run.pop("inference.vllm")
    back = {v: k for k, v in _VLLM_NAMES.items()}
    for key, value in (plain(table) or {}).items():
        name = back.get(key, key)
        old = f"inference.{'parallel' if name in ('tp', 'dp') else 'model'}.{name}"
        run.put(old, value)
        run.record(f"inference.vllm.{key}", f"back to v0.8.0: {change.why}", old, value, value)


def filters(run: Run, change: KeyChange) -> None:
    """An enforced zero-advantage pre-batch filter became a per-source advantage-range gate, as
    prime-rl's wiki-search example shows from v0.8.0 to main."""
    for slot in ("orchestrator.pre_batch_filters", "orchestrator.post_batch_filters"):
        entries = plain(get_item(run.doc, split_key(slot))) or []
        kept = []
        for entry in entries:
            if entry.get("type") == "zero_advantage" and entry.get("enforce", slot.startswith("orchestrator.pre")):
                sources = get_item(run.doc, split_key("orchestrator.train.source"))
                for source in sources if isinstance(sources, AoT) else []:
                    if "curriculum" not in source:
                        source["curriculum"] = {"gates": {"zero_advantage": {"type": "advantage_range"}}}
                run.record(slot, f"{change.why}: an enforced zero-advantage filter is a per-source "
                           "`curriculum.gates.zero_advantage.type = \"advantage_range\"` gate",
                           "orchestrator.train.source[].curriculum", entry, "advantage_range")
            elif not entry.get("enforce", False):
                run.record(slot, f"{change.why}; this {entry.get('type')} filter only counted, it dropped nothing",
                           before=entry)
            else:
                kept.append(entry)
        if kept:
            run.remove(slot, change.why, change.hint)
        else:
            run.pop(slot)


def main_requirements(run: Run) -> None:
    """What main's validators want of a config that v0.8.0 took as it was."""
    if plain(get_item(run.doc, ["resume", "step"])) == -1:
        run.pop("resume.step")
        if get_item(run.doc, ["resume"]) is None:
            run.put("resume", tomlkit.table())
        run.record("ckpt.resume_step", "`resume_step = -1` meant the latest checkpoint; on main that is an empty "
                   "`[resume]` table (its `step` must be at least 1)", "resume", -1, {})
    sources = get_item(run.doc, ["orchestrator", "train", "source"])
    algos = [("orchestrator.algo", get_item(run.doc, ["orchestrator", "algo"]))] + [
        (f"orchestrator.train.source[{i}].algo", source.get("algo"))
        for i, source in enumerate(sources if isinstance(sources, AoT) else [])]
    for where, algo in algos:
        if isinstance(algo, dict):
            _one_endpoint(run, where, algo)
    _shared_fields(run)
    _renderer(run)
    for where in ("model.impl", "trainer.model.impl"):
        if plain(get_item(run.doc, split_key(where))) == "liger_kernel":
            run.put(where, "auto")
            run.record(where, "prime-rl removed the `liger_kernel` model implementation (2026-01-30, #1691); `auto` "
                       "takes prime-rl's own where it has one, else Hugging Face's (main's default attention "
                       "needs one of those two)", where, "liger_kernel", "auto")
    for where in ("model.attn", "trainer.model.attn"):
        if plain(get_item(run.doc, split_key(where))) == "sdpa":
            run.record(where, "main's trainer has no `sdpa` attention (only the flash attention kernels)",
                       manual=True, before="sdpa",
                       suggestion=f"set {where} = \"auto\" (flash attention 3 on Hopper, 4 on Blackwell) or remove it")
    vlm = get_item(run.doc, ["model", "vlm"]) or get_item(run.doc, ["trainer", "model", "vlm"])
    if vlm is not None and get_item(run.doc, ["trainer", "model", "impl"]) is None:
        run.put("trainer.model.impl", "custom")
        run.record("trainer.model.impl", "main trains vision-language models only with `impl = \"custom\"` (its "
                   "`vlm_only_with_custom_impl` validator), as prime-rl's own multimodal configs set",
                   "trainer.model.impl", None, "custom")


# A Qwen3 text model published by someone other than Qwen (a fine-tune, absent from renderers'
# map): prime-rl's own main configs name its renderer `prime-qwen3`.
_QWEN3_FINE_TUNE = re.compile(r"^(?!qwen/)[^/]+/qwen3-(?!vl)", re.IGNORECASE)
# The copies main fills from a shared field (validation.py `propagate_shared_fields`, prime-rl #2565).
_SHARED_COPIES = {"seq_len": ("trainer.model.seq_len", "orchestrator.seq_len"),
                  "max_steps": ("trainer.max_steps", "orchestrator.max_steps"),
                  "model.name": ("trainer.model.name", "inference.vllm.model", "orchestrator.model.name")}


@functools.cache
def renderer_map() -> dict[str, Any]:
    """The models main's `renderer.name = 'auto'` resolves, with their renderer, and the renderers
    release that says so (renderer_map.json)."""
    return json.loads(files.package_data("tools.configs", "renderer_map.json"))


def _shared_fields(run: Run) -> None:
    """Before prime-rl #2565 (2026-05-20) a component's own value won over the shared one (and the
    orchestrator asked for the model inference served); main fills only the copies left unset and
    refuses one that disagrees. So a shared value some copy contradicts moves to the copies that
    set none, and the orchestrator asks for what inference serves."""
    for shared, copies in _SHARED_COPIES.items():
        value = plain(get_item(run.doc, split_key(shared)))
        own = {copy: plain(get_item(run.doc, split_key(copy))) for copy in copies}
        differ = [copy for copy, mine in own.items() if mine is not None and mine != value]
        if value is None or not differ:
            continue
        run.pop(shared)
        served = own.get("inference.vllm.model")
        for copy, mine in own.items():
            component = copy.split(".")[0]
            if mine is None and get_item(run.doc, [component]) is not None:
                filled = served if copy == "orchestrator.model.name" and served is not None else value
                run.put(copy, filled)
                run.record(shared, f"main refuses a shared `{shared}` that {', '.join(differ)} contradicts "
                           "(prime-rl #2565); this file's era let each component's own value win, so the shared "
                           "value moves to the components that set none" + (
                               " and the orchestrator asks for the model inference serves"
                               if filled is served and filled != value else ""), copy, value, filled)


def _renderer(run: Run) -> None:
    """Main's `renderer.name = 'auto'` (the default) refuses a model renderers' map does not list
    (`validate_renderer_auto_resolves`, prime-rl #2540); its removed `preserve_*` flags became
    `thinking_retention` (renderers, prime-rl #2900)."""
    renderer = get_item(run.doc, ["orchestrator", "renderer"])
    if isinstance(renderer, dict) and plain(renderer.get("preserve_all_thinking")) is not None:
        keep = plain(run.pop("orchestrator.renderer.preserve_all_thinking"))
        if keep:
            run.put("orchestrator.renderer.thinking_retention", "all")
        run.record("orchestrator.renderer.preserve_all_thinking", "renderers replaced `preserve_all_thinking` with "
                   "`thinking_retention` (prime-rl #2900)", "orchestrator.renderer.thinking_retention" if keep else
                   None, keep, "all" if keep else None)
    name = plain(renderer.get("name")) if isinstance(renderer, dict) else None
    model = plain(get_item(run.doc, ["orchestrator", "tokenizer", "name"]) or get_item(run.doc, ["tokenizer", "name"])
                   or get_item(run.doc, ["orchestrator", "model", "name"]) or get_item(run.doc, ["model", "name"]))
    if name not in (None, "auto") or not isinstance(model, str) or model in renderer_map()["models"]:
        return
    why = (f"main's renderer `auto` refuses {model}: the model map of renderers {renderer_map()['renderers']} "
           "does not list it, as fine-tunes often are")
    if _QWEN3_FINE_TUNE.search(model):
        chosen, why = "prime-qwen3", why + "; prime-rl's own Qwen3 configs name `prime-qwen3`"
    else:
        chosen = "default"
        why += ("; `default` applies the model's own chat template (if the environment uses tools, also set "
                "orchestrator.renderer.tool_parser to the model's parser)")
    if renderer is None:
        run.put("orchestrator.renderer", tomlkit.table())
    run.put("orchestrator.renderer.name", chosen)
    run.record("orchestrator.renderer.name", why, "orchestrator.renderer.name", name, chosen)


def _one_endpoint(run: Run, where: str, table: Any) -> None:
    """Main's frozen teacher and sampling models take one `base_url` string, not a list."""
    for key in list(table.keys()):
        value = table[key]
        if key == "base_url" and isinstance(plain(value), list) and len(plain(value)) == 1:
            table[key] = plain(value)[0]
            run.record(f"{where}.base_url", "main's frozen models take one endpoint, a `base_url` string",
                       f"{where}.base_url", plain(value), table[key])
        elif isinstance(value, dict):
            _one_endpoint(run, f"{where}.{key}", value)
