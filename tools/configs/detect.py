"""What a config is (its kind) and which dialect it is written in.

The kind is the one whose schema, in any era, knows the most of the file's keys (a tie goes to
the kind its name says, else to a full rl config); a partial rl or sft file beside its base is
an overlay, judged as the stack. The dialect is read from the keys: each era has spellings no
other era used (prime-rl.md section 6, "Pin and detect the schema era"); where those tie, the
era whose schema knows more of the keys wins. What the installed stack expects is
`tools.stack.installed`'s.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.configs import history
from tools.configs.dialects import LAB_SECTIONS, PRIME_TRAIN_KEYS
from tools.configs.document import is_table_array, lookup
from tools.configs.keytables import misfit
from tools.configs.keytables import snake as keytables_snake
from tools.configs.launch import find_launch
from tools.framework.eras import (
    Dialect,
    Kind,
)
from tools.framework.errors import BadInput
from tools.io import files

# (dialect, weight, test, what it shows): a weight 3 sign belongs to one era only.
_SIGNS: tuple[tuple[Dialect, int, str, str], ...] = (
    (Dialect.HOSTED_LAB, 3, "model:str", "a top-level `model = \"...\"`"),
    (Dialect.HOSTED_LAB, 3, "env:array", "a top-level `[[env]]`"),
    (Dialect.HOSTED_LAB, 2, "rollouts_per_example", "a top-level `rollouts_per_example`"),
    (Dialect.HOSTED_LAB, 1, "batch_size", "a top-level `batch_size`"),
    (Dialect.HOSTED_LAB, 2, "sampling", "a top-level `[sampling]`"),
    (Dialect.HOSTED_LAB, 2, "learning_rate", "a top-level `learning_rate`"),
    (Dialect.CLASSIC, 3, "orchestrator.env:array", "`[[orchestrator.env]]`"),
    (Dialect.CLASSIC, 2, "orchestrator.sampling", "`[orchestrator.sampling]`"),
    (Dialect.CLASSIC, 2, "orchestrator.buffer", "`[orchestrator.buffer]`"),
    (Dialect.CLASSIC, 2, "inference_gpu_ids", "`inference_gpu_ids`"),
    (Dialect.CLASSIC, 2, "trainer_gpu_ids", "`trainer_gpu_ids`"),
    (Dialect.CLASSIC, 2, "orchestrator.max_async_level", "`orchestrator.max_async_level`"),
    (Dialect.CLASSIC, 1, "orchestrator.rollouts_per_example", "`orchestrator.rollouts_per_example`"),
    (Dialect.TRANSITION, 3, "orchestrator.train.env:array", "`[[orchestrator.train.env]]`"),
    (Dialect.TRANSITION, 3, "orchestrator.eval.env:v1", "`[[orchestrator.eval.env]]` with a v1 taskset"),
    (Dialect.TRANSITION, 2, "orchestrator.max_inflight_rollouts", "`orchestrator.max_inflight_rollouts`"),
    (Dialect.TRANSITION, 1, "orchestrator.group_size", "`orchestrator.group_size`"),
    # main's tables, which v0.9 kept: a sign of both
    *((dialect, weight, test, what) for dialect in (Dialect.CURRENT, Dialect.V09) for weight, test, what in (
        (3, "orchestrator.train.source:array", "`[[orchestrator.train.source]]`"),
        (3, "orchestrator.eval.source:array", "`[[orchestrator.eval.source]]`"),
        (2, "monitors", "`[monitors]`"),
        (2, "orchestrator.concurrency", "`[orchestrator.concurrency]`"),
        (2, "inference.vllm", "`[inference.vllm]`"))),
    (Dialect.CURRENT, 2, "orchestrator.max_inflight_episodes", "`orchestrator.max_inflight_episodes`"),
    # where v0.9 moved or removed them: one v0.9 key in a main file does not make it a v0.9 file
    (Dialect.CURRENT, 2, "orchestrator.group_size", "`orchestrator.group_size`"),
    (Dialect.CURRENT, 2, "orchestrator.algo", "`[orchestrator.algo]`"),
    (Dialect.CURRENT, 2, "orchestrator.train.filter_zero_advantages", "`orchestrator.train.filter_zero_advantages`"),
    (Dialect.V09, 3, "orchestrator.train.group_size", "`orchestrator.train.group_size`"),
    (Dialect.V09, 3, "orchestrator.train.algo", "`[orchestrator.train.algo]`"),
    (Dialect.V09, 3, "orchestrator.constant_trainer_batch_size", "`orchestrator.constant_trainer_batch_size`"),
    (Dialect.V09, 2, "orchestrator.train.select", "`[orchestrator.train.select]`"),
    (Dialect.V09, 2, "orchestrator.train.sampling.top_p", "`orchestrator.train.sampling.top_p`"),
    (Dialect.V09, 2, "orchestrator.train.sampling.top_k", "`orchestrator.train.sampling.top_k`"),
)
# A sibling config is only looked at for its keys; one larger than this is data, not an overlay's base.
SIBLING_LIMIT = 1 << 20
# On a tie the newer era wins (a newer config keeps more of the older spellings than the reverse),
# except that a file both main and v0.9 take is prime-rl-current: what `prime train` takes, and a
# v0.9 checkout runs it too (so a check does not call it outdated there).
_TIE_ORDER = [Dialect.CURRENT, Dialect.V09, Dialect.TRANSITION, Dialect.CLASSIC, Dialect.HOSTED_LAB]
# File names that say the kind, for files whose keys several kinds accept (`max_steps = 5`).
_NAMED = {"orch": Kind.ORCHESTRATOR, "orchestrator": Kind.ORCHESTRATOR, "infer": Kind.INFERENCE,
          "inference": Kind.INFERENCE, "train": Kind.TRAINER, "trainer": Kind.TRAINER, "sft": Kind.SFT,
          "eval": Kind.EVAL, "evals": Kind.EVAL, "synthesize": Kind.EVAL, "env_server": Kind.ENV_SERVER,
          "env-server": Kind.ENV_SERVER, "env": Kind.ENV_SERVER}
# A component kind's keys are a full rl config's keys under this table.
_PREFIX = {Kind.ORCHESTRATOR: "orchestrator.", Kind.INFERENCE: "inference.", Kind.TRAINER: "trainer."}
BASES = ("rl.toml", "sft.toml")


def what_else(data: dict[str, Any]) -> str | None:
    """What a TOML that is no training config is, told by keys no prime-rl config has; None for a
    training config. Shapes (verifiers' configs/, prime-rl's configs/ and examples/): verifiers
    0.2-0.3 eval configs set top-level defaults with one `[[eval]]` (or `[[env]]` with `env_id`)
    per environment and may name an endpoint alias; verifiers 0.4's `EvalConfig` (`vf-eval @
    FILE`, prime-rl's `uv run eval @ FILE` in v0.9 on) has a top-level model name with its own
    counts (`num_tasks`, `num_rollouts`), client and selection, and a single `[env]` or
    `[taskset]` table where a lab-era config has `[[env]]`; `GEPAConfig` adds a reflection model."""
    if not data:
        return "an empty file: no config at all"
    if {"project", "build-system"} & data.keys() or "tool" in data and not data.keys() & _TRAINING_KEYS:
        return "a Python project file (pyproject.toml), not a config"
    endpoints = data.get("endpoint")
    if is_table_array(endpoints) and any("endpoint_id" in entry or "url" in entry for entry in endpoints):
        return "an endpoint registry (`[[endpoint]]` aliases, as in verifiers' and rlpilot's configs/endpoints.toml)"
    if {"reflection_model", "reflection_client", "gepa"} & data.keys():
        return "a verifiers GEPA config (`vf-gepa @ FILE`)"
    evals = data.get("eval")
    if is_table_array(evals) and any("env_id" in entry or "id" in entry for entry in evals):
        return "a verifiers eval config (`vf-eval @ FILE`, `prime eval run FILE`: one `[[eval]]` per environment)"
    envs = data.get("env")
    if is_table_array(envs) and any("env_id" in entry for entry in envs):
        return "a verifiers eval config (`vf-eval @ FILE`: one `[[env]]` with `env_id` per environment)"
    if {"endpoints_path", "endpoint_id"} & data.keys():
        return "a verifiers eval config (`vf-eval @ FILE`, naming an endpoint alias)"
    if sum(lookup(data, key) is not None for key in ("trainer.args", "trainer.gpus", "inference.gpus")) >= 2:
        # verifiers' configs/rl/ and configs/local/vf-rl/: its own trainer's GPUs and TRL-style `args`.
        return "a verifiers vf-rl config (`vf-rl @ FILE`: `[trainer] gpus`, `[trainer.args]`), not a prime-rl config"
    if data.keys() & _TRAINING_KEYS - {"rollouts_per_example"} or is_table_array(envs):
        return None  # a training config, however misshapen (a lab-era `[env]` for `[[env]]`)
    if {"num_tasks", "num_rollouts", "taskset"} & data.keys() or isinstance(data.get("model"), str) and (
            {"num_examples", "rollouts_per_example", "client", "select", "push", "rich"} & data.keys()
            or isinstance(envs, dict)):
        return "a verifiers eval config (`vf-eval @ FILE`, or `uv run eval @ FILE` in prime-rl v0.9 on)"
    return None


# Keys only a training config has at its top level (prime-rl's sections, the lab-era knobs).
_TRAINING_KEYS = frozenset({"orchestrator", "trainer", "inference", "deployment", "rollouts_per_example",
                            "batch_size", "max_steps", "learning_rate", "lora_alpha"})
# What each action applies to: migrate rewrites training configs of any component; tune sets
# the playbook's RL knobs, which only a config with an orchestrator (or a lab-era one) has.
APPLIES = {
    "migrate": frozenset({Kind.RL, Kind.TRAINER, Kind.ORCHESTRATOR, Kind.INFERENCE, Kind.SFT, Kind.OVERLAY}),
    "tune": frozenset({Kind.RL, Kind.ORCHESTRATOR, Kind.OVERLAY}),
}


def refuse_kind(detection: Detection, path: Path, action: str) -> None:
    """Refuse to `action` a file of a kind it does not apply to, saying in one line what the file is."""
    if detection.kind in APPLIES[action]:
        return
    if detection.kind == Kind.OTHER:
        told = f"{detection.kind_evidence}, not a training config"
    else:
        article = "a" if detection.kind == Kind.TRAINER else "an"  # an rl, an sft, an orchestrator config
        told = f"{article} {detection.kind} config ({detection.kind_evidence})"
    raise BadInput("wrong-kind", f"{path} is {told}: `config {action}` applies to "
                   f"{', '.join(sorted(APPLIES[action]))} configs only; nothing to {action}",
                   "name a prime-rl training config (rl.toml, orch.toml, ...)")


@dataclass(frozen=True)
class Placed:
    """The kind stage's answer: what the file is, and the data its kind's tables judge."""

    kind: Kind
    evidence: str
    data: dict[str, Any]  # the file's keys, stacked on its base when it is an overlay
    base: Path | None = None
    program: str | None = None  # the program its repository passes it to, where one does

    def loader(self, dialect: Dialect | None, target: str | None = None) -> str | None:
        """The program that would load it: the one its repository names, else its kind's entry
        point (`prime train` for a lab-era file or a hosted target); for a verifiers config, its
        program; None for another tool's TOML."""
        if self.kind == Kind.OTHER:
            # verifiers' own programs, which the evidence names (`vf-eval @ FILE`); none for other tools
            named = re.search(r"`(vf-eval|vf-rl|vf-gepa)\b", self.evidence)
            return self.program or (named.group(1) if named else None)
        if target == "hosted" and self.judged == Kind.RL:
            return "prime train"
        if self.program:
            return self.program
        if dialect == Dialect.HOSTED_LAB:
            return "prime train"
        if self.kind == Kind.OVERLAY:
            return f"uv run {self.judged} @ {self.base.name if self.base else 'BASE'} @ FILE"
        return f"uv run {self.kind}"

    @property
    def judged(self) -> Kind:
        """The kind whose tables judge it: an overlay is judged as its base."""
        return base_kind(self.base) if self.kind == Kind.OVERLAY else self.kind


