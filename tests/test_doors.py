"""One door per effect (DESIGN.md): outside tools/io/, no module of agent/ or tools/ writes, copies or
deletes files, starts a process, or builds an HTTP or OpenAI client itself. The rule reads the
source (tests/doors.py); the second half shows that a module breaking it fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from doors import offences, scan

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("agent", "tools")
DOORS = "tools/io/"

# Modules that still do a door's work, each with how many offences it has and why it is not moved yet.
# The count is exact both ways: a new offence fails, and so does one moved into a door (lower the count,
# or drop the entry when it reaches 0).
NOT_YET = {
    # Its atomic replace keeps a config's mode and takes the edit lock; it moves into files.write_bytes
    # with the config tools' owner (the lock file is opened for writing to hold flock).
    "tools/configs/edit.py": 8,
    # The schema worker is a forked daemon that owns its socket, pid and log files.
    "tools/configs/schema_client.py": 3,
    "tools/configs/schema_worker.py": 7,
    # The supervisor is a program of its own (a detached process that holds the training run's child
    # and writes its exit file); rlpilot starts it through the process door.
    "tools/training/supervise.py": 6,
    # A loopback readiness probe of a local model server (urllib, no proxy); moves to tools/io/http.py.
    "tools/training/serve.py": 1,
}


def breaches(root: Path) -> list[str]:
    """What the rule finds in `root` beyond NOT_YET, in words."""
    found = scan(root, FOLDERS, DOORS)
    counts: dict[str, int] = {}
    for offence in found:
        counts[offence.path] = counts.get(offence.path, 0) + 1
    problems = [offence.text() + " (use tools/io/)" for offence in found if offence.path not in NOT_YET]
    for path, allowed in NOT_YET.items():
        if (root / path).exists() and counts.get(path, 0) != allowed:
            problems.append(f"{path}: {counts.get(path, 0)} offences where NOT_YET says {allowed}: "
                            + ("move the new one into tools/io/" if counts.get(path, 0) > allowed
                               else "lower its count in NOT_YET"))
    return problems


def test_agent_and_tools_use_the_doors() -> None:
    assert breaches(ROOT) == []


def test_the_allowlist_stays_small() -> None:
    assert sum(NOT_YET.values()) <= 26 and len(NOT_YET) <= 5


BAD = '''
import subprocess
import os, shutil, tempfile, asyncio
from pathlib import Path
import httpx
from openai import OpenAI as Client

def effects(path: Path):
    subprocess.run(["ls"])
    os.system("ls")
    os.execv("/bin/ls", ["ls"])
    asyncio.create_subprocess_exec("ls")
    path.write_text("x")
    open(path, "w")
    path.open("a")
    shutil.copytree(path, path)
    shutil.rmtree(path)
    os.remove(path)
    path.unlink()
    tempfile.mkdtemp()
    httpx.Client()
    httpx.get("http://x")
    Client(api_key="k")
'''


@pytest.mark.parametrize("line, what", [
    (2, "imports subprocess"), (9, "calls subprocess.run"), (10, "calls os.system"), (11, "calls os.execv"),
    (12, "calls asyncio.create_subprocess_exec"), (13, "calls .write_text()"), (14, "opens a file for writing"),
    (15, "opens a file for writing (.open)"), (16, "calls shutil.copytree"), (17, "calls shutil.rmtree"),
    (18, "calls os.remove"), (19, "calls .unlink()"), (20, "calls tempfile.mkdtemp"), (21, "calls httpx.Client"),
    (22, "calls httpx.get"), (23, "calls openai.OpenAI"),
])
def test_each_kind_of_effect_is_found(line: int, what: str) -> None:
    assert (line, what) in {(o.line, o.what) for o in offences(BAD, "bad.py")}


def test_reads_and_the_doors_themselves_are_not_offences() -> None:
    good = ("from tools.io import files, process\nfrom pathlib import Path\n"
            "def fine(path: Path, store):\n    path.read_text()\n    open(path)\n    path.open('rb')\n"
            "    store.open('session-id')\n    files.write_text(path, 'x')\n    files.remove(path)\n"
            "    process.run(['ls'], env={})\n    'a'.replace('a', 'b')\n")
    assert offences(good, "good.py") == []


def test_a_module_breaking_the_rule_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "tools" / "io").mkdir(parents=True)
    (tmp_path / "tools" / "io" / "files.py").write_text("from pathlib import Path\nPath('x').write_text('x')\n")
    assert breaches(tmp_path) == []  # the door may
    (tmp_path / "agent" / "sneaky.py").write_text("import shutil\n\ndef f(a, b):\n    shutil.copy(a, b)\n")
    assert breaches(tmp_path) == ["agent/sneaky.py:4: calls shutil.copy (use tools/io/)"]
