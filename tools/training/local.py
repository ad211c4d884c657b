"""Local prime-rl runs: preflight, launch as a managed background run, status, logs, stop.

A run is `uv run rl @ CONFIG --output-dir <run folder>/outputs` in the prime-rl checkout,
started through the supervisor (`process.supervise`) so that it survives rlpilot, leads its own process group and
leaves its exit status behind. prime-rl writes `metrics.jsonl` under its output directory (its
exact sub-folder changed between releases, so it is searched for).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tools.framework.contract import Context, not_confirmed
from tools.framework.errors import BadInput, ToolError
from tools.framework.findings import Finding
from tools.io import files, process
from tools.stack.info import GPU, HOW_TO_GET, StackInput, StackResult, stack_info
from tools.stack.installed import Installed, Package, PrimeRL
from tools.training import records
from tools.training.plan import (
    LaunchInput,
    LaunchPlan,
    LaunchResult,
    migration_problem,
    model_billions,
    read_plan,
)

DRY_RUN_TIMEOUT = 900.0  # the first `uv run` in a checkout installs its environment
STOP_GRACE_SECONDS = 20.0
# Rough bytes per parameter: full fine-tuning keeps bf16 weights and grads plus fp32 Adam state
# (sharded over the trainer GPUs); LoRA keeps frozen bf16 weights; inference holds bf16 weights.
FULL_BYTES, LORA_BYTES, INFER_BYTES, MARGIN = 16.0, 2.5, 2.0, 1.2


def run_argv(uv: str, config: Path, output_dir: Path, dry_run: bool = False) -> list[str]:
    return [uv, "run", "rl", "@", str(config), "--output-dir", str(output_dir)] + (["--dry-run"] if dry_run else [])


def child_environment() -> dict[str, str]:
    """Ours, minus what would make `uv run` use another project's environment than the checkout's."""
    return {k: v for k, v in process.person_environment().items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}


def launch_local(args: LaunchInput, ctx: Context) -> LaunchResult:
    stack = stack_info(StackInput(prime_rl=args.prime_rl), ctx)
    checkout = stack.prime_rl
    installed = Installed(prime_rl_version=checkout.version, prime_rl_path=checkout.path) if checkout else Installed()
    plan, problems, data = read_plan(args, ctx, "local", installed)
    if checkout and plan.dialect != checkout.dialect:
        problems = [migration_problem(plan, checkout.dialect, f"the prime-rl {checkout.version} checkout")]
    problems += _stack_problems(stack, plan, data)
    config = Path(plan.config)
    plan.where = local_where(stack)
    if checkout and stack.uv:
        plan.command = run_argv("uv", config, Path("<run folder>/outputs"))
        # The dry run is the checkout's own code (and `uv run` syncs its packages): it runs only
        # after the person's yes, never to make the preview they say yes to.
        if args.yes:
            problems += _dry_run(plan, stack, config)
        else:
            plan.validation = f"after your yes, first `uv run rl @ {config.name} --dry-run` in {checkout.path}"
    if any(p.severity == "error" for p in problems):
        return LaunchResult(launched=False, plan=plan, problems=problems,
                            next="fix the errors, then run the same command again")
    if not args.yes:
        return LaunchResult(launched=False, plan=plan, problems=problems, next=not_confirmed("launch it"))
    return _start(plan, problems, stack, ctx)


def local_where(stack: StackResult) -> str:
    """This machine's GPUs as `stack` found them, and the checkout that would run on them."""
    gpus = stack.gpus or []
    counts: dict[str, int] = {}
    for gpu in gpus:
        counts[gpu.name] = counts.get(gpu.name, 0) + 1
    found = ", ".join(f"{n} x {name}" for name, n in counts.items())
    where = (f"this machine's {len(gpus)} GPU(s): {found} ({gpus[0].source})" if gpus else
             "this machine (no NVIDIA GPU found)")
    checkout = stack.prime_rl
    return where + (f"; prime-rl {checkout.version} at {checkout.path}" if checkout else "; no prime-rl checkout")