@dataclass(frozen=True)
class Detection:
    """The dates stage's answer: the dialect, with the kind it was found for."""

    dialect: Dialect
    evidence: str
    from_keys: bool = True
    kind: Kind = Kind.RL
    kind_evidence: str = "assumed a full rl config"
    base: Path | None = None  # the config an overlay is stacked on
    # Whether its keys are judged by the dates the file fits: only when its era came from the file
    # (a dialect given, or a migration's target, is judged by that era's tables).
    dated: bool = False
    era: history.Era | None = None  # the dates it fits, when dated (none for the lab era)


def _sign_scores(data: dict[str, Any], kind: Kind) -> tuple[dict[Dialect, int], dict[Dialect, list[str]]]:
    scores = {dialect: 0 for dialect in Dialect}
    shown: dict[Dialect, list[str]] = {dialect: [] for dialect in Dialect}
    for dialect, weight, test, what in _SIGNS:
        key, _, shape = test.partition(":")
        if kind in _PREFIX:
            if not key.startswith(_PREFIX[kind]):
                continue
            key = key[len(_PREFIX[kind]):]
        elif kind != Kind.RL:
            continue
        value = lookup(data, key)
        present = {
            "str": isinstance(value, str),
            "array": is_table_array(value),
            "v1": is_table_array(value) and any("taskset" in entry or "harness" in entry for entry in value),
        }.get(shape, value is not None)
        if present:
            scores[dialect] += weight
            shown[dialect].append(what)
    return scores, shown


