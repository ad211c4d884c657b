"""Training a verifiers v0 environment on a prime-rl that no longer can: said by `config check`, `config
tune` and `train launch` before anything runs.

prime-rl dropped v0 environments on 2026-08-10 (commit 03f12ef, "feat!: drop v0 env compat", PR #3226,
before v0.9.0): `EnvConfig` lost its `[legacy]` block and the v0 bridge went (shared/research/prime-rl.md,
"v0 environments dropped"). prime-rl v0.8.0's schema still has `LegacyEnvConfig`; main of 2026-08-21's
has none (shared/prime-rl-schemas). Whether Hosted Training still trains v0 environments is not
published: it runs prime-rl configs on dedicated clusters (prime 0.18.0's `prime train`;
research/verifiers-prime.md section 7) without saying which prime-rl.

Kept apart from tools/configs (which calls it) so it reads only plain values: the config's data, its
dialect, the checkout, the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.env_refs import local_env_dir, parse_env_ref
from tools.eras import Dialect, dialect_for_prime_rl
from tools.findings import Finding
from tools.v0_runtime import detect

DROPPED = "2026-08-10"
CODE = "env-is-v0"
_LEGACY_MARK = "LegacyEnvConfig"  # the `[legacy]` block's class, in prime-rl's config source up to the drop
# Every dialect's spelling of the environments a config trains and evaluates.
_ENTRY_LISTS = (("env",), ("orchestrator", "env"), ("orchestrator", "train", "env"),
                ("orchestrator", "train", "source"), ("orchestrator", "eval", "env"),
                ("orchestrator", "eval", "source"))
HOSTED = ("Hosted Training: unknown. It runs prime-rl configs on dedicated clusters (prime 0.18.0's `prime train`, "
          "research/verifiers-prime.md section 7) without saying which prime-rl, so whether that prime-rl is from "
          f"before {DROPPED} is not known; `prime train validate CONFIG` asks the platform")


def environment_ids(data: dict[str, Any]) -> list[str]:
    """The environment (taskset) ids a config names, in every dialect's spelling."""
    ids = []
    for path in _ENTRY_LISTS:
        entries: Any = data
        for key in path:
            entries = entries.get(key) if isinstance(entries, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            taskset = entry.get("taskset") or (entry.get("env") or {}).get("taskset") or {}
            found = entry.get("id") or (taskset.get("id") if isinstance(taskset, dict) else None)
            if isinstance(found, str) and found not in ids:
                ids.append(found)
    return ids


def checkout_drops_v0(path: Path, version: str) -> bool | None:
    """Whether a prime-rl checkout is from the drop or later; None when it cannot be told."""
    dialect = dialect_for_prime_rl(version)
    if dialect == Dialect.V09:
        return True
    if dialect != Dialect.CURRENT:
        return False
    # v0.8.0 (2026-08-06) and main from 2026-08-10 share a version number: its config source tells.
    sources = [*path.glob("packages/prime-rl-configs/src/**/*.py"), *path.glob("src/prime_rl/**/config*.py")]
    if not sources:
        return None
    return not any(_LEGACY_MARK in source.read_text(errors="replace") for source in sources)


def v0_training_findings(data: dict[str, Any], dialect: Dialect | None, workspace: Path, target: str | None,
                         prime_rl_version: str | None, prime_rl_path: str | None) -> list[Finding]:
    """One finding per v0 environment the config would train where v0 is gone (an error) or may be (a
    warning). Environments without a source folder in the workspace are not judged here."""
    v0 = [(name, folder) for name in environment_ids(data)
          if (folder := local_env_dir(workspace, parse_env_ref(name))).is_dir() and detect(folder).is_v0]
    if not v0:
        return []
    if target == "hosted":
        drops, runner = None, "a hosted run goes to Hosted Training, whose prime-rl is not published"
    elif prime_rl_version and prime_rl_path:
        drops = checkout_drops_v0(Path(prime_rl_path), prime_rl_version)
        runner = f"the prime-rl {prime_rl_version} checkout at {prime_rl_path}" + (
            " is from after it" if drops else " may be from after it (its config source does not say)"
            if drops is None else " still has v0 support")
    elif dialect == Dialect.V09:
        drops, runner = True, "this config is written for prime-rl v0.9 or later, which have no v0 support"
    elif dialect == Dialect.CURRENT:
        drops, runner = None, ("this config is prime-rl-current, which v0.8.0 (with v0 support) and main from "
                               f"{DROPPED} on (without) both read")
    else:
        drops, runner = False, ""
    if drops is False:
        return []
    return [Finding(code=CODE, severity="error" if drops else "warning", file=str(folder),
                    message=f"{name} ({folder}) is a verifiers v0 environment (load_environment), and prime-rl "
                            f"dropped v0 environments on {DROPPED} (#3226: the `[legacy]` block and the v0 bridge "
                            f"are gone; v0.9.0 too); {runner}",
                    fix=f"port it to a Taskset (verifiers 0.4, `vf-init {folder.name}`: its dataset becomes the "
                        "Taskset's load(), its rubric functions @vf.reward methods of its Task, and the config names "
                        "it as env.taskset.id), or train it with a prime-rl from before "
                        f"{DROPPED} (v0.8.0: `git checkout v0.8.0` in the checkout). {HOSTED}")
            for name, folder in v0]
