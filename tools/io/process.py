"""The process door: the one way rlpilot runs another program.

argv lists only (never a shell string), stdin closed so a CLI prompt cannot hang us, a timeout
that kills the whole process group (CLIs such as `uv run` and `vf-eval` start children), output
streamed line by line, and secrets redacted before any line is stored or handed on.

The environment is always the caller's explicit choice, never inherited: `minimal_environment()`
gives a program what it needs to run and none of the person's (no keys; a private HOME, so no dotfiles
and no saved logins, holding only links to the person's own package-installer settings; the package caches
by their own variables), offline where the tool only reads; `person_environment()` is the person's whole
environment, for what they run themselves or confirmed (a launch, a push, an install they said yes to) and
for the CLIs that act with their login. No other module copies os.environ (tests/test_doors.py). `git()`
runs git in someone's repository with none of the programs its configuration may name.

A program that must outlive rlpilot (a local training run, a model server) is started by
`supervise`, under the supervisor (tools/io/supervise.py), which detaches it and records its end.
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tools.framework.errors import BadInput, ToolError
from tools.text.secrets import redactor
from tools.text.tracebacks import is_frame, raised

# A line callback receives the stream name ("stdout" or "stderr") and the redacted line.
LineCallback = Callable[[str, str], None]

_GRACE_SECONDS = 3.0
# Bounds on what a child prints (docs/bounds.md): one line, and all of one stream that rlpilot reads; past
# them, the line is cut and the stream read past, each with a note in the output. Counted in characters of
# the decoded text, at most four bytes each.
LINE_BYTES = 256 * 1024
OUTPUT_BYTES = 1 << 30
TAIL_BYTES = 32 << 20  # of the lines kept (`keep_lines`), per stream: the oldest go first
SUPERVISOR = Path(__file__).with_name("supervise.py")


@dataclass
class ProcessResult:
    argv: list[str]
    returncode: int
    timed_out: bool
    seconds: float
    stdout_tail: list[str] = field(default_factory=list)
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def stdout(self) -> str:
        return "\n".join(self.stdout_tail)

    @property
    def stderr(self) -> str:
        return "\n".join(self.stderr_tail)

    def said(self, count: int = 5) -> str:
        """What the program said last, as one line: the exception it raised, where it ended in a
        traceback (tools/text/tracebacks.py), else its last `count` lines that say something."""
        lines = self.stderr_tail or self.stdout_tail
        shown = raised(lines, count) or [line for line in lines if not is_frame(line)][-count:]
        return " | ".join(line.strip() for line in shown)


# What a program needs to run at all: where programs are, the locale, the time zone, a temp folder.
BASE_VARIABLES = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME")
# How the person reaches the network: proxies and the certificates a proxy presents (urllib, httpx, requests
# and uv read these names, in either case), and whether they are offline.
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
NETWORK_VARIABLES = PROXY_VARIABLES + (
    "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "UV_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
# How the person's package installers are set up (where their index is, retries, TLS), none of it a
# credential by name: without them an install meant for a mirror or a warm cache goes elsewhere or hangs.
# uv's and pip's own names (https://docs.astral.sh/uv/reference/environment/, pip's PIP_<OPTION> rule).
PACKAGE_VARIABLES = ("UV_INDEX", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS",
                     "UV_INDEX_STRATEGY", "UV_HTTP_RETRIES", "UV_HTTP_TIMEOUT", "UV_NATIVE_TLS", "UV_LINK_MODE",
                     "UV_PYTHON_DOWNLOADS", "UV_PYTHON_PREFERENCE", "UV_CONFIG_FILE", "UV_NO_CONFIG", "PIP_INDEX_URL",
                     "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_DEFAULT_TIMEOUT", "PIP_CERT", "PIP_CONFIG_FILE")
# A closed port on loopback (9, discard): what a read-only tool's children get as their proxy, so a
# client that honours the proxy variables reaches nothing; loopback itself stays direct (a local policy).
NOWHERE = "http://127.0.0.1:9"
_LOOPBACK = "localhost,127.0.0.1,::1"
_OFFLINE = {"UV_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            **dict.fromkeys(PROXY_VARIABLES, NOWHERE), "NO_PROXY": _LOOPBACK, "no_proxy": _LOOPBACK}
_private_home: Path | None = None


def minimal_environment(extra: Mapping[str, str] | None = None,
                        source: Mapping[str, str] | None = None, *, offline: bool = False) -> dict[str, str]:
    """The base, network and package-installer variables of `source` (os.environ), the package caches, a private
    HOME, then `extra`; in whichever HOME that leaves, the person's installer settings files: nothing else of the
    person's. `offline`: no package index, no Hub, the proxy pointed at a closed port (a read-only tool's
    children)."""
    source = os.environ if source is None else source
    kept = BASE_VARIABLES + NETWORK_VARIABLES + PACKAGE_VARIABLES
    environ = {**{name: source[name] for name in kept if name in source}, **package_caches(source),
               "HOME": str(private_home()), **(_OFFLINE if offline else {}), **(extra or {})}
    _lend_installer_settings(Path(environ["HOME"]), source)
    return environ


def online(environ: Mapping[str, str], source: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` with the person's own network settings (of `source`, os.environ) in place of the offline ones:
    for the one child of a read tool that cannot run offline, named where it is started."""
    source = os.environ if source is None else source
    return {**{name: value for name, value in environ.items() if name not in _OFFLINE},
            **{name: source[name] for name in NETWORK_VARIABLES if name in source}}


