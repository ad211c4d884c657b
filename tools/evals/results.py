"""Reading eval runs: verifiers 0.4 `traces.jsonl`, and the legacy `results.jsonl` + `metadata.json`.

Facts (shared/research/verifiers-prime.md 2.1 and 2.3, checked against verifiers 0.4.0 output):
- a `traces.jsonl` line is one Episode: `task.data.idx` identifies the example, `ok` and
  `errors` say whether it failed, and each trace's `rewards` maps a name to `{score, weight}` or
  null. No scalar reward is stored: it is the sum of score x weight over the non-null rewards.
  An errored rollout can still exit 0, so `ok` is what counts, not the CLI's exit status.
- a legacy `results.jsonl` row carries `example_id`, `reward` and, on failure, `error`.
- prime-rl >= 0.9's `uv run eval` streams the same Episode records into
  `<run dir>/monitors/file/traces/stream/NNNNN.jsonl`; a full chunk is sealed as `NNNNN.jsonl.zst`
  and its plain file removed once the twin is whole (shared/research/prime-rl.md section 7). The
  stream is read as one file: its chunks in order, a plain chunk before its twin, lines numbered
  across chunks.

A line that does not parse (a run cut off mid-write, a hand edit) is counted and skipped with
its file and line number; the rest of the run is still read. A file in which no line is a
rollout is refused as bad input: it is not an eval run, and must never pass for an empty one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tools.errors import BadInput
from tools.files import BoundedLines, read_text_bounded

Format = Literal["traces", "legacy"]

TRACES_FILE = "traces.jsonl"
LEGACY_RESULTS = "results.jsonl"
LEGACY_METADATA = "metadata.json"
VALIDATE_SUMMARY = "summary.json"  # vf-validate writes a results.jsonl of its own beside it
STREAM_DIR = "monitors/file/traces/stream"
_CHUNK = re.compile(r"(\d+)\.jsonl(\.zst)?")

_RECORD: dict[Format, str] = {"traces": "verifiers episode", "legacy": "results row"}

# A directory argument is searched this deep for runs (outputs/evals/<env--model>/<id>/ is 3).
_SEARCH_DEPTH = 4


@dataclass(frozen=True)
class RunFiles:
    format: Format
    results: Path
    metadata: Path | None = None


@dataclass(slots=True)
class Rollout:
    example: str
    reward: float | None  # None when the rollout errored or nothing scored it
    error: str | None  # "Type: message" of the first error, when it failed
    line: int

    @property
    def errored(self) -> bool:
        return self.error is not None


@dataclass
class Skipped:
    line: int
    why: str


@dataclass
class RunData:
    files: RunFiles
    rollouts: list[Rollout] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def locate(path: Path) -> RunFiles:
    """The run that PATH names: a results file, a run directory, or a folder of runs (the newest)."""
    if not path.exists():
        raise BadInput("no-such-path", f"{path} does not exist",
                       "pass a run directory (outputs/<run>) or its traces.jsonl / results.jsonl")
    if path.is_file():
        return _run_of_file(path)
    direct = _run_in_dir(path)
    if direct:
        return direct
    candidates = [f.parent for name in (TRACES_FILE, LEGACY_RESULTS) for f in _walk(path, name, _SEARCH_DEPTH)]
    candidates += [s.parents[3] for s in _walk(path, STREAM_DIR, _SEARCH_DEPTH)]
    runs = [run for run in map(_run_in_dir, candidates) if run]
    if not runs:
        raise BadInput("no-eval-run", f"no eval run found in {path} (looked for {TRACES_FILE}, {STREAM_DIR}/, or "
                       f"{LEGACY_RESULTS} with {LEGACY_METADATA}, up to {_SEARCH_DEPTH} folders deep)",
                       "run `rlpilot eval run ENV` first, or pass the run directory it printed")
    return max(runs, key=lambda run: run.results.stat().st_mtime)


def _walk(root: Path, name: str, depth: int) -> Iterator[Path]:
    """`<folder>/name` for every folder under root that has it (a file, or a stream folder)."""
    if depth == 0:
        return
    try:
        children = list(root.iterdir())
    except OSError:
        return
    for child in children:
        if child.is_dir() and not child.name.startswith("."):
            if (child / name).is_file() or (name == STREAM_DIR and stream_chunks(child / name)):
                yield child / name
            yield from _walk(child, name, depth - 1)


def stream_chunks(stream: Path) -> list[Path]:
    """A trace stream's chunks in order: the plain file while it is there, else its sealed twin."""
    found: dict[int, Path] = {}
    try:
        paths = list(stream.iterdir()) if stream.is_dir() else []
    except OSError:
        return []
    for path in paths:
        match = _CHUNK.fullmatch(path.name)
        if match and (int(match[1]) not in found or not match[2]):
            found[int(match[1])] = path
    return [found[number] for number in sorted(found)]


