"""Which real key of a training config stands for an intent such as "learning_rate".

Stand-in until the config engine (tools/configs) offers dialect detection and an intent-to-key
map; this module is the only place diagnosis touches config files, so switching to the engine
replaces `open_config` and nothing else.

Keys and defaults: shared/research/prime-rl.md section 0 (eras) and 2.3 (keys, defaults).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs.eras import Dialect
from tools.contract import BadInput

_PRIME_RL = (Dialect.CLASSIC, Dialect.TRANSITION, Dialect.CURRENT)

# intent -> {dialect: key}; a dialect missing from a row has no single key for that intent.
_KEYS: dict[str, dict[Dialect, str]] = {
    "learning_rate": {Dialect.HOSTED_LAB: "learning_rate", **dict.fromkeys(_PRIME_RL, "trainer.optim.lr")},
    "batch_size": {Dialect.HOSTED_LAB: "batch_size", **dict.fromkeys(_PRIME_RL, "orchestrator.batch_size")},
    "group_size": {
        Dialect.HOSTED_LAB: "rollouts_per_example",
        Dialect.CLASSIC: "orchestrator.rollouts_per_example",
        Dialect.TRANSITION: "orchestrator.group_size",
        Dialect.CURRENT: "orchestrator.group_size",
    },
    "max_tokens": {
        Dialect.HOSTED_LAB: "sampling.max_tokens",
        Dialect.CLASSIC: "orchestrator.sampling.max_tokens",
        Dialect.TRANSITION: "orchestrator.train.sampling.max_completion_tokens",
        Dialect.CURRENT: "orchestrator.train.sampling.max_completion_tokens",
    },
    "temperature": {
        Dialect.HOSTED_LAB: "sampling.temperature",
        Dialect.CLASSIC: "orchestrator.sampling.temperature",
        Dialect.TRANSITION: "orchestrator.train.sampling.temperature",
        Dialect.CURRENT: "orchestrator.train.sampling.temperature",
    },
    "max_off_policy_steps": dict.fromkeys(_PRIME_RL, "orchestrator.max_off_policy_steps"),
    # The buffer's filter exists only in the classic era; later eras filter zero-advantage
    # groups by default or through per-source curriculum gates (no single key).
    "difficulty_filtering": {Dialect.CLASSIC: "orchestrator.buffer.online_difficulty_filtering"},
}

# prime-rl's defaults, for a key the file leaves unset.
_PRIME_RL_DEFAULTS = {
    "learning_rate": 1e-6,
    "batch_size": 128,
    "group_size": 1,
    "temperature": 1.0,
    "max_off_policy_steps": 8,
    "difficulty_filtering": False,
}


@dataclass(frozen=True)
class ConfigView:
    path: Path
    dialect: Dialect
    table: dict[str, Any]

    def key_for(self, intent: str) -> str | None:
        return _KEYS.get(intent, {}).get(self.dialect)

    def value_of(self, intent: str) -> Any:
        """The value the run used: the file's, else prime-rl's default (None when unknown)."""
        key = self.key_for(intent)
        node: Any = self.table
        for part in (key or "").split("."):
            if not isinstance(node, dict) or part not in node:
                node = None
                break
            node = node[part]
        if node is None and self.dialect in _PRIME_RL:
            return _PRIME_RL_DEFAULTS.get(intent)
        return node


def open_config(path: Path) -> ConfigView:
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput("config-not-found", f"{path} does not exist", "pass the run's TOML config") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BadInput("config-unreadable", f"{path}: not valid TOML ({error})",
                       "fix the file or leave out --config") from None
    return ConfigView(path, _dialect(table), table)


def _dialect(table: dict[str, Any]) -> Dialect:
    """Told apart by the blocks each era alone has (prime-rl.md section 0, the era table)."""
    if isinstance(table.get("model"), str) or isinstance(table.get("env"), list):
        return Dialect.HOSTED_LAB
    orchestrator = table.get("orchestrator", {})
    train = orchestrator.get("train", {}) if isinstance(orchestrator, dict) else {}
    if "source" in train or "monitors" in table:
        return Dialect.CURRENT
    if "env" in train or "group_size" in orchestrator:
        return Dialect.TRANSITION
    if "env" in orchestrator or "rollouts_per_example" in orchestrator or "sampling" in orchestrator:
        return Dialect.CLASSIC
    return Dialect.CURRENT