def detect_dialect(data: dict[str, Any], kind: Kind = Kind.RL) -> Detection:
    """The dialect of a `kind` config: the era-specific spellings first, then (on a tie) the
    era whose schema knows the most of its keys, then the newest."""
    fits = {d: misfit(data, kind, d) for d in Dialect}
    fits = {d: m for d, m in fits.items() if m is not None}
    if kind == Kind.EVAL and fits.get(Dialect.CURRENT):
        return Detection(Dialect.CLASSIC, "its keys do not fit main's eval schema, the only one prime-rl publishes: "
                         "an older eval config, whose keys are not checked", False, kind)
    if not fits:
        return Detection(Dialect.CURRENT, f"no {kind} schema in any era; assumed what `prime train` takes today",
                         False, kind)
    scores, shown = _sign_scores(data, kind)
    chosen = min((d for d in _TIE_ORDER if d in fits), key=lambda d: (-scores[d], fits[d]))
    if scores[chosen]:
        tied = [d for d in fits if scores[d] == scores[chosen]]
        how = " (and its schema knows more of the keys)" if len(tied) > 1 and fits[chosen] < max(
            fits[d] for d in tied) else ""
        return Detection(chosen, "detected from " + ", ".join(shown[chosen]) + how, kind=kind)
    if fits[chosen] < max(fits.values()):
        return Detection(chosen, "the era whose schema knows all of its keys" if fits[chosen] == 0 else
                         "the era whose schema knows the most of its keys", kind=kind)
    return Detection(chosen, "no era-specific keys; assumed what `prime train` takes today", False, kind)


