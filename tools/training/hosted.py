"""Hosted Training through `prime train` (prime 0.18.0).

Verified against the real CLI (prime_cli/commands/rl.py, api/rl.py, api/training.py):
- `prime train CONFIG -o json -y` prints only `{"run": {"runId", "gpuType"?, "pricePerGpuHour"?,
  "estimatedCostPerHour"?, ...}}` on stdout; without `-y` it asks, which our closed stdin refuses.
- `prime train validate` asks the platform for its runtime (POST /training/runs/prepare), builds
  that schema locally and validates; a platform without that endpoint answers 404/405 and then
  validates on submission only. `prime train CONFIG` runs the same validation itself.
- `prime train models -o json` lists the models cached on reserved clusters
  (`available_fft_models[]`) and on-demand GPU types with their price per GPU-hour; an on-demand
  run downloads a model that is not cached, so that list only restricts reserved-only accounts.
  `prime train gpus -o json` lists the reserved GPU types (`{"gpuTypes": [...]}`).
- `usage -o json`, `rollouts --step`, `progress`, `distributions` print JSON (the last three
  always); `usage` prints its errors on stderr. `restart` asks unless `--force`; `components`
  prints only a table.
- `prime train stop` asks unless `--force`, then polls until the run is terminal (up to 180 s).
- `-e NAME` reads the secret's value from our environment: only names appear in argv.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tools.configs.document import lookup
from tools.framework.contract import Context, not_confirmed
from tools.framework.eras import Dialect
from tools.framework.errors import ToolError
from tools.framework.findings import Finding
from tools.io import files
from tools.io.process import LineCallback, ProcessResult
from tools.stack.installed import Installed
from tools.stack.prime_cli import (
    LOGIN_HINT,
    error_lines,
    find_prime,
    json_output,
    prime_environment,
    prime_login,
    run_prime,
)
from tools.training import records
from tools.training.offers import Offers, check_offers, read_offers
from tools.training.plan import LaunchInput, LaunchPlan, LaunchResult, migration_problem, read_plan

# Secrets `prime train` forwards (`_collect_secrets`); any other name makes it refuse the run.
FORWARDED_SECRETS = ("WANDB_API_KEY", "HF_TOKEN")
DASHBOARD = "https://app.primeintellect.ai/dashboard/training"
VALIDATE_TIMEOUT = 900.0  # the first validation builds the platform's schema environment
LAUNCH_TIMEOUT = 300.0
STOP_TIMEOUT = 240.0  # the CLI itself polls for up to 180 s
ROLLOUTS_PER_PAGE = 100  # the CLI's own default page size


def _by_name(secrets: list[str]) -> list[str]:
    """`--env-var NAME` for each secret: the CLI reads the value from its environment."""
    return [part for name in secrets for part in ("--env-var", name)]


def launch_argv(config: Path, secrets: list[str]) -> list[str]:
    return ["train", str(config), "--output", "json", "--yes", *_by_name(secrets)]


def validate_argv(config: Path) -> list[str]:
    return ["train", "validate", str(config), "--output", "json"]


def launch_hosted(args: LaunchInput, ctx: Context) -> LaunchResult:
    plan, problems, data = read_plan(args, ctx, "hosted", Installed())
    plan.where = "Prime Hosted Training (a dedicated cluster the platform picks)"
    if plan.dialect != Dialect.CURRENT:
        # Lab-era configs are refused by prime 0.18 itself; older prime-rl ones fail server-side.
        problems = [migration_problem(plan, Dialect.CURRENT, "`prime train` (Hosted Training)")]
    plan.secrets, missing = _secrets(data)
    problems += missing
    config = Path(plan.config)
    plan.command = ["prime", *launch_argv(config, plan.secrets)]
    if any(p.severity == "error" for p in problems):
        return LaunchResult(launched=False, plan=plan, problems=problems,
                            next="fix the errors, then run the same command again")
    environ = prime_environment(ctx.workspace)
    find_prime(environ)  # a login is no use without the CLI: name what is missing first
    if not prime_login(environ)[0]:
        raise ToolError("not-logged-in", "launching Hosted Training needs a Prime login", LOGIN_HINT)
    if not args.yes:
        with ThreadPoolExecutor(max_workers=2) as pool:
            validation = pool.submit(_validate, config, ctx)
            offers = pool.submit(read_offers, ctx, plan.gpu_type is not None)
            plan.validation, invalid = validation.result()
        problems += invalid + _priced(plan, offers.result())
        ready = not any(p.severity == "error" for p in problems)
        return LaunchResult(launched=False, plan=plan, problems=problems,
                            next=not_confirmed("launch it") if ready else "fix the errors, then run it again")

    # The offers were checked in the preview the user confirmed; the platform checks them again on submission.
    plan.validation = "checked by `prime train` before it submits"
    config = Path(plan.snapshot or plan.config)
    try:
        outcome = run_prime(launch_argv(config, plan.secrets), ctx, what=f"launching {config.name}",
                            timeout=LAUNCH_TIMEOUT, check=False)
    except ToolError as error:
        if error.code == "prime-timed-out":
            # The platform may have created the run: a blind retry could launch (and bill) it twice.
            error.hint = "look for it with `prime train list` before launching again"
        raise
    if not outcome.ok:
        raise ToolError("launch-failed", f"`prime train` refused {config}: {error_lines(outcome)}",
                        f"fix what it says; `rlpilot config check {config}` explains config errors")
    run = json_output(outcome)["run"]
    run_id = records.check_run_id(run["runId"])
    plan.gpu_type = run.get("gpuType") or plan.gpu_type
    plan.price_per_gpu_hour = run.get("pricePerGpuHour")
    plan.estimated_cost_per_hour = run.get("estimatedCostPerHour")
    record = records.RunRecord(id=run_id, target="hosted", config=plan.config, started_at=records.now(),
                               summary=plan.model_dump(), dashboard=f"{DASHBOARD}/{run_id}")
    records.save(ctx.workspace, record)
    return LaunchResult(launched=True, run=run_id, plan=plan, problems=problems,
                        next=f"follow it: `rlpilot train watch {run_id}` (or status, metrics, logs); "
                             f"page: {record.dashboard}")


def _secrets(data: dict[str, Any]) -> tuple[list[str], list[Finding]]:
    wants_wandb = lookup(data, "monitors.wandb") is not None or isinstance(data.get("wandb"), dict)
    # Only what the run can use leaves the machine: the W&B key only for a config that logs there.
    names = [name for name in secret_names() if name != "WANDB_API_KEY" or wants_wandb]
    problems = []
    if wants_wandb and "WANDB_API_KEY" not in names:
        problems.append(Finding(code="secret-missing", severity="warning",
                                message="the config logs to W&B, but WANDB_API_KEY is not set here",
                                fix="export WANDB_API_KEY before launching, or remove the W&B table"))
    return names, problems


def _validate(config: Path, ctx: Context) -> tuple[str, list[Finding]]:
    try:
        outcome = run_prime(validate_argv(config), ctx, what=f"validating {config.name}", timeout=VALIDATE_TIMEOUT,
                            check=False)
    except ToolError as slow:
        if slow.code != "prime-timed-out":
            raise
        return f"`prime train validate` did not finish in {VALIDATE_TIMEOUT:.0f} s; the platform validates on " \
               "submission", []
    if outcome.ok:
        artifact = json_output(outcome)
        return f"passed `prime train validate` (prime-rl schema {artifact.get('schema_commit', '?')[:12]})", []
    try:
        error = str(json_output(outcome).get("error", ""))
    except ToolError:
        error = error_lines(outcome)
    if error.startswith(("HTTP 404", "HTTP 405")):
        return "the platform offers no local validation; it validates the config on submission", []
    return "failed", [Finding(
            severity="error", code="hosted-validation-failed", message=f"`prime train validate` refused it: {error}",
                              fix=f"fix the config; `rlpilot config check {config}` explains most errors")]


def _priced(plan: LaunchPlan, offers: Offers) -> list[Finding]:
    """Check the model and GPU type against the offers, and put the on-demand price on the plan."""
    problems = check_offers(plan.model, plan.gpu_type, offers)
    on_demand = offers.on_demand
    matching = [o for o in on_demand if o.gpu_type == plan.gpu_type] if plan.gpu_type else on_demand
    if len(matching) == 1:
        plan.gpu_type = matching[0].gpu_type
        plan.price_per_gpu_hour = matching[0].price_per_gpu_hour
        plan.estimated_cost_per_hour = round(plan.price_per_gpu_hour * plan.gpus, 2)
    elif matching:
        plan.where += "; on-demand: " + ", ".join(f"{o.gpu_type} ${o.price_per_gpu_hour:.2f}/GPU-hour"
                                                  f" (about ${o.price_per_gpu_hour * plan.gpus:.2f}/hour)"
                                                  for o in matching)
    elif plan.gpu_type and plan.gpu_type in (offers.gpu_types or []):
        plan.where += f"; {plan.gpu_type} on your reserved capacity (billed by your allocation)"
    return problems


# -- following a run -------------------------------------------------------------------------


def get_argv(run: str) -> list[str]:
    return ["train", "get", run, "--output", "json"]


def metrics_argv(run: str, min_step: int | None = None) -> list[str]:
    return ["train", "metrics", run] + (["--min-step", str(min_step)] if min_step is not None else [])


def logs_argv(run: str, component: str | None, tail: int) -> list[str]:
    return ["train", "logs", run, "--tail", str(tail)] + (["--component", component] if component else [])


def stop_argv(run: str) -> list[str]:
    return ["train", "stop", run, "--force"]


def _followed(argv: list[str], run: str, ctx: Context, what: str, timeout: float = 120.0,
              on_line: LineCallback | None = None) -> ProcessResult:
    try:
        outcome = run_prime(argv, ctx, what=what, timeout=timeout, check=False, on_line=on_line)
    except ToolError as error:
        if error.code == "prime-not-installed" and records.load(ctx.workspace, run) is None:
            # Without the CLI an id nobody launched here may be a typo as well as a run from elsewhere.
            raise ToolError("run-not-found", f"no run {run} was launched from this workspace (none in "
                            f"{records.runs_dir(ctx.workspace)}), and Hosted Training cannot be asked about it: "
                            "the Prime CLI (`prime`) is not installed",
                            "check the run id; for a run launched elsewhere, install the CLI with "
                            "`uv tool install prime`") from None
        raise
    if not outcome.ok:
        if "404" in outcome.stdout + outcome.stderr:
            raise ToolError("run-not-found", f"Hosted Training has no run {run} for this account",
                            "list your runs with `prime train list`; a team run needs that team selected")
        raise ToolError("prime-failed", f"{what} failed: {error_lines(outcome)}", "retry in a minute")
    return outcome


def get_run(run: str, ctx: Context) -> dict[str, Any]:
    return json_output(_followed(get_argv(run), run, ctx, f"reading run {run}"))["run"]


def fetch_metrics(run: str, ctx: Context, dest: Path) -> Path:
    """Save `prime train metrics` as it printed it, which `diagnose` reads as is.

    Written line by line as it arrives: a long run's metrics are far longer than the kept tail.
    """
    files.make_dirs(dest.parent)
    partial = dest.with_suffix(".partial")
    with files.open_write(partial) as handle:
        _followed(metrics_argv(run), run, ctx, f"reading the metrics of {run}",
                  on_line=lambda stream, line: handle.write(line + "\n") if stream == "stdout" else None)
    with partial.open(encoding="utf-8", errors="replace") as handle:
        head = handle.read(4096)
    if not head.lstrip().startswith("{"):
        raise ToolError("prime-output-unreadable", f"`prime train metrics {run}` printed no JSON",
                        "check `prime --version` (rlpilot is tested with 0.18.0)")
    partial.replace(dest)
    return dest


def fetch_logs(run: str, component: str | None, tail: int, ctx: Context) -> list[str]:
    return _followed(logs_argv(run, component, tail), run, ctx, f"reading the logs of {run}").stdout_tail


def stop(run: str, ctx: Context) -> str:
    outcome = _followed(stop_argv(run), run, ctx, f"stopping {run}", timeout=STOP_TIMEOUT)
    for line in reversed(outcome.stdout_tail):
        if line.startswith("Status:"):
            return line.removeprefix("Status:").strip()
    return "stopping (still being torn down)"


def checkpoints_argv(run: str) -> list[str]:
    return ["train", "checkpoints", run, "--output", "json"]


def pause_argv(run: str) -> list[str]:
    return ["train", "pause", run, "--force"]


def resume_argv(run: str, secrets: list[str]) -> list[str]:
    return ["train", "resume", run, "--output", "json", "--yes", *_by_name(secrets)]


def checkpoints(run: str, ctx: Context) -> list[dict[str, Any]]:
    return json_output(_followed(checkpoints_argv(run), run, ctx, f"listing the checkpoints of {run}"))["checkpoints"]


def pause(run: str, ctx: Context) -> str:
    outcome = _followed(pause_argv(run), run, ctx, f"pausing {run}")
    return next((line.removeprefix("Status:").strip() for line in outcome.stdout_tail if line.startswith("Status:")),
                "PAUSING")


def resume(run: str, secrets: list[str], ctx: Context) -> dict[str, Any]:
    """Resume a PAUSED run as a new run (the platform's rule); its dispatch record, as `launch` gets."""
    return json_output(_followed(resume_argv(run, secrets), run, ctx, f"resuming {run}", timeout=LAUNCH_TIMEOUT))["run"]


def gpus_argv() -> list[str]:
    return ["train", "gpus", "--output", "json"]


def usage_argv(run: str) -> list[str]:
    return ["train", "usage", run, "--output", "json"]


def progress_argv(run: str) -> list[str]:
    return ["train", "progress", run]


def rollouts_argv(run: str, step: int, num: int = ROLLOUTS_PER_PAGE) -> list[str]:
    return ["train", "rollouts", run, "--step", str(step), "--num", str(num)]


def distributions_argv(run: str, kind: str, step: int | None) -> list[str]:
    return ["train", "distributions", run, "--type", kind] + (["--step", str(step)] if step is not None else [])


def restart_argv(run: str) -> list[str]:
    return ["train", "restart", run, "--force"]


def components_argv(run: str) -> list[str]:
    return ["train", "components", run]


def read_json(argv: list[str], run: str, ctx: Context, what: str) -> Any:
    return json_output(_followed(argv, run, ctx, what))


def usage(run: str, ctx: Context) -> dict[str, Any]:
    return read_json(usage_argv(run), run, ctx, f"reading the spend of {run}")


def progress(run: str, ctx: Context) -> dict[str, Any]:
    return read_json(progress_argv(run), run, ctx, f"reading the progress of {run}")


def rollouts(run: str, step: int, ctx: Context) -> dict[str, Any]:
    return read_json(rollouts_argv(run, step), run, ctx, f"reading the rollouts of {run} at step {step}")


def distribution(run: str, kind: str, step: int | None, ctx: Context) -> dict[str, Any]:
    return read_json(distributions_argv(run, kind, step), run, ctx, f"reading the {kind} histogram of {run}")


def new_metrics(run: str, after: int | None, ctx: Context) -> list[dict[str, Any]]:
    """The metric records past step `after` only: a watch never fetches the whole history again."""
    start = None if after is None else after + 1
    lines: list[str] = []  # every line: the first read of a long run is far longer than the kept tail
    _followed(metrics_argv(run, start), run, ctx, f"reading the new metrics of {run}",
              on_line=lambda stream, line: lines.append(line) if stream == "stdout" else None)
    try:
        return json.loads("\n".join(lines))["metrics"]
    except (ValueError, KeyError, TypeError):
        raise ToolError("prime-output-unreadable", f"`prime train metrics {run}` printed no metrics JSON",
                        "check `prime --version` (rlpilot is tested with 0.18.0)") from None


def restart(run: str, ctx: Context) -> str:
    outcome = _followed(restart_argv(run), run, ctx, f"restarting {run}")
    return next((line.removeprefix("Status:").strip() for line in outcome.stdout_tail if line.startswith("Status:")),
                "restarting")


def components(run: str, ctx: Context) -> list[str]:
    return _followed(components_argv(run), run, ctx, f"listing the components of {run}").stdout_tail


def secret_names() -> list[str]:
    return [name for name in FORWARDED_SECRETS if os.environ.get(name)]