def package_caches(source: Mapping[str, str]) -> dict[str, str]:
    """uv's and Hugging Face's caches where the person's own tools find them (their variables, then the XDG
    folders, then the defaults under the person's HOME), so a child with a private HOME still finds, offline,
    what was downloaded. HF_HOME itself is not passed: it holds the saved Hub login (its `token` file,
    https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables)."""
    home = _persons_home(source)
    cache = Path(source.get("XDG_CACHE_HOME") or home / ".cache")
    data = Path(source.get("XDG_DATA_HOME") or home / ".local" / "share")
    hf_home = Path(source.get("HF_HOME") or cache / "huggingface")
    return {
        "UV_CACHE_DIR": source.get("UV_CACHE_DIR") or str(cache / "uv"),
        "UV_PYTHON_INSTALL_DIR": source.get("UV_PYTHON_INSTALL_DIR") or str(data / "uv" / "python"),
        "HF_HUB_CACHE": source.get("HF_HUB_CACHE") or source.get("HUGGINGFACE_HUB_CACHE") or str(hf_home / "hub"),
        "HF_DATASETS_CACHE": source.get("HF_DATASETS_CACHE") or str(hf_home / "datasets"),
        "HF_XET_CACHE": source.get("HF_XET_CACHE") or str(hf_home / "xet"),
    }


def _lend_installer_settings(home: Path, source: Mapping[str, str]) -> None:
    """Link each of the person's own uv and pip settings files that exist into the children's `home`, where its
    installer looks for it, and no other file of theirs; a link whose file the person has since removed goes too.

    A person behind a private index names it there, and an install that ignored it would fail or reach the public
    index; offline, uv finds in its cache only what came from the index it is told of. Links, not UV_CONFIG_FILE:
    uv reads that file instead of every file it finds, so a project's own index (its `uv.toml` or `[tool.uv]`,
    which outranks the user's file) would be ignored (uv 0.13, checked). No leak: these are the person's own
    installer settings, which their uv and pip read on every run, and an index URL with a credential in one is
    sent where the person's own installer sends it; the door passes no credential by name, and every child runs
    as the person, who can read the person's files anyway: the private HOME keeps saved logins from being used
    unasked, it is not a wall."""
    person = _persons_home(source)
    if not home.is_dir() or home.resolve() == person.resolve():
        return  # a caller's HOME not made yet, or the person's own, which has the files already
    config = Path(source.get("XDG_CONFIG_HOME") or person / ".config")
    # Where each installer looks for its user-level file under the child's HOME (no XDG_CONFIG_HOME there), and
    # where the person keeps it: uv's (https://docs.astral.sh/uv/concepts/configuration-files/) and pip's, the
    # current and the legacy one, both read (https://pip.pypa.io/en/stable/topics/configuration/, "user").
    for place, settings in ((".config/uv/uv.toml", config / "uv" / "uv.toml"),
                            (".config/pip/pip.conf", config / "pip" / "pip.conf"),
                            (".pip/pip.conf", person / ".pip" / "pip.conf")):
        link = home / place
        try:
            if not settings.is_file():
                if link.is_symlink():
                    link.unlink()
                continue
            if link.exists() and (not link.is_symlink() or link.samefile(settings)):
                continue  # linked already, or a file a child wrote there itself, left as it is
            link.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Made beside it and moved over it: two rlpilot processes may give one kept HOME its links at once.
            made = link.with_name(f".{link.name}.{os.getpid()}.{threading.get_ident()}")
            os.symlink(settings, made)
            os.replace(made, link)
        except OSError as error:
            raise ToolError("home-unwritable", f"could not link {settings} into the programs' HOME as {link}: "
                            f"{error.strerror}", f"check that {home} is a folder you own and can write") from None