def _dry_run(plan: LaunchPlan, stack: StackResult, config: Path) -> list[Finding]:
    assert stack.prime_rl is not None and stack.uv is not None
    confirmed = Path(plan.snapshot or config)  # the bytes the person said yes to
    with files.scratch_dir(prefix="rlpilot-dry-run-") as scratch:
        dry = process.run(run_argv(stack.uv.path, confirmed, Path(scratch), dry_run=True),
                          cwd=Path(stack.prime_rl.path), env=child_environment(), timeout=DRY_RUN_TIMEOUT)
    if dry.ok:
        plan.validation = "passed `uv run rl @ CONFIG --dry-run`"
        return []
    return [Finding(severity="error", code="dry-run-failed", message=f"`uv run rl @ {config.name} --dry-run` failed: "
                    f"{dry.said()}", fix="fix the config where prime-rl says; "
                    f"`rlpilot config check {config}` explains most errors")]


def checkout_problems(prime_rl: PrimeRL | None, uv: Package | None) -> list[Finding]:
    """What every prime-rl launch needs on this machine: the checkout, and uv to run it."""
    problems = []
    if not prime_rl:
        problems.append(Finding(
            severity="error", code="no-prime-rl", message="no prime-rl checkout (looked at --prime-rl, "
                                "RLPILOT_PRIME_RL and the current directory)", fix=HOW_TO_GET["prime_rl"]))
    if not uv:
        problems.append(Finding(
            severity="error", code="no-uv", message="uv is not installed; prime-rl runs through `uv run`",
                                fix=HOW_TO_GET["uv"]))
    return problems


def _stack_problems(stack: StackResult, plan: LaunchPlan, data: dict[str, Any]) -> list[Finding]:
    problems = checkout_problems(stack.prime_rl, stack.uv)
    gpus = stack.gpus or []
    if not gpus:
        problems.append(Finding(
            severity="error", code="no-gpus", message=f"no NVIDIA GPU found (nvidia-smi, or torch); the config "
                                f"asks for {plan.gpus}", fix=HOW_TO_GET["gpus"]))
    elif len(gpus) < plan.gpus:
        problems.append(Finding(
            severity="error", code="not-enough-gpus", message=f"the config asks for {plan.gpus} GPUs "
                                f"({plan.train_gpus} trainer + {plan.infer_gpus} inference), this machine has "
                                f"{len(gpus)}", fix="lower [deployment] num_train_gpus/num_infer_gpus, or run it "
                                "hosted with --hosted"))
    else:
        memory = _memory_problem(plan, data, gpus)
        if memory:
            problems.append(memory)
    return problems


def _memory_problem(plan: LaunchPlan, data: dict[str, Any], gpus: list[GPU]) -> Finding | None:
    billions = model_billions(plan.model)
    if billions is None:
        return None
    lora = _mentions_lora(data.get("trainer")) or _mentions_lora(data.get("model"))
    trainer = billions * (LORA_BYTES if lora else FULL_BYTES) / max(plan.train_gpus, 1) * MARGIN
    inference = billions * INFER_BYTES * MARGIN
    smallest = min(g.memory_mib for g in gpus) / 1024
    plan.memory = (f"about {trainer:.0f} GiB per trainer GPU ({'LoRA' if lora else 'full fine-tune'}) and "
                   f"{inference:.0f} GiB per inference GPU, for {billions:g}B parameters; "
                   f"smallest GPU here: {smallest:.0f} GiB")
    if max(trainer, inference) <= smallest:
        return None
    return Finding(code="memory-estimate", severity="warning", message=f"{plan.memory}: it may not fit",
                   fix="add trainer GPUs, use LoRA, or pick a smaller model")


def _mentions_lora(table: Any) -> bool:
    """A `lora` table anywhere under it (prime-rl has moved it between trainer and model)."""
    return isinstance(table, dict) and any("lora" in key.lower() or _mentions_lora(v) for key, v in table.items())