def _run_in_dir(folder: Path) -> RunFiles | None:
    if (folder / TRACES_FILE).is_file():
        return RunFiles("traces", folder / TRACES_FILE)
    for stream in (folder / STREAM_DIR, folder):  # a `uv run eval` run dir, or its stream folder itself
        if stream.name == "stream" and stream_chunks(stream):
            return RunFiles("traces", stream)
    if (folder / LEGACY_RESULTS).is_file() and (folder / LEGACY_METADATA).is_file():
        return RunFiles("legacy", folder / LEGACY_RESULTS, folder / LEGACY_METADATA)
    return None


def _run_of_file(path: Path) -> RunFiles:
    if path.name == LEGACY_RESULTS and (path.parent / VALIDATE_SUMMARY).is_file() \
            and not (path.parent / LEGACY_METADATA).is_file():
        raise BadInput("validate-run", f"{path} holds vf-validate checks, not eval rollouts",
                       "use `rlpilot env check ENV` for validation; pass an eval run here")
    if path.name == LEGACY_METADATA:
        path = path.with_name(LEGACY_RESULTS)
        if not path.is_file():
            raise BadInput("no-eval-run", f"{path} is missing beside its metadata.json",
                           "pass the run directory that holds both files")
    if path.parent.name == "stream" and _CHUNK.fullmatch(path.name):
        return RunFiles("traces", path.parent)  # one chunk of a trace stream: the whole run
    if path.name == TRACES_FILE or _first_record_looks_like_episode(path):
        return RunFiles("traces", path)
    metadata = path.with_name(LEGACY_METADATA)
    return RunFiles("legacy", path, metadata if metadata.is_file() else None)


def _first_record_looks_like_episode(path: Path) -> bool:
    with BoundedLines(path) as handle:
        for raw in handle:
            if raw.strip():
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    return False
                return isinstance(record, dict) and "traces" in record and "task" in record
    return False


def read_run(files: RunFiles) -> RunData:
    run = RunData(files=files, metadata=_read_metadata(files.metadata))
    extract = _episode_rollout if files.format == "traces" else _legacy_rollout
    for number, record, why in records(files.results):
        if why is None:
            try:
                rollout = extract(record, number)
                if rollout.reward is not None and not math.isfinite(rollout.reward):
                    raise BadInput("non-finite-reward", f"{files.results}:{number}: the reward is {rollout.reward}",
                                   "a reward function returned NaN or infinity; fix it and run the eval again")
                run.rollouts.append(rollout)
                if not run.metadata and files.format == "traces":
                    run.metadata = _episode_metadata(record)
                continue
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as error:
                detail = f"no {error} field" if isinstance(error, KeyError) else str(error)
                why = f"not a {_RECORD[files.format]} ({detail})"
        run.skipped.append(Skipped(number, why))
    if run.skipped and not run.rollouts:
        # Garbage read as "no rollouts" would become a verdict (or tuning) built on nothing.
        first = run.skipped[0]
        raise BadInput("unreadable-run", f"{files.results} holds no eval rollouts: none of its {len(run.skipped)} "
                       f"lines is a {_RECORD[files.format]} (line {first.line}: {first.why})",
                       "pass the traces.jsonl (or results.jsonl) that `vf-eval` or `rlpilot eval run` wrote")
    return run


