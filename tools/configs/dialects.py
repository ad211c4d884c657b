"""What each config dialect spells, and how the spellings moved between eras.

Three kinds of facts live here, as data:
- `SECTIONS`: the tables rlpilot models in each dialect and the keys they take. A table listed
  here is closed (any other key in it is an `unknown-key`); a table not listed is open (prime-rl
  passes it on, e.g. `[inference.vllm]` to vLLM, or it is environment-specific).
- `CHANGES`: every rename, move and removal between eras, with its date and PR, so that `check`
  can say what an old key became and `migrate` can apply it.
- `INTENTS` and `key_for(dialect, intent)`: the playbook's knobs and the key each dialect spells
  them with, for tools that reason about intents ("raise the learning rate") rather than keys.

Intents known to `key_for`: learning_rate, group_size, batch_size, max_async_level,
max_off_policy_steps, seq_len, temperature, max_tokens, max_steps, model, max_concurrent,
oversampling_factor, difficulty_filtering, num_train_gpus, num_infer_gpus. `key_for` returns None
when the dialect has no such key (e.g. `max_async_level` after prime-rl removed it); `KeyError`
for an intent it does not know.

Paths are dotted; `[]` marks the entries of an array of tables (`orchestrator.train.source[]`).
Facts: shared/research/prime-rl.md sections 0 and 2 (the key tables and the old -> new cheat
sheet), the transition-era `OrchestratorConfig` field list, and the fixtures of each era.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.configs.eras import Dialect, Variant

LAB, CLASSIC, TRANSITION, CURRENT = Dialect.HOSTED_LAB, Dialect.CLASSIC, Dialect.TRANSITION, Dialect.CURRENT

# Era order along prime-rl's releases; the lab-era format's successor is prime-rl-current.
RANK = {LAB: 0, CLASSIC: 0, TRANSITION: 1, CURRENT: 2}


def _keys(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Keys `prime train` reads itself and strips before shipping the config (prime 0.18.0
# `_CLI_ONLY_KEYS`, plus `name`, the run name).
_PRIME_TRAIN_KEYS = "name env_file env_files image_tag gpu_type volume volume_size source_ref type"
_DEPLOYMENT = _keys("type num_train_gpus num_infer_gpus gpus_per_node num_train_nodes num_infer_nodes "
                    "num_infer_replicas nodes_per_fsdp_group orchestrator_on_inference")
# Fields of the OrchestratorConfig of spring and summer 2026 (packages/prime-rl-configs), which the
# other eras are described against; an unknown-key is an error, so a field that may have left in
# between stays listed rather than risk flagging a valid config.
_ORCHESTRATOR_COMMON = ("model actor algorithms algo models train tokenizer renderer pool_size optim eval log "
                        "wandb prime_monitor collect_inference_metrics inference_metrics_roles ckpt "
                        "weight_broadcast rollout_transport output_dir tasks_per_minute batch_size "
                        "token_batch_size group_size seq_len num_train_workers max_steps max_off_policy_steps "
                        "bench heartbeat env_install_prerelease experimental client seed advantage "
                        "teacher_model teacher_rollout_model use_sft_loss enable_policy_updates use_token_client "
                        "use_renderer")

SECTIONS: dict[Dialect, dict[str, frozenset[str]]] = {
    LAB: {
        # prime CLI 0.6.26 `RLConfig`; late lab-cookbook files also carried `[[orchestrator.train.env]]`.
        "": _keys("name model loss teacher max_steps batch_size rollouts_per_example max_inflight_rollouts "
                  "learning_rate lora_alpha oversampling_factor checkpoint_id env sampling eval val "
                  "pre_batch_filters post_batch_filters wandb checkpoints adapters tailscale env_files "
                  "env_file orchestrator"),
        "sampling": _keys("max_tokens temperature temp_scheduler extra_body enable_thinking reasoning_effort"),
    },
    CLASSIC: {
        "": _keys("max_steps seq_len max_model_len max_async_level output_dir clean_output_dir dry_run bench model "
                  "tokenizer ckpt log wandb weight_broadcast deployment slurm env_vars trainer orchestrator "
                  "inference experimental inference_gpu_ids trainer_gpu_ids teacher_gpu_ids"),
        "orchestrator": _keys(_ORCHESTRATOR_COMMON + " rollouts_per_example sampling env val buffer "
                              "max_async_level strict_async_level oversampling_factor max_inflight_rollouts "
                              "max_concurrent workers_per_env verification lora_name filters"),
        "orchestrator.sampling": _keys("max_tokens temperature temp_scheduler min_tokens repetition_penalty "
                                       "seed top_p extra_body"),
        "orchestrator.buffer": _keys("seed env_ratios easy_threshold hard_threshold easy_fraction hard_fraction "
                                     "online_difficulty_filtering hash_keys"),
        "deployment": _DEPLOYMENT,
    },
    TRANSITION: {
        "": _keys("max_steps seq_len max_model_len output_dir clean_output_dir dry_run bench model tokenizer ckpt "
                  "log wandb file_monitor weight_broadcast rollout_transport deployment slurm env_vars trainer "
                  "orchestrator inference experimental"),
        # `env`, `sampling` and `rollouts_per_example` were deprecated aliases, still accepted.
        "orchestrator": _keys(_ORCHESTRATOR_COMMON + " env sampling rollouts_per_example oversampling_factor "
                              "max_inflight_rollouts pre_batch_filters post_batch_filters"),
        "orchestrator.train": _keys("env sampling max_retries num_workers"),
        "orchestrator.train.sampling": _keys("temperature max_completion_tokens max_tokens extra_body "
                                             "repetition_penalty min_tokens seed"),
        "orchestrator.eval": _keys("env sampling num_examples group_size rollouts_per_example max_retries interval "
                                   "skip_first_step"),
        "deployment": _DEPLOYMENT,
    },
    CURRENT: {
        "": _keys("max_steps seq_len max_model_len output_dir clean clean_output_dir dry_run bench model tokenizer "
                  "run ckpt resume log monitors wandb file_monitor weight_broadcast rollout_transport deployment "
                  "slurm env_vars trainer orchestrator inference experimental k8s " + _PRIME_TRAIN_KEYS),
        "orchestrator": _keys(_ORCHESTRATOR_COMMON + " concurrency oversampling_factor max_inflight_episodes "
                              "pre_batch_filters post_batch_filters"),
        "orchestrator.train": _keys("source sampling filter_zero_advantages max_retries"),
        "orchestrator.train.sampling": _keys("temperature max_completion_tokens extra_body"),
        "orchestrator.eval": _keys("source sampling num_examples group_size max_retries interval skip_first_step"),
        "orchestrator.concurrency": _keys("initial_inflight min_inflight max_inflight tasks_per_minute"),
        "monitors": _keys("wandb file prime"),
        "deployment": _DEPLOYMENT,
    },
}

# Spellings inside prime-rl-current that only one of v0.8.0 and main takes. Without a prime-rl
# checkout to pin the version both are accepted (DESIGN.md, "Config dialects").
VARIANT_ONLY: dict[str, Variant] = {
    "wandb": Variant.V080,
    "file_monitor": Variant.V080,
    "clean_output_dir": Variant.V080,
    "orchestrator.oversampling_factor": Variant.V080,
    "orchestrator.max_inflight_episodes": Variant.V080,
    "orchestrator.pre_batch_filters": Variant.V080,
    "orchestrator.post_batch_filters": Variant.V080,
    "inference.model": Variant.V080,
    "inference.parallel": Variant.V080,
    "monitors": Variant.MAIN,
    "clean": Variant.MAIN,
    "resume": Variant.MAIN,
    "run": Variant.MAIN,
    "orchestrator.concurrency": Variant.MAIN,
    "orchestrator.train.filter_zero_advantages": Variant.MAIN,
    "inference.vllm": Variant.MAIN,
}


@dataclass(frozen=True)
class Change:
    """One spelling that stopped working: `old` (as `origin` spelled it) became `new` in `target`.

    `new` is None when the key was removed without an exact successor; `hint` then says what to
    use instead. `alias` marks a rename whose old name `target` still accepted. `variant` marks a
    change inside prime-rl-current (v0.8.0 -> main). `convert` names a structural rewrite in
    `tools.configs.migrate` for changes that are more than a rename.
    """

    old: str
    new: str | None
    origin: Dialect
    target: Dialect
    why: str
    hint: str = ""
    alias: bool = False
    variant: Variant | None = None
    convert: str | None = None


# What replaces every removed async-level knob.
_STALENESS_HINT = "bound staleness with `orchestrator.max_off_policy_steps` (default 8)"
_ZERO_ADV_HINT = ("on main, `orchestrator.train.filter_zero_advantages` (on by default) drops zero-advantage "
                  "samples, and a per-source `curriculum.gates.<name>.type = \"advantage_range\"` rejects flat "
                  "groups and requests replacements; `curriculum.sampler.type = \"difficulty_pool\"` replaces "
                  "easy/hard pools")

CHANGES: tuple[Change, ...] = (
    # classic -> transition (2026-04 to 2026-06)
    Change("orchestrator.env", "orchestrator.train.env", CLASSIC, TRANSITION,
           "`[[orchestrator.env]]` moved under `[orchestrator.train]` (2026-04-19, prime-rl #2327)", alias=True,
           convert="env"),
    Change("orchestrator.sampling", "orchestrator.train.sampling", CLASSIC, TRANSITION,
           "`[orchestrator.sampling]` moved under `[orchestrator.train]` (2026-04-19, prime-rl #2327)", alias=True),
    Change("orchestrator.train.sampling.max_tokens", "orchestrator.train.sampling.max_completion_tokens",
           CLASSIC, TRANSITION, "`max_tokens` was renamed `max_completion_tokens` (2026-04-06, prime-rl #2206)",
           alias=True),
    Change("orchestrator.eval.sampling.max_tokens", "orchestrator.eval.sampling.max_completion_tokens",
           CLASSIC, TRANSITION, "`max_tokens` was renamed `max_completion_tokens` (2026-04-06, prime-rl #2206)",
           alias=True),
    Change("orchestrator.rollouts_per_example", "orchestrator.group_size", CLASSIC, TRANSITION,
           "`rollouts_per_example` was renamed `group_size` (2026-05-23, prime-rl #2599)", alias=True),
    Change("orchestrator.eval.env[].rollouts_per_example", "orchestrator.eval.env[].group_size", CLASSIC, TRANSITION,
           "`rollouts_per_example` was renamed `group_size` (2026-05-23, prime-rl #2599)", alias=True),
    Change("orchestrator.buffer", None, CLASSIC, TRANSITION,
           "the difficulty buffer was removed with orchestrator v2 (2026-06-01, prime-rl #2639)",
           hint="v0.6-v0.8: `[[orchestrator.pre_batch_filters]] type = \"zero_advantage\"` with "
                "`enforce = true` replaces `online_difficulty_filtering`; " + _ZERO_ADV_HINT),
    Change("orchestrator.max_async_level", None, CLASSIC, TRANSITION,
           "`max_async_level` was removed; the async lag is fixed at 1 (2026-05-25, prime-rl #2631)",
           hint=_STALENESS_HINT),
    Change("max_async_level", None, CLASSIC, TRANSITION,
           "the shared `max_async_level` was removed; the async lag is fixed at 1 (2026-05-25, prime-rl #2631)",
           hint=_STALENESS_HINT),
    Change("trainer.max_async_level", None, CLASSIC, TRANSITION,
           "the trainer's `max_async_level` was removed; the async lag is fixed at 1 (2026-05-25, prime-rl #2631)",
           hint=_STALENESS_HINT),
    Change("orchestrator.strict_async_level", None, CLASSIC, TRANSITION,
           "`strict_async_level` was removed with `max_async_level` (2026-05-25, prime-rl #2631)",
           hint=_STALENESS_HINT),
    Change("orchestrator.max_concurrent", None, CLASSIC, TRANSITION,
           "the per-env `max_concurrent` cap was removed (2026-04-09, prime-rl #2193)",
           hint="cap in-flight rollouts with `orchestrator.max_inflight_rollouts` (v0.6-v0.7) or "
                "`[orchestrator.concurrency] max_inflight` (main)"),
    Change("orchestrator.workers_per_env", None, CLASSIC, TRANSITION,
           "`workers_per_env` was removed (2026-02-09, prime-rl #1714)",
           hint="size env workers per environment (`num_workers`, now the verifiers `serve.pool` block)"),
    Change("inference_gpu_ids", "deployment.num_infer_gpus", CLASSIC, TRANSITION,
           "GPU id lists became counts in `[deployment]` (2026-02-24, prime-rl #1859); inference takes the "
           "first GPUs, the trainer the next ones", convert="gpu_ids"),
    Change("trainer_gpu_ids", "deployment.num_train_gpus", CLASSIC, TRANSITION,
           "GPU id lists became counts in `[deployment]` (2026-02-24, prime-rl #1859); inference takes the "
           "first GPUs, the trainer the next ones", convert="gpu_ids"),
    # transition -> current (2026-07-29, "remove every config shim", prime-rl #3156)
    Change("orchestrator.train.env", "orchestrator.train.source", TRANSITION, CURRENT,
           "environments became `[[orchestrator.train.source]]` with verifiers `env.taskset` / `env.agent` "
           "blocks (2026-07-29, prime-rl #3150)", convert="source"),
    Change("orchestrator.eval.env", "orchestrator.eval.source", TRANSITION, CURRENT,
           "eval environments became `[[orchestrator.eval.source]]` (2026-07-29, prime-rl #3150)", convert="source"),
    Change("orchestrator.train.num_workers", None, TRANSITION, CURRENT,
           "env workers moved to each source's verifiers `serve` block (2026-07-29 to 2026-08-08, prime-rl #3150, "
           "#3218)", hint="set `serve.pool = { type = \"static\", num_workers = N }` on a source, or leave the "
           "elastic default"),
    Change("orchestrator.max_inflight_rollouts", "orchestrator.max_inflight_episodes", TRANSITION, CURRENT,
           "`max_inflight_rollouts` was renamed `max_inflight_episodes` (2026-07-29, prime-rl #3150)"),
    # inside current: v0.8.0 -> main
    Change("orchestrator.max_inflight_episodes", "orchestrator.concurrency.max_inflight", CURRENT, CURRENT,
           "in-flight limits moved to `[orchestrator.concurrency]` (2026-08-19, prime-rl #3285)",
           variant=Variant.MAIN),
    Change("orchestrator.oversampling_factor", "orchestrator.concurrency.initial_inflight", CURRENT, CURRENT,
           "`oversampling_factor` was removed (2026-08-19, prime-rl #3285): the rollouts it kept in flight "
           "(batch_size x factor) start the adaptive controller as `initial_inflight`, and `max_inflight` "
           "(default 1024) is raised to match, as prime-rl's own examples were migrated",
           variant=Variant.MAIN, convert="oversampling"),
    Change("wandb", "monitors.wandb", CURRENT, CURRENT,
           "`[wandb]` moved to `[monitors.wandb]` (2026-08-15, prime-rl #3275)", variant=Variant.MAIN),
    Change("file_monitor", "monitors.file", CURRENT, CURRENT,
           "`[file_monitor]` moved to `[monitors.file]` (2026-08-15, prime-rl #3275)", variant=Variant.MAIN),
    Change("clean_output_dir", "clean", CURRENT, CURRENT,
           "`clean_output_dir` was renamed `clean` (2026-08-13, prime-rl #3268)", variant=Variant.MAIN),
    Change("inference.model", "inference.vllm", CURRENT, CURRENT,
           "`[inference.model]` and `[inference.parallel]` became `[inference.vllm]` with vLLM's own argument "
           "names (2026-08-08, prime-rl #3202)", variant=Variant.MAIN, convert="vllm"),
    Change("inference.parallel", "inference.vllm", CURRENT, CURRENT,
           "`[inference.parallel] tp/dp` became `[inference.vllm] tensor_parallel_size/data_parallel_size` "
           "(2026-08-08, prime-rl #3202)", variant=Variant.MAIN, convert="vllm"),
    Change("orchestrator.pre_batch_filters", None, CURRENT, CURRENT,
           "pre-batch filters were replaced by curricula and `filter_zero_advantages` (2026-08-18, prime-rl #3261)",
           hint=_ZERO_ADV_HINT, variant=Variant.MAIN, convert="filters"),
    Change("orchestrator.post_batch_filters", None, CURRENT, CURRENT,
           "post-batch filters were replaced by curricula and `filter_zero_advantages` (2026-08-18, "
           "prime-rl #3261)", hint=_ZERO_ADV_HINT, variant=Variant.MAIN),
    # hosted-lab -> current: `prime train` 0.18.0 refuses the shared-LoRA format
    Change("model", "model.name", LAB, CURRENT, "the model is `[model] name` in prime-rl configs",
           convert="lab"),
    Change("batch_size", "orchestrator.batch_size", LAB, CURRENT, "the batch is the orchestrator's",
           convert="lab"),
    Change("rollouts_per_example", "orchestrator.group_size", LAB, CURRENT,
           "rollouts per example are `orchestrator.group_size` in prime-rl configs", convert="lab"),
    Change("learning_rate", "trainer.optim.lr", LAB, CURRENT, "the learning rate is the trainer's optimizer's",
           convert="lab"),
    Change("max_inflight_rollouts", "orchestrator.concurrency.max_inflight", LAB, CURRENT,
           "in-flight limits are `[orchestrator.concurrency]` in prime-rl configs", convert="lab"),
    Change("oversampling_factor", "orchestrator.concurrency.initial_inflight", LAB, CURRENT,
           "the rollouts the factor kept in flight (batch_size x factor) start prime-rl's adaptive controller as "
           "`initial_inflight`, and `max_inflight` (default 1024) is raised to match", convert="lab"),
    Change("sampling", "orchestrator.train.sampling", LAB, CURRENT,
           "sampling is `[orchestrator.train.sampling]` in prime-rl configs", convert="lab"),
    Change("sampling.max_tokens", "orchestrator.train.sampling.max_completion_tokens", LAB, CURRENT,
           "`max_tokens` is `max_completion_tokens` in prime-rl configs", convert="lab"),
    Change("env", "orchestrator.train.source", LAB, CURRENT,
           "environments are `[[orchestrator.train.source]]` in prime-rl configs", convert="lab"),
    Change("wandb", "monitors.wandb", LAB, CURRENT, "W&B is `[monitors.wandb]` in prime-rl configs",
           convert="lab"),
    Change("loss", None, LAB, CURRENT, "prime-rl configs have no loss switch; `loss = \"rl\"` is what they do",
           hint="for SFT or distillation use prime-rl's SFT config (`prime train --sft`)", convert="lab"),
    Change("teacher", None, LAB, CURRENT, "the lab-era teacher (sft/opd losses) has no prime-rl RL successor",
           hint="distill with an SFT run first, then train with RL", convert="lab"),
    Change("checkpoint_id", None, LAB, CURRENT, "runs no longer start from a lab checkpoint id",
           hint="continue a hosted run with `prime train CONFIG --resume-from RUN_ID`", convert="lab"),
    Change("checkpoints", None, LAB, CURRENT, "checkpointing is prime-rl's `[ckpt]` table",
           hint="add `[ckpt]` (at the end) or `[ckpt] interval = N`", convert="lab"),
    Change("eval", None, LAB, CURRENT, "evals are `[orchestrator.eval]` with `[[orchestrator.eval.source]]` entries",
           hint="add `[orchestrator.eval] interval = N` and one `[[orchestrator.eval.source]]` per eval environment",
           convert="lab"),
    Change("val", None, LAB, CURRENT, "there is no separate validation block in prime-rl configs",
           hint="use an `[[orchestrator.eval.source]]` on held-out data", convert="lab"),
    Change("pre_batch_filters", None, LAB, CURRENT, "rollout filters became curricula", hint=_ZERO_ADV_HINT,
           convert="lab"),
    Change("post_batch_filters", None, LAB, CURRENT, "rollout filters became curricula", hint=_ZERO_ADV_HINT,
           convert="lab"),
    Change("adapters", None, LAB, CURRENT, "shared-LoRA adapters are gone with shared LoRA training",
           hint="a prime-rl run saves DCP checkpoints under `[ckpt]`", convert="lab"),
    Change("tailscale", None, LAB, CURRENT, "the lab-era tailscale block has no successor in prime-rl configs",
           hint="remove it", convert="lab"),
    Change("lora_alpha", None, LAB, CURRENT,
           "Hosted Training runs every job as a dedicated full fine-tune now; there is no shared LoRA",
           hint="for LoRA with your own prime-rl, set `[trainer.model.lora] rank` and `alpha`", convert="lab"),
)

INTENTS: dict[str, dict[Dialect, str | None]] = {
    "learning_rate": {LAB: "learning_rate", CLASSIC: "trainer.optim.lr", TRANSITION: "trainer.optim.lr",
                      CURRENT: "trainer.optim.lr"},
    "group_size": {LAB: "rollouts_per_example", CLASSIC: "orchestrator.rollouts_per_example",
                   TRANSITION: "orchestrator.group_size", CURRENT: "orchestrator.group_size"},
    "batch_size": {LAB: "batch_size", CLASSIC: "orchestrator.batch_size", TRANSITION: "orchestrator.batch_size",
                   CURRENT: "orchestrator.batch_size"},
    "max_async_level": {LAB: None, CLASSIC: "orchestrator.max_async_level", TRANSITION: None, CURRENT: None},
    "max_off_policy_steps": {LAB: None, CLASSIC: "orchestrator.max_off_policy_steps",
                             TRANSITION: "orchestrator.max_off_policy_steps",
                             CURRENT: "orchestrator.max_off_policy_steps"},
    "seq_len": {LAB: None, CLASSIC: "seq_len", TRANSITION: "seq_len", CURRENT: "seq_len"},
    "temperature": {LAB: "sampling.temperature", CLASSIC: "orchestrator.sampling.temperature",
                    TRANSITION: "orchestrator.train.sampling.temperature",
                    CURRENT: "orchestrator.train.sampling.temperature"},
    "max_tokens": {LAB: "sampling.max_tokens", CLASSIC: "orchestrator.sampling.max_tokens",
                   TRANSITION: "orchestrator.train.sampling.max_completion_tokens",
                   CURRENT: "orchestrator.train.sampling.max_completion_tokens"},
    "max_steps": {LAB: "max_steps", CLASSIC: "max_steps", TRANSITION: "max_steps", CURRENT: "max_steps"},
    "model": {LAB: "model", CLASSIC: "model.name", TRANSITION: "model.name", CURRENT: "model.name"},
    "max_concurrent": {LAB: "max_inflight_rollouts", CLASSIC: "orchestrator.max_concurrent",
                       TRANSITION: "orchestrator.max_inflight_rollouts",
                       CURRENT: "orchestrator.concurrency.max_inflight"},
    "oversampling_factor": {LAB: "oversampling_factor", CLASSIC: "orchestrator.oversampling_factor",
                            TRANSITION: "orchestrator.oversampling_factor", CURRENT: None},
    "difficulty_filtering": {LAB: None, CLASSIC: "orchestrator.buffer.online_difficulty_filtering",
                             TRANSITION: None, CURRENT: "orchestrator.train.filter_zero_advantages"},
    "num_train_gpus": {LAB: None, CLASSIC: "deployment.num_train_gpus", TRANSITION: "deployment.num_train_gpus",
                       CURRENT: "deployment.num_train_gpus"},
    "num_infer_gpus": {LAB: None, CLASSIC: "deployment.num_infer_gpus", TRANSITION: "deployment.num_infer_gpus",
                       CURRENT: "deployment.num_infer_gpus"},
}


def key_for(dialect: Dialect | str, intent: str) -> str | None:
    """The dotted key `dialect` spells `intent` with, or None when that dialect has none."""
    return INTENTS[intent][Dialect(dialect)]


# Types prime-rl (or the lab CLI) validates, for the keys whose type rlpilot relies on.
INT, FLOAT, BOOL, STR = "an integer", "a number", "true or false", "a string"
KEY_TYPES: dict[str, str] = {
    **{key: INT for key in (
        "max_steps", "seq_len", "batch_size", "rollouts_per_example", "max_inflight_rollouts",
        "orchestrator.batch_size", "orchestrator.token_batch_size", "orchestrator.group_size",
        "orchestrator.rollouts_per_example", "orchestrator.seq_len", "orchestrator.max_steps",
        "orchestrator.max_async_level", "orchestrator.max_off_policy_steps", "orchestrator.max_concurrent",
        "orchestrator.workers_per_env", "orchestrator.max_inflight_rollouts", "orchestrator.max_inflight_episodes",
        "orchestrator.concurrency.initial_inflight", "orchestrator.concurrency.min_inflight",
        "orchestrator.concurrency.max_inflight", "orchestrator.sampling.max_tokens",
        "orchestrator.train.sampling.max_tokens", "orchestrator.train.sampling.max_completion_tokens",
        "sampling.max_tokens", "trainer.max_steps", "trainer.model.seq_len",
        "deployment.num_train_gpus", "deployment.num_infer_gpus", "deployment.gpus_per_node",
    )},
    **{key: FLOAT for key in (
        "learning_rate", "lora_alpha", "oversampling_factor", "orchestrator.oversampling_factor",
        "trainer.optim.lr", "trainer.optim.weight_decay", "sampling.temperature",
        "orchestrator.sampling.temperature", "orchestrator.train.sampling.temperature",
        "orchestrator.buffer.easy_threshold", "orchestrator.buffer.hard_threshold",
    )},
    **{key: BOOL for key in (
        "orchestrator.buffer.online_difficulty_filtering", "orchestrator.train.filter_zero_advantages",
    )},
    **{key: STR for key in ("model.name", "trainer.model.name", "orchestrator.model.name")},
}


def type_ok(expected: str, value: object) -> bool:
    if expected == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == FLOAT:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == BOOL:
        return isinstance(value, bool)
    return isinstance(value, str)
