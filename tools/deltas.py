"""The one delta shape: config tool results, diagnosis, tuning and the report all use it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Delta(BaseModel):
    """One config change: which key of which file, from what, to what, and why."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    file: str | None = None
    key: str
    from_: Any = Field(None, alias="from")
    to: Any
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)
