"""Every tool of tools/, listed once. The agent reads them with its own added
(agent/chat/catalog.py): nothing here names the agent's code, so import-linter sees every arrow.

This module imports nothing heavy on purpose: `rlpilot --help` reads it to list the commands
without importing pydantic or any tool's dependencies. `tools.framework.contract.load` imports a tool's
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


class Shows(StrEnum):
    """What a surface shows of a result besides its text."""

    TEXT = "text"
    CURVES = "curves"  # the curves of the run the result is about (its `source`)
    IMAGE = "image"  # the picture file the tool wrote (its `output`)
    REPORT = "report"  # the four-part report, shown whole


class Offer(StrEnum):
    """How a tool is offered to a language model; a person's slash commands reach every tool."""

    COMPACT = "compact"  # in every tool set, the compact one for a small context too: the playbook's path
    DEFAULT = "default"  # its schema goes with every request
    BY_NAME = "by-name"  # named in a line of the system prompt; its schema goes once the model calls it


class Evidence(StrEnum):
    """What the report takes from a recorded result."""

    EVAL = "eval"  # an eval summary: verdict, rewards, recommendations
    RUN = "run"  # a diagnosis of a training run
    EDIT = "edit"  # config deltas the tool wrote
    PROPOSAL = "proposal"  # config deltas proposed, written only when the call applied them
    CHECK = "check"  # a config check
    SPEND = "spend"  # what a hosted run has cost so far


class Done(StrEnum):
    """The action a call that went through is, in the words an answer claims it with ("launched run r-1")."""

    LAUNCHED = "launched"
    PUSHED = "pushed"
    INSTALLED = "installed"
    STOPPED = "stopped"
    EVALUATED = "evaluated"


@dataclass(frozen=True)
class Resource:
    """The tool's result as an MCP resource an IDE can attach: rlpilot://<path>."""

    path: str  # e.g. "config-check/{+path}": one `{+field}` names the tool's input field it fills
    description: str


@dataclass(frozen=True)
class ToolEntry:
    """One tool, and everything the agent and the surfaces need to know about it.

    The gate is declared here and on the input fields (`Arg(asks=...)`): an `external` tool is
    confirmed by the user unless `confirm=False` says that a field's question is its confirmation.
    """

    name: str  # the agent's tool name, e.g. "config_check"
    command: tuple[str, ...]  # the CLI path, e.g. ("config", "check")
    target: str  # "module:function"
    effect: Effect
    summary: str
    slash: str | None = None  # the chat command that runs it with CLI arguments, e.g. "/check"
    shows: Shows = Shows.TEXT
    evidence: Evidence | None = None
    confirm: bool | None = None  # default: external tools are confirmed
    preview: str | None = None  # "module:function" showing what a call would do (default: the tool without `yes`)
    # "module:function" a chat runs for the slash command instead, in the background of the conversation;
    # a chat is the agent's, so the agent sets it (agent/chat/catalog.py)
    background: str | None = None
    resource: Resource | None = None
    offer: Offer = Offer.DEFAULT
    done: Done | None = None  # what the answer check lets a final answer claim once a call went through

    @property
    def confirms(self) -> bool:
        return self.effect is Effect.EXTERNAL if self.confirm is None else self.confirm


