"""`rlpilot config check`: what is wrong with a training config, in the dialect it is written in.

Python API: `check_config(path, dialect=None, installed=None) -> CheckResult` reads and checks a
file; `check_data(data, text, dialect, installed, path)` checks an already parsed config (the
edit and migrate tools check what they are about to write). `installed` is what the stack
expects (`tools.configs.detect.Installed`); None asks the workspace's prime-rl and prime CLI.

Codes and severities are DESIGN.md's config codes. The rules are the playbook's (group and batch
sizes, concurrency, async level, learning rates) and prime-rl's own validators (shared fields,
GPU split, exclusive keys); facts in shared/research/prime-rl.md section 2.3 and
rl-stability.md section 3.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from tools.configs import dialects as schema
from tools.configs.detect import Detection, Installed, detect_dialect, detect_file, installed_stack
from tools.configs.dialects import CURRENT, LAB, TRANSITION, VARIANT_ONLY
from tools.configs.document import is_table_array, line_of, load, lookup
from tools.configs.eras import Dialect, Variant
from tools.configs.multinode import multinode_findings
from tools.contract import Arg, Context, ToolResult
from tools.findings import Finding, Severity, tally
from tools.findings import render as render_finding

SEVERITY: dict[str, Severity] = {
    **dict.fromkeys(("batch-not-divisible", "group-size-one", "concurrency-too-low", "seq-len-mismatch",
                     "max-steps-mismatch", "model-mismatch", "gpu-split-exceeds-node", "unknown-key",
                     "renamed-key", "removed-key", "conflicting-keys"), "error"),
    **dict.fromkeys(("group-size-small", "batch-too-small", "async-level-implicit", "lr-out-of-range",
                     "filtering-needs-binary-reward"), "warning"),
    "dialect-outdated": "info",
}

# The playbook's presets: quick tests 8 rollouts per example and 128 samples per step.
MIN_GROUP, MIN_BATCH = 8, 128
# Usual learning rates (verifiers docs "RL rules of thumb", prime-rl and TRL examples): full
# fine-tuning around 1e-6, LoRA about ten times higher.
LR_RANGES = {"full fine-tuning": (1e-7, 1e-5), "LoRA": (1e-6, 1e-4)}
PRIME_RL_DEFAULT_BATCH, LAB_DEFAULT_BATCH, LAB_DEFAULT_GROUP = 128, 128, 8


class CheckInput(BaseModel):
    path: Annotated[Path, Arg(positional=True), Field(description="The training config (TOML).")]
    dialect: Annotated[Dialect | None, Field(description="The dialect to check against (default: detected).")] = None


class CheckResult(ToolResult):
    path: str
    dialect: Dialect
    detected: str = Field(description="How the dialect was chosen.")
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def render(self) -> str:
        lines = [f"{self.path}: {self.dialect} ({self.detected})"]
        lines += [render_finding(f) for f in self.findings]
        lines.append(tally(self.findings))
        return "\n".join(lines)


def config_check(args: CheckInput, ctx: Context) -> CheckResult:
    return check_config(ctx.resolve(args.path), args.dialect, installed_stack(ctx.workspace))


def check_config(path: Path, dialect: Dialect | str | None = None, installed: Installed | None = None) -> CheckResult:
    config = load(Path(path))
    detection = Detection(Dialect(dialect), "given") if dialect else detect_file(config.data, config.path)
    return check_data(config.data, config.text, detection, installed or installed_stack(Path.cwd()), config.path)


def check_data(data: dict[str, Any], text: str, dialect: Dialect | str | Detection | None, installed: Installed,
               path: Path) -> CheckResult:
    if isinstance(dialect, Detection):
        detection = dialect
    else:
        detection = Detection(Dialect(dialect), "given") if dialect else detect_dialect(data)
    view = View(data, detection.dialect, installed.variant if detection.dialect == CURRENT else None)
    findings = [*key_findings(view), *playbook_findings(view), *validator_findings(view),
                *multinode_findings(data, detection.dialect), *outdated_findings(view, installed, path)]
    for finding in findings:
        finding.line = line_of(text, finding.key) if finding.key else None
    return CheckResult(path=str(path), dialect=detection.dialect, detected=detection.evidence, findings=findings)


@dataclass
class View:
    data: dict[str, Any]
    dialect: Dialect
    variant: Variant | None  # the prime-rl-current spelling a checkout pins

    def get(self, key: str | None, default: Any = None) -> Any:
        return lookup(self.data, key, default) if key else default

    def key(self, intent: str) -> str | None:
        return schema.key_for(self.dialect, intent)

    @property
    def prime_rl(self) -> bool:
        return self.dialect != LAB


def finding(code: str, key: str | None, message: str, fix: str = "") -> Finding:
    return Finding(code=code, severity=SEVERITY[code], key=key, message=message, fix=fix)


# --- keys -------------------------------------------------------------------------------------


def key_findings(view: View) -> list[Finding]:
    found: list[Finding] = []
    _walk_keys(view, view.data, "", "", found)
    return found


def _walk_keys(view: View, table: dict[str, Any], path: str, display: str, found: list[Finding]) -> None:
    known = schema.SECTIONS[view.dialect].get(path)
    for key, value in table.items():
        child = f"{path}.{key}" if path else key
        shown = f"{display}.{key}" if display else key
        checked = child
        # A lab-era `model = "..."` string is the one old spelling whose key name survived.
        misshapen = child == "model" and isinstance(value, str) and view.prime_rl
        if known is not None and (key not in known or misshapen):
            problem = _unknown(view, child, shown, known)
            found.append(problem)
            if problem.code != "renamed-key":
                continue
            checked = _renamed_to(view, child) or child
        elif view.variant and VARIANT_ONLY.get(child) not in (None, view.variant):
            found.append(_wrong_variant(view, child, shown))
            continue
        if isinstance(value, dict):
            _walk_keys(view, value, checked, shown, found)
        elif is_table_array(value):
            for index, entry in enumerate(value):
                _walk_keys(view, entry, checked + "[]", f"{shown}[{index}]", found)


def _applies(change: schema.Change, view: View) -> bool:
    if change.variant:
        return view.dialect == CURRENT and view.variant == Variant.MAIN
    if change.origin == LAB:
        return view.dialect == CURRENT
    return view.prime_rl and schema.RANK[change.origin] < schema.RANK[view.dialect]


def _renamed_to(view: View, old: str) -> str | None:
    """`old`'s name in the view's dialect, following every later rename; None once it was removed."""
    change = next((c for c in schema.CHANGES if c.old == old and _applies(c, view)), None)
    if change is None or change.new is None:
        return None
    name = change.new
    for later in schema.CHANGES:
        if later.origin == LAB or not (name == later.old or name.startswith(later.old + ".")):
            continue
        if later.variant and (view.dialect != CURRENT or view.variant == Variant.V080):
            continue
        if schema.RANK[later.target] > schema.RANK[view.dialect]:
            continue
        if later.new is None:
            return None
        name = later.new + name[len(later.old):]
    return name


def _unknown(view: View, path: str, shown: str, known: frozenset[str]) -> Finding:
    change = next((c for c in schema.CHANGES if c.old == path and _applies(c, view)), None)
    if change:
        new = _renamed_to(view, path)
        if new:
            return finding("renamed-key", shown, f"{shown} is not a {view.dialect} key: {change.why}; "
                           f"it is `{new}` now", f"rename it to {new} (`rlpilot config migrate` does this)")
        return finding("removed-key", shown, f"{shown} no longer exists in {view.dialect}: {change.why}",
                       change.hint or "remove it")
    leaf = path.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(leaf, sorted(known), n=1, cutoff=0.6)
    section = path.rsplit(".", 1)[0] if "." in path else "the top level"
    if close:
        return finding("unknown-key", shown, f"{shown} is not a key of {section} in {view.dialect}; "
                       f"did you mean `{close[0]}`?", f"rename it to {close[0]}, or remove it")
    return finding("unknown-key", shown, f"{shown} is not a key of {section} in {view.dialect}",
                   "remove it, or check the dialect with --dialect")


def _wrong_variant(view: View, path: str, shown: str) -> Finding:
    pinned = view.variant
    if pinned == Variant.MAIN:
        return _unknown(view, path, shown, frozenset())
    older = sorted({c.old for c in schema.CHANGES if c.variant and c.new and
                    (c.new == path or c.new.startswith(path + "."))})
    spelled = " or ".join(f"`{o}`" for o in older) if older else "nothing"
    return finding("renamed-key", shown, f"{shown} is main's spelling; the pinned prime-rl v0.8.0 spells it "
                   f"{spelled}", f"use {spelled} with this checkout, or update the checkout")


# --- the playbook ---------------------------------------------------------------------------


def group_sizes(view: View) -> tuple[str | None, list[int]]:
    """The group size key and the group sizes in force (several when set per environment)."""
    key = view.key("group_size")
    value = view.get(key)
    if value is None and view.dialect == TRANSITION and view.get("orchestrator.rollouts_per_example") is not None:
        key, value = "orchestrator.rollouts_per_example", view.get("orchestrator.rollouts_per_example")
    if value is not None:
        return key, [value]
    entries = view.get("orchestrator.train.source" if view.dialect == CURRENT else "orchestrator.train.env") or []
    per_env = [e.get("group_size") for e in entries if isinstance(e, dict)]
    if per_env and all(isinstance(g, int) for g in per_env):
        return key, per_env
    return key, [LAB_DEFAULT_GROUP] if view.dialect == LAB else []


def batch_size(view: View) -> tuple[str | None, int | None]:
    key = view.key("batch_size")
    value = view.get(key)
    if value is None and view.prime_rl and view.get("orchestrator.token_batch_size") is None:
        value = PRIME_RL_DEFAULT_BATCH
    elif value is None and view.dialect == LAB:
        value = LAB_DEFAULT_BATCH
    return key, value


def playbook_findings(view: View) -> list[Finding]:
    if view.prime_rl and "orchestrator" not in view.data:
        return []  # an overlay (`uv run rl @ rl.toml @ this.toml`) that leaves the orchestrator alone
    found: list[Finding] = []
    group_key, groups = group_sizes(view)
    batch_key, batch = batch_size(view)
    if not groups:
        found.append(finding("group-size-small", group_key, f"{group_key} is not set: prime-rl then samples one "
                             "rollout per example, so every advantage is zero",
                             f"set {group_key} = 8 for a quick test, 16 for complex long-horizon tasks"))
    for group in groups:
        if group == 1:
            found.append(finding("group-size-one", group_key, f"{group_key} = 1: a group of one rollout has no "
                                 "baseline, so every advantage is zero and nothing is learned",
                                 f"set {group_key} = 8 (quick tests) or 16 (complex tasks)"))
        elif group < MIN_GROUP:
            found.append(finding("group-size-small", group_key, f"{group_key} = {group}: small groups often "
                                 "have no reward spread (all pass or all fail)",
                                 f"use {MIN_GROUP} for quick tests, 16 for complex long-horizon tasks"))
    if batch is not None:
        for group in sorted(set(groups)):
            if group > 0 and batch % group:
                lower, upper = batch // group * group, (batch // group + 1) * group
                found.append(finding("batch-not-divisible", batch_key, f"{batch_key} = {batch} is not divisible by "
                                     f"the group size {group}: the batch counts rollout samples, whole groups of "
                                     f"{group}", f"set {batch_key} = {upper}" + (f" or {lower}" if lower else "")))
        if batch < MIN_BATCH:
            found.append(finding("batch-too-small", batch_key, f"{batch_key} = {batch} samples per step is below the "
                                 f"playbook's {MIN_BATCH} for quick tests (512 for complex tasks)",
                                 f"raise {batch_key} to {MIN_BATCH} or more"))
    found += concurrency_findings(view, max(groups, default=1))
    levels = ("orchestrator.max_async_level", "max_async_level", "trainer.max_async_level")
    if view.dialect == Dialect.CLASSIC and all(view.get(key) is None for key in levels):
        found.append(finding("async-level-implicit", "orchestrator.max_async_level", "orchestrator.max_async_level "
                             "is not set: the run takes the default (1), which decides how stale rollouts may be",
                             "set orchestrator.max_async_level explicitly (1 is required with NCCL broadcast)"))
    found += lr_findings(view)
    return found


# In-flight limits that must hold at least one whole group (prime-rl's `resolve_batching`; the
# classic per-env `max_concurrent` holds a group per env worker).
CONCURRENCY_LIMITS = {
    LAB: ["max_inflight_rollouts"],
    Dialect.CLASSIC: ["orchestrator.max_concurrent", "orchestrator.max_inflight_rollouts"],
    TRANSITION: ["orchestrator.max_inflight_rollouts"],
    CURRENT: ["orchestrator.concurrency.max_inflight", "orchestrator.concurrency.initial_inflight",
              "orchestrator.max_inflight_episodes"],
}


def concurrency_needed(view: View, key: str, group: int) -> int:
    workers = view.get("orchestrator.workers_per_env", 1) if key == "orchestrator.max_concurrent" else 1
    return group * workers


def concurrency_findings(view: View, group: int) -> list[Finding]:
    workers = view.get("orchestrator.workers_per_env", 1)
    found = []
    for key in CONCURRENCY_LIMITS[view.dialect]:
        value = view.get(key)
        needed = concurrency_needed(view, key, group)
        if isinstance(value, int) and value < needed:
            per = f" x {workers} workers per env" if needed != group else ""
            found.append(finding("concurrency-too-low", key, f"{key} = {value} is below the group size {group}{per}: "
                                 "a whole group must be in flight at once", f"raise {key} to at least {needed}"))
    return found


def lr_findings(view: View) -> list[Finding]:
    key = view.key("learning_rate")
    lr = view.get(key)
    if not isinstance(lr, int | float):
        return []
    lora = view.dialect == LAB or view.get("trainer.model.lora") is not None
    kind = "LoRA" if lora else "full fine-tuning"
    low, high = LR_RANGES[kind]
    if low <= lr <= high:
        return []
    return [finding("lr-out-of-range", key, f"{key} = {lr:g} is outside the usual range for {kind} "
                    f"({low:g} to {high:g})", f"start from {low * 10:g} and change it by at most 2x per run")]


# --- prime-rl's own validators ----------------------------------------------------------------

# (shared key, its copies in the sub-configs): rl.py `propagate_shared_fields`.
SHARED = {
    "seq_len": ("trainer.model.seq_len", "orchestrator.seq_len"),
    "max_steps": ("trainer.max_steps", "orchestrator.max_steps"),
    "model.name": ("trainer.model.name", "orchestrator.model.name"),
}
EXCLUSIVE = {
    LAB: [("max_inflight_rollouts", "oversampling_factor"), ("sampling.temperature", "sampling.temp_scheduler")],
    Dialect.CLASSIC: [("orchestrator.sampling.temperature", "orchestrator.sampling.temp_scheduler"),
                      ("orchestrator.token_batch_size", "orchestrator.oversampling_factor")],
    TRANSITION: [("orchestrator.batch_size", "orchestrator.token_batch_size"),
                 ("orchestrator.token_batch_size", "orchestrator.oversampling_factor")],
    CURRENT: [("orchestrator.batch_size", "orchestrator.token_batch_size")],
}
_EXCLUSIVE_FLAGS = [("trainer.model.fsdp_cpu_offload", "trainer.model.optim_cpu_offload")]


def validator_findings(view: View) -> list[Finding]:
    found = [finding("conflicting-keys", b, f"{a} and {b} are both set; only one of them may be", f"remove {b} or {a}")
             for a, b in EXCLUSIVE[view.dialect] if view.get(a) is not None and view.get(b) is not None]
    found += [finding("conflicting-keys", b, f"{a} and {b} are both on; prime-rl allows only one", f"turn off {b}")
              for a, b in _EXCLUSIVE_FLAGS if view.get(a) is True and view.get(b) is True]
    if not view.prime_rl:
        return found
    conflicted = set()
    if view.dialect in (TRANSITION, CURRENT):
        for shared, copies in SHARED.items():
            for copy in copies:
                if None not in (view.get(shared), view.get(copy)) and view.get(shared) != view.get(copy):
                    conflicted.add(copy)
                    found.append(finding("conflicting-keys", copy, f"{shared} = {view.get(shared)!r} and {copy} = "
                                         f"{view.get(copy)!r} differ; prime-rl refuses a shared value that its copy "
                                         "contradicts", f"remove {copy}, or set both to the same value"))
    effective = {copy: view.get(copy, view.get(shared)) for shared, copies in SHARED.items() for copy in copies}
    trainer_len, orch_len = effective["trainer.model.seq_len"] or 2048, effective["orchestrator.seq_len"] or 2048
    if trainer_len < orch_len and not conflicted & {"trainer.model.seq_len", "orchestrator.seq_len"}:
        found.append(finding("seq-len-mismatch", "trainer.model.seq_len", f"the trainer's seq_len ({trainer_len}) is "
                             f"shorter than the orchestrator's ({orch_len}): samples would not fit the trainer",
                             f"set trainer.model.seq_len >= {orch_len}, or set only the top-level seq_len"))
    steps = (effective["trainer.max_steps"], effective["orchestrator.max_steps"])
    if None not in steps and steps[0] != steps[1] and not conflicted & {"trainer.max_steps", "orchestrator.max_steps"}:
        found.append(finding("max-steps-mismatch", "orchestrator.max_steps", f"trainer.max_steps ({steps[0]}) and "
                             f"orchestrator.max_steps ({steps[1]}) differ; they must be equal",
                             "set only the top-level max_steps"))
    found += _model_findings(view, effective, conflicted)
    found += _gpu_findings(view)
    return found


def _model_findings(view: View, effective: dict[str, Any], conflicted: set[str]) -> list[Finding]:
    """rl.py `validate_shared_model_name`: inference serves what the orchestrator asks for, and
    without an inference model the trainer must train that same model (a trainer may train the
    BF16 weights of an FP8 model that inference serves)."""
    inference_key = "inference.vllm.model" if view.get("inference.vllm") is not None else "inference.model.name"
    pair = (inference_key, "orchestrator.model.name") if view.get(inference_key) is not None else (
        "trainer.model.name", "orchestrator.model.name")
    names = {key: view.get(key) if key == inference_key else effective[key] for key in pair}
    if conflicted & set(pair) or None in names.values() or len(set(names.values())) == 1:
        return []
    listed = " but ".join(f"{k} = {v!r}" for k, v in names.items())
    return [finding("model-mismatch", pair[0], f"the components name different models: {listed}",
                    "set the model once, as [model] name, and remove the per-component names")]


def _gpu_findings(view: View) -> list[Finding]:
    deployment = view.get("deployment")
    if not isinstance(deployment, dict) or deployment.get("type", "single_node") != "single_node":
        return []
    train, infer = deployment.get("num_train_gpus", 1), deployment.get("num_infer_gpus", 1)
    per_node = deployment.get("gpus_per_node", 8)
    if train + infer <= per_node:
        return []
    return [finding("gpu-split-exceeds-node", "deployment.num_train_gpus", f"{train} trainer + {infer} inference GPUs "
                    f"is more than the {per_node} GPUs of one node", f"lower them to {per_node} in total, or use "
                    "deployment.type = \"multi_node\"")]


def outdated_findings(view: View, installed: Installed, path: Path) -> list[Finding]:
    found = []
    for expected, source in installed.expectations():
        if view.dialect == LAB:
            newer = expected == CURRENT
        else:
            newer = expected != LAB and schema.RANK[expected] > schema.RANK[view.dialect]
        if newer:
            found.append(finding("dialect-outdated", None, f"this config is {view.dialect}, but {source} expects "
                                 f"{expected}", f"rlpilot config migrate {path} --to {expected}"))
    return found
