"""SLURM runs: prime-rl submits its own sbatch script; rlpilot checks the cluster first, then follows the job.

A config with a `[slurm]` table makes `uv run rl @ CONFIG` render an sbatch script from its
templates and submit it (prime-rl's docs/slurm.md; docs/sources.md, "prime-rl entry points and how a file
is passed"). rlpilot runs exactly that in the prime-rl checkout: with `--dry-run` for the preview (the
script the user confirms), then for real, reading the job id from sbatch's "Submitted batch job N". The
job writes into the run's output folder, which this machine and the nodes share, so logs, metrics and checkpoints are
read from there as for a local run. The job's state comes from `squeue` while the cluster still
lists it, then from `sacct` (with its steps, to say which one failed).
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from tools.configs.rules.targets import no_slurm_table
from tools.framework.contract import Context, not_confirmed
from tools.framework.errors import BadInput, ToolError
from tools.framework.findings import Finding
from tools.io import files, process
from tools.stack import cluster
from tools.stack.cluster import Cluster, SlurmRequest
from tools.stack.installed import Installed, cli_version, find_prime_rl
from tools.stack.prime_cli import prime_environment
from tools.training import records
from tools.training.local import DRY_RUN_TIMEOUT, checkout_problems, child_environment, run_argv
from tools.training.plan import LaunchInput, LaunchResult, migration_problem, read_plan

SUBMITTED = re.compile(r"Submitted batch job (\d+)")
SLURM_TIMEOUT = 30.0
STOP_WAIT_SECONDS = 90.0  # scancel sends TERM, then KILL after the cluster's KillWait (30 s by default)
# Filesystems the nodes of a cluster share; a local one is visible to the job only when it runs here.
SHARED_FILESYSTEMS = ("nfs", "nfs4", "lustre", "gpfs", "beegfs", "ceph", "cephfs", "glusterfs", "wekafs",
                      "fuse.glusterfs", "fuse.ceph", "fuse.sshfs", "cifs", "smb3", "panfs", "vast")
# Job states in which the job still holds or waits for its nodes (squeue's and sacct's names).
ACTIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                    "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"})
SCRIPT_PLACEHOLDER = "<run output folder>"


# -- launch ----------------------------------------------------------------------------------


def launch_slurm(args: LaunchInput, ctx: Context) -> LaunchResult:
    # Only the parts a submission needs: the job's GPUs are the cluster's, not this machine's.
    environ = prime_environment(ctx.workspace)
    checkout = find_prime_rl(args.prime_rl, ctx.workspace, environ)
    uv = cli_version("uv", ["--version"], environ)
    installed = Installed(prime_rl_version=checkout.version, prime_rl_path=checkout.path) if checkout else Installed()
    plan, problems, data = read_plan(args, ctx, "slurm", installed)
    if checkout and plan.dialect != checkout.dialect:
        problems = [migration_problem(plan, checkout.dialect, f"the prime-rl {checkout.version} checkout")]
    problems += checkout_problems(checkout, uv)
    # A config without `[slurm]` is refused by the config check for this target (`no-slurm-table`),
    # which `read_plan` ran; the dialect mismatch above replaces those problems, so it is said again.
    request = cluster.request_of(data)
    if request is None and not any(p.key == "slurm" for p in problems):
        problems.append(no_slurm_table(plan.config))
    if request is not None:
        plan.slurm = request
        # The cluster's nodes, not this machine's GPUs: what the config asks of the partition.
        plan.where = (f"SLURM partition {request.partition}, {request.nodes} node(s) x {request.gpus_per_node} GPUs"
                      + (f", prime-rl {checkout.version} at {checkout.path}" if checkout else ""))
        output = output_folder(data, Path(checkout.path) if checkout else ctx.workspace, ctx.workspace, "<run id>")
        request.output_dir = str(output)
        problems += preflight(cluster.probe(environ), request, output, environ)
    if checkout and uv and request:
        plan.command = run_argv("uv", Path(plan.config), Path(request.output_dir or ""))
        script, failure = _render(uv.path, Path(plan.config), Path(checkout.path))
        request.script = script
        plan.validation = "passed `uv run rl @ CONFIG --dry-run` (it rendered the sbatch script)" if script else ""
        if failure:
            problems.append(failure)
    if any(p.severity == "error" for p in problems):
        return LaunchResult(launched=False, plan=plan, problems=problems,
                            next="fix the errors, then run the same command again")
    if not args.yes:
        return LaunchResult(launched=False, plan=plan, problems=problems, next=not_confirmed("submit it"))
    assert checkout is not None and uv is not None and uv.path and request is not None
    record = _submit(plan.snapshot or plan.config, request, uv.path, Path(checkout.path), ctx, data)
    record.summary = plan.model_dump()
    records.save(ctx.workspace, record)
    return LaunchResult(launched=True, run=record.id, plan=plan, problems=problems,
                        next=f"job {record.job_id} submitted; follow it: `rlpilot train status {record.id}`, "
                             f"`rlpilot train watch {record.id}`; cancel it with `rlpilot train stop {record.id}`")


def output_folder(data: dict, checkout: Path, workspace: Path, run_id: str) -> Path:
    """Where the job writes: `<output_dir>/<run id>` when the config names an `output_dir` (prime-rl
    runs in its checkout, so a relative one is under it), else the run's folder in rlpilot's home."""
    value = data.get("output_dir")
    if isinstance(value, str):
        base = Path(value).expanduser()
        return (base if base.is_absolute() else checkout / base) / run_id
    return records.runs_dir(workspace) / run_id / "outputs"


def preflight(found: Cluster | None, request: SlurmRequest, output: Path, environ: Mapping[str, str]) -> list[Finding]:
    """Everything the cluster would refuse, found at once."""
    if found is None or found.error:
        why = found.error if found else "`sinfo` is not on PATH"
        return [Finding(severity="error", code="slurm-unreachable", message=f"no SLURM cluster answers here: {why}",
                        fix="run rlpilot on the cluster's login node (where `sinfo` works), or point SLURM_CONF at "
                            "the cluster's slurm.conf")]
    problems = []
    partition = found.partition(request.partition)
    if partition is None:
        names = ", ".join(p.name + (" (default)" if p.default else "") for p in found.partitions) or "none"
        default = next((p.name for p in found.partitions if p.default), None) or next(
            (p.name for p in found.partitions), "NAME")
        problems.append(Finding(
            severity="error", code="no-such-partition", key="slurm.partition",
            message=f"partition {request.partition!r} does not exist on this cluster; it has: {names}",
            fix=f"set [slurm] partition = \"{default}\" (or another from the list)"))
    gpus, times = _gpu_problems(found, partition, request), _time_problems(partition, request)
    problems += gpus + times
    if partition is not None:
        problems += _request_problems(request, environ, with_time=not times, nodes_judged=bool(gpus))
        problems += _output_problems(output, partition.nodes)  # where the job runs decides what must be shared
    return problems


def _gpu_problems(found: Cluster, partition: cluster.Partition | None, request: SlurmRequest) -> list[Finding]:
    nodes = partition.nodes if partition else found.nodes
    where = f"partition {partition.name}" if partition else "the whole cluster"
    fitting = [n for n in nodes if n.usable and n.gpus >= request.gpus_per_node]
    if len(fitting) >= request.nodes:
        return []
    largest = max((n.gpus for n in nodes if n.usable), default=0)
    have = ", ".join(f"{n.name}: {n.gpus} GPUs{'' if n.usable else f' ({n.state})'}" for n in nodes) or "no nodes"
    split = f"{request.train_nodes} trainer + {request.infer_nodes} inference" if request.infer_nodes else "one"
    return [Finding(
        severity="error", code="not-enough-gpus", key="deployment.gpus_per_node",
        message=f"the config asks for {request.nodes} node(s) ({split}) with {request.gpus_per_node} GPUs each; "
                f"{where} has {len(fitting)} such node(s) ({have})",
        fix=f"set deployment.gpus_per_node to at most {largest} and the node counts to what the partition has, "
            "or use a partition with more or bigger GPU nodes")]


def _time_problems(partition: cluster.Partition | None, request: SlurmRequest) -> list[Finding]:
    """`slurm.time` against the partition's limit (sbatch itself refuses it only where the cluster
    enforces partition limits at submission; elsewhere the job would wait forever)."""
    if request.time is None:
        return []
    try:
        wanted = cluster.minutes(request.time)
    except ValueError:
        return [Finding(severity="error", code="slurm-bad-time", key="slurm.time",
                        message=f"slurm.time {request.time!r} is not a SLURM time",
                        fix="write it as HH:MM:SS or D-HH:MM:SS, e.g. \"24:00:00\"")]
    try:
        limit = cluster.minutes(partition.max_time) if partition else None
    except ValueError:  # a limit sinfo writes in a way we do not read: sbatch --test-only still judges
        limit = None
    if partition is None or limit is None or wanted is None or wanted <= limit:
        return []
    return [Finding(severity="error", code="slurm-time-rejected", key="slurm.time",
                    message=f"slurm.time {request.time} is more than partition {partition.name}'s limit of "
                            f"{partition.max_time}",
                    fix=f"set [slurm] time to at most \"{partition.max_time}\", or use a partition with a longer "
                        "limit")]


def _request_problems(request: SlurmRequest, environ: Mapping[str, str], with_time: bool,
                      nodes_judged: bool) -> list[Finding]:
    """What sbatch itself says of the account (and anything else) without queueing: `--test-only`.

    When the nodes were already found wanting, a refusal other than the account's says the same.
    """
    sbatch = process.which("sbatch", environ)
    if not sbatch:
        return [Finding(severity="error", code="slurm-unreachable", message="`sbatch` is not on PATH",
                        fix="install the SLURM client tools on this machine")]
    argv = [sbatch, "--test-only", "--partition", request.partition, "--nodes", "1", "--wrap", "true"]
    if request.account:
        argv[2:2] = ["--account", request.account]
    if request.time and with_time:
        argv[2:2] = ["--time", request.time]
    tried = process.run(argv, env=environ, timeout=SLURM_TIMEOUT)
    if tried.ok:
        return []
    said = tried.said(2).replace("sbatch: error: ", "")
    if "account" in said.lower():
        return [Finding(severity="error", code="slurm-account-rejected", key="slurm.account",
                        message=f"the cluster refuses account {request.account or '(none given)'}: {said}",
                        fix="set [slurm] account to one of yours (`sacctmgr show assoc user=$USER format=account`)")]
    if nodes_judged:
        return []
    return [Finding(severity="error", code="slurm-request-rejected", message=f"sbatch --test-only refuses the job: "
                    f"{said}", fix="change [slurm] where SLURM says")]


def _output_problems(output: Path, nodes: list[cluster.Node]) -> list[Finding]:
    existing = next(p for p in (output, *output.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        return [Finding(severity="error", code="output-not-writable", key="output_dir",
                        message=f"the run's output folder {output} cannot be written from here ({existing} is "
                                "read-only)", fix="set output_dir to a writable folder on the shared filesystem")]
    here = {os.uname().nodename, os.uname().nodename.split(".")[0]}
    elsewhere = sorted({n.name for n in nodes} - here)
    kind = _filesystem(existing)
    if elsewhere and not kind.startswith(SHARED_FILESYSTEMS):
        return [Finding(severity="error", code="output-not-shared", key="output_dir",
                        message=f"the run's output folder {output} is on a local {kind} filesystem, but the job "
                                f"runs on {', '.join(elsewhere[:5])}{', ...' if len(elsewhere) > 5 else ''}, which "
                                "cannot see it", fix="set output_dir to a folder on the cluster's shared filesystem "
                                                     "(NFS, Lustre, ...) that this machine mounts too")]
    return []


def _filesystem(path: Path) -> str:
    """The type of the filesystem `path` is on, from the longest matching mount point."""
    best, kind = "", "unknown"
    try:
        mounts = files.read_text_bounded(Path("/proc/mounts")).splitlines()
    except BadInput:  # no mount table to read (not Linux), or one past the bound: the type is not known
        return kind
    real = str(path.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and (real == fields[1] or real.startswith(fields[1].rstrip("/") + "/")):
            if len(fields[1]) > len(best):
                best, kind = fields[1], fields[2]
    return kind


_NOT_A_SCRIPT = "that is not the sbatch script prime-rl writes; check what wrote it into the output folder"


def _render(uv: str, config: Path, checkout: Path) -> tuple[str | None, Finding | None]:
    """The sbatch script prime-rl writes for this config, from a dry run in a scratch folder."""
    with files.scratch_dir(prefix="rlpilot-slurm-dry-run-") as scratch:
        dry = process.run(run_argv(uv, config, Path(scratch), dry_run=True), cwd=checkout,
                          env=child_environment(), timeout=DRY_RUN_TIMEOUT)
        scripts = sorted(Path(scratch).glob("**/*.sbatch"), key=lambda p: p.stat().st_mtime)
        if dry.ok and scripts:
            return files.read_text_bounded(scripts[-1], hint=_NOT_A_SCRIPT).replace(scratch, SCRIPT_PLACEHOLDER), None
    said = dry.said() if not dry.ok else "it wrote no .sbatch script"
    return None, Finding(severity="error", code="dry-run-failed", message=f"`uv run rl @ {config.name} --dry-run` "
                         f"failed: {said}", fix=f"fix the config where prime-rl says; `rlpilot config check {config}` "
                                                "explains most errors")


def _submit(config: str, request: SlurmRequest, uv: str, checkout: Path, ctx: Context, data: dict) \
        -> records.RunRecord:
    run_id = f"slurm-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"
    folder = records.run_dir(ctx.workspace, run_id)
    files.make_dirs(folder, private=True)
    output = output_folder(data, checkout, ctx.workspace, run_id)
    files.make_dirs(output)
    request.output_dir = str(output)
    argv = run_argv(uv, Path(config), output)
    submitted = process.run(argv, cwd=checkout, env=child_environment(), timeout=DRY_RUN_TIMEOUT)
    files.write_text(folder / "submit.log", "\n".join(submitted.stdout_tail + submitted.stderr_tail) + "\n")
    job = SUBMITTED.search(submitted.stdout + "\n" + submitted.stderr)
    if not submitted.ok or not job:
        raise ToolError("submit-failed", f"`uv run rl @ {Path(config).name}` did not submit a job: "
                        f"{submitted.said()}", f"see {folder / 'submit.log'}")
    scripts = sorted(output.glob("**/*.sbatch"))
    try:
        request.script = files.read_text_bounded(scripts[-1], hint=_NOT_A_SCRIPT) if scripts else request.script
    except BadInput:  # the job is submitted: it is recorded, with the dry run's script, whatever this file is
        pass
    return records.RunRecord(id=run_id, target="slurm", config=config, started_at=records.now(), argv=argv,
                             prime_rl=str(checkout), job_id=job.group(1), output_dir=str(output))


# -- following a job -------------------------------------------------------------------------


class JobState(BaseModel):
    job_id: str
    state: str = Field(description="SLURM's own word: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...")
    reason: str | None = Field(None, description="Why a pending job waits (squeue's reason).")
    exit_code: str | None = Field(None, description="sacct's `code:signal`.")
    failed_step: str | None = Field(None, description="The first step that failed, `ID.N (name)`.")
    nodes: str | None = None
    elapsed: str | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    def describe(self, stopped: bool) -> str:
        if self.state == "PENDING":
            return f"pending ({self.reason or 'no reason given'})"
        if self.state == "CANCELLED" and stopped:
            return "stopped (cancelled)"
        if self.state == "FAILED":
            return f"failed ({_exit_words(self.exit_code)}" + (f", in step {self.failed_step}" if self.failed_step
                                                                  else "") + ")"
        return self.state.lower().replace("_", "-")


def _exit_words(code: str | None) -> str:
    status, _, signal = (code or "?:0").partition(":")
    return f"killed by signal {signal}" if signal not in ("", "0") else f"exit code {status}"


def job_state(job_id: str, environ: Mapping[str, str] | None = None) -> JobState:
    environ = os.environ if environ is None else environ
    listed = _squeue(job_id, environ)
    if listed is not None and listed.state not in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
        return listed
    accounted = _sacct(job_id, environ)
    return accounted or listed or JobState(job_id=job_id, state="UNKNOWN",
                                           reason="neither squeue nor sacct knows the job any more")


def _squeue(job_id: str, environ: Mapping[str, str]) -> JobState | None:
    squeue = process.which("squeue", environ)
    if not squeue:
        raise ToolError("slurm-unreachable", "`squeue` is not on PATH: this machine cannot see the cluster",
                        "follow SLURM runs from the cluster's login node")
    listed = process.run([squeue, "-h", "-j", job_id, "-o", "%T|%r|%N|%M"], env=environ, timeout=SLURM_TIMEOUT)
    rows = [line.split("|") for line in listed.stdout_tail if line.count("|") == 3]
    if not listed.ok or not rows:
        return None  # squeue forgets a job soon after it ends ("Invalid job id specified")
    state, reason, nodes, elapsed = rows[0]
    return JobState(job_id=job_id, state=state, reason=None if reason in ("None", "") else reason,
                    nodes=nodes or None, elapsed=elapsed)


def _sacct(job_id: str, environ: Mapping[str, str]) -> JobState | None:
    sacct = process.which("sacct", environ)
    if not sacct:
        return None
    rows = process.run([sacct, "-n", "-P", "-j", job_id, "-o", "JobID,JobName,State,ExitCode,NodeList,Elapsed"],
                       env=environ, timeout=SLURM_TIMEOUT)
    entries = [line.split("|") for line in rows.stdout_tail if line.count("|") == 5]
    job = next((e for e in entries if e[0] == job_id), None)
    if not rows.ok or job is None:
        return None
    # The batch step fails because a step it started failed: name that one when there is one.
    steps = sorted((e for e in entries if e[0] != job_id and e[1] != "extern"), key=lambda e: e[0].endswith(".batch"))
    failed = next((e for e in steps if e[2].split()[0] not in ACTIVE | {"COMPLETED"} or e[3] != "0:0"), None)
    return JobState(job_id=job_id, state=job[2].split()[0], exit_code=job[3], nodes=job[4] or None, elapsed=job[5],
                    failed_step=f"{failed[0]} ({failed[1]})" if failed else None)


def job_log(record: records.RunRecord) -> Path | None:
    """The job's own output: `<run folder>/job_%j.log` in prime-rl's templates up to v0.8,
    `<run dir>/launcher/logs/<name>job_%j.log` from v0.9."""
    found = sorted(records.outputs(record).glob(f"**/*job_{record.job_id}.log"))
    return found[-1] if found else None


def stop(record: records.RunRecord, workspace: Path) -> JobState:
    """scancel, then wait until the cluster has let the job go."""
    assert record.job_id is not None
    scancel = process.which("scancel", os.environ)
    if not scancel:
        raise ToolError("slurm-unreachable", "`scancel` is not on PATH", "cancel it from the cluster's login node")
    current = job_state(record.job_id)
    if not current.active:
        return current
    cancelled = process.run([scancel, record.job_id], env=process.person_environment(), timeout=SLURM_TIMEOUT)
    if not cancelled.ok:
        raise ToolError("stop-failed", f"scancel {record.job_id} failed: {cancelled.said()}",
                        f"try `scancel {record.job_id}` yourself")
    record.stopped_at = records.now()
    records.save(workspace, record)
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while (current := job_state(record.job_id)).active and time.monotonic() < deadline:
        time.sleep(0.5)
    return current
