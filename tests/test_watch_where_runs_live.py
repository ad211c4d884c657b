"""`train watch PATH`: a run followed where its logger writes it, each poll reading only what is new.

The files are written by the loggers themselves (wandb offline, tensorboard's EventFileWriter, sqlite3 in
trackio's schema; the helpers of tests/test_runs_where_they_live.py). A file grows between two polls, and
the second poll's byte count shows it read only the new part while the new finding appears.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import time
from contextlib import closing

import orjson
import pytest
from diagnose_support import make_run, rows
from ops_support import rlpilot

from agent.chat.watching import Watches
from tests import test_runs_where_they_live as written
from tests.test_runs_where_they_live import _folder, _trackio_db, trl_rows
from tools.diagnose.readers import read, trackio_db, wandb_run
from tools.framework.contract import Context
from tools.framework.errors import BadInput
from tools.training.watch import PlaceSource, Watcher, WatchInput, train_watch, watcher_for

# The wandb runs that module writes, offline, once: this module's fixture `wandb_runs` too.
wandb_runs = written.wandb_runs


def _codes(events) -> list[str]:
    return [event.code for event in events]


def _same_series(watcher: Watcher, path, run: str | None = None) -> None:
    """What the polls gathered is what one full read of the finished file holds."""
    _, whole = read(path, run)
    for name, series in whole.series.items():
        kept = watcher.so_far.run.series[name]
        assert list(kept.steps) == list(series.steps) and list(kept.values) == list(series.values), name


def test_a_growing_wandb_file_is_read_from_its_last_whole_record(wandb_runs, tmp_path):
    whole = next(_folder(wandb_runs, "flat").glob("*.wandb")).read_bytes()
    live = tmp_path / "wandb" / "run-20261206_141129-flat" / "run-flat.wandb"
    live.parent.mkdir(parents=True)
    live.write_bytes(whole[:5])  # a file just opened: not even its header yet
    watcher = watcher_for(str(tmp_path / "wandb"), Context(workspace=tmp_path))
    source = watcher.source
    assert isinstance(source, PlaceSource) and source.source == f"W&B run flat at {tmp_path / 'wandb'}"
    assert watcher.poll() == [] and watcher.last_step is None
    # Cuts inside records, in the first block and in later ones: each poll starts at the last whole record.
    cuts = [_inside_third_row(tmp_path / "whole.wandb", whole)]
    cuts += [len(whole) * share // 100 for share in (30, 61, 62, 90)] + [len(whole)]
    events = []
    for cut in cuts:
        live.write_bytes(whole[:cut])
        cursor = source._cursors[live] if live in source._cursors else None
        offset, before = (cursor.offset, source.bytes_read) if cursor else (0, source.bytes_read)
        events.append(_codes(watcher.poll()))
        assert source.bytes_read - before == cut - offset  # from the last whole record to the end, no more
        assert source._cursors[live].offset <= cut
    assert events[0] == ["unjudged"] and watcher.last_step == 119  # two steps first
    assert "flat-reward" in sum(events[1:], []) and events[-1][-1] == "ended"  # wandb's exit record
    _same_series(watcher, live)


def _inside_third_row(path, whole: bytes) -> int:
    """A byte inside the third history record of a .wandb file."""
    from wandb.proto.wandb_internal_pb2 import Record

    path.write_bytes(whole)
    cursor, rows = wandb_run.Cursor(), 0
    with path.open("rb") as handle:
        for data in wandb_run.frames(handle, path.name, [], cursor):
            rows += Record.FromString(data).WhichOneof("record_type") == "history"
            if rows == 2:
                return cursor.offset + 10
    raise AssertionError("fewer than 3 history rows")


def test_the_command_line_follows_a_wandb_folder_and_names_what_it_read(wandb_runs):
    done = rlpilot("train", "watch", "wandb", "--run", "flat", "--every", "1s", "--json", cwd=wandb_runs,
                   env=dict(os.environ))
    result = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr  # a finished run: nothing left to stop
    assert result["source"] == "W&B run flat at " + str(wandb_runs / "wandb") and result["ended"]
    assert result["status"] == "finished" and "read W&B run flat at" not in done.stdout
    assert "flat-reward" in _codes_of(result) and result["last_step"] == 119


def _codes_of(result: dict) -> list[str]:
    return [event["code"] for event in result["findings"]]


def test_a_growing_event_file_is_read_past_its_last_event(tmp_path):
    pytest.importorskip("tensorboard", reason="tensorboard is a dev dependency (uv sync)")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder = tmp_path / "runs" / "Dec06_14-00-00_host"
    writer = EventFileWriter(str(folder))

    def write(rows: list[dict[str, float]]) -> None:
        for row in rows:
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value) for tag, value in row.items()])
            writer.add_event(Event(wall_time=time.time(), step=int(row["train/global_step"]), summary=summary))
        writer.flush()

    rows = trl_rows()
    write(rows[:2])
    watcher = watcher_for(str(tmp_path / "runs"), Context(workspace=tmp_path))
    [file] = folder.iterdir()
    first = watcher.poll()
    size = file.stat().st_size
    assert watcher.source.bytes_read == size and watcher.last_step == 1 and _codes(first) == ["unjudged"]
    write(rows[2:])
    writer.close()
    second = watcher.poll()
    assert watcher.source.bytes_read - size == file.stat().st_size - size  # only the events written since
    assert "flat-reward" in _codes(second) and watcher.last_step == 119
    assert watcher.source.source == f"TensorBoard run Dec06_14-00-00_host at {tmp_path / 'runs'}"
    _same_series(watcher, file)


def test_a_growing_trackio_run_is_read_past_its_last_row(tmp_path):
    rows = trl_rows()
    source = _trackio_db(tmp_path / "proj.db", {"flat": rows[:2], "other": trl_rows(2)})
    watcher = watcher_for("proj.db", Context(workspace=tmp_path), run_name="flat")
    first = watcher.poll()
    assert watcher.last_step == 1 and _codes(first) == ["unjudged"]
    before = watcher.source.bytes_read
    with sqlite3.connect(source) as connection:
        for counter, row in enumerate(rows[2:], 2):  # the run goes on beside another one
            for name in ("flat", "other"):
                connection.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES "
                                   "(?, ?, ?, ?, ?)", (name, "2026-12-06T14:12:09+00:00", name, counter,
                                                       orjson.dumps(row)))
    connection.close()
    second = watcher.poll()
    assert watcher.source.bytes_read - before == sum(len(orjson.dumps(row)) for row in rows[2:])
    assert "flat-reward" in _codes(second) and watcher.last_step == 119
    assert watcher.source.source == f"Trackio run flat at {source}"
    _same_series(watcher, source, "flat")
    # A poll reads the rows past its last id by the id: through Trackio's index on (run_name, step), SQLite
    # would walk every row the run has on each poll.
    with closing(sqlite3.connect(source)) as connection:
        plan = connection.execute(f"EXPLAIN QUERY PLAN {trackio_db.ROWS_PAST}", (9, "flat")).fetchall()
    assert [step[-1] for step in plan] == ["SEARCH metrics USING INTEGER PRIMARY KEY (rowid>?)"], plan


def test_a_path_is_followed_only_where_it_can_be(tmp_path):
    _trackio_db(tmp_path / "proj.db", {"a": trl_rows(5), "b": trl_rows(5)})
    with pytest.raises(BadInput) as raised:
        watcher_for("proj.db", Context(workspace=tmp_path))
    assert raised.value.code == "several-runs"  # never two runs averaged: one is named with --run
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with pytest.raises(BadInput) as raised:  # from a chat surface, only inside the workspace
        watcher_for(str(tmp_path / "proj.db"), Context(workspace=outside, confined=True), run_name="a")
    assert raised.value.code == "outside-workspace"
    assert watcher_for(str(tmp_path / "proj.db"), Context(workspace=outside), run_name="a").source.source
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows(make_run(120))))
    jsonl = watcher_for("metrics.jsonl", Context(workspace=tmp_path))
    jsonl.poll()
    assert jsonl.last_step == 119 and jsonl.source.source == f"metrics JSON lines at {tmp_path / 'metrics.jsonl'}"
    (tmp_path / "export.csv").write_text("Step,reward\n1,0.5\n")
    with pytest.raises(BadInput) as raised:
        watcher_for("export.csv", Context(workspace=tmp_path))
    assert raised.value.code == "cannot-follow"
    with pytest.raises(BadInput) as raised:
        watcher_for("no/such/run.db", Context(workspace=tmp_path))
    assert raised.value.code == "source-not-found"
    with pytest.raises(BadInput) as raised:  # a file being written is not a run rlpilot can stop
        train_watch(WatchInput(run="proj.db", run_name="a", yes=True), Context(workspace=tmp_path))
    assert raised.value.code == "cannot-stop-a-file"


def test_a_chat_watches_a_run_in_the_workspace_in_the_background(tmp_path):
    _trackio_db(tmp_path / "proj.db", {"a": trl_rows(), "b": trl_rows(2)})
    arrived: queue.Queue = queue.Queue()
    watches = Watches()
    ctx = Context(workspace=tmp_path, confined=True)
    watch = watches.start("proj.db", ctx, arrived.put, every="1s", run_name="a")
    event = arrived.get(timeout=30)
    while event.code != "flat-reward":
        event = arrived.get(timeout=30)
    watches.stop_all()
    assert not watch.alive and watch.watcher.source.source == f"Trackio run a at {tmp_path / 'proj.db'}"
    with pytest.raises(BadInput) as raised:
        watches.start(str(tmp_path / "proj.db"), Context(workspace=tmp_path / "other", confined=True), print)
    assert raised.value.code == "outside-workspace"
