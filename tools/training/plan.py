"""What a launch would run, on any target: the plan the user confirms, and the config's problems.

Every target (hosted, local, SLURM) reads its plan here and adds what it alone knows; the
confirmation binds the config's bytes (`config_sha256`), and what runs is a snapshot of them.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.configs.document import load, lookup
from tools.configs.lint import check_data
from tools.configs.migrations.current import SANDBOX_UNLESS_RUNTIME, taskset_roles
from tools.framework.contract import Arg, Confirmation, Context, ToolResult
from tools.framework.eras import Dialect, Target
from tools.framework.errors import ToolError
from tools.framework.findings import Finding, errors, render
from tools.framework.workspace import rlpilot_home
from tools.io import files
from tools.stack.cluster import SlurmRequest
from tools.stack.installed import Installed
from tools.verifiers.v0 import v0_training_findings

# prime-rl's own defaults when `[deployment]` says nothing (prime-rl.md section 1.3).
DEFAULT_TRAIN_GPUS = 1
DEFAULT_INFER_GPUS = 1

Stage = Literal["proof", "smoke", "full"]


class LaunchPlan(BaseModel):
    config: str
    target: Target
    dialect: str
    model: str | None
    max_steps: int | None
    train_gpus: int
    infer_gpus: int
    where: str = Field(description="Where the run will execute; empty when the config does not say (no line).")
    gpu_type: str | None = None
    price_per_gpu_hour: float | None = None
    estimated_cost_per_hour: float | None = None
    secrets: list[str] = Field(default_factory=list, description="Variables passed by name, never by value.")
    sandboxes: list[str] = Field(default_factory=list, description="Each environment role that runs in a paid Prime "
                                 "sandbox (`<source> env.<role>`), and why.")
    validation: str = ""
    memory: str | None = Field(None, description="A rough per-GPU memory estimate (local runs).")
    command: list[str] = Field(default_factory=list)
    config_sha256: str = Field("", description="The hash of the config's bytes: what a confirmation binds.")
    snapshot: str | None = Field(None, description="The copy of the confirmed bytes that runs.")
    slurm: SlurmRequest | None = Field(None, description="What a SLURM run asks of the cluster, and its sbatch script.")
    stage: Stage | None = None

    @property
    def gpus(self) -> int:
        return self.train_gpus + self.infer_gpus

    def lines(self) -> list[str]:
        cost = "reported by the platform at launch"
        if self.price_per_gpu_hour is not None:
            cost = f"${self.price_per_gpu_hour:.2f}/GPU-hour"
            if self.estimated_cost_per_hour is not None:
                cost += f", about ${self.estimated_cost_per_hour:.2f}/hour for {self.gpus} GPUs"
        lines = [
            f"config      {self.config} ({self.dialect})" + (f", stage {self.stage}" if self.stage else ""),
            f"model       {self.model or 'not set'}",
            f"steps       {self.max_steps if self.max_steps is not None else 'not set (prime-rl default)'}",
            f"gpus        {self.gpus} ({self.train_gpus} trainer + {self.infer_gpus} inference)"
            + (f", {self.gpu_type}" if self.gpu_type else ""),
        ]
        if self.where:  # left out, never shown empty, where the config does not say (SLURM without `[slurm]`)
            lines.append(f"runs on     {self.where}")
        if self.target == "hosted":
            lines.append(f"cost        {cost}")
        if self.secrets:
            lines.append(f"secrets     {', '.join(self.secrets)} (passed by name)")
        if self.sandboxes:
            lines.append(f"sandboxes   {'; '.join(self.sandboxes)}: each rollout runs in a Prime sandbox, paid and "
                         f"needing a Prime key; {SANDBOX_UNLESS_RUNTIME}")
        if self.memory:
            lines.append(f"memory      {self.memory}")
        if self.validation:
            lines.append(f"validation  {self.validation}")
        if self.command:
            lines.append(f"command     {' '.join(self.command)}")
        return lines + (self.slurm.lines() if self.slurm else [])


class LaunchInput(BaseModel):
    config: Annotated[Path, Arg(positional=True), Field(description="The training config (prime-rl TOML).")]
    target: Annotated[Target, Arg(choice_flags=True),
                      Field(description="hosted: Hosted Training; local: these GPUs; slurm: this SLURM cluster.")]
    prime_rl: Annotated[Path | None, Arg(metavar="PATH"),
                        Field(description="Local or SLURM: a prime-rl checkout.")] = None
    stage: Annotated[Stage | None, Field(description="proof: 2 steps, smoke: 10, full: as written.")] = None
    yes: Annotated[Confirmation, Field(description="Launch (the user confirmed the summary).")] = False
    binding: Annotated[str | None, Arg(cli_only=True),
                       Field(description="The config hash the user confirmed; a config changed since is refused.")] \
        = None


class LaunchResult(ToolResult):
    launched: bool
    run: str | None = Field(None, description="The run id for `train status|metrics|logs|stop`.")
    plan: LaunchPlan
    problems: list[Finding] = Field(default_factory=list)
    next: str

    def render(self) -> str:
        head = f"launched run {self.run}" if self.launched else (
            "not launched: fix the errors below" if self.errors else "not launched yet: this is what would run")
        lines = [head, *(f"  {line}" for line in self.plan.lines())]
        lines += [render(problem) for problem in self.problems]
        return "\n".join(lines + [f"next: {self.next}"])

    @property
    def errors(self) -> list[Finding]:
        return errors(self.problems)

    def exit_code(self) -> int:
        return 0 if self.launched else 1

    def refused(self) -> bool:
        return bool(self.errors)

    def binding(self) -> str:
        return self.plan.config_sha256


def read_plan(args: LaunchInput, ctx: Context, target: Target,
              installed: Installed) -> tuple[LaunchPlan, list[Finding], dict]:
    """The summary every target shows, and the config engine's errors for the stack it runs on."""
    path = ctx.resolve(args.config)
    config = load(path)
    data = config.data
    digest = hashlib.sha256(config.text.encode()).hexdigest()
    if args.binding and args.binding != digest:
        raise ToolError("changed-since-preview", f"{path} changed after its launch was confirmed",
                        "look at the new preview and confirm that one")
    check = check_data(data, config.text, None, installed, config.path, target=target)
    problems = list(check.errors) + v0_training_findings(data, check.dialect, ctx.workspace, target,
                                                         installed.prime_rl_version, installed.prime_rl_path)
    deployment = data.get("deployment") or {}
    if deployment.get("type") == "multi_node":
        per_node = deployment.get("gpus_per_node", 8)
        train = deployment.get("num_train_nodes", 1) * per_node
        infer = deployment.get("num_infer_nodes", 0) * per_node
    else:
        train = deployment.get("num_train_gpus", DEFAULT_TRAIN_GPUS)
        infer = deployment.get("num_infer_gpus", DEFAULT_INFER_GPUS)
    plan = LaunchPlan(
        config=str(path), target=target, dialect=check.dialect, model=_model_name(data),
        max_steps=data.get("max_steps") if isinstance(data.get("max_steps"), int) else None,
        train_gpus=train, infer_gpus=infer, where="",
        gpu_type=data.get("gpu_type") if isinstance(data.get("gpu_type"), str) else None, config_sha256=digest,
        sandboxes=prime_sandboxes(data, ctx.workspace) if check.dialect == Dialect.CURRENT else [],
    )
    if args.yes:
        plan.snapshot = str(_snapshot(path, config.text, digest, ctx))
    return plan, problems, data


