"""Runs where their loggers keep them, written by the loggers themselves and read back by diagnose.

wandb writes offline (WANDB_MODE=offline), tensorboard with its own writers, transformers' TrainerState
saves checkpoints, Trackio's database is written by trackio when it is installed (it is not a dev
dependency: trackio 0.43 holds pillow below 13) and with its schema through sqlite3 always. No test needs
the network. The metric names are TRL's as transformers' callbacks log them: `train/<name>` and
`train/global_step` (rewrite_logs in transformers/integrations/integration_utils.py).
"""

from __future__ import annotations

import os
import sqlite3
import struct
import sys
import time
import zlib
from pathlib import Path

import orjson
import pytest

from tests.diagnose_corpus import Latent, Scenario
from tests.diagnose_support import TRL
from tools.diagnose.readers import read, tfevents, trackio_db, wandb_run
from tools.diagnose.tool import DiagnoseInput, DiagnoseResult, diagnose
from tools.framework.contract import Context
from tools.framework.errors import BadInput

FLAT = Scenario("trl-flat", "csv", 120, lambda t, rng: Latent(0.02), "flat-reward", None)


def trl_rows(steps: int = 120, first: int = 0, every: int = 1) -> list[dict[str, float]]:
    """TRL's logged rows for a run whose reward stays flat near 0.02, at global steps first, first+every, ..."""
    rows = []
    for index, values in enumerate(FLAT.run()[:steps]):
        row = {f"train/{raw}": float(values[canonical]) for canonical, raw in TRL.items()
               if values.get(canonical) is not None}
        rows.append({**row, "train/global_step": first + index * every})
    return rows


def no_reward(rows: list[dict[str, float]]) -> list[dict[str, float]]:
    return [{name: value for name, value in row.items() if "reward" not in name} for row in rows]


def _diagnose(source: Path, run: str | None = None) -> DiagnoseResult:
    return diagnose(DiagnoseInput(source=source, run=run), Context(workspace=source.parent))


def _codes(result: DiagnoseResult) -> list[str]:
    return [finding.code for finding in result.findings]


# --- W&B ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wandb_runs(tmp_path_factory) -> Path:
    """One project folder whose wandb/ holds: `flat` (its W&B step runs ahead of the trainer's, as an eval
    row between train rows makes it), `resumed` (two folders: steps 0-59, then from the checkpoint at 40
    to 99 with another reward), `short` (two steps) and `noreward`."""
    wandb = pytest.importorskip("wandb", reason="wandb is a dev dependency (uv sync)")
    root = tmp_path_factory.mktemp("wandb-project")
    # Everything wandb writes stays under the test's folder: its runs, its cache (the core's logs), its config.
    place = {"WANDB_DIR": root, "WANDB_CACHE_DIR": root / "cache", "WANDB_CONFIG_DIR": root / "config",
             "WANDB_DATA_DIR": root / "data"}
    saved = {key: os.environ.get(key) for key in ("WANDB_MODE", "WANDB_SILENT", *place)}
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", **{key: str(path) for key, path in place.items()})
    settings = wandb.Settings(console="off", x_disable_stats=True, x_disable_meta=True)

    def write(run_id: str, rows: list[dict[str, float]], eval_every: int = 0) -> None:
        run = wandb.init(project="p", id=run_id, resume="allow", dir=str(root), settings=settings)
        for index, row in enumerate(rows):
            run.log(row)
            if eval_every and index % eval_every == 0:
                run.log({"eval/loss": 0.5, "train/global_step": row["train/global_step"]})
        run.finish()

    try:
        write("flat", trl_rows(), eval_every=10)
        write("resumed", [{**row, "train/reward": 0.1} for row in trl_rows(60)])
        time.sleep(1.1)  # a resumed run's folder is named by the second it started
        write("resumed", [{**row, "train/reward": 0.5} for row in trl_rows(60, first=40)])
        write("short", trl_rows(2))
        write("noreward", no_reward(trl_rows()))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return root


def _folder(root: Path, run_id: str) -> Path:
    return next(folder for folder in sorted((root / "wandb").iterdir()) if folder.name.endswith(f"-{run_id}"))