def _start(plan: LaunchPlan, problems: list[Finding], stack: StackResult, ctx: Context) -> LaunchResult:
    assert stack.prime_rl is not None and stack.uv is not None
    run_id = f"local-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"
    folder = records.run_dir(ctx.workspace, run_id)
    files.make_dirs(folder / "outputs", private=True)
    argv = run_argv(stack.uv.path, Path(plan.snapshot or plan.config), folder / "outputs")
    plan.command = argv
    pid = spawn(argv, Path(stack.prime_rl.path), folder, run_id)
    record = records.RunRecord(id=run_id, target="local", config=plan.config, started_at=records.now(),
                               summary=plan.model_dump(), pid=pid, argv=argv, prime_rl=stack.prime_rl.path)
    records.save(ctx.workspace, record)
    return LaunchResult(launched=True, run=run_id, plan=plan, problems=problems,
                        next=f"follow it: `rlpilot train status {run_id}`, `rlpilot train watch {run_id}`; "
                             f"stop it with `rlpilot train stop {run_id}`")


def spawn(argv: list[str], cwd: Path, folder: Path, name: str) -> int:
    """Start `argv` under the supervisor, logging to `folder/output.log`; the pid of its process group."""
    return process.supervise(argv, cwd=cwd, log=folder / "output.log", exit_file=folder / "exit.json", name=name,
                                env=child_environment())


# -- following a run -------------------------------------------------------------------------


def group_members(pgid: int) -> list[int]:
    """Live processes of the group (zombies excluded: a zombie no longer runs)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
            return [pgid]
        except ProcessLookupError:
            return []
        except PermissionError:
            return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = files.read_text_bounded(entry / "stat").rsplit(")", 1)[1].split()
        except (BadInput, IndexError):  # a process that ended meanwhile
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def exit_status(record: records.RunRecord, workspace: Path) -> dict[str, Any] | None:
    ended = files.read_json_if_present(records.run_dir(workspace, record.id) / "exit.json")
    return ended if isinstance(ended, dict) else None


def state(record: records.RunRecord, workspace: Path) -> str:
    assert record.pid is not None
    if group_members(record.pid):
        return "running"
    ended = exit_status(record, workspace)
    if record.stopped_at:
        return "stopped"
    if ended is None:
        return "lost (ended without an exit status: killed from outside, or the machine restarted)"
    return "finished" if ended["returncode"] == 0 else f"failed (exit status {ended['returncode']})"


def metrics_file(record: records.RunRecord, workspace: Path) -> Path | None:
    found = list(records.outputs(record, workspace).glob("**/metrics.jsonl"))
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def log_lines(record: records.RunRecord, workspace: Path, component: str | None, tail: int,
              whole: Path | None = None) -> list[str]:
    """The last lines of one component's log, or of the run's whole output (`whole`, by default the
    supervisor's `output.log`)."""
    outputs = records.outputs(record, workspace)
    if component is None:
        path = whole or records.run_dir(workspace, record.id) / "output.log"
    else:
        logs = sorted(outputs.glob(f"**/{component}.log"), key=lambda p: p.stat().st_mtime)
        if not logs:
            present = sorted({p.stem for p in outputs.glob("**/*.log")})
            raise ToolError("no-such-log", f"run {record.id} has no {component}.log yet",
                            f"logs present: {', '.join(present) or 'none'}; without --component you get the "
                            "run's whole output")
        path = logs[-1]
    return files.last_lines(path, tail)


def stop_group(pgid: int) -> list[int]:
    """TERM to the whole group, KILL after the grace period; the pids still alive (none, normally)."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        if not group_members(pgid):
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
    return group_members(pgid)


def stop(record: records.RunRecord, workspace: Path) -> list[int]:
    assert record.pid is not None
    if not group_members(record.pid):
        return []
    left = stop_group(record.pid)
    record.stopped_at = records.now()
    records.save(workspace, record)
    return left
