"""The subprocess runner: real child processes, real signals."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tools.framework.errors import BadInput
from tools.io import process
from tools.text.secrets import MASK

_ENV = process.minimal_environment()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state  # a zombie has already died


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    # The grandchild ignores SIGTERM, so only the group-wide SIGKILL after the grace period ends it.
    code = f"""
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
open({str(pid_file)!r}, "w").write(str(child.pid))
print("started", flush=True)
time.sleep(600)
"""
    started = time.monotonic()
    result = process.run(_python(code), env=_ENV, timeout=2)
    took = time.monotonic() - started
    print(f"a 2 s run of a group that ignores SIGTERM ended in {took:.2f} s")  # bench/bench_deadlines.py
    assert result.timed_out and not result.ok
    assert result.stdout_tail == ["started"]
    assert took < 20, f"a 2 s run took {took:.1f} s: the group was not killed"  # a hang, not a slow run
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_stdin_is_closed_so_a_prompt_cannot_hang():
    result = process.run(_python("name = input('username: ')"), env=_ENV, timeout=20)
    assert not result.timed_out
    assert result.returncode != 0
    assert "EOFError" in result.stderr


def test_lines_stream_to_the_callback_while_the_process_runs(tmp_path):
    go = tmp_path / "go"
    # The child waits for a file that only the callback creates: without streaming this times out.
    code = f"""
import os, time
print("ready", flush=True)
while not os.path.exists({str(go)!r}):
    time.sleep(0.01)
print("done", flush=True)
"""
    seen = []

    def on_line(stream, line):
        seen.append((stream, line))
        if line == "ready":
            go.touch()

    result = process.run(_python(code), env=_ENV, timeout=20, on_line=on_line)
    assert result.ok
    assert seen == [("stdout", "ready"), ("stdout", "done")]


def test_secrets_are_redacted_from_output_tails_callbacks_and_argv():
    key = "sk-live-0123456789abcdefghij"
    slack = "xoxb-1111-2222-abcdefghijkl"
    env = dict(os.environ, OPENAI_API_KEY=key, MY_SERVICE_TOKEN="tok-secret-value-42")
    code = (
        "import os, sys; print('key is', os.environ['OPENAI_API_KEY']);"
        "print('auth: Bearer abc.def.ghi123456', file=sys.stderr);"
        f"print('slack {slack}'); print('token', os.environ['MY_SERVICE_TOKEN'])"
    )
    lines = []
    result = process.run(_python(code) + ["--api-key", key], env=env, timeout=20,
                         on_line=lambda s, line: lines.append(line))
    everything = "\n".join(lines + result.stdout_tail + result.stderr_tail + result.argv)
    for secret in (key, slack, "tok-secret-value-42", "abc.def.ghi123456"):
        assert secret not in everything
    assert result.stdout_tail[0] == f"key is {MASK}"
    assert result.argv[-1] == MASK


def test_exit_code_and_tail_are_kept():
    result = process.run(_python("import sys\nfor i in range(1000): print(i)\nsys.exit(3)"), env=_ENV,
                         timeout=20, keep_lines=10)
    assert result.returncode == 3 and not result.ok
    assert result.stdout_tail == [str(i) for i in range(990, 1000)]


# NLTK's LookupError as a program that needs a corpus prints it offline (verifiers' wordle): an empty
# message line, then the message inside a banner, ending in the list of folders searched.
_NLTK_MESSAGE = ("\n" + "*" * 70 + "\n  Resource 'words' not found.\n  Please use the NLTK Downloader to "
                 "obtain the resource:\n\n  >>> import nltk\n  >>> nltk.download('words')\n\n  Searched in:\n"
                 "    - '/root/nltk_data'\n    - '/usr/share/nltk_data'\n" + "*" * 70 + "\n")


def test_what_a_failed_program_said_is_the_exception_it_ended_with_not_its_last_lines():
    ended = process.run(_python(f"raise LookupError({_NLTK_MESSAGE!r})"), env=_ENV, timeout=30)
    assert ended.said(3) == ("LookupError: | Resource 'words' not found. | "
                             "Please use the NLTK Downloader to obtain the resource:")
    # A traceback it logged and survived did not end it: what it said after did.
    survived = process.run(_python("import traceback, sys\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                                   "    traceback.print_exc()\nsys.exit('error: model m not found')"),
                           env=_ENV, timeout=30)
    assert survived.said(1) == "error: model m not found"


def test_redacting_a_long_line_keeps_the_deadline():
    """Each line is redacted in the loop that keeps the deadline: a key-word shape that backtracked
    from every part of `token a-a-a-...` held a 2 s run for 14 s on a 30 KB line; on this 50 KB line it
    holds a run past a deadline ten times as long. How fast redaction is, bench/bench_deadlines.py says."""
    result = process.run(_python("print('token ' + 'a-' * 25000)"), env=_ENV, timeout=20)
    print(f"a 50 KB line redacted in a run of {result.seconds:.2f} s")
    assert result.ok, f"the run timed out after {result.seconds:.1f} s"


def test_a_missing_program_is_bad_input():
    with pytest.raises(BadInput) as raised:
        process.run(["rlpilot-no-such-program"], env=_ENV, timeout=5)
    assert raised.value.code == "program-not-found"


def test_an_interrupted_run_leaves_nothing_running(tmp_path):
    pid_file = tmp_path / "child.pid"
    code = (f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid()));"
            "print('up', flush=True); time.sleep(600)")

    def interrupt(stream, line):
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread while a tool runs

    with pytest.raises(KeyboardInterrupt):
        process.run(_python(code), env=_ENV, timeout=60, on_line=interrupt)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_program_gets_only_the_environment_it_is_given(monkeypatch):
    """The minimal environment carries none of the person's: no key, and a private empty HOME (so no saved login;
    with no HOME at all, Python finds the person's in the password database)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-person-0123456789abcdef")
    monkeypatch.setenv("HOME", "/home/person")
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    # The private HOME is made once per rlpilot process; this worker's other tests' children have used its own.
    monkeypatch.setattr(process, "_private_home", None)
    code = "import os, json; print(json.dumps(dict(os.environ)))"
    result = process.run(_python(code), env=process.minimal_environment({"ONLY_THIS": "1"}), timeout=20)
    environ = json.loads(result.stdout)
    assert "OPENAI_API_KEY" not in environ and environ["HOME"] != "/home/person"
    assert os.listdir(environ["HOME"]) == [] and os.stat(environ["HOME"]).st_mode & 0o077 == 0
    assert "ONLY_THIS" in environ and "PATH" in environ
    assert environ["UV_CACHE_DIR"] == "/home/person/.cache/uv"  # the person's cache, found offline
    with pytest.raises(TypeError):  # no default: every caller chooses the environment
        process.run(_python("pass"), timeout=5)  # type: ignore[call-arg]