def test_several_wandb_runs_in_one_place_are_listed_and_one_is_picked(wandb_runs):
    with pytest.raises(BadInput) as raised:
        _diagnose(wandb_runs)
    assert raised.value.code == "several-runs"
    assert all(repr(name) in raised.value.message for name in ("flat", "resumed", "short", "noreward"))
    with pytest.raises(BadInput) as raised:
        _diagnose(wandb_runs, "nosuch")
    assert raised.value.code == "run-not-found" and "'flat'" in raised.value.message
    result = _diagnose(wandb_runs / "wandb", "flat")
    assert result.format == "wandb" and result.primary is not None and result.primary.code == "flat-reward"
    assert any("W&B run flat" in note for note in result.notes)


def test_a_wandb_run_folder_is_read_on_the_trainers_steps(wandb_runs):
    # W&B's own _step counts every log call (the eval rows too): 132 of them for 120 trainer steps.
    result = _diagnose(_folder(wandb_runs, "flat"))
    assert (result.first_step, result.last_step, result.steps) == (0, 119, 120)
    assert result.metric_sources["reward_mean"] == "train/reward" and "trl" in result.vocabularies


def test_a_resumed_wandb_run_reads_both_folders_and_the_later_record_wins(wandb_runs):
    kind, run = read(wandb_runs, "resumed")
    reward = run.series["reward_mean"]
    assert kind == "wandb" and (run.first_step, run.last_step) == (0, 99)
    assert reward.at(30) == pytest.approx(0.1) and reward.at(50) == pytest.approx(0.5)
    assert any("resumed 1 time(s)" in note for note in run.notes)


def test_a_wandb_run_without_a_reward_or_with_two_steps_is_unjudged(wandb_runs):
    for run_id, summary in (("noreward", "no reward series"), ("short", "only 2 reward value(s)")):
        result = _diagnose(wandb_runs, run_id)
        assert result.primary is None and _codes(result)[0] == "unjudged" and not result.judged
        assert summary in result.findings[0].summary


