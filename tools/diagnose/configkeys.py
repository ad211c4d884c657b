"""A run's config as diagnosis needs it: its dialect, the real key of an intent, the value in use.

Dialect detection, intent-to-key mapping and TOML loading are the config engine's
(tools/configs); only the defaults a file may leave unset are added here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs.detect import detect_file
from tools.configs.dialects import key_for
from tools.configs.document import load, lookup
from tools.configs.eras import Dialect

# prime-rl's defaults (shared/research/prime-rl.md section 2.3), for a key the file leaves unset.
_PRIME_RL_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-6,
    "batch_size": 128,
    "group_size": 1,
    "temperature": 1.0,
    "max_off_policy_steps": 8,
}
_DEFAULTS: dict[Dialect, dict[str, Any]] = {
    Dialect.CLASSIC: {**_PRIME_RL_DEFAULTS, "difficulty_filtering": False},
    Dialect.TRANSITION: _PRIME_RL_DEFAULTS,
    Dialect.CURRENT: {**_PRIME_RL_DEFAULTS, "difficulty_filtering": True},  # filter_zero_advantages
}


@dataclass(frozen=True)
class ConfigView:
    path: Path
    dialect: Dialect
    data: dict[str, Any]

    def key_for(self, intent: str) -> str | None:
        return key_for(self.dialect, intent)

    def value_of(self, intent: str) -> Any:
        """The value the run used: the file's, else prime-rl's default (None when unknown)."""
        key = self.key_for(intent)
        value = lookup(self.data, key) if key else None
        return _DEFAULTS.get(self.dialect, {}).get(intent) if value is None else value


def open_config(path: Path) -> ConfigView:
    data = load(path).data
    return ConfigView(path, detect_file(data, path).dialect, data)