# Other tools' TOMLs, told by keys no prime-rl program reads: (what it is, its keys (a dotted path
# is a key inside a table), how many of them it takes). Shapes: torchtitan's train_configs and
# tests/integration_tests/base_config.toml; Hugging Face `TrainingArguments` (TRL's trainers);
# axolotl's and OpenRLHF's options; verl's trainer config; Fly.io's fly.toml, Netlify's
# netlify.toml and Cloudflare's wrangler.toml (their docs' reference pages); Cargo.toml; ruff.toml;
# uv.toml; Streamlit's .streamlit/config.toml.
_LOOKALIKES: tuple[tuple[str, frozenset[str], int], ...] = tuple((what, frozenset(keys.split()), need) for what, keys,
                                                                  need in (
    ("another trainer's config (torchtitan: `[job]`, `[training]`, `[parallelism]`)",
     "job training parallelism lr_scheduler activation_checkpoint float8 quantize fault_tolerance comm", 2),
    ("another trainer's config (Hugging Face TrainingArguments, as TRL's trainers take them)",
     "per_device_train_batch_size per_device_eval_batch_size gradient_accumulation_steps num_train_epochs "
     "output_dir model_name_or_path logging_steps save_steps warmup_ratio", 2),
    ("another trainer's config (axolotl's keys)",
     "base_model datasets micro_batch_size num_epochs adapter lora_r sequence_len sample_packing", 2),
    ("another trainer's config (OpenRLHF's options)",
     "pretrain reward_pretrain actor_num_gpus_per_node micro_train_batch_size rollout_batch_size "
     "n_samples_per_prompt prompt_data actor_learning_rate", 2),
    ("another trainer's config (verl: `[actor_rollout_ref]`, `[critic]`)",
     "actor_rollout_ref critic custom_reward_function", 1),
    ("a Fly.io app config (fly.toml)", "app primary_region http_service services vm mounts kill_signal", 2),
    ("a Netlify site config (netlify.toml)", "build.publish redirects context.production plugins", 1),
    ("a Cloudflare Workers config (wrangler.toml)",
     "compatibility_date compatibility_flags kv_namespaces workers_dev routes vars r2_buckets d1_databases", 1),
    ("a Rust package manifest (Cargo.toml)",
     "package.edition dependencies dev-dependencies build-dependencies workspace.members features profile", 2),
    ("a ruff config (ruff.toml)", "line-length target-version lint format extend-select indent-width", 1),
    ("a uv config (uv.toml)", "index-url extra-index-url python-preference python-downloads cache-dir "
     "link-mode required-version", 1),
    ("a Streamlit config (.streamlit/config.toml)", "theme.base theme.primaryColor browser.gatherUsageStats", 1),
))


