"""Helpers for the config tests: the shared fixtures by era, and small configs written to disk."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import FIXTURES

from tools.configs.detect import Installed, detect_file
from tools.configs.document import load
from tools.configs.lint import CheckResult, check_data
from tools.eras import Dialect

RLPILOT = Path(sys.executable).parent / "rlpilot"
# What each fixture folder was valid for (fixtures/*/README.md).
ERAS = {
    "hosted-lab": Dialect.HOSTED_LAB,
    "prime-rl/v0.4.0": Dialect.CLASSIC,
    "prime-rl/v0.7.0": Dialect.TRANSITION,
    "prime-rl/v0.8.0": Dialect.CURRENT,
    "prime-rl/main-2026-08-21": Dialect.CURRENT,
}
# Nothing installed: checks that must not depend on this machine's prime CLI or checkouts.
NOTHING = Installed()


def fixture_files(era_prefix: str = "") -> list[str]:
    """Fixture paths relative to FIXTURES, for test ids; empty when the fixtures are absent."""
    if not FIXTURES.is_dir():
        return []
    return sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.toml")
                  if str(p.relative_to(FIXTURES)).startswith(era_prefix))


def era_of(relative: str) -> Dialect:
    return next(dialect for prefix, dialect in ERAS.items() if relative.startswith(prefix + "/"))


def write(folder: Path, text: str, name: str = "rl.toml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def rlpilot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(RLPILOT), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def check_config(path: Path, dialect: Dialect | str | None = None, installed: Installed = NOTHING,
                 kind: str | None = None, target: str | None = None) -> CheckResult:
    """What `config check` judges of a file (without upstream's schema pass), for a given stack."""
    config = load(Path(path))
    detection = detect_file(config.data, config.path, kind, dialect)
    return check_data(config.data, config.text, detection, installed, config.path, target=target)