def test_every_crc_wandb_writes_is_the_one_checked_and_a_damaged_record_stops_the_read(wandb_runs, tmp_path):
    source = next(_folder(wandb_runs, "flat").glob("*.wandb"))
    notes: list[str] = []
    with source.open("rb") as handle:
        records = list(wandb_run.frames(handle, source.name, notes))
    assert len(records) > 132 and notes == []
    damaged = bytearray(source.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    copy = tmp_path / "run-damaged.wandb"
    copy.write_bytes(bytes(damaged))
    with copy.open("rb") as handle:
        kept = list(wandb_run.frames(handle, copy.name, notes))
    assert 0 < len(kept) < len(records) and "fails its checksum" in notes[0]


def _chunk(kind: int, data: bytes) -> bytes:
    return wandb_run.CHUNK.pack(zlib.crc32(bytes([kind]) + data), len(data), kind) + data


def test_a_record_longer_than_the_bound_is_one_line(tmp_path):
    # FIRST, then MIDDLE chunks that fill each 32 KiB block, past MAX_RECORD_BYTES without a LAST.
    body = bytearray(wandb_run.HEADER)
    body += _chunk(wandb_run.FIRST, bytes(wandb_run.BLOCK - len(wandb_run.HEADER) - wandb_run.CHUNK.size))
    middle = _chunk(wandb_run.MIDDLE, bytes(wandb_run.BLOCK - wandb_run.CHUNK.size))
    body += middle * (wandb_run.MAX_RECORD_BYTES // wandb_run.BLOCK + 1)
    source = tmp_path / "run-huge.wandb"
    source.write_bytes(bytes(body))
    with pytest.raises(BadInput) as raised:
        read(source)
    assert raised.value.code == "record-too-large" and "64 MiB" in raised.value.message


def test_a_record_begun_and_never_ended_is_dropped_not_joined_to_a_later_end(tmp_path):
    source = tmp_path / "run-torn.wandb"
    source.write_bytes(wandb_run.HEADER + _chunk(wandb_run.FIRST, b"x") + _chunk(wandb_run.FULL, b"y")
                       + _chunk(wandb_run.LAST, b"z"))
    with source.open("rb") as handle:
        assert list(wandb_run.frames(handle, source.name, [])) == [b"y"]


def test_a_record_protobuf_cannot_parse_is_counted_not_a_traceback(tmp_path):
    pytest.importorskip("wandb", reason="wandb is a dev dependency (uv sync)")
    source = tmp_path / "run-garbled.wandb"
    source.write_bytes(wandb_run.HEADER + _chunk(wandb_run.FULL, b"\xff\xff\xff\xff"))
    with pytest.raises(BadInput) as raised:
        read(source)
    assert raised.value.code == "no-steps" and "1 line(s) could not be parsed" in raised.value.message


def test_without_wandb_one_line_names_the_extra(wandb_runs, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb.proto.wandb_internal_pb2", None)
    with pytest.raises(BadInput) as raised:
        read(wandb_runs, "flat")
    assert raised.value.code == "missing-extra" and "rlpilot[wandb]" in raised.value.hint


# --- TensorBoard --------------------------------------------------------------------------------


def _write_events(folder: Path, rows: list[dict[str, float]]) -> None:
    """As torch's SummaryWriter writes through tensorboard's EventFileWriter: one simple_value per
    add_scalar, the step the trainer's global step (transformers' TensorBoardCallback)."""
    pytest.importorskip("tensorboard", reason="tensorboard is a dev dependency (uv sync)")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(folder))
    for row in rows:
        step = int(row["train/global_step"])
        for tag, value in row.items():
            if tag != "train/global_step":
                summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
                writer.add_event(Event(wall_time=time.time(), step=step, summary=summary))
    writer.close()


def test_a_tensorboard_run_resumed_in_one_folder_reads_both_files_later_wins(tmp_path):
    folder = tmp_path / "runs" / "Dec06_14-00-00_host"
    _write_events(folder, [{**row, "train/reward": 0.1} for row in trl_rows(60)])
    time.sleep(1.1)  # the event file's name carries the second it was started
    _write_events(folder, [{**row, "train/reward": 0.5} for row in trl_rows(60, first=40)])
    kind, run = read(tmp_path / "runs")
    assert kind == "tensorboard" and (run.first_step, run.last_step) == (0, 99)
    assert run.series["reward_mean"].at(30) == pytest.approx(0.1)
    assert run.series["reward_mean"].at(50) == pytest.approx(0.5)
    assert any("2 event file(s)" in note for note in run.notes)


def test_tensorboard_runs_in_one_place_are_listed_flat_and_unjudged_stories(tmp_path):
    _write_events(tmp_path / "runs" / "flat", trl_rows())
    _write_events(tmp_path / "runs" / "short", trl_rows(2))
    _write_events(tmp_path / "runs" / "noreward", no_reward(trl_rows()))
    with pytest.raises(BadInput) as raised:
        _diagnose(tmp_path)
    assert raised.value.code == "several-runs" and "3 runs" in raised.value.message
    result = _diagnose(tmp_path, "runs/flat")
    assert result.format == "tensorboard" and result.primary is not None and result.primary.code == "flat-reward"
    event_file = next((tmp_path / "runs" / "flat").iterdir())
    assert _diagnose(event_file).primary.code == "flat-reward"  # an event file alone
    for run, summary in (("runs/short", "only 2 reward value(s)"), ("runs/noreward", "no reward series")):
        result = _diagnose(tmp_path, run)
        assert _codes(result)[0] == "unjudged" and summary in result.findings[0].summary


def test_tensorboards_own_writer_scalars_as_tensors_are_read(tmp_path):
    pytest.importorskip("tensorboard", reason="tensorboard is a dev dependency (uv sync)")
    from tensorboard.summary import Writer

    writer = Writer(str(tmp_path / "logs"))
    for row in trl_rows():
        writer.add_scalar("train/reward", row["train/reward"], int(row["train/global_step"]))
    writer.close()
    kind, run = read(tmp_path / "logs")
    assert kind == "tensorboard" and len(run.series["reward_mean"]) == 120


def test_an_event_whose_length_is_past_the_bound_is_one_line(tmp_path):
    source = tmp_path / f"{tfevents.PREFIX}1796566336.host.1.0"
    source.write_bytes(struct.pack("<Q", tfevents.MAX_EVENT_BYTES + 1) + bytes(12))
    with pytest.raises(BadInput) as raised:
        read(source)
    assert raised.value.code == "record-too-large" and "at byte 0" in raised.value.message


# --- Trackio ------------------------------------------------------------------------------------


def _trackio_db(path: Path, runs: dict[str, list[dict[str, float]]]) -> Path:
    """A project database with trackio 0.43's metrics and configs columns and its indexes on metrics
    (trackio/sqlite_storage.py), each logged dict an orjson BLOB, Trackio's own step counting the log calls."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, "
                           "timestamp TEXT NOT NULL, run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT "
                           "NOT NULL, log_id TEXT, space_id TEXT)")
        connection.execute("CREATE INDEX idx_metrics_run_step ON metrics(run_name, step)")
        connection.execute("CREATE INDEX idx_metrics_run_timestamp ON metrics(run_name, timestamp)")
        connection.execute("CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, "
                           "run_name TEXT NOT NULL, config TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(run_id))")
        for name, rows in runs.items():
            for counter, row in enumerate(rows):
                connection.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES "
                                   "(?, ?, ?, ?, ?)", (name, "2026-12-06T14:12:09+00:00", name, counter,
                                                       orjson.dumps(row)))
    connection.close()
    return path


def test_a_trackio_database_lists_its_runs_and_reads_each_story(tmp_path):
    resumed = [{**row, "train/reward": 0.1} for row in trl_rows(60)]
    resumed += [{**row, "train/reward": 0.5} for row in trl_rows(60, first=40)]
    source = _trackio_db(tmp_path / "proj.db", {"flat": trl_rows(every=5), "resumed": resumed,
                                                "short": trl_rows(2), "noreward": no_reward(trl_rows())})
    with pytest.raises(BadInput) as raised:
        _diagnose(tmp_path)  # TRACKIO_DIR
    assert raised.value.code == "several-runs" and "4 runs" in raised.value.message
    result = _diagnose(source, "flat")
    assert result.format == "trackio" and result.primary.code == "flat-reward"
    assert result.last_step == 595  # train/global_step, not Trackio's counter (119)
    kind, run = read(source, "resumed")
    assert run.series["reward_mean"].at(50) == pytest.approx(0.5) and run.last_step == 99
    for name, summary in (("short", "only 2 reward value(s)"), ("noreward", "no reward series")):
        assert summary in _diagnose(source, name).findings[0].summary


def test_a_database_past_the_bound_is_one_line(tmp_path):
    source = tmp_path / "huge.db"
    with source.open("wb") as handle:
        handle.write(trackio_db.MAGIC)
        handle.truncate(trackio_db.MAX_DATABASE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(BadInput) as raised:
        read(source)
    assert raised.value.code == "source-too-large" and "8 GiB" in raised.value.message


def test_a_database_that_is_not_trackios_is_one_line(tmp_path):
    source = tmp_path / "other.db"
    with sqlite3.connect(source) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    with pytest.raises(BadInput) as raised:
        read(source)
    assert raised.value.code == "unknown-format" and "not a Trackio database" in raised.value.message


def test_trackio_itself_writes_what_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACKIO_DIR", str(tmp_path))  # read when trackio is imported
    trackio = pytest.importorskip("trackio", reason="trackio is not a dev dependency (it holds pillow below 13)")
    for name in ("a", "b"):
        trackio.init(project="proj", name=name)
        for row in trl_rows():
            trackio.log(row)
        trackio.finish()
    assert _diagnose(tmp_path / "proj.db", "b").primary.code == "flat-reward"


# --- a trainer's output folder -------------------------------------------------------------------


def test_a_trl_output_folder_reads_the_newest_checkpoint_by_number(tmp_path):
    from transformers.trainer_callback import TrainerState

    for last in (20, 100):  # by name, checkpoint-20 sorts after checkpoint-100
        state = TrainerState(global_step=last, max_steps=120)
        state.log_history = [{name.removeprefix("train/"): value for name, value in row.items()
                              if name != "train/global_step"} | {"step": int(row["train/global_step"])}
                             for row in trl_rows(last, first=1)]
        (tmp_path / f"checkpoint-{last}").mkdir()
        state.save_to_json(str(tmp_path / f"checkpoint-{last}" / "trainer_state.json"))
    result = _diagnose(tmp_path)
    assert result.format == "trainer-output" and result.last_step == 100
    assert result.primary is not None and result.primary.code == "flat-reward"
    assert any("checkpoint-100/trainer_state.json" in note for note in result.notes)


def test_a_folder_holding_only_a_wandb_csv_export_is_read(tmp_path):
    rows = trl_rows()
    names = list(rows[0])
    lines = ["Step," + ",".join(f"grpo - {name}" for name in names)]
    lines += [f"{step}," + ",".join(str(row[name]) for name in names) for step, row in enumerate(rows)]
    (tmp_path / "wandb_export.csv").write_text("\n".join(lines) + "\n")
    result = _diagnose(tmp_path)
    assert result.format == "csv-folder" and result.primary.code == "flat-reward"
    assert "truncated_frac" in result.metrics_found