def looks_like(data: dict[str, Any]) -> str | None:
    """Which other tool's TOML a file looks like, by the keys only that tool reads; None for none."""
    for what, keys, need in _LOOKALIKES:
        present = sorted(key for key in keys if lookup(data, key) is not None)
        if len(present) >= need:
            return f"{what}: " + ", ".join(f"`{key}`" for key in present[:3])
    return None


@functools.cache
def _top_keys() -> frozenset[str]:
    """Every top-level key a prime-rl program read, in any kind, release or date, and the lab era's."""
    from tools.configs import keytables

    found = set(LAB_SECTIONS[""]) | PRIME_TRAIN_KEYS
    for kind in Kind:
        found |= {path.split(".", 1)[0] for path in history.keys(kind)}
        for dialect in keytables.RELEASES:
            tables = keytables.root(str(kind), keytables.releases(dialect))
            if tables is not None and not tables.open:
                found |= tables.keys()
    return frozenset(found)


def not_prime_rl(data: dict[str, Any]) -> str | None:
    """What a TOML no prime-rl program would load is, when most of its top-level keys are no
    prime-rl program's (a config with a few invented keys keeps its sections, and is judged)."""
    top = [keytables_snake(key) for key in data]
    known = sum(1 for key in top if key in _top_keys())
    like = looks_like(data)
    # Another tool's own keys, with none of prime-rl's sections, settle it where the shared names
    # (`model`, `max_steps`, `learning_rate`) would make up half.
    if not top or known * 2 >= len(top) and not (like and known < len(top) and not data.keys() & _SECTIONS):
        return None
    return f"{like or 'a TOML of another tool'}; not a prime-rl config: {known} of its {len(top)} top-level keys " \
        "are any prime-rl program's"


