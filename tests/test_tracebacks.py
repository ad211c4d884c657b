"""What a failed program said, on the shapes real programs print: each case is a real Python child
(tools/io/process.py `said`), or the same lines in an eval's log (tools/evals/failures.py)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from tools.evals.failures import read_logs
from tools.io import process

CHILDREN = {
    # The message is the line that matters, not pydantic's last line (its docs link).
    "pydantic": ("from pydantic import BaseModel\nclass EvalConfig(BaseModel):\n    rollouts: int\n"
                 "EvalConfig(rollouts='many')",
                 "pydantic_core._pydantic_core.ValidationError: 1 validation error for EvalConfig"),
    "multi-line message": ("raise RuntimeError('CUDA error: device-side assert triggered\\nCompile with "
                           "`TORCH_USE_CUDA_DSA` to enable device-side assertions.')",
                           "RuntimeError: CUDA error: device-side assert triggered"),
    # torch's NCCL warning at exit comes after the traceback and ended nothing.
    "a warning at exit": ("import atexit, sys\natexit.register(lambda: print('[rank0]:[W1205] Warning: process "
                          "group has NOT been destroyed', file=sys.stderr))\nraise FileNotFoundError('/data/x')",
                          "FileNotFoundError: /data/x"),
    # A finalizer's error after the crash: Python printed it and went on.
    "a finalizer's error after": ("class S:\n    def __del__(self):\n        raise RuntimeError('Event loop is "
                                  "closed')\ns = S()\nraise KeyError('reward_model')", "KeyError: 'reward_model'"),
    "an exception group": ("import asyncio\nasync def a():\n    raise ValueError('bad reward fn')\nasync def m():\n"
                           "    async with asyncio.TaskGroup() as g:\n        g.create_task(a())\nasyncio.run(m())",
                           "ValueError: bad reward fn"),
    "chained": ("try:\n    {}['x']\nexcept KeyError as e:\n    raise ValueError('config key missing') from e",
                "ValueError: config key missing"),
    "a name without Error": ("class ReadTimeout(Exception):\n    pass\nReadTimeout.__module__ = 'httpx'\n"
                             "raise ReadTimeout('timed out')", "httpx.ReadTimeout: timed out"),
    # A traceback logged and survived: what it said after ended it.
    "an error after a logged traceback": ("import sys, traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                                          "    traceback.print_exc()\nsys.exit('error: model m not found')",
                                          "error: model m not found"),
}


@pytest.mark.parametrize("shape", CHILDREN)
def test_a_failed_program_is_told_by_the_exception_it_ended_with(shape: str) -> None:
    code, expected = CHILDREN[shape]
    ended = process.run([sys.executable, "-c", code], env=process.minimal_environment(), timeout=60)
    assert not ended.ok and ended.said(1) == expected


TB = ["Traceback (most recent call last):", '  File "/w/vf_eval.py", line 10, in main', "    run()"]
LOGS = {
    # Only a message that opens empty continues, and only on an indented line: a log line after a
    # bare exception is not its message (and must not make a cancelled run read as out of quota).
    "bare, then a retried 429": ([*TB, "asyncio.exceptions.CancelledError",
                                  "12:00:05 WARNING upstream 429: rate limited, retrying in 2s"],
                                 "crash", "asyncio.exceptions.CancelledError"),
    "colon, then a log line": ([*TB, "ValueError: no reward function named in:", "12:00:06 INFO shutting down"],
                               "crash", "ValueError: no reward function named in:"),
    "a group's 401": (["  + Exception Group Traceback (most recent call last):", '  |   File "x", line 5, in m',
                       "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
                       "  +-+---------------- 1 ----------------", "    | Traceback (most recent call last):",
                       "    | openai.AuthenticationError: Error code: 401 - invalid_api_key",
                       "    +------------------------------------"],
                      "auth", "openai.AuthenticationError: Error code: 401 - invalid_api_key"),
    "a finalizer's error after": ([*TB, "KeyError: 'reward_model'", "Exception ignored in: <function T.__del__>", *TB,
                                   "RuntimeError: Event loop is closed"], "crash", "KeyError: 'reward_model'"),
    # A bare Exception ends a traceback too: else the retried 429 before it named the run "out of quota".
    "a bare Exception after a retried 429": (["12:00:02 WARNING upstream 429: rate limited, retrying in 2s", *TB,
                                              "Exception: reward function returned None"],
                                             "crash", "Exception: reward function returned None"),
    "Ray's task error, naming its cause": ([*TB, "ray.exceptions.RayTaskError(ValueError): ray::score() (pid=7)"],
                                           "crash", "ray.exceptions.RayTaskError(ValueError): ray::score() (pid=7)"),
}


@pytest.mark.parametrize("shape", LOGS)
def test_an_eval_log_is_told_by_the_exception_that_ended_it(tmp_path: Path, shape: str) -> None:
    lines, kind, text = LOGS[shape]
    log = tmp_path / "eval.log"
    log.write_text("\n".join(lines) + "\n")
    failure = read_logs([log]).failure
    assert failure is not None and (failure.kind, failure.text) == (kind, text)


def test_a_line_of_bars_costs_no_memory_past_itself() -> None:
    """An exception group's bars are taken off each line; a 4 MB line of them held 350 MiB of the
    regex engine's backtracking state, and a log line may be 64 MiB."""
    line = " |" * 2_000_000
    tracemalloc.start()
    try:
        process.ProcessResult(argv=["x"], returncode=1, timed_out=False, seconds=0.0, stderr_tail=[line]).said()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(line)
