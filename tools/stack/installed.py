"""What is installed, asked the cheap way: a program's version, a prime-rl checkout on disk.

`stack` reports these probes; `installed_stack` sums them up as `Installed`, the eras the
installed parts expect, which the config tools judge a file against.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from tools.framework.eras import (
    Dialect,
    Kind,
    Variant,
    dialect_for_prime_cli,
    dialect_for_prime_rl,
    variant_for_prime_rl,
)
from tools.framework.errors import BadInput
from tools.io import files, process
from tools.stack.prime_cli import prime_environment


class Package(BaseModel):
    version: str
    path: str | None = Field(None, description="The executable or interpreter that was asked.")


class PrimeRL(BaseModel):
    path: str
    version: str
    dialect: Dialect
    commit: str | None = None
    found_by: str


def cli_version(program: str, argv: list[str], environ: dict[str, str]) -> Package | None:
    path = process.which(program, environ)
    if not path:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    version = _version_of(path, (stat.st_mtime_ns, stat.st_size), tuple(argv), tuple(sorted(environ.items())))
    return Package(version=version, path=path) if version else None


@functools.lru_cache(maxsize=64)
def _version_of(path: str, signature: tuple[int, int], argv: tuple[str, ...],
                environ: tuple[tuple[str, str], ...]) -> str | None:
    """Asked once per program file: starting a CLI costs half a second, and a long session (or the
    brain bench's every scenario) asks again and again. An upgrade rewrites the file, which changes
    its signature and asks anew."""
    declared = _declared_version(Path(path))
    if declared:
        return declared
    outcome = process.run([path, *argv], env=dict(environ), timeout=60)
    match = re.search(r"(\d+\.\d+(?:\.\d+)?\S*)", outcome.stdout)
    return match.group(1) if outcome.ok and match else None


def _declared_version(script: Path) -> str | None:
    """The version of the Python distribution that declares `script` as its console script, read from
    the metadata beside the interpreter its first line names: no program started (prime takes a second
    and more to say `--version`). None for a program that is no such script (uv is a binary)."""
    try:
        with files.open_regular(script) as handle:  # a FIFO on PATH must not hang the probe
            first = handle.readline(512)
    except BadInput:  # no script to read: the program itself is asked
        return None
    if not first.startswith(b"#!") or b"python" not in first:
        return None
    interpreter = Path(first[2:].decode(errors="replace").strip().split()[0])
    entry = re.compile(rf"^\s*{re.escape(script.name)}\s*=", re.M)
    for site in interpreter.parent.parent.glob("lib/python3*/site-packages"):
        for info in site.glob("*.dist-info"):
            # Any refusal (no file, a FIFO, past the bound) reads as "not declared here": the program itself is
            # asked then, which gives the right version anyway.
            try:
                if entry.search(files.read_text_bounded(info / "entry_points.txt")):
                    version = re.search(r"^Version:\s*(\S+)", files.read_text_bounded(info / "METADATA"), re.M)
                    return version.group(1) if version else None
            except BadInput:
                continue
    return None


def find_prime_rl(explicit: Path | None, workspace: Path, environ: dict[str, str]) -> PrimeRL | None:
    if explicit is not None:
        candidates = [(explicit, "--prime-rl")]
    elif environ.get("RLPILOT_PRIME_RL"):
        candidates = [(Path(environ["RLPILOT_PRIME_RL"]), "RLPILOT_PRIME_RL")]
    else:
        candidates = [(workspace, "current directory")]
    path, found_by = candidates[0]
    checkout = _read_prime_rl_checkout(path)
    if checkout is None and found_by != "current directory":
        raise BadInput(
            "not-a-prime-rl-checkout",
            f"{path} (from {found_by}) is not a prime-rl checkout: no pyproject.toml named prime-rl",
            "point it at the folder you cloned prime-rl into",
        )
    if checkout is None:
        return None
    version, commit = checkout
    return PrimeRL(path=str(path.resolve()), version=version, dialect=dialect_for_prime_rl(version),
                   commit=commit, found_by=found_by)


def _read_prime_rl_checkout(path: Path) -> tuple[str, str | None] | None:
    try:
        project = files.read_toml(path / "pyproject.toml").get("project")
    except BadInput as refused:  # a folder without a pyproject.toml, or with one that is no TOML, is no checkout
        if refused.code in files.ABSENT | files.NOT_TOML:
            return None
        raise
    if not isinstance(project, dict):
        return None
    if project.get("name") != "prime-rl" or "version" not in project:
        return None
    return str(project["version"]), _git_commit(path / ".git")


def _git_commit(git_dir: Path) -> str | None:
    """The checked-out commit, read from the files so no git binary is needed."""
    try:
        head = files.read_text_bounded(git_dir / "HEAD").strip()
        if head.startswith("ref: "):
            return files.read_text_bounded(git_dir / head[5:]).strip()
        return head
    except BadInput:  # the commit only annotates the checkout: one that cannot be told is shown as unknown
        return None


@dataclass(frozen=True)
class Installed:
    """What the installed stack expects; the fields are None where nothing is installed."""

    prime_rl_version: str | None = None
    prime_rl_path: str | None = None
    prime_cli_version: str | None = None

    @property
    def variant(self) -> Variant | None:
        """The prime-rl-current spelling the checkout pins (None without a v0.8+ checkout)."""
        if not self.prime_rl_version:
            return None
        configs = Path(self.prime_rl_path or ".") / "packages/prime-rl-configs/src/prime_rl/configs"
        hint = f"that is not prime-rl's config source; check the checkout at {self.prime_rl_path}"
        monitors = self.prime_rl_path is not None and any(
            "class MonitorsConfig" in files.read_text_bounded(source, files.SOURCE_LIMIT, hint=hint)
            for source in configs.glob("*.py"))
        return variant_for_prime_rl(self.prime_rl_version, monitors)

    def expectations(self, runs: Kind | None = None) -> list[tuple[Dialect, str]]:
        """The era each installed part takes, the checkout first. With `runs`, only the parts that
        run a file of that kind: a checkout has an entrypoint for every kind, `prime train` takes a
        full rl (or, with `--sft`, an SFT) config only."""
        found = []
        if self.prime_rl_version:
            found.append((dialect_for_prime_rl(self.prime_rl_version),
                          f"the prime-rl {self.prime_rl_version} checkout at {self.prime_rl_path}"))
        if self.prime_cli_version and (runs is None or runs in (Kind.RL, Kind.SFT)):
            found.append((dialect_for_prime_cli(self.prime_cli_version), f"prime {self.prime_cli_version}"))
        return found


def installed_stack(workspace: Path) -> Installed:
    environ = os.environ
    return _installed(str(workspace.resolve()), environ.get("RLPILOT_PRIME_RL", ""), environ.get("PATH", ""),
                      environ.get("VIRTUAL_ENV", ""), environ.get("UV_PROJECT_ENVIRONMENT", ""))


@functools.lru_cache(maxsize=8)
def _installed(workspace: str, prime_rl: str, path: str, venv: str, uv_env: str) -> Installed:
    """Cached per process on everything it reads, since it runs `prime --version`."""
    environ = prime_environment(Path(workspace))
    checkout = find_prime_rl(None, Path(workspace), environ)
    prime = _installed_version("prime", environ)
    if prime is None:
        found = cli_version("prime", ["--version"], environ)
        prime = found.version if found else None
    return Installed(
        prime_rl_version=checkout.version if checkout else None,
        prime_rl_path=checkout.path if checkout else None,
        prime_cli_version=prime,
    )


def _installed_version(program: str, environ: dict[str, str]) -> str | None:
    """A console script's version from the package metadata of the environment it lives in
    (a venv or a `uv tool` environment): a config check must not wait for `prime --version`."""
    found = shutil.which(program, path=environ.get("PATH"))
    if found is None:
        return None
    prefix = Path(found).resolve().parent.parent
    for metadata in sorted(prefix.glob(f"lib/python3*/site-packages/{program}-*.dist-info/METADATA")):
        try:
            with files.BoundedLines(metadata, text=True) as lines:  # the headers only: they end at a blank line
                for line in lines:
                    if line.startswith("Version: "):
                        return line.removeprefix("Version: ").strip()
                    if not line.strip():
                        break
        except BadInput:  # unreadable metadata declares nothing: `prime --version` is asked instead
            continue
    return None
