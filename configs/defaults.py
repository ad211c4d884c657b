"""rlpilot's defaults (configs/rlpilot.toml), overridable by the workspace's configs/rlpilot.toml."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).with_name("rlpilot.toml")


@cache
def load(workspace: Path | None = None) -> dict[str, Any]:
    settings = tomllib.loads(BUNDLED.read_text())
    override = (workspace or Path.cwd()) / "configs" / "rlpilot.toml"
    if override.is_file() and override.resolve() != BUNDLED.resolve():
        for key, value in tomllib.loads(override.read_text()).items():
            if isinstance(value, dict) and isinstance(settings.get(key), dict):
                settings[key] = {**settings[key], **value}
            else:
                settings[key] = value
    return settings


def go_to_models(family: str) -> list[str]:
    return list(load()["go_to_models"][family])


def agent_setting(name: str) -> Any:
    return load()["agent"][name]
