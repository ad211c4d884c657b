"""Trackio's local database: `<project>.db` under TRACKIO_DIR (by default `$HF_HOME/trackio`).

One SQLite file per project holds many runs: `metrics(id, run_id, timestamp, run_name, step, metrics, ...)`
with each logged dict as a JSON BLOB, and `configs(run_id, run_name, config, created_at)` (trackio 0.43.0,
trackio/sqlite_storage.py; tests/test_runs_trackio.py writes one with trackio itself). Rows are read in
the order they were written, so a resumed run's later row wins on a repeated step; the step is the
trainer's (`train/global_step`) where the row has it, not Trackio's counter. A live run is followed by
its rows' ids: each read asks for the rows past the last id read (`read_rows`).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import orjson

from tools.diagnose.readers.records import HINT, STEP_ROWS, UNIX_CLOCK, pick_run, trainer_step, unix_time
from tools.diagnose.series import Collector
from tools.framework.errors import BadInput
from tools.io.files import describe_size, open_regular

SUFFIX = ".db"
MAGIC = b"SQLite format 3\x00"
# Bounds: the database (a run logging 200 metrics a step for 100,000 steps is about 2 GiB), and one row's
# JSON (its nesting is orjson's, which refuses more than 1024 levels).
MAX_DATABASE_BYTES = 8 << 30
MAX_ROW_BYTES = 16 << 20


def databases(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(file for file in path.glob(f"*{SUFFIX}") if file.is_file() and _is_sqlite(file))


def _is_sqlite(path: Path) -> bool:
    with open_regular(path) as handle:
        return handle.read(len(MAGIC)) == MAGIC


def _connect(path: Path) -> sqlite3.Connection:
    size = path.stat().st_size
    if size > MAX_DATABASE_BYTES:
        raise BadInput("source-too-large", f"{path}: a {describe_size(size)} database, over "
                       f"{describe_size(MAX_DATABASE_BYTES)}", "export the run's metrics (trackio's CSV export)")
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def runs_in(path: Path) -> dict[str, tuple[Path, str]]:
    """Every run of every database at `path`, by name (`<project>/<run>` when there are several projects),
    in the order they began."""
    found: list[tuple[int, str, Path, str]] = []
    files = databases(path)
    for file in files:
        with closing(_connect(file)) as connection:
            try:
                rows = connection.execute("SELECT run_name, MIN(id) FROM metrics GROUP BY run_name").fetchall()
            except sqlite3.DatabaseError as error:
                raise BadInput("unknown-format", f"{file}: not a Trackio database ({error})", HINT) from None
        for name, first in rows:
            label = f"{file.stem}/{name}" if len(files) > 1 else str(name)
            found.append((first, label, file, str(name)))
    return {label: (file, name) for _, label, file, name in sorted(found, key=lambda row: (row[2], row[0]))}


def read_place(path: Path, collector: Collector, run: str | None) -> str:
    runs = runs_in(path)
    if not runs:
        raise BadInput("no-steps", f"{path}: a Trackio database with no metrics logged yet", HINT)
    chosen = pick_run(path, list(runs), run)
    file, name = runs[chosen]
    read_rows(file, name, collector)
    return f"Trackio run {chosen} in {file.name}"


# A run's rows, through Trackio's index on (run_name, step); and its rows past an id a watch read up to, by the
# id alone (the rowid), as a poll must read only what is new: with `run_name = ?` SQLite walks that index over
# every row the run has on each poll, and `+run_name` keeps it off the index.
ROWS_OF_RUN = ("SELECT id, step, timestamp, metrics, length(metrics) FROM metrics WHERE id > ? AND run_name = ? "
               "ORDER BY id")
ROWS_PAST = ("SELECT id, step, timestamp, metrics, length(metrics) FROM metrics WHERE id > ? AND +run_name = ? "
             "ORDER BY id")


def read_rows(file: Path, name: str, collector: Collector, after: int = 0) -> tuple[int, int]:
    """Run `name`'s rows in `file` whose id is past `after`, in the order they were written; the last id
    read (`after` when there is none) and the bytes of metrics read."""
    collector.new_source()
    clock = collector.clock(UNIX_CLOCK)
    last, read = after, 0
    with closing(_connect(file)) as connection:
        rows = connection.execute(ROWS_PAST if after else ROWS_OF_RUN, (after, name))
        for row_id, own, stamp, blob, size in rows:
            last, read = row_id, read + size
            where = f"{file.name} row {row_id}"
            if size > MAX_ROW_BYTES:
                raise BadInput("record-too-large", f"{where}: its metrics are {describe_size(size)}, over "
                               f"{describe_size(MAX_ROW_BYTES)}", "is this Trackio's database?")
            try:
                values = orjson.loads(blob)
            except orjson.JSONDecodeError:
                try:
                    values = json.loads(blob)  # bare NaN and Infinity
                except (ValueError, RecursionError):
                    collector.bad_line(where)
                    continue
            if values.__class__ is not dict:
                collector.bad_line(where)
                continue
            step = trainer_step(values, own)
            if step is None:
                collector.no_step(where)
                continue
            collector.row(step, values, True, where)
            time = unix_time(stamp)
            if time is not None:
                clock.stamp(STEP_ROWS, time, step)
    return last, read
