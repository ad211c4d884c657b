"""EndpointAlias aliases: `configs/endpoints.toml` in verifiers' `[[endpoint]]` registry format.

Schema (https://github.com/PrimeIntellect-ai/verifiers/blob/v0.2.0/verifiers/utils/eval_utils.py,
`_normalize_toml_endpoints`):
`endpoint_id`, `model`, `url` (or `api_base_url`), `key` (or `api_key_var`: the NAME of the
variable holding the key), optional `type` (or `api_client_type`) and `headers`. An id may
repeat (several URLs for one model) but must keep one model. verifiers 0.4 has no registry, so
an alias becomes explicit flags. The workspace's file wins over the examples rlpilot ships.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tools.framework.errors import BadInput
from tools.io import files

WORKSPACE_FILE = Path("configs") / "endpoints.toml"
_SPELLINGS = {"url": ("url", "api_base_url"), "key": ("key", "api_key_var"), "type": ("type", "api_client_type")}


@dataclass(frozen=True)
class EndpointAlias:
    alias: str
    model: str
    url: str
    key_var: str
    client_type: str | None
    source: str


def bundled_file() -> Path:
    return Path(str(resources.files("configs").joinpath("endpoints.toml")))


def registry_files(workspace: Path) -> list[Path]:
    """Where aliases are looked up, the first file that defines an alias winning."""
    files = [workspace / WORKSPACE_FILE, bundled_file()]
    unique = list(dict.fromkeys(f.resolve() for f in files if f.is_file()))
    return unique


def load_registry(path: Path) -> dict[str, EndpointAlias]:
    try:
        data = files.read_toml(path)
    except BadInput as refused:
        if refused.code not in files.NOT_TOML:
            raise
        raise BadInput("bad-endpoints-file", f"{refused.message}; it is not valid TOML",
                       "fix the file (see rlpilot's configs/endpoints.toml for the format)") from None
    entries = data.get("endpoint", [])
    if not isinstance(entries, list):
        raise BadInput("bad-endpoints-file", f"{path}: `endpoint` must be an array of tables ([[endpoint]])",
                       "write each alias as an [[endpoint]] table")
    found: dict[str, EndpointAlias] = {}
    for number, entry in enumerate(entries, 1):
        where = f"{path}, [[endpoint]] #{number}"
        if "client_type" in entry:
            raise BadInput("bad-endpoints-file", f"{where}: `client_type` is not a registry field",
                           "rename it to `type`")
        fields = {"endpoint_id": entry.get("endpoint_id"), "model": entry.get("model"),
                  **{name: next((entry[s] for s in spellings if s in entry), None)
                     for name, spellings in _SPELLINGS.items()}}
        missing = [name for name in ("endpoint_id", "model", "url", "key") if not fields[name]]
        if missing:
            raise BadInput("bad-endpoints-file", f"{where} lacks {', '.join(missing)}",
                           "each alias needs endpoint_id, model, url and key (the API key's variable name)")
        alias = str(fields["endpoint_id"])
        endpoint = EndpointAlias(alias, str(fields["model"]), str(fields["url"]), str(fields["key"]),
                            fields["type"] and str(fields["type"]), str(path))
        earlier = found.get(alias)
        if earlier and earlier.model != endpoint.model:
            raise BadInput("bad-endpoints-file", f"{where}: alias {alias!r} maps to multiple model ids "
                           f"({earlier.model!r} and {endpoint.model!r})", "give each model its own endpoint_id")
        found.setdefault(alias, endpoint)  # the first URL of a repeated alias is the one used
    return found


def find_alias(alias: str, workspace: Path) -> EndpointAlias:
    files = registry_files(workspace)
    known: list[str] = []
    for path in files:
        registry = load_registry(path)
        if alias in registry:
            return registry[alias]
        known += [a for a in registry if a not in known]
    raise BadInput("unknown-endpoint", f"no endpoint alias {alias!r} in {' or '.join(map(str, files)) or 'any file'}",
                   f"use one of: {', '.join(known)}; or add it to {workspace / WORKSPACE_FILE}" if known
                   else f"add it to {workspace / WORKSPACE_FILE}, or pass -m MODEL --base-url URL")