def _lines(path: Path) -> Iterator[bytes]:
    """A results file's lines, or a trace stream's across its chunks."""
    for part in stream_chunks(path) if path.is_dir() else [path]:
        with BoundedLines(part) as handle:
            yield from handle


def records(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed record or None, why it was skipped or None) for each non-blank line."""
    loads = json.loads
    for number, raw in enumerate(_lines(path), 1):
        try:
            record = loads(raw)
        except RecursionError:
            yield number, None, "nested too deeply to be an eval record"
            continue
        except ValueError:
            if raw.strip():
                yield number, None, ("not valid JSON (a truncated or garbled line, as a run cut off mid-write "
                                     "leaves; delete it, or resume the run)")
            continue
        if type(record) is not dict:
            yield number, None, "not a JSON object"
        else:
            yield number, record, None


def read_line(path: Path, number: int) -> dict[str, Any]:
    for current, raw in enumerate(_lines(path), 1):
        if current == number:
            return json.loads(raw)
    raise BadInput("line-gone", f"{path}:{number} no longer exists", "the run file changed; read it again")


def _read_metadata(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(read_text_bounded(path))
    except RecursionError:
        raise BadInput("bad-metadata", f"{path} is nested too deeply to be run metadata",
                       "restore it from the run, or pass results.jsonl alone") from None
    except ValueError as error:
        raise BadInput("bad-metadata", f"{path} is not valid JSON ({error})",
                       "restore it from the run, or pass results.jsonl alone") from None
    return data if isinstance(data, dict) else {}


def _episode_metadata(episode: dict[str, Any]) -> dict[str, Any]:
    """What legacy runs keep in metadata.json, read off an episode: its env and model."""
    agent = next(iter(episode["traces"]), {}).get("agent", {})
    return {"env_id": (episode.get("env") or {}).get("id"), "model": agent.get("config", {}).get("model")}


def scored_traces(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """The policy's traces: a judge or simulated user is untrainable and carries no reward."""
    traces = episode["traces"]
    return [t for t in traces if t.get("agent", {}).get("trainable", True)] or traces


def trace_reward(trace: dict[str, Any]) -> float | None:
    total, scored = 0.0, False
    for reward in trace.get("rewards", {}).values():
        if reward is not None:
            total += float(reward["score"]) * float(reward.get("weight", 1.0))
            scored = True
    return total if scored else None


def _episode_rollout(episode: dict[str, Any], number: int) -> Rollout:
    task = episode["task"]
    data = task.get("data") or {}
    example = data.get("idx", task.get("key"))
    # Several policy traces (best-of-n and the like) make one rollout: their mean reward.
    rewards = [r for r in map(trace_reward, scored_traces(episode)) if r is not None]
    error = None
    if not episode.get("ok", False):
        errors = list(episode.get("errors") or []) + [e for t in episode["traces"] for e in t.get("errors") or []]
        error = _error_text(errors[0]) if errors else ("timed out" if episode.get("is_timeout") else "not ok")
    elif not rewards:
        error = "no reward recorded"
    reward = sum(rewards) / len(rewards) if rewards and error is None else None
    return Rollout(str(example), reward, error, number)


def _legacy_rollout(row: dict[str, Any], number: int) -> Rollout:
    example = row["example_id"]
    failure = row.get("error")
    if failure:
        return Rollout(str(example), None, _error_text(failure), number)
    reward = row.get("reward")
    if reward is None:
        return Rollout(str(example), None, "no reward recorded", number)
    return Rollout(str(example), float(reward), None, number)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        kind, message = error.get("type") or error.get("error_type"), error.get("message") or error.get("error")
        return f"{kind}: {message}" if kind and message else str(message or kind or error)
    return str(error)
