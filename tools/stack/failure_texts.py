"""What the stack's programs print when they fail: one table, one row per failure, each with where it was read.

Three readers use it. `run_prime` raises a row's typed error when a failed `prime` call printed its
text (stack/prime_cli.py); `eval run` does the same for the eval command it ran (evals/run.py); and
an eval's log or its rollouts' errors are named by a row's kind, auth, quota or network
(evals/failures.py, which also reads HTTP statuses). A text is found case-insensitively, with `_` read
as a space (`insufficient_quota` is also `insufficient quota`). A line that holds none of them is
not guessed at.

Sources, cited by tag:
- prime 0.18.0: the `prime` CLI's release on PyPI, https://pypi.org/project/prime/0.18.0/
  (prime_cli/core/client.py); prime-sandboxes, its sandbox client (core/client.py; prime PR #420).
- verifiers 0.4.0: https://pypi.org/project/verifiers/0.4.0/ (v1/utils/loaders.py, v1/runtimes/base.py,
  v1/clients/eval.py); verifiers 0.3.0 re-raises the openai SDK's errors (verifiers/clients/client.py).
- openai-python: https://github.com/openai/openai-python/blob/main/src/openai/_exceptions.py (exception
  names, `Connection error.`, `Request timed out.`); the OpenAI API's error codes and messages,
  https://platform.openai.com/docs/guides/error-codes.
- httpx: https://github.com/encode/httpx/blob/master/httpx/_exceptions.py; httpcore/anyio print
  `All connection attempts failed`; urllib3 prints `Failed to establish a new connection`.
- the C library: strerror (`Connection refused`, `Network is unreachable`) and getaddrinfo's gai_strerror
  (glibc: `Name or service not known`, `Temporary failure in name resolution`; macOS: `nodename nor
  servname provided`).
- uv: `Failed to fetch: <index>/simple/<package>/` when the package index cannot be reached.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, get_args

from tools.verifiers.v0 import V0_REQUIREMENT, v0_message, v0_options

Kind = Literal["auth", "quota", "network"]
Program = Literal["prime", "eval"]

LOGIN_HINT = "run `prime login`, or export PRIME_API_KEY"


@dataclass(frozen=True)
class FailureText:
    text: str
    source: str
    kind: Kind | None = None  # what it names in an eval's log or a rollout's error; None: none of the three
    raised_by: Program | None = None  # the command whose failed output raises `code` on it
    code: str = ""
    message: str = ""  # prime's rows: `{what}` is the action that failed
    hint: str = ""

    def found_in(self, output: str) -> bool:
        return _folded(self.text) in _folded(output)


def _folded(text: str) -> str:
    return text.lower().replace("_", " ")


_PRIME = "prime 0.18.0"
_SANDBOXES = "prime-sandboxes"
_VF = "verifiers 0.4.0"
_OPENAI = "openai-python"
_API = "the OpenAI API"
_NET = "the C library"

FAILURES: tuple[FailureText, ...] = (
    # prime, in the order `run_prime` looks for them
    FailureText("No API key configured", _PRIME, "auth", "prime", "not-logged-in", "{what} needs a Prime login",
                LOGIN_HINT),
    FailureText("API key unauthorized", _PRIME, "auth", "prime", "login-rejected",
                "the Prime API refused the API key for {what}",
                "create a new key at https://app.primeintellect.ai/dashboard/tokens, then run `prime login`"),
    FailureText("Payment required", _PRIME, "quota", "prime", "payment-required",
                "the Prime API asks for payment before {what}",
                "check billing at https://app.primeintellect.ai/dashboard/billing"),
    FailureText("Request failed: Connect", _PRIME, "network", "prime", "prime-api-unreachable",
                "could not reach the Prime API for {what}",
                "check the network (or PRIME_API_BASE_URL if you set it), then retry"),
    FailureText("Request timed out", f"{_PRIME}; {_OPENAI} APITimeoutError", "network", "prime",
                "prime-api-unreachable", "the Prime API did not answer in time for {what}",
                "retry in a minute; if it persists, check https://status.primeintellect.ai"),
    # the eval commands, in the order `eval run` looks for them
    FailureText("tried to import", f"{_VF} (v1/utils/loaders.py)", None, "eval", "env-not-installed",
                "the environment is not installed in the workspace's Python",
                "install it: `uv pip install -e environments/NAME`, or `prime env install owner/NAME`"),
    FailureText("not authenticated with prime", f"{_VF}'s prime runtime ({_SANDBOXES})", "auth", "eval",
                "runtime-needs-login", "the Prime sandbox runtime needs a Prime login",
                "run `prime login`, or use --runtime subprocess"),
    FailureText("require an upstream environment", f"{_PRIME} (`prime eval run --hosted`)", None, "eval",
                "env-not-published", "hosted evals run published environments only",
                "publish it first: `rlpilot env push ENV`"),
    FailureText("failed to prepare uv script", f"{_VF} (v1/runtimes/base.py)", None, "eval", "harness-setup-failed",
                "the harness could not install its packages",
                "vf-eval installs the harness from the package index before each run: check network access to it"),
    # The loader's `_plugin_class`, on a module without `__all__` ("defines no `__all__`; a taskset must export
    # its Taskset subclass via `__all__`") or without a Taskset in it ("exports no Taskset subclass via
    # `__all__`"): what a v0 environment installed from the Hub gives it.
    FailureText("Taskset subclass via `__all__`", f"{_VF} (v1/utils/loaders.py)", None, "eval", "env-is-v0",
                v0_message("the environment"),
                v0_options("NAME") + f"; or put its source in environments/NAME, where `rlpilot eval run NAME` runs "
                f"it with {V0_REQUIREMENT} in a runtime of its own (a verifiers 0.4 environment after all: list its "
                "Taskset subclass in its module's `__all__`)"),
    # what an eval's log or a rollout's error says: a kind, no typed error of its own
    FailureText("RateLimitError", _OPENAI, "quota"),
    FailureText("insufficient_quota", f"{_API} error code", "quota"),
    FailureText("exceeded your current quota", _API, "quota"),
    FailureText("rate limited", "providers' 429 bodies", "quota"),
    FailureText("rate limit reached", _API, "quota"),
    FailureText("rate limit exceeded", "providers' 429 bodies", "quota"),
    FailureText("Insufficient balance", _SANDBOXES, "quota"),
    FailureText("PaymentRequiredError", _SANDBOXES, "quota"),
    FailureText("AuthenticationError", _OPENAI, "auth"),
    FailureText("PermissionDeniedError", _OPENAI, "auth"),
    FailureText("UnauthorizedError", _SANDBOXES, "auth"),
    FailureText("invalid_api_key", f"{_API} error code", "auth"),
    FailureText("Incorrect API key", _API, "auth"),
    FailureText("APIConnectionError", _OPENAI, "network"),
    FailureText("Connection error.", f"{_OPENAI} APIConnectionError", "network"),
    FailureText("APITimeoutError", _OPENAI, "network"),
    FailureText("ConnectError", "httpx", "network"),
    FailureText("ConnectTimeout", "httpx", "network"),
    FailureText("ReadTimeout", "httpx", "network"),
    FailureText("All connection attempts failed", "httpcore/anyio, through httpx", "network"),
    FailureText("Failed to establish a new connection", "urllib3", "network"),
    FailureText("Connection refused", _NET, "network"),
    FailureText("Network is unreachable", _NET, "network"),
    FailureText("Name or service not known", _NET, "network"),
    FailureText("Temporary failure in name resolution", _NET, "network"),
    FailureText("nodename nor servname", _NET, "network"),
    FailureText("Failed to fetch", "uv", "network"),
)


def raised_by(program: Program) -> tuple[FailureText, ...]:
    """The rows a failed command of `program` raises a typed error for, in the order they are looked for."""
    return tuple(row for row in FAILURES if row.raised_by == program)


@functools.cache
def _signs() -> dict[Kind, re.Pattern[str]]:
    """One pattern per kind, so a long log line is folded once and searched three times; compiled at the first
    search, not at import: most commands import this table and never search a log."""
    return {kind: re.compile("|".join(re.escape(_folded(row.text)) for row in FAILURES if row.kind == kind))
            for kind in get_args(Kind)}


def kinds_in(text: str) -> set[Kind]:
    """The kinds of failure the rows found in `text` name."""
    folded = _folded(text)
    return {kind for kind, sign in _signs().items() if sign.search(folded)}
