"""The supervisor of a local training run: detaches, runs the command, keeps its log, records its end.

Started as `python -P supervise.py --log LOG --exit EXIT --cwd DIR --run ID -- ARGV...` (the run
id is there so that its command line names the run). It forks, prints the child's pid and exits,
so the run outlives rlpilot and is no child of it (nobody has to reap it); the child leads a
new session, hence its own process group, which `train stop` signals as a whole. The command's
output is redacted line by line into LOG, and its exit status written to EXIT: after a restart
rlpilot still knows how the run ended.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime

from tools.secrets import redact


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--log", "--exit", "--cwd", "--run"):
        parser.add_argument(name, required=True)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv

    child = os.fork()
    if child:
        print(child, flush=True)
        os._exit(0)
    os.setsid()
    log = open(args.log, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the run
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)

    try:
        command = subprocess.Popen(argv, cwd=args.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
    except OSError as error:
        print(f"rlpilot: could not start {argv[0]}: {error}", flush=True)
        _record_exit(args.exit, 127)
        return

    # `train stop` signals the whole group, so the command gets the signal itself; the supervisor
    # lives on (a Python handler, not SIG_IGN, which the command would inherit) to record its end.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: None)
    assert command.stdout is not None
    for line in command.stdout:
        log.write(redact(line.rstrip("\n")) + "\n")
    _record_exit(args.exit, command.wait())


def _record_exit(path: str, returncode: int) -> None:
    partial = path + ".tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump({"returncode": returncode, "ended_at": datetime.now(UTC).isoformat(timespec="seconds")}, handle)
    os.replace(partial, path)


if __name__ == "__main__":
    sys.exit(main())
