"""Which metric names mean which series: one vocabulary table per trainer, as data, plus a fallback.

The tables are `vocabularies/<trainer>.toml`, each with the public source its names were read from
(repository, files, commit and date). A name no table knows is mapped by the fallback patterns below
only where its words leave no doubt (`.../reward/mean`, `.../entropy`); the result says which names it
mapped that way, and every name left over is listed as unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from tools.framework.errors import BadInput
from tools.io import files

TABLES = Path(__file__).with_name("vocabularies")
_SEGMENT = "[^/]+"  # `{A}` in a table: one name segment (an agent, an environment, a dataset tag)
# Names read by pattern rank after every table's own names.
FALLBACK = "pattern"
FALLBACK_RANK = 9
# Row fields that are bookkeeping in every trainer: the step and the clock.
BOOKKEEPING = frozenset({"step", "_step", "Step", "global_step", "time", "timestamp", "_timestamp", "_runtime",
                         "epoch", "train/epoch"})


class Source(BaseModel):
    repo: str
    paths: list[str]
    commit: str
    date: str
    eras: str = ""


class Names(BaseModel):
    series: str  # a key of series.CANONICAL (tests hold every table to it)
    rank: int
    match: list[str]
    complement: bool = False  # the table's metric is 1 - the series (a share of groups with no signal)


class Vocabulary(BaseModel):
    trainer: str
    title: str
    export: str  # how to get a file diagnose reads (with a reward series) out of this trainer
    bookkeeping: list[str]
    source: Source
    names: list[Names]


@dataclass(frozen=True)
class Meaning:
    """What one raw name is: its series, its rank among the run's names for it, and who says so."""

    canonical: str
    rank: int
    complement: bool
    vocabularies: tuple[str, ...]


@cache
def vocabularies() -> tuple[Vocabulary, ...]:
    found = []
    for path in sorted(TABLES.glob("*.toml")):
        try:
            found.append(Vocabulary.model_validate(files.read_toml(path)))
        except ValidationError as error:
            raise BadInput("bad-vocabulary", f"{path}: {error}", "fix the vocabulary table") from None
    return tuple(found)


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], str, int, bool, str], ...]:
    return tuple((re.compile(pattern.replace("{A}", _SEGMENT)), names.series, names.rank, names.complement,
                  table.trainer) for table in vocabularies() for names in table.names for pattern in names.match)


@cache
def bookkeeping() -> frozenset[str]:
    return BOOKKEEPING | {name for table in vocabularies() for name in table.bookkeeping}


# The fallback: (pattern, series). Anchored on whole words of the name's last segments, and refused for
# names that measure something else about the same quantity (its spread, a penalty, an eval).
_NOT_THE_SERIES = re.compile(r"std|var|min|max|loss|coef|penalty|kl|adv|clip|ratio|count|num_|total_|per_token"
                             r"|(?:^|/)(?:eval|val|test)[/_-]", re.IGNORECASE)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), s) for p, s in (
    (r"(?:.*[/_])?(?:reward|rewards|score)(?:[/_](?:mean|avg|total))?", "reward_mean"),
    (r"(?:.*[/_])?(?:policy_)?entropy(?:[/_](?:mean|avg))?", "entropy"),
    (r"(?:.*[/_])?grad(?:ient)?_?norm(?:[/_](?:mean|avg))?", "grad_norm"),
    (r"(?:.*[/_])?(?:response|completion|output|generation|gen)_?(?:len|length|tokens)(?:[/_](?:mean|avg))?",
     "response_length"),
    (r"(?:.*[/_])?(?:lr|learning_rate)", "learning_rate"),
))
_EVAL_REWARD = re.compile(r"(?:eval|val|test)[/_-](?:.*[/_])?(?:reward|score|acc|accuracy|pass@?1)"
                          r"(?:[/_](?:mean|avg))?", re.IGNORECASE)


def meaning(name: str) -> Meaning | None:
    """The series `name` stands for, by every table that knows it, else by the fallback patterns."""
    hits = [(series, rank, complement, trainer) for pattern, series, rank, complement, trainer in _compiled()
            if pattern.fullmatch(name)]
    if hits:
        series, rank, complement, _ = min(hits, key=lambda hit: hit[1])
        trainers = tuple(dict.fromkeys(hit[3] for hit in hits if hit[0] == series))
        return Meaning(series, rank, complement, trainers)
    if _EVAL_REWARD.fullmatch(name):
        return Meaning("eval_reward", FALLBACK_RANK, False, (FALLBACK,))
    if _NOT_THE_SERIES.search(name):
        return None
    for pattern, series in _PATTERNS:
        if pattern.fullmatch(name):
            return Meaning(series, FALLBACK_RANK, False, (FALLBACK,))
    return None


def export_hints(trainers: set[str] | None = None) -> list[str]:
    """How a trainer's run gives diagnose a reward series: the named trainers' ways, else every trainer's."""
    tables = [table for table in vocabularies() if trainers and table.trainer in trainers] or vocabularies()
    return [f"{table.title}: {table.export}" for table in tables]
