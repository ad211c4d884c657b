"""Redaction of secrets from anything rlpilot stores, shows or sends to a model."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

MASK = "[REDACTED]"

# Names whose values are secrets, whatever the value looks like.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)

# Shapes of secrets that may appear without their variable: OpenAI-style keys, bearer
# headers, Slack bot/app/user tokens, W&B and Hugging Face tokens, and `--api-key VALUE`.
_SECRET_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bxapp-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"\bpit_[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|secret|password)[\"']?\s*[=:]\s*[\"']?)[^\s\"',}]{6,}"),
    re.compile(r"(?i)(--(?:api-key|token|secret)[= ])\S+"),
]

# Values shorter than this are too likely to occur by chance ("1", "true") to mask.
_MIN_VALUE_LENGTH = 6


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_VALUE_LENGTH}
    # Longest first, so a value that contains another is masked whole.
    return sorted(values, key=len, reverse=True)


class Redactor:
    def __init__(self, environ: Mapping[str, str] | None = None, extra: Iterable[str] = ()):
        self._values = secret_values(environ) + [v for v in extra if len(v) >= _MIN_VALUE_LENGTH]

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        for shape in _SECRET_SHAPES:
            text = shape.sub(lambda m: (m.group(1) if m.re.groups else "") + MASK, text)
        return text


def redact(text: str) -> str:
    """Redact with the secrets of the current environment."""
    return Redactor()(text)
