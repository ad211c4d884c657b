"""Run records: what rlpilot launched, kept on disk so that a restarted rlpilot still knows it.

One folder per run under `<rlpilot home>/runs/<id>/`: `record.json`, and beside it what the run
produces or rlpilot fetched (a local run's output log and prime-rl output directory, a hosted
run's latest metrics, a SLURM submission's log; a SLURM job itself writes into the output folder
its record names, on the filesystem the cluster's nodes share). Run ids are used as folder names
and as `prime` arguments, so they are checked with the same rule everywhere.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from tools.framework.eras import Target
from tools.framework.errors import BadInput, ToolError
from tools.framework.workspace import rlpilot_home
from tools.io import files

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class RunRecord(BaseModel):
    id: str
    target: Target
    config: str
    started_at: str
    stopped_at: str | None = None
    summary: dict[str, object] = Field(default_factory=dict, description="What the user confirmed.")
    # local runs
    pid: int | None = Field(None, description="The supervisor, leader of the run's process group.")
    argv: list[str] = Field(default_factory=list)
    prime_rl: str | None = None
    # hosted runs
    dashboard: str | None = None
    # SLURM runs
    job_id: str | None = None
    output_dir: str | None = Field(None, description="Where the job writes, on the filesystem the nodes share.")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_run_id(run: str) -> str:
    if not _RUN_ID.fullmatch(run) or ".." in run:
        raise BadInput("bad-run-id", f"{run!r} is not a run id",
                       "pass the id `rlpilot train launch` printed (letters, digits, '.', '-', '_')")
    return run


def runs_dir(workspace: Path) -> Path:
    return rlpilot_home(workspace) / "runs"


def run_dir(workspace: Path, run: str) -> Path:
    return runs_dir(workspace) / check_run_id(run)


def outputs(record: RunRecord, workspace: Path | None = None) -> Path:
    """The folder prime-rl writes the run into: a SLURM job's shared output folder, else `<run>/outputs`."""
    if record.output_dir:
        return Path(record.output_dir)
    assert workspace is not None
    return run_dir(workspace, record.id) / "outputs"


def save(workspace: Path, record: RunRecord) -> Path:
    folder = run_dir(workspace, record.id)
    return files.write_text(folder / "record.json", record.model_dump_json(indent=2), private=True)  # atomic


def load(workspace: Path, run: str) -> RunRecord | None:
    """The record of a run rlpilot launched from this workspace, or None (e.g. a run from the web)."""
    path = run_dir(workspace, run) / "record.json"
    hint = "move it aside; the run itself is not affected"
    text = files.read_text_if_present(path, hint=hint)  # past the bound, a FIFO: refused, naming it
    try:
        return None if text is None else RunRecord.model_validate_json(text)
    except ValidationError as error:
        raise ToolError("bad-run-record", f"{path} cannot be read: {error}", hint) from None