TOOLS: tuple[ToolEntry, ...] = (
    ToolEntry(
        "stack_info",
        ("stack",),
        "tools.stack.info:stack_info",
        Effect.READ,
        "Which parts of the training stack are installed and what they can do.",
        slash="/stack",
        resource=Resource("stack", "The user's installed stack: versions, what works, the config dialect to write."),
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "config_check",
        ("config", "check"),
        "tools.configs.lint:config_check",
        Effect.READ,
        "Check a training config as its kind and era: playbook rules, prime-rl's own schema, stale keys.",
        slash="/check", evidence=Evidence.CHECK,
        resource=Resource("config-check/{+path}", "A training config's check: its kind, era and findings with fixes "
                          "(path inside the workspace)."),
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "config_set",
        ("config", "set"),
        "tools.configs.edit:config_set",
        Effect.LOCAL_WRITE,
        "Set dotted keys of a config, keeping the rest byte for byte; refuses edits that add errors.",
        slash="/set", evidence=Evidence.EDIT,
    ),
    ToolEntry(
        "config_migrate",
        ("config", "migrate"),
        "tools.configs.migrate:config_migrate",
        Effect.LOCAL_WRITE,
        "Rewrite a config for another dialect, listing every rename and every key left for you to redo.",
        slash="/migrate", evidence=Evidence.EDIT,
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "config_tune",
        ("config", "tune"),
        "tools.configs.tune:config_tune",
        Effect.LOCAL_WRITE,
        "Propose the playbook's hyperparameter deltas for a config, each with its reason.",
        slash="/tune", evidence=Evidence.PROPOSAL,
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "config_restore",
        ("config", "restore"),
        "tools.configs.edit:config_restore",
        Effect.LOCAL_WRITE,
        "Put back the version of a config from before the last rlpilot edit.",
        slash="/restore", evidence=Evidence.EDIT,
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "diagnose",
        ("diagnose",),
        "tools.diagnose.tool:diagnose",
        Effect.READ,
        "Name what is going wrong in a run's metrics or logs, with config deltas and when to stop.",
        slash="/diagnose", shows=Shows.CURVES, evidence=Evidence.RUN,
        resource=Resource("diagnosis/{+source}", "A run's diagnosis: what is going wrong, from when, the deltas and "
                          "stop conditions (a hosted run id, a run folder or a metrics file)."),
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "eval_run",
        ("eval", "run"),
        "tools.evals.run:eval_run",
        Effect.EXTERNAL,
        "Smoke-eval an environment with a model, locally or hosted, then summarize its rewards.",
        slash="/eval", evidence=Evidence.EVAL, preview="tools.evals.run:eval_plan",
        offer=Offer.COMPACT,
        done=Done.EVALUATED,
    ),
    ToolEntry(
        "env_check",
        ("env", "check"),
        "tools.envs.check:env_check",
        Effect.READ,
        "Check an environment before spending a model: gold/no-op validation, reward shortcuts, services.",
        slash="/envcheck",
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "eval_summarize",
        ("eval", "summarize"),
        "tools.evals.summarize:eval_summarize",
        Effect.READ,
        "Summarize an eval run's rewards per example group and judge whether it is ready for RL.",
        slash="/summarize", evidence=Evidence.EVAL,
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "eval_samples",
        ("eval", "samples"),
        "tools.evals.samples:eval_samples",
        Effect.READ,
        "Show a few rollouts of an eval run: prompt, reply, reward, errors.",
        slash="/samples",
    ),
    ToolEntry(
        "env_install",
        ("env", "install"),
        "tools.envs.hub:env_install",
        Effect.LOCAL_WRITE,
        "Install an environment into the workspace.",
        slash="/install", confirm=True, preview="tools.envs.hub:install_preview",
        done=Done.INSTALLED,
    ),
    ToolEntry(
        "env_status",
        ("env", "status"),
        "tools.envs.hub:env_status",
        Effect.READ,
        "An environment's visibility and latest version on the Environments Hub.",
        slash="/envstatus",
    ),
    ToolEntry(
        "env_push",
        ("env", "push"),
        "tools.envs.hub:env_push",
        Effect.EXTERNAL,
        "Check an environment package and push it to the Hub.",
        slash="/push", confirm=False, preview="tools.envs.hub:push_preview",
        offer=Offer.COMPACT,
        done=Done.PUSHED,
    ),
    ToolEntry(
        "train_launch",
        ("train", "launch"),
        "tools.training.launch:train_launch",
        Effect.EXTERNAL,
        "Check a training config and launch it, after the user confirms.",
        slash="/train",
        offer=Offer.COMPACT,
        done=Done.LAUNCHED,
    ),
    ToolEntry(
        "train_status",
        ("train", "status"),
        "tools.training.runs:train_status",
        Effect.READ,
        "Where a training run stands: running or not, last step, latest reward and other metrics.",
        slash="/status", shows=Shows.CURVES,
        offer=Offer.COMPACT,
    ),
    ToolEntry(
        "train_metrics",
        ("train", "metrics"),
        "tools.training.runs:train_metrics",
        Effect.READ,
        "Fetch a run's metrics (saved for `diagnose`) and their latest values.",
        slash="/metrics", shows=Shows.CURVES,
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "train_logs",
        ("train", "logs"),
        "tools.training.runs:train_logs",
        Effect.READ,
        "The last lines of a run's logs.",
        slash="/logs",
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "train_stop",
        ("train", "stop"),
        "tools.training.runs:train_stop",
        Effect.EXTERNAL,
        "Stop a training run (hosted, a local run's whole process group, or a SLURM job).",
        slash="/stop",
        done=Done.STOPPED,
    ),
    ToolEntry(
        "train_watch",
        ("train", "watch"),
        "tools.training.watch:train_watch",
        Effect.READ,
        "Follow a run: new findings, spend against a budget, stalls; ends with the stop question when needed.",
        slash="/watch", evidence=Evidence.SPEND,
    ),
    ToolEntry(
        "train_usage",
        ("train", "usage"),
        "tools.training.spend:train_usage",
        Effect.READ,
        "A hosted run's spend so far, per step, and projected at max_steps.",
        slash="/usage", evidence=Evidence.SPEND,
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "train_rollouts",
        ("train", "rollouts"),
        "tools.training.rollouts:train_rollouts",
        Effect.READ,
        "A hosted run's sampled rollouts at a step, reward/advantage histograms, reward-hacking signs.",
        slash="/rollouts",
    ),
    ToolEntry(
        "train_components",
        ("train", "components"),
        "tools.training.runs:train_components",
        Effect.READ,
        "A hosted run's parts and their status.",
        slash="/components",
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "train_restart",
        ("train", "restart"),
        "tools.training.runs:train_restart",
        Effect.EXTERNAL,
        "Restart a running hosted run from its latest checkpoint.",
        slash="/restart",
        offer=Offer.BY_NAME,
        done=Done.LAUNCHED,
    ),
    ToolEntry(
        "train_eval",
        ("train", "eval"),
        "tools.training.serve:train_eval",
        Effect.EXTERNAL,
        "Serve a local checkpoint, smoke-eval it with `eval run`, then stop the server.",
        offer=Offer.BY_NAME,
        done=Done.EVALUATED,
    ),
    ToolEntry(
        "train_checkpoints",
        ("train", "checkpoints"),
        "tools.training.runs:train_checkpoints",
        Effect.READ,
        "A run's checkpoints: step, status and where they are.",
        slash="/checkpoints",
        offer=Offer.BY_NAME,
    ),
    ToolEntry(
        "train_pause",
        ("train", "pause"),
        "tools.training.runs:train_pause",
        Effect.EXTERNAL,
        "Pause a hosted run at a checkpoint and release its GPUs.",
        offer=Offer.BY_NAME,
        done=Done.STOPPED,
    ),
    ToolEntry(
        "train_resume",
        ("train", "resume"),
        "tools.training.runs:train_resume",
        Effect.EXTERNAL,
        "Resume a paused hosted run from its checkpoint, as a new run.",
        offer=Offer.BY_NAME,
        done=Done.LAUNCHED,
    ),
    ToolEntry(
        "metrics_plot",
        ("plot",),
        "tools.diagnose.plot:plot_metrics",
        Effect.LOCAL_WRITE,
        "Draw a run's main curves (reward, entropy, length, KL, grad norm) to a PNG file.",
        slash="/plot", shows=Shows.IMAGE,
        offer=Offer.BY_NAME,
    ),
)

# One-line descriptions of the command groups, for `rlpilot --help` and `rlpilot GROUP`.
GROUPS: dict[str, str] = {
    "config": "Check, edit, tune and migrate training configs.",
    "eval": "Smoke-eval environments and judge their rewards.",
    "env": "Check, install and publish environments.",
    "train": "Launch and follow training runs.",
}
