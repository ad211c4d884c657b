"""Every tool, listed once.

This module imports nothing heavy on purpose: `rlpilot --help` reads it to list the commands
without importing pydantic or any tool's dependencies. `tools.contract.load` imports a tool's
function when it is actually used.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Effect(StrEnum):
    """What calling a tool does to the world; the gate layer asks first for `external`."""

    READ = "read"
    LOCAL_WRITE = "local-write"
    EXTERNAL = "external"


@dataclass(frozen=True)
class ToolEntry:
    name: str  # the agent's tool name, e.g. "config_check"
    command: tuple[str, ...]  # the CLI path, e.g. ("config", "check")
    target: str  # "module:function"
    effect: Effect
    summary: str


CATALOG: tuple[ToolEntry, ...] = (
    ToolEntry(
        "stack_info",
        ("stack",),
        "tools.stack:stack_info",
        Effect.READ,
        "Which parts of the training stack are installed and what they can do.",
    ),
    ToolEntry(
        "config_check",
        ("config", "check"),
        "tools.configs.lint:config_check",
        Effect.READ,
        "Check a training config in its dialect: playbook rules, prime-rl's validators, old or unknown keys.",
    ),
    ToolEntry(
        "config_set",
        ("config", "set"),
        "tools.configs.edit:config_set",
        Effect.LOCAL_WRITE,
        "Set dotted keys of a config, keeping the rest byte for byte; refuses edits that add errors.",
    ),
    ToolEntry(
        "config_migrate",
        ("config", "migrate"),
        "tools.configs.migrate:config_migrate",
        Effect.LOCAL_WRITE,
        "Rewrite a config for another dialect, listing every rename and every key left for you to redo.",
    ),
    ToolEntry(
        "config_tune",
        ("config", "tune"),
        "tools.configs.tune:config_tune",
        Effect.LOCAL_WRITE,
        "Propose the playbook's hyperparameter deltas for a config, each with its reason; --apply writes them.",
    ),
    ToolEntry(
        "config_restore",
        ("config", "restore"),
        "tools.configs.edit:config_restore",
        Effect.LOCAL_WRITE,
        "Put back the version of a config from before the last rlpilot edit.",
    ),
    ToolEntry(
        "diagnose",
        ("diagnose",),
        "tools.diagnose.tool:diagnose",
        Effect.READ,
        "Read a run's metrics or logs and name what is going wrong, the config deltas, and when to stop.",
    ),
    ToolEntry(
        "eval_run",
        ("eval", "run"),
        "tools.evals.run:eval_run",
        Effect.EXTERNAL,
        "Smoke-eval an environment with a model (local vf-eval, or hosted), then summarize its rewards.",
    ),
    ToolEntry(
        "env_check",
        ("env", "check"),
        "tools.envs.check:env_check",
        Effect.READ,
        "Check an environment before spending a model: gold/no-op validation, keyword-heuristic rewards, "
        "background services.",
    ),
    ToolEntry(
        "eval_summarize",
        ("eval", "summarize"),
        "tools.evals.summarize:eval_summarize",
        Effect.READ,
        "Summarize an eval run's rewards per example group and judge whether it is ready for RL.",
    ),
    ToolEntry(
        "eval_samples",
        ("eval", "samples"),
        "tools.evals.samples:eval_samples",
        Effect.READ,
        "Show a few rollouts of an eval run (prompt, reply, reward, errors): worst, best or random.",
    ),
    ToolEntry(
        "env_install",
        ("env", "install"),
        "tools.envs.hub:env_install",
        Effect.LOCAL_WRITE,
        "Install an environment (local name or Hub id owner/name[@version]) into the workspace.",
    ),
    ToolEntry(
        "env_status",
        ("env", "status"),
        "tools.envs.hub:env_status",
        Effect.READ,
        "An environment's visibility and latest version on the Environments Hub.",
    ),
    ToolEntry(
        "env_push",
        ("env", "push"),
        "tools.envs.hub:env_push",
        Effect.EXTERNAL,
        "Check an environment package and push it to the Hub with the visibility the user chose.",
    ),
    ToolEntry(
        "train_launch",
        ("train", "launch"),
        "tools.training.launch:train_launch",
        Effect.EXTERNAL,
        "Check a training config and launch it on Hosted Training or local GPUs, after the user confirms.",
    ),
    ToolEntry(
        "train_status",
        ("train", "status"),
        "tools.training.runs:train_status",
        Effect.READ,
        "Where a training run stands: running or not, last step, latest reward and other metrics.",
    ),
    ToolEntry(
        "train_metrics",
        ("train", "metrics"),
        "tools.training.runs:train_metrics",
        Effect.READ,
        "Fetch a run's metrics (saved for `diagnose`) and their latest values.",
    ),
    ToolEntry(
        "train_logs",
        ("train", "logs"),
        "tools.training.runs:train_logs",
        Effect.READ,
        "The last lines of a run's logs (orchestrator, trainer, inference or env-server).",
    ),
    ToolEntry(
        "train_stop",
        ("train", "stop"),
        "tools.training.runs:train_stop",
        Effect.EXTERNAL,
        "Stop a training run (hosted, or a local run's whole process group).",
    ),
    ToolEntry(
        "train_watch",
        ("train", "watch"),
        "tools.training.watch:train_watch",
        Effect.READ,
        "Follow a run: new findings, spend against a budget, stalls; ends with the stop question when needed.",
    ),
    ToolEntry(
        "train_usage",
        ("train", "usage"),
        "tools.training.spend:train_usage",
        Effect.READ,
        "A hosted run's spend so far, per step, and projected at max_steps.",
    ),
    ToolEntry(
        "train_rollouts",
        ("train", "rollouts"),
        "tools.training.rollouts:train_rollouts",
        Effect.READ,
        "A hosted run's sampled rollouts at a step, reward/advantage histograms, reward-hacking signs.",
    ),
    ToolEntry(
        "train_components",
        ("train", "components"),
        "tools.training.runs:train_components",
        Effect.READ,
        "A hosted run's parts and their status.",
    ),
    ToolEntry(
        "train_restart",
        ("train", "restart"),
        "tools.training.runs:train_restart",
        Effect.EXTERNAL,
        "Restart a running hosted run from its latest checkpoint.",
    ),
    ToolEntry(
        "train_eval",
        ("train", "eval"),
        "tools.training.serve:train_eval",
        Effect.EXTERNAL,
        "Serve a local checkpoint, smoke-eval it with `eval run`, then stop the server.",
    ),
    ToolEntry(
        "train_checkpoints",
        ("train", "checkpoints"),
        "tools.training.runs:train_checkpoints",
        Effect.READ,
        "A run's checkpoints: step, status and where they are.",
    ),
    ToolEntry(
        "train_pause",
        ("train", "pause"),
        "tools.training.runs:train_pause",
        Effect.EXTERNAL,
        "Pause a hosted run at a checkpoint and release its GPUs (it resumes as a new run).",
    ),
    ToolEntry(
        "train_resume",
        ("train", "resume"),
        "tools.training.runs:train_resume",
        Effect.EXTERNAL,
        "Resume a paused hosted run from its checkpoint, as a new run.",
    ),
    ToolEntry(
        "metrics_plot",
        ("plot",),
        "tools.diagnose.plot:plot_metrics",
        Effect.LOCAL_WRITE,
        "Draw a run's main curves (reward, entropy, length, KL, grad norm) to a PNG file.",
    ),
    ToolEntry(
        "report",
        ("report",),
        "agent.report:report",
        Effect.READ,
        "The session's four-part report: deltas applied, why, observed metrics, next step and stop conditions.",
    ),
)

# One-line descriptions of the command groups, for `rlpilot --help` and `rlpilot GROUP`.
GROUPS: dict[str, str] = {
    "config": "Check, edit, tune and migrate training configs.",
    "eval": "Smoke-eval environments and judge their rewards.",
    "env": "Check, install and publish environments.",
    "train": "Launch and follow training runs.",
}


def find(command: list[str]) -> tuple[ToolEntry | None, int]:
    """The entry whose command path is the longest prefix of `command`, and that length."""
    best: tuple[ToolEntry | None, int] = (None, 0)
    for entry in CATALOG:
        size = len(entry.command)
        if tuple(command[:size]) == entry.command and size > best[1]:
            best = (entry, size)
    return best


def by_name(name: str) -> ToolEntry:
    for entry in CATALOG:
        if entry.name == name:
            return entry
    raise KeyError(name)