_SECTIONS = frozenset({"orchestrator", "trainer", "inference", "deployment"})


def detect_kind(data: dict[str, Any], path: Path | None = None) -> tuple[Kind, str]:
    """The kind whose schema (in any era) knows the most of the file's keys; a tie goes to the
    kind the file name says, else to a full rl config."""
    # `orch.toml`, what `config migrate` writes beside it (`orch.prime-rl-current.toml`), and a
    # name's last word (`slim_sft.toml`).
    if (what := what_else(data) or not_prime_rl(data)) is not None:
        return Kind.OTHER, what
    if path and any(p.name in ("vf-eval", "vf-rl") for p in path.parents) and "orchestrator" not in data:
        # verifiers' configs/local/vf-eval/ and vf-rl/: its own programs' configs, `[[env]]` as a lab file has.
        folder = next(p.name for p in path.parents if p.name in ("vf-eval", "vf-rl"))
        return Kind.OTHER, f"a verifiers {folder} config (its folder says `{folder} @ FILE`), not a prime-rl config"
    stem = path.name.split(".")[0] if path else ""
    named = _NAMED.get(stem)
    if path and named is None and any(_NAMED.get(p.name) == Kind.EVAL for p in path.parents):
        named = Kind.EVAL
    named = named or _NAMED.get(re.split(r"[_-]", stem)[-1])
    if named == Kind.EVAL:
        # Only main publishes an eval schema: before it, the name is all there is to go by.
        return Kind.EVAL, "its name says it is an eval config"
    fits: dict[Kind, int] = {}
    dated: dict[Kind, int] = {}  # every date since v0.1, not only the releases' tables
    for kind in Kind:
        values = [m for d in Dialect if (m := misfit(data, kind, d)) is not None]
        if history.keys(kind):
            dated[kind] = history.misfit(kind, data)
            values.append(dated[kind])
        if values:
            fits[kind] = min(values)
    # The lab era's keys are the prime CLI's, not in the history: a file with its signs is held to them.
    if _sign_scores(data, Kind.RL)[0][Dialect.HOSTED_LAB] and Kind.RL in dated:
        dated[Kind.RL] = min(dated[Kind.RL], misfit(data, Kind.RL, Dialect.HOSTED_LAB) or 0)
    best = min(fits.values())
    tied = [k for k in fits if fits[k] == best]
    if named in tied:
        return named, f"its keys fit a {named} config, as its name says"
    # Where one release's tables fit several kinds as well (an inference config with a key no
    # release had fits main's eval schema as badly), the kind whose keys prime-rl had on some date is it.
    closest = min(dated.get(k, best) for k in tied)
    tied = [k for k in tied if dated.get(k, best) == closest]
    if Kind.EVAL in tied and not data.keys() & _TRAINING_KEYS and not is_table_array(data.get("env")):
        # A lab-era file takes a top-level model and `[eval]` too, but never without a training knob.
        return Kind.EVAL, "its keys fit prime-rl's eval config (`uv run eval @ FILE`), with no training keys"
    if Kind.RL in tied:
        return Kind.RL, "its keys fit a full rl config"
    return tied[0], f"its keys fit a {tied[0]} config"


def detect_file(data: dict[str, Any], path: Path, kind: Kind | str | None = None,
                dialect: Dialect | str | None = None) -> Detection:
    """The kind and dialect of a config file: `place`, then `date`."""
    return date(place(data, path, kind), path, dialect)


