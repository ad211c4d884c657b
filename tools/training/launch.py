"""`rlpilot train launch CONFIG --hosted|--local|--slurm [--yes]`: check, show what will run, then run it.

Without `--yes` nothing is launched: the result is the summary the user confirms (config,
dialect, model, steps, GPUs, where it runs and, where known, what it costs) and every problem
found, all at once. The gate layer shows that same summary before it passes `yes`.

`--stage proof|smoke` launches a sibling of the config (`rl.proof.toml` beside `rl.toml`) that
differs only in its step count, so a user pays minutes before hours; `--stage full` is the file
as written. Each stage is a launch of its own, previewed and confirmed like any other.

A launch that does not start a run (a preview, a refusal, a failure) leaves no file of its own
behind: the stage sibling is put back as it was and the snapshot of the confirmed bytes removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools.configs.document import load, lookup
from tools.configs.edit import atomic_write
from tools.configs.toml_edit import splice
from tools.framework.contract import Context
from tools.framework.errors import BadInput
from tools.io import files
from tools.training.hosted import launch_hosted
from tools.training.local import launch_local
from tools.training.plan import LaunchInput, LaunchResult, snapshots_dir
from tools.training.slurm import launch_slurm

# The playbook: "start with conservative run length and inspect samples early". A proof run
# shows the whole pipeline works end to end; a smoke run gives the first samples and curves.
STAGE_STEPS: dict[str, int] = {"proof": 2, "smoke": 10}
NEXT_STAGE: dict[str, str] = {"proof": "smoke", "smoke": "full"}
# Where a config may set its step count: the rl entrypoint's shared key, and each part's own.
STEP_KEYS = (["max_steps"], ["trainer", "max_steps"], ["orchestrator", "max_steps"])


def train_launch(args: LaunchInput, ctx: Context) -> LaunchResult:
    before = _Before.of(args, ctx)
    launched = False
    try:
        result = with_stage(_launch_on_target(staged_input(args, ctx), ctx), args)
        launched = result.launched
        return result
    finally:
        if not launched:
            before.restore()


@dataclass
class _Before:
    """What a launch may write, as it was before: restored unless a run started (a run needs both files)."""

    sibling: Path | None
    sibling_bytes: bytes | None
    snapshots: Path
    snapshot_names: set[str]
    missing_folders: list[Path]  # the snapshots' folder and those above it that a launch would create

    @classmethod
    def of(cls, args: LaunchInput, ctx: Context) -> _Before:
        path = ctx.resolve(args.config)
        sibling = stage_path(path, args.stage) if args.stage in STAGE_STEPS else None
        snapshots = snapshots_dir(ctx.workspace)
        missing = [folder for folder in (snapshots, *snapshots.parents) if not folder.exists()]
        return cls(sibling, files.read_bytes_if_present(sibling) if sibling else None, snapshots,
                   {p.name for p in snapshots.iterdir()} if snapshots.is_dir() else set(), missing)

    def restore(self) -> None:
        if self.sibling and self.sibling_bytes is None:
            files.remove(self.sibling)
        elif self.sibling and files.read_bytes_if_present(self.sibling) != self.sibling_bytes:
            atomic_write(self.sibling, self.sibling_bytes)
        if self.snapshots.is_dir():
            for new in {p.name for p in self.snapshots.iterdir()} - self.snapshot_names:
                files.remove(self.snapshots / new)
        for folder in self.missing_folders:  # deepest first; one that something else wrote into stays
            if not files.remove_empty_dir(folder):
                break


def _launch_on_target(args: LaunchInput, ctx: Context) -> LaunchResult:
    launch = {"hosted": launch_hosted, "slurm": launch_slurm, "local": launch_local}[args.target]
    return launch(args, ctx)


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
    sibling = stage_path(path, stage)
    if files.read_text_if_present(sibling) != text:
        atomic_write(sibling, text)
    return sibling


def stage_path(path: Path, stage: str) -> Path:
    return path.with_name(f"{path.stem}.{stage}.toml")


def with_stage(result: LaunchResult, args: LaunchInput) -> LaunchResult:
    if args.stage is None:
        return result
    result.plan.stage = args.stage
    following = NEXT_STAGE.get(args.stage)
    if result.launched and following:
        result.next += (f"; when it ends cleanly and its samples look right, the next stage: `rlpilot train launch "
                        f"{args.config} --{args.target} --stage {following}`")
    return result