def _persons_home(source: Mapping[str, str]) -> Path:
    return Path(source.get("HOME") or Path.home())


def private_home() -> Path:
    """A folder only this user may read, the HOME of every child in a minimal environment: with no
    HOME at all, Python and git look the person's own up in the password database. Made once per rlpilot
    process, removed when it exits."""
    global _private_home
    if _private_home is None or not _private_home.is_dir():
        _private_home = Path(tempfile.mkdtemp(prefix="rlpilot-home-"))
        atexit.register(shutil.rmtree, _private_home, ignore_errors=True)
    return _private_home


def person_environment(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The person's whole environment (their keys and HOME): only for what they run or confirmed."""
    return dict(os.environ if source is None else source)


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    path = (env or os.environ).get("PATH")
    return shutil.which(program, path=path)


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str],
    timeout: float = 600.0,
    on_line: LineCallback | None = None,
    keep_lines: int = 400,
) -> ProcessResult:
    """Run `argv` to completion or timeout, in exactly the environment `env`, keeping the last `keep_lines`
    lines of each stream (at most TAIL_BYTES of them). A missing program is bad input, not a crash."""
    argv = [os.fspath(a) for a in argv]
    environ = dict(env)
    # The person's secrets are masked too: a child without them may still print one it read from a file.
    redact = redactor({**os.environ, **environ})
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            argv,
            cwd=cwd,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout reaches grandchildren
            text=True,  # universal newlines: a progress bar's \r ends a line too
            encoding="utf-8",
            errors="replace",
        )
    except FileNotFoundError:
        raise BadInput("program-not-found", f"{argv[0]} is not installed or not on PATH",
                       "install it, or run `rlpilot stack` to see what is missing") from None

    # Bounded: a child that prints faster than its lines are redacted waits on its pipe, not on our memory.
    lines: queue.Queue[tuple[str, str | None]] = queue.Queue(maxsize=64)
    readers = [
        threading.Thread(target=_pump, args=(name, stream, lines), daemon=True)
        for name, stream in (("stdout", child.stdout), ("stderr", child.stderr))
    ]
    for reader in readers:
        reader.start()

    tails: dict[str, deque[str]] = {"stdout": deque(), "stderr": deque()}
    kept = {"stdout": 0, "stderr": 0}
    open_streams = len(readers)
    deadline = started + timeout
    timed_out = False
    try:
        while open_streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                _kill_group(child)
                break
            try:
                name, line = lines.get(timeout=min(remaining, 0.2))
            except queue.Empty:
                continue
            if line is None:
                open_streams -= 1
                continue
            clean = redact(line.rstrip("\n"))
            tails[name].append(clean)
            kept[name] += len(clean)
            while len(tails[name]) > keep_lines or kept[name] > TAIL_BYTES:
                kept[name] -= len(tails[name].popleft())
            if on_line:
                on_line(name, clean)
    except BaseException:
        # Ctrl-C (or a failing callback) cancels the work: nothing we started may outlive it.
        _kill_group(child)
        _drain(lines, open_streams)
        raise
    _drain(lines, open_streams)

    try:
        returncode = child.wait(timeout=_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        returncode = child.wait()
    return ProcessResult(
        argv=[redact(a) for a in argv],
        returncode=returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
        stdout_tail=list(tails["stdout"]),
        stderr_tail=list(tails["stderr"]),
    )


# Every key of git's configuration that names a program git runs (git-config(1), git 2.39), overridden on
# the command line, which outranks the repository's own .git/config and whatever it includes: a repository
# someone else made may name any program there. Empty, a list of helpers is reset (gitcredentials(7)).
_GIT_NO_PROGRAMS = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=false",
                    "core.sshCommand=false", "core.askPass=false", "core.gitProxy=false", "credential.helper=",
                    "diff.external=false", "log.showSignature=false", "gpg.program=false", "gpg.openpgp.program=false",
                    "gpg.x509.program=false", "gpg.ssh.program=false", "gc.auto=0", "maintenance.auto=false")