def _files_under(folder: str) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in Path(folder).rglob("*") if not path.is_dir())


_PERSONS_INDEX = "http://127.0.0.1:9/the-persons-index/simple"  # loopback's discard port: refused at once


@pytest.mark.parametrize("config_home", ["HOME", "XDG_CONFIG_HOME"])
def test_a_uv_child_uses_the_persons_own_uv_settings_and_nothing_else_of_their_home(tmp_path, monkeypatch,
                                                                                      config_home):
    """Behind a private index, a person names it in uv's user-level file; the children's private HOME must not
    hide that file from the uv that rlpilot runs (a v0 runtime, an environment's build). A project's own index
    still outranks it, as it does for the person's uv."""
    person = tmp_path / "person"
    config = person / ".config" if config_home == "HOME" else tmp_path / "xdg"
    (config / "uv").mkdir(parents=True)
    (config / "uv" / "uv.toml").write_text(f'index-url = "{_PERSONS_INDEX}"\n')
    person.mkdir(exist_ok=True)
    (person / ".netrc").write_text("machine example.org login person password hunter2\n")
    source = {"PATH": os.environ["PATH"], "HOME": str(person),
              **({"XDG_CONFIG_HOME": str(config)} if config_home == "XDG_CONFIG_HOME" else {})}
    monkeypatch.setattr(process, "_private_home", None)
    # Without the person's index uv would go to PyPI: through a proxy that reaches nothing, so no test goes online.
    environ = process.minimal_environment({"HTTPS_PROXY": process.NOWHERE, "HTTP_PROXY": process.NOWHERE,
                                           "NO_PROXY": "127.0.0.1", "UV_HTTP_RETRIES": "0",
                                           "UV_CACHE_DIR": str(tmp_path / "cache")}, source)
    outside, project = tmp_path / "outside", tmp_path / "project"
    outside.mkdir()
    project.mkdir()
    (project / "uv.toml").write_text('index-url = "http://127.0.0.1:9/the-projects-index/simple"\n')
    install = ["uv", "pip", "install", "--dry-run", "--python", sys.executable, "rlpilot-no-such-package"]

    done = process.run(install, cwd=outside, env=environ, timeout=60)
    assert not done.ok and "the-persons-index" in done.stderr, done.stderr
    assert _files_under(environ["HOME"]) == [".config/uv/uv.toml"]  # not .netrc, nor anything else of theirs
    in_project = process.run(install, cwd=project, env=environ, timeout=60)
    assert "the-projects-index" in in_project.stderr and "the-persons-index" not in in_project.stderr, \
        in_project.stderr
    (config / "uv" / "uv.toml").unlink()  # gone from the person's home: gone from the children's
    assert _files_under(process.minimal_environment(source=source)["HOME"]) == []


def test_a_pip_child_uses_the_persons_own_pip_settings(tmp_path, monkeypatch):
    """pip's user-level files, the current one and the legacy ~/.pip/pip.conf, both read as the person's pip reads
    them; and a settings file the person named by pip's or uv's own variable is passed by that name."""
    pip = process.which("pip")
    if pip is None:
        pytest.skip("no pip on PATH")
    person = tmp_path / "person"
    (person / ".config" / "pip").mkdir(parents=True)
    (person / ".config" / "pip" / "pip.conf").write_text(f"[global]\nindex-url = {_PERSONS_INDEX}\n")
    (person / ".pip").mkdir()
    (person / ".pip" / "pip.conf").write_text("[global]\ntimeout = 7\n")
    source = {"PATH": os.environ["PATH"], "HOME": str(person)}
    monkeypatch.setattr(process, "_private_home", None)
    done = process.run([pip, "config", "list"], env=process.minimal_environment(source=source), timeout=60)
    assert f"global.index-url='{_PERSONS_INDEX}'" in done.stdout and "global.timeout='7'" in done.stdout, done.stdout
    named = {"UV_CONFIG_FILE": str(tmp_path / "uv.toml"), "PIP_CONFIG_FILE": str(tmp_path / "pip.conf")}
    assert named.items() <= process.minimal_environment(source={**source, **named}).items()