def place(data: dict[str, Any], path: Path, kind: Kind | str | None = None) -> Placed:
    """The kind stage: the file's kind (given or detected) and, for an overlay (a partial rl or
    sft file beside its base, `uv run rl @ rl.toml @ slurm.toml`), its base and the stack."""
    base = None
    if kind:
        kind, evidence = Kind(kind), "given"
        if kind == Kind.OTHER:
            evidence = what_else(data) or not_prime_rl(data) or "given as no training config"
        elif kind == Kind.OVERLAY:
            base = _base_of(path)
    elif (launch := find_launch(path) if path.is_file() else None) is not None:
        # How its repository runs it outranks what its keys look like: that program reads it.
        kind, evidence, program, base = launch.kind, launch.evidence, launch.program, launch.base
        other = what_else(data)
        if kind == Kind.OTHER or other is not None:
            kind, evidence = Kind.OTHER, f"{other or 'not a prime-rl config'}; {launch.evidence}"
        elif kind == Kind.OVERLAY and base is None:
            kind = Kind.RL
        return Placed(kind, evidence, stack(base, data) if base else data, base, program)
    else:
        kind, evidence = detect_kind(data, path)
        if kind in (Kind.RL, Kind.SFT) and path.name not in BASES and "model" not in data:
            base = _base_of(path)
            if base:
                kind, evidence = Kind.OVERLAY, f"a partial config beside {base.name}"
    return Placed(kind, evidence, stack(base, data) if base else data, base)


def date(placed: Placed, path: Path, dialect: Dialect | str | None = None) -> Detection:
    """The dates stage: the dialect (given, or read from the stack's keys) and the dates its keys
    fit, found once for the checks that judge key names by them."""
    judged, era = placed.judged, None
    if placed.kind == Kind.OTHER:
        # No era: its keys are verifiers' or rlpilot's. A Detection carries a dialect, so it says
        # the one asked for (or today's), not from its keys; `check_data` reports none.
        found = Detection(Dialect(dialect or Dialect.CURRENT), "not a training config", False, judged)
    elif dialect:
        found = Detection(Dialect(dialect), "given", kind=judged)
    else:
        found = detect_dialect(placed.data, judged)
        if found.dialect != Dialect.HOSTED_LAB:  # the table has no lab-era keys
            era = history.era(judged, placed.data, path if path.is_file() else None)
        found = _not_before_its_dates(found, era, judged)
        if placed.base:
            found = Detection(found.dialect, f"the stack {placed.base.name} + {path.name}: {found.evidence}",
                              found.from_keys, judged)
    return Detection(found.dialect, found.evidence, found.from_keys, placed.kind, placed.evidence, placed.base,
                     dated=not dialect, era=era)


def _not_before_its_dates(found: Detection, era: history.Era | None, kind: Kind) -> Detection:
    """A dialect whose dates all come after the file's is not its dialect: its keys' signs can be
    spellings an older era already had (`orchestrator.group_size` in v0.6); the newest dialect
    that had begun by the file's dates is."""
    if found.dialect == Dialect.V09:  # no dates for it in the table
        return found
    if era is None or era.last >= history.began(found.dialect):
        return found
    older = max((d for d in Dialect if d != Dialect.HOSTED_LAB and history.began(d) <= era.last),
                key=history.began)
    return Detection(older, f"its keys' dates ({era.dates()}) come before {found.dialect}; {found.evidence}",
                     found.from_keys, kind)


def _base_of(path: Path) -> Path | None:
    return next((path.parent / name for name in BASES if (path.parent / name).is_file()
                 and (path.parent / name).resolve() != path.resolve()), None)


def base_kind(base: Path | None) -> Kind:
    return Kind.SFT if base is not None and base.name == "sft.toml" else Kind.RL


def stack(base: Path, overlay: dict[str, Any]) -> dict[str, Any]:
    """What `uv run rl @ base @ overlay` reads: the overlay's tables merged into the base's."""
    try:
        below = files.read_toml(base, SIBLING_LIMIT)
    except BadInput:  # a base that cannot be read is no base to stack on
        return overlay
    return merge(below, overlay)


def merge(below: dict[str, Any], above: dict[str, Any]) -> dict[str, Any]:
    merged = dict(below)
    for key, value in above.items():
        merged[key] = merge(below[key], value) if isinstance(value, dict) and isinstance(below.get(key), dict) \
            else value
    return merged