def git(args: Sequence[str], *, cwd: Path, timeout: float) -> ProcessResult:
    """`git ARGS` in `cwd`, someone's repository, in the one form safe there: a minimal offline environment,
    no system or global configuration, no pager, no prompt, no lock taken, every program-naming key off.
    For reading only (log, show, rev-parse): a driver named in .gitattributes (a diff or filter program)
    is not overridden, and the commands that write or diff the work tree run one."""
    env = minimal_environment({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_PAGER": "cat",
                               "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}, offline=True)
    settings = [arg for setting in _GIT_NO_PROGRAMS for arg in ("-c", setting)]
    return run(["git", "--no-pager", *settings, *args], cwd=cwd, env=env, timeout=timeout)


def supervise(argv: Sequence[str | os.PathLike[str]], *, cwd: Path, log: Path, exit_file: Path, name: str,
              env: Mapping[str, str]) -> int:
    """Start `argv` in `cwd` detached from rlpilot, under the supervisor: its output redacted into `log`,
    its exit status written to `exit_file` when it ends, `name` on the supervisor's command line. The pid
    of its process group (`train stop` signals it whole); ToolError `launch-failed` when it did not start."""
    # -P: the supervisor's own folder (tools/io, with an http.py) must not shadow the standard library.
    started = run([sys.executable, "-P", SUPERVISOR, "--log", log, "--exit", exit_file, "--cwd", cwd, "--run", name,
                   "--", *argv], env=env, timeout=30)
    if not started.ok or not started.stdout.strip().isdigit():
        raise ToolError("launch-failed", f"{os.fspath(argv[0])} could not be started: {started.said()}",
                        f"see {log}")
    return int(started.stdout.strip())


def _pump(name: str, stream: IO[str], lines: queue.Queue) -> None:
    """The stream's lines, each read at most LINE_BYTES characters at a time: a longer one is cut there, with a
    note, and the rest of it read past; after OUTPUT_BYTES in all, the rest of the stream is read past too."""
    total = 0
    while line := stream.readline(LINE_BYTES + 1):
        total += len(line)
        if total > OUTPUT_BYTES:
            lines.put((name, f"[rlpilot: {name} past {OUTPUT_BYTES >> 20} MiB; the rest of it was not kept]"))
            break
        if len(line) > LINE_BYTES and not line.endswith("\n"):
            while (more := stream.readline(LINE_BYTES)) and not more.endswith("\n"):
                total += len(more)
            total += len(more)
            line = line[:LINE_BYTES] + f" [rlpilot: line cut at {LINE_BYTES >> 10} KiB]"
        lines.put((name, line))
    for _ in iter(lambda: stream.read(1 << 16), ""):
        pass  # a child blocked writing to a full pipe would never exit
    lines.put((name, None))


def _drain(lines: queue.Queue, open_streams: int) -> None:
    """Let the readers of a killed child reach its end: each waits on the bounded queue."""
    while open_streams:
        try:
            open_streams -= lines.get(timeout=_GRACE_SECONDS)[1] is None
        except queue.Empty:
            return


def _kill_group(child: subprocess.Popen) -> None:
    """SIGTERM the group, give it a grace period, then SIGKILL whatever is left of it.

    The group is killed even when the leader exits on SIGTERM: its children may ignore it.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            try:
                child.wait(timeout=_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
