"""One door per effect (DESIGN.md): outside tools/io/, no module of agent/ or tools/ writes, copies or
deletes files, reads a whole file without a bound, starts a process, or builds an HTTP or OpenAI client
itself. The rule reads the source (tests/doors.py); the second half shows that a module breaking it fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from doors import offences, scan

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("agent", "tools")
DOORS = "tools/io/"


def breaches(root: Path) -> list[str]:
    """What the rule finds in `root`, in words: every module outside the doors, no exceptions."""
    return [offence.text() + " (use tools/io/)" for offence in scan(root, FOLDERS, DOORS)]


def test_agent_and_tools_use_the_doors() -> None:
    assert breaches(ROOT) == []


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
    tomllib.loads(path.read_text())
import tomllib  # TOML is parsed by the files door too
Path("/dev/zero").read_bytes()
open(path).read()
path.open("rb").read()
'''


@pytest.mark.parametrize("line, what", [
    (2, "imports subprocess"), (9, "calls subprocess.run"), (10, "calls os.system"), (11, "calls os.execv"),
    (12, "calls asyncio.create_subprocess_exec"), (13, "calls .write_text()"), (14, "opens a file for writing"),
    (15, "opens a file for writing (.open)"), (16, "calls shutil.copytree"), (17, "calls shutil.rmtree"),
    (18, "calls os.remove"), (19, "calls .unlink()"), (20, "calls tempfile.mkdtemp"), (21, "calls httpx.Client"),
    (22, "calls httpx.get"), (23, "calls openai.OpenAI"), (24, "calls tomllib.loads"), (25, "imports tomllib"),
    (24, "reads a whole file unbounded (.read_text())"), (26, "reads a whole file unbounded (.read_bytes())"),
    (27, "reads a whole file unbounded (open(...).read())"), (28, "reads a whole file unbounded (open(...).read())"),
])
def test_each_kind_of_effect_is_found(line: int, what: str) -> None:
    assert (line, what) in {(o.line, o.what) for o in offences(BAD, "bad.py")}


def test_reads_and_the_doors_themselves_are_not_offences() -> None:
    good = ("from tools.io import files, process\nfrom pathlib import Path\n"
            "def fine(path: Path, store, handle):\n    files.read_text_bounded(path)\n    open(path)\n"
            "    path.open('rb')\n    store.open('session-id')\n    files.write_text(path, 'x')\n"
            "    files.remove(path)\n    process.run(['ls'], env={})\n    'a'.replace('a', 'b')\n"
            "    handle.read()\n    open(path).read(4096)\n    files.package_data('tools.configs', 'x.json')\n")
    assert offences(good, "good.py") == []


def test_a_module_breaking_the_rule_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "tools" / "io").mkdir(parents=True)
    (tmp_path / "tools" / "io" / "files.py").write_text("from pathlib import Path\nPath('x').write_text('x')\n")
    assert breaches(tmp_path) == []  # the door may
    (tmp_path / "agent" / "sneaky.py").write_text("import shutil\n\ndef f(a, b):\n    shutil.copy(a, b)\n")
    assert breaches(tmp_path) == ["agent/sneaky.py:4: calls shutil.copy (use tools/io/)"]


def test_a_lock_file_is_made_through_the_door_too() -> None:
    """filelock creates its lock file 0644 under a umask of 022; files.lock makes it 0600."""
    source = "from filelock import FileLock\nimport filelock\nFileLock('a.lock')\nfilelock.SoftFileLock('b.lock')\n"
    assert [o.what for o in offences(source, "m.py")] == ["calls filelock.FileLock", "calls filelock.SoftFileLock"]


def test_a_copy_of_the_persons_environment_is_found(tmp_path: Path) -> None:
    """A child's environment is built by the process door (minimal, or the person's for what they confirmed):
    a module that copies os.environ would hand an environment's code every key the person has."""
    source = ("import os\nfrom os import environ as env\nenviron = dict(os.environ)\nb = os.environ.copy()\n"
              "c = {**os.environ, 'X': '1'}\nd = dict(**env)\ne = dict(os.environ, X='1')\n"
              "fine = os.environ.get('PATH'), dict(os.environ.items() and {}), {'PATH': os.environ['PATH']}\n")
    assert [(o.line, o.what) for o in offences(source, "m.py")] == [(line, "copies os.environ") for line in range(3, 8)]
    (tmp_path / "tools" / "io").mkdir(parents=True)
    (tmp_path / "tools" / "io" / "process.py").write_text("import os\nenviron = dict(os.environ)\n")
    (tmp_path / "tools" / "envs").mkdir()
    (tmp_path / "tools" / "envs" / "check.py").write_text("import os\n\ndef f():\n    environ = dict(os.environ)\n")
    assert breaches(tmp_path) == ["tools/envs/check.py:4: copies os.environ (use tools/io/)"]


def test_an_unbounded_read_of_a_whole_file_is_found(tmp_path: Path) -> None:
    """A FIFO hangs `path.read_text()` and /dev/zero fills memory through it: outside the doors, a file is read
    with a bound in bytes (files.read_text_bounded and its kin), rlpilot's own package data by files.package_data."""
    (tmp_path / "tools" / "io").mkdir(parents=True)
    (tmp_path / "tools" / "io" / "files.py").write_text("from pathlib import Path\nPath('x').read_bytes()\n")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "status.py").write_text(
        "import json\nfrom pathlib import Path\n\ndef status(run: Path):\n"
        "    return json.loads((run / 'exit.json').read_text())\n")
    assert breaches(tmp_path) == ["agent/status.py:5: reads a whole file unbounded (.read_text()) (use tools/io/)"]
