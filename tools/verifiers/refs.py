"""Environment references: a local name (a folder under `environments/`) or a Hub id.

Checked before anything runs, because the reference becomes an argument of `prime`: a value
starting with `-` would be read as a flag, and a path segment could point outside the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tools.framework.errors import BadInput
from tools.io import files

_PART = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_LOCAL = re.compile(_PART)
_HUB = re.compile(rf"(?P<owner>{_PART})/(?P<name>{_PART})(?:@(?P<version>[A-Za-z0-9][A-Za-z0-9.+!_-]*))?")

FORMS = "a local environment name (a folder under environments/) or a Hub id owner/name[@version]"


@dataclass(frozen=True)
class EnvRef:
    text: str
    name: str
    owner: str | None = None
    version: str | None = None

    @property
    def is_hub(self) -> bool:
        return self.owner is not None

    @property
    def hub_id(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def folder_name(self) -> str:
        """The folder (and module) name the prime CLI derives: hyphens become underscores."""
        return self.name.replace("-", "_")


# Package names on PyPI and Hub ids are far shorter; a longer one is a mistake, and too long a file name.
MAX_REF_LENGTH = 200


def shown(text: str) -> str:
    """A reference as a message quotes it: a runaway one cut, with its length said."""
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"


def parse_env_ref(text: str) -> EnvRef:
    text = text.strip()
    if len(text) > MAX_REF_LENGTH:
        raise BadInput("bad-env-id", f"{shown(text)} is too long for {FORMS}",
                       f"environment names and Hub ids have at most {MAX_REF_LENGTH} characters")
    hub = _HUB.fullmatch(text)
    if hub:
        return EnvRef(text=text, name=hub["name"], owner=hub["owner"], version=hub["version"])
    if _LOCAL.fullmatch(text) and ".." not in text:
        return EnvRef(text=text, name=text)
    if "@" in text and "/" not in text:
        raise BadInput("bad-env-id", f"{text!r}: a version applies only to a Hub id",
                       "write owner/name@version, or the local name without @version")
    raise BadInput("bad-env-id", f"{text!r} is not {FORMS}",
                   "names use letters, digits, '.', '-' and '_', e.g. reverse-text or primeintellect/gsm8k@0.1.2")


def local_env_dir(workspace: Path, ref: EnvRef) -> Path:
    return workspace / "environments" / ref.folder_name


def pushed_hub_id(env_dir: Path) -> str | None:
    """The Hub id a previous `prime env push` recorded for this folder, if any."""
    metadata = files.read_json_if_present(env_dir / ".prime" / ".env-metadata.json")
    if not isinstance(metadata, dict):
        return None
    owner, name = metadata.get("owner"), metadata.get("name")
    return f"{owner}/{name}" if owner and name else None
