"""rlpilot's own settings: configs/rlpilot.toml as shipped, overridden by the workspace's copy.

Loaded once per workspace and carried on the tool Context, so every surface (the terminal,
Slack, MCP, ACP) honours the workspace it serves. A bad override is bad input naming the file.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

BUNDLED = Path(__file__).with_name("rlpilot.toml")
WORKSPACE_FILE = Path("configs") / "rlpilot.toml"

Family = Literal["instruct", "reasoning"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssistantChoice(_Strict):
    base_url: str
    model: str
    api_key_var: str


class AgentSettings(_Strict):
    max_tool_rounds: PositiveInt
    max_tool_result_chars: PositiveInt
    max_tool_calls_per_reply: PositiveInt
    max_history_chars: PositiveInt
    request_timeout_s: float = Field(gt=0, description="One attempt of a model request.")
    request_budget_s: float = Field(gt=0, description="All attempts of one model request together.")
    reply_tokens: PositiveInt = Field(description="The most tokens one reply of the model may take (max_tokens).")
    context_tokens: PositiveInt = Field(description="The model's context, where its server does not say it.")


class Settings(_Strict):
    assistant: list[AssistantChoice]
    go_to_models: dict[Family, list[str]]
    agent: AgentSettings

    def go_to(self, family: str) -> list[str]:
        return list(self.go_to_models[family])  # type: ignore[index]


class SettingsError(ValueError):
    """The workspace's settings file is wrong; the message names the file and the key."""


@cache
def load_settings(workspace: Path | None) -> Settings:
    """The settings for `workspace`; None: rlpilot's own, with no workspace's override."""
    merged = tomllib.loads(BUNDLED.read_text())
    override = (workspace or BUNDLED.parent) / WORKSPACE_FILE
    if workspace and override.is_file() and override.resolve() != BUNDLED.resolve():
        try:
            _merge(merged, tomllib.loads(override.read_text()))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise SettingsError(f"{override} is not valid TOML: {error}") from None
    try:
        return Settings.model_validate(merged)
    except ValidationError as error:
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise SettingsError(f"{override}: {where}") from None


def _merge(settings: dict[str, Any], override: dict[str, Any]) -> None:
    """Tables merge key by key; anything else (a list of choices, a value) is replaced."""
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(settings.get(key), dict):
            settings[key] = {**settings[key], **value}
        else:
            settings[key] = value
