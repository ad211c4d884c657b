"""`rlpilot train launch CONFIG --hosted|--local [--yes]`: check, show what will run, then run it.

Without `--yes` nothing is launched: the result is the summary the user confirms (config,
dialect, model, steps, GPUs, where it runs and, where known, what it costs) and every problem
found, all at once. The gate layer shows that same summary before it passes `yes`.

`--stage proof|smoke` launches a sibling of the config (`rl.proof.toml` beside `rl.toml`) that
differs only in its step count, so a user pays minutes before hours; `--stage full` is the file
as written. Each stage is a launch of its own, previewed and confirmed like any other.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.configs.detect import Installed
from tools.configs.document import load, lookup, splice
from tools.configs.edit import atomic_write
from tools.configs.eras import Dialect
from tools.configs.lint import check_data
from tools.contract import Arg, BadInput, Context, ToolResult
from tools.findings import Finding, errors, render

# prime-rl's own defaults when `[deployment]` says nothing (prime-rl.md section 1.3).
DEFAULT_TRAIN_GPUS = 1
DEFAULT_INFER_GPUS = 1

Stage = Literal["proof", "smoke", "full"]
# The playbook: "start with conservative run length and inspect samples early". A proof run
# shows the whole pipeline works end to end; a smoke run gives the first samples and curves.
STAGE_STEPS: dict[str, int] = {"proof": 2, "smoke": 10}
NEXT_STAGE: dict[str, str] = {"proof": "smoke", "smoke": "full"}
# Where a config may set its step count: the rl entrypoint's shared key, and each part's own.
STEP_KEYS = (["max_steps"], ["trainer", "max_steps"], ["orchestrator", "max_steps"])


class LaunchPlan(BaseModel):
    config: str
    target: Literal["hosted", "local"]
    dialect: str
    model: str | None
    max_steps: int | None
    train_gpus: int
    infer_gpus: int
    where: str = Field(description="Where the run will execute.")
    gpu_type: str | None = None
    price_per_gpu_hour: float | None = None
    estimated_cost_per_hour: float | None = None
    secrets: list[str] = Field(default_factory=list, description="Variables passed by name, never by value.")
    validation: str = ""
    memory: str | None = Field(None, description="A rough per-GPU memory estimate (local runs).")
    command: list[str] = Field(default_factory=list)
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
            f"runs on     {self.where}",
        ]
        if self.target == "hosted":
            lines.append(f"cost        {cost}")
        if self.secrets:
            lines.append(f"secrets     {', '.join(self.secrets)} (passed by name)")
        if self.memory:
            lines.append(f"memory      {self.memory}")
        if self.validation:
            lines.append(f"validation  {self.validation}")
        if self.command:
            lines.append(f"command     {' '.join(self.command)}")
        return lines


class LaunchInput(BaseModel):
    config: Annotated[Path, Arg(positional=True), Field(description="The training config (prime-rl TOML).")]
    target: Annotated[Literal["hosted", "local"], Arg(choice_flags=True),
                      Field(description="hosted: Prime Hosted Training; local: prime-rl on this machine's GPUs.")]
    prime_rl: Annotated[Path | None, Arg(metavar="PATH"),
                        Field(description="The prime-rl checkout for a local run (default: RLPILOT_PRIME_RL).")] = None
    stage: Annotated[Stage | None, Field(description="proof: 2 steps, smoke: 10, full: as written.")] = None
    yes: Annotated[bool, Arg(user_decision=True), Field(description="Launch (the user confirmed the summary).")] = False


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


def train_launch(args: LaunchInput, ctx: Context) -> LaunchResult:
    staged = staged_input(args, ctx)
    result = _launch_on_target(staged, ctx)
    return with_stage(result, args)


def _launch_on_target(args: LaunchInput, ctx: Context) -> LaunchResult:
    # Imported here so that each target's dependencies load only when it is used.
    if args.target == "hosted":
        from tools.training.hosted import launch_hosted

        return launch_hosted(args, ctx)
    from tools.training.local import launch_local

    return launch_local(args, ctx)


# -- staged runs ------------------------------------------------------------------------------


def staged_input(args: LaunchInput, ctx: Context) -> LaunchInput:
    """The input with the stage's sibling config in place of the config (unchanged for full or no stage)."""
    if args.stage not in STAGE_STEPS:
        return args
    return args.model_copy(update={"config": stage_config(ctx.resolve(args.config), args.stage)})


def stage_config(path: Path, stage: str) -> Path:
    """Write `<stem>.<stage>.toml` beside `path`: the same bytes but the step count, set wherever the file sets it.

    Derived afresh from the config each time, so a preview and its launch write the same file
    unless the config itself changed in between.
    """
    steps = STAGE_STEPS[stage]
    config = load(path)
    text = config.text
    present = [parts for parts in STEP_KEYS if lookup(config.data, ".".join(parts)) is not None] or [["max_steps"]]
    for parts in present:
        edited = splice(text, parts, steps)
        if edited is None:
            raise BadInput("stage-unwritable", f"{path}: {'.'.join(parts)} is not written as a plain key, so the "
                           f"{stage} stage cannot set it", f"write {'.'.join(parts)} = N on a line of its own")
        text = edited
    sibling = path.with_name(f"{path.stem}.{stage}.toml")
    if not sibling.exists() or sibling.read_text(encoding="utf-8") != text:
        atomic_write(sibling, text)
    return sibling


def with_stage(result: LaunchResult, args: LaunchInput) -> LaunchResult:
    if args.stage is None:
        return result
    result.plan.stage = args.stage
    following = NEXT_STAGE.get(args.stage)
    if result.launched and following:
        result.next += (f"; when it ends cleanly and its samples look right, the next stage: `rlpilot train launch "
                        f"{args.config} --{args.target} --stage {following}`")
    return result


def read_plan(args: LaunchInput, ctx: Context, target: Literal["hosted", "local"],
              installed: Installed) -> tuple[LaunchPlan, list[Finding], dict]:
    """The summary every target shows, and the config engine's errors for the stack it runs on."""
    path = ctx.resolve(args.config)
    config = load(path)
    data = config.data
    check = check_data(data, config.text, None, installed, config.path)
    problems = list(check.errors)
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
        gpu_type=data.get("gpu_type") if isinstance(data.get("gpu_type"), str) else None,
    )
    return plan, problems, data


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
