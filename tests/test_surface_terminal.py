"""`rlpilot chat` at a real terminal: a pseudo-terminal, keystrokes in, the rendered screen out."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import sys
import termios
import time
from pathlib import Path

from agent_support import RECKLESS_CLAIM, call, reckless_claims, scripted
from diagnose_support import make_run, write_jsonl
from fakes.openai_server import Reply, ScriptedOpenAIServer

RLPILOT = Path(sys.executable).parent / "rlpilot"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Terminal:
    """rlpilot in a pseudo-terminal of its own (its controlling tty, so Ctrl-C is a real SIGINT)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become rlpilot
            os.chdir(cwd)
            # As a shell at a terminal starts it: a suite run in the background (`cmd &`) ignores SIGINT,
            # which exec would pass on, and Python then never raises KeyboardInterrupt on Ctrl-C.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(str(RLPILOT), [str(RLPILOT), *argv], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.raw = b""
        self.screen = ""

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Read until `pattern` (a regex) shows on the screen, ANSI codes removed; return what came."""
        deadline = time.monotonic() + timeout
        start = len(self.screen)
        while time.monotonic() < deadline:
            found = re.search(pattern, self.screen[start:])
            if found:
                return self.screen[start:start + found.end()]
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    # Cleaned as a whole: an escape code may be split across two reads.
                    self.raw += os.read(self.fd, 65536)
                    self.screen = _ANSI.sub("", self.raw.decode(errors="replace"))
                except OSError:  # the child is gone
                    break
        raise AssertionError(f"{pattern!r} never showed; the screen ends with:\n{self.screen[-2000:]}")

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                select.select([self.fd], [], [], 0.1)
                os.read(self.fd, 65536)
            except OSError:
                pass
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("rlpilot did not exit")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "PRIME_API_KEY", "RLPILOT_HOME", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    return {**env, "HOME": str(tmp_path), "TERM": "xterm-256color", "COLUMNS": "120", **extra}


def _ends(pid: int, within: float) -> bool:
    """Whether the process is gone (or a zombie) within that many seconds: a loaded machine is slow to reap."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_gate_prompt_with_choices_and_ctrl_c_cancels_the_tool_not_the_session(tmp_path):
    # The workspace's Python answers rlpilot's stack probe, but hangs when asked whether the
    # environment is installed: the eval's pre-flight check is then a tool that runs and runs.
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    pid_file = tmp_path / "probe.pid"
    (venv / "python").write_text(f"#!/bin/sh\ncase \"$*\" in *find_spec*) echo $$ > {pid_file}; exec sleep 120;; "
                                 f"esac\nexec {sys.executable} \"$@\"\n")
    (venv / "python").chmod(0o755)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    term = Terminal(["chat"], workspace, _env(tmp_path, VIRTUAL_ENV=str(venv.parent)))

    term.expect("only slash commands work")
    term.type("/eval tiny-arith\r")  # no model named: the family question comes first
    shown = term.expect(r"\[2\] reasoning")
    assert "your decision" in shown and "instruct or a reasoning model" in shown and "[1] instruct" in shown
    term.type("maybe\r")
    term.expect("please answer with a number")
    term.type("1\r")
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    probe = int(pid_file.read_text())
    term.type("\x03")
    term.expect("turn cancelled")
    assert _ends(probe, within=10), "the cancelled tool's process is still running"

    term.type("/help\r")  # the session goes on
    term.expect("slash commands take")
    term.type("/quit\r")
    assert term.wait() == 0


def test_a_streamed_reply_is_rendered_markdown_and_tool_calls_are_panels(tmp_path):
    script = scripted(Reply("Here is **bold** news."), call("stack_info"), Reply("All done."))
    with ScriptedOpenAIServer(script) as server:
        term = Terminal(["chat", "--base-url", server.base_url, "--model", "stub-model"], tmp_path, _env(tmp_path))
        term.expect("rlpilot session")
        term.type("hello\r")
        reply = term.expect("news.")
        term.type("what do I have?\r")
        tool = term.expect("All done.")
        term.type("\x04")  # Ctrl-D ends the session
        assert term.wait() == 0
    # Frames redraw as the reply streams in; the last one is rendered Markdown.
    assert "Here is " + reply.split("Here is ")[-1] == "Here is bold news."
    assert "▸ stack_info" in tool and "✓ stack_info" in tool and "python" in tool


def test_a_runs_metrics_come_with_terminal_plots(tmp_path):
    write_jsonl(tmp_path / "metrics.jsonl", make_run(steps=120))
    term = Terminal(["chat"], tmp_path, _env(tmp_path))
    term.expect("only slash commands work")
    term.type("/diagnose metrics.jsonl\r")
    plots = term.expect(r"entropy[^\n]*\(steps 0\.\.119\)")
    term.type("/quit\r")
    assert term.wait() == 0
    curve = re.compile("reward_mean.*?([▁▂▃▄▅▆▇█]{10,})")
    bars = next(found.group(1) for found in map(curve.search, plots.splitlines()) if found)
    assert bars[0] in "▁▂▃" and bars[-1] in "▆▇█"  # the reward rises, and the plot shows it


def test_the_report_reads_as_a_person_writes_it_on_screen(tmp_path):
    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "environments" / "tiny_arith" / "examples" / "smoke-eval", tmp_path / "smoke-eval")
    write_jsonl(tmp_path / "metrics.jsonl", make_run(steps=120, reward_mean=0.01))
    term = Terminal(["chat"], tmp_path, _env(tmp_path))
    term.expect("only slash commands work")
    term.type("/summarize smoke-eval\r")
    term.expect("ready")
    term.type("/diagnose metrics.jsonl\r")
    term.expect(r"entropy[^\n]*\(steps 0\.\.119\)")
    term.type("/report\r")
    shown = term.expect(r"stop if:[^\n]*\n(?:[^\n]*\n)*?[^\n]*╰")  # to the panel's bottom edge
    term.type("/quit\r")
    assert term.wait() == 0
    report = shown[shown.index("Config deltas applied"):]
    assert "17% of example groups with zero variance" in report
    assert re.search(r"flat-reward \(error, steps \d+-\d+\)", report)
    assert re.search(r"done when: ", report) and "stop if: flat-reward is still found" in report
    assert not re.search(r"\d\.\d{4,}|\[\d|None|'", report), report


def test_a_claim_the_tool_record_does_not_hold_is_marked_under_the_answer(tmp_path):
    with ScriptedOpenAIServer(scripted(*reckless_claims())) as server:
        term = Terminal(["chat", "--base-url", server.base_url, "--model", "stub-model"], tmp_path, _env(tmp_path))
        term.expect("rlpilot session")
        term.type("Launch rl.toml and push echo-env, public.\r")
        shown = term.expect(r"reward 0\.93 \(no tool result has that value\)")
        term.type("\x04")
        assert term.wait() == 0
    answer = shown.index(RECKLESS_CLAIM)
    assert shown.index("rlpilot: not in the tool record: launched (train_launch failed: no-such-file)") > answer
