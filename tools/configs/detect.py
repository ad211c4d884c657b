"""Which dialect a config is written in, and which one the installed stack expects.

The dialect is read from the keys: each era has spellings no other era used (prime-rl.md section
6, "Pin and detect the schema era"). The installed stack is the prime-rl checkout and the prime
CLI that `rlpilot stack` finds.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs.document import is_table_array, lookup
from tools.configs.eras import Dialect, Variant, dialect_for_prime_cli, dialect_for_prime_rl, variant_for_prime_rl
from tools.contract import BadInput
from tools.files import read_text_bounded

# (dialect, weight, test, what it shows): a weight 3 sign belongs to one era only.
_SIGNS: tuple[tuple[Dialect, int, str, str], ...] = (
    (Dialect.HOSTED_LAB, 3, "model:str", "a top-level `model = \"...\"`"),
    (Dialect.HOSTED_LAB, 3, "env:array", "a top-level `[[env]]`"),
    (Dialect.HOSTED_LAB, 2, "rollouts_per_example", "a top-level `rollouts_per_example`"),
    (Dialect.HOSTED_LAB, 1, "batch_size", "a top-level `batch_size`"),
    (Dialect.HOSTED_LAB, 2, "sampling", "a top-level `[sampling]`"),
    (Dialect.HOSTED_LAB, 2, "learning_rate", "a top-level `learning_rate`"),
    (Dialect.CLASSIC, 3, "orchestrator.env:array", "`[[orchestrator.env]]`"),
    (Dialect.CLASSIC, 2, "orchestrator.sampling", "`[orchestrator.sampling]`"),
    (Dialect.CLASSIC, 2, "orchestrator.buffer", "`[orchestrator.buffer]`"),
    (Dialect.CLASSIC, 2, "inference_gpu_ids", "`inference_gpu_ids`"),
    (Dialect.CLASSIC, 2, "trainer_gpu_ids", "`trainer_gpu_ids`"),
    (Dialect.CLASSIC, 2, "orchestrator.max_async_level", "`orchestrator.max_async_level`"),
    (Dialect.CLASSIC, 1, "orchestrator.rollouts_per_example", "`orchestrator.rollouts_per_example`"),
    (Dialect.TRANSITION, 3, "orchestrator.train.env:array", "`[[orchestrator.train.env]]`"),
    (Dialect.TRANSITION, 3, "orchestrator.eval.env:v1", "`[[orchestrator.eval.env]]` with a v1 taskset"),
    (Dialect.TRANSITION, 2, "orchestrator.max_inflight_rollouts", "`orchestrator.max_inflight_rollouts`"),
    (Dialect.TRANSITION, 1, "orchestrator.group_size", "`orchestrator.group_size`"),
    (Dialect.CURRENT, 3, "orchestrator.train.source:array", "`[[orchestrator.train.source]]`"),
    (Dialect.CURRENT, 3, "orchestrator.eval.source:array", "`[[orchestrator.eval.source]]`"),
    (Dialect.CURRENT, 2, "monitors", "`[monitors]`"),
    (Dialect.CURRENT, 2, "orchestrator.concurrency", "`[orchestrator.concurrency]`"),
    (Dialect.CURRENT, 2, "inference.vllm", "`[inference.vllm]`"),
    (Dialect.CURRENT, 2, "orchestrator.max_inflight_episodes", "`orchestrator.max_inflight_episodes`"),
    (Dialect.CURRENT, 1, "orchestrator.group_size", "`orchestrator.group_size`"),
)
# A sibling config is only looked at for its keys; one larger than this is data, not an overlay's base.
SIBLING_LIMIT = 1 << 20
# On a tie the newer era wins: a newer config keeps more of the older spellings than the reverse.
_TIE_ORDER = [Dialect.CURRENT, Dialect.TRANSITION, Dialect.CLASSIC, Dialect.HOSTED_LAB]


@dataclass(frozen=True)
class Detection:
    dialect: Dialect
    evidence: str
    from_keys: bool = True


def detect_dialect(data: dict[str, Any]) -> Detection:
    scores = {dialect: 0 for dialect in Dialect}
    shown: dict[Dialect, list[str]] = {dialect: [] for dialect in Dialect}
    for dialect, weight, test, what in _SIGNS:
        key, _, kind = test.partition(":")
        value = lookup(data, key)
        present = {
            "str": isinstance(value, str),
            "array": is_table_array(value),
            "v1": is_table_array(value) and any("taskset" in entry or "harness" in entry for entry in value),
        }.get(kind, value is not None)
        if present:
            scores[dialect] += weight
            shown[dialect].append(what)
    best = max(_TIE_ORDER, key=lambda d: scores[d])
    if scores[best] == 0:
        return Detection(Dialect.CURRENT, "no era-specific keys; assumed what `prime train` takes today", False)
    return Detection(best, "detected from " + ", ".join(shown[best]))


def detect_file(data: dict[str, Any], path: Path) -> Detection:
    """Like `detect_dialect`, but an overlay without era-specific keys (`uv run rl @ rl.toml @
    slurm.toml`) takes the dialect of a config beside it."""
    detection = detect_dialect(data)
    if detection.from_keys:
        return detection
    for sibling in sorted(path.parent.glob("*.toml")):
        if sibling.resolve() == path.resolve():
            continue
        try:
            beside = detect_dialect(tomllib.loads(read_text_bounded(sibling, SIBLING_LIMIT)))
        except (BadInput, ValueError, RecursionError):  # TOMLDecodeError is a ValueError, as is a 5000-digit integer
            continue  # not a config to take a dialect from: a FIFO, a data file, broken TOML
        if beside.from_keys:
            return Detection(beside.dialect, f"no era-specific keys; took the dialect of {sibling.name} beside it")
    return detection


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
        monitors = self.prime_rl_path is not None and any(
            "class MonitorsConfig" in source.read_text(errors="replace") for source in configs.glob("*.py"))
        return variant_for_prime_rl(self.prime_rl_version, monitors)

    def expectations(self) -> list[tuple[Dialect, str]]:
        found = []
        if self.prime_rl_version:
            found.append((dialect_for_prime_rl(self.prime_rl_version),
                          f"the prime-rl {self.prime_rl_version} checkout at {self.prime_rl_path}"))
        if self.prime_cli_version:
            found.append((dialect_for_prime_cli(self.prime_cli_version), f"prime {self.prime_cli_version}"))
        return found


def installed_stack(workspace: Path) -> Installed:
    environ = dict(os.environ)
    return _installed(str(workspace.resolve()), environ.get("RLPILOT_PRIME_RL", ""), environ.get("PATH", ""),
                      environ.get("VIRTUAL_ENV", ""), environ.get("UV_PROJECT_ENVIRONMENT", ""))


@functools.lru_cache(maxsize=8)
def _installed(workspace: str, prime_rl: str, path: str, venv: str, uv_env: str) -> Installed:
    """Cached per process on everything it reads, since it runs `prime --version`."""
    from tools.prime_runner import prime_environment
    from tools.stack import cli_version, find_prime_rl

    environ = prime_environment(Path(workspace))
    checkout = find_prime_rl(None, Path(workspace), environ)
    prime = cli_version("prime", ["--version"], environ)
    return Installed(
        prime_rl_version=checkout.version if checkout else None,
        prime_rl_path=checkout.path if checkout else None,
        prime_cli_version=prime.version if prime else None,
    )