def _snapshot(path: Path, text: str, digest: str, ctx: Context) -> Path:
    """The confirmed bytes, kept: what runs is this copy, whatever happens to the file afterwards."""
    return files.write_text(snapshots_dir(ctx.workspace) / f"{path.stem}-{digest[:12]}.toml", text, private=True)


def snapshots_dir(workspace: Path) -> Path:
    return rlpilot_home(workspace) / "launches"


def prime_sandboxes(data: dict, workspace: Path) -> list[str]:
    """The roles of each current-era source that run in a Prime sandbox: no runtime, or a runtime of type prime."""
    found = []
    for part in ("train", "eval"):
        entries = lookup(data, f"orchestrator.{part}.source")
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            env = entry.get("env") if isinstance(entry, dict) else None
            if not isinstance(env, dict):
                continue
            taskset = env.get("taskset") if isinstance(env.get("taskset"), dict) else {}
            named = [role for role, table in env.items() if role != "taskset" and isinstance(table, dict)]
            declared = taskset_roles(str(taskset.get("id", "")), workspace).names
            source = entry.get("name") or taskset.get("id") or f"orchestrator.{part}.source[{index}]"
            for role in dict.fromkeys([*named, *(declared or ([] if named else ["agent"]))]):
                runtime = (env.get(role) or {}).get("runtime")
                if not isinstance(runtime, dict):
                    found.append(f"{source} env.{role} (no runtime)")
                elif runtime.get("type", "prime") == "prime":  # PrimeConfig is the default of the union
                    found.append(f"{source} env.{role} (runtime type prime)")
    return found


def _model_name(data: dict) -> str | None:
    name = lookup(data, "model.name")
    if isinstance(name, str):
        return name
    return data["model"] if isinstance(data.get("model"), str) else None  # the lab-era spelling


def migration_problem(plan: LaunchPlan, expected: Dialect, why: str) -> Finding:
    stem = Path(plan.config).stem
    target_file = Path(plan.config).with_name(f"{stem}.{expected}.toml")
    return Finding(
        severity="error", code="dialect-mismatch", message=f"{plan.config} is written for {plan.dialect}, but {why} "
                   f"takes {expected}", fix=f"rlpilot config migrate {plan.config} --to {expected} "
                   f"--output {target_file}, then launch that file")


def model_billions(model: str | None) -> float | None:
    """Parameters in billions read from a model name (`Qwen/Qwen3-4B` -> 4.0), when it says."""
    match = re.search(r"(\d+(?:\.\d+)?)[bB](?![a-zA-Z])", model or "")
    return float(match.group(1)) if match else None
