"""The answer check: what a final answer says was done, held against what the session's tools recorded.

A model may write "Done: launched run r-4242, reward 0.93" after the launch was declined. Before such
an answer reaches a person, each claim it makes about an action (launched, pushed, installed, stopped,
edited, evaluated), a run id, a Hub id or a metric value is looked up in the tool record; a claim the
record does not hold comes back with what really happened, for the surface's caveat line.

The answer's Markdown is read first (agent/chat/answer_parse.py): a claim in a table, under a bold
label or in a checklist is read as one in a sentence is. Each claim is held to the record by name: an
action to the calls of the tools that make it, a metric value to that metric's fields only (a reward
of 0.93 is not confirmed by a loss of 0.93), within the rounding it was written with. The words of six
languages are known (agent/chat/answer_words.py); where a sentence's words are not, the ids, Hub ids
and values it names are still held to the record, so the check never stays silent for want of words.
Words, structure and patterns, no second model; it never blocks the answer. Every pattern is matched
on a unit or on a bounded window after a word, a value is looked up in an index of the recorded values,
and the search stops at MAX_CLAIMS: the time is linear in the answer's length and the record's size.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from pydantic import BaseModel

from agent.chat.answer_parse import Unit, normal, units
from agent.chat.answer_words import (
    ACTION_NOUNS,
    ACTIONS,
    DONE,
    EDITED,
    FOREIGN_ACTIONS,
    HUB_LABELS,
    HUB_WORDS,
    METRIC_GAP,
    METRIC_KEYS,
    METRIC_STOP,
    METRICS,
    MODEL_FAMILIES,
    NEGATION_WINDOW,
    NOT_A_CLAIM,
    NOT_A_CLAIM_CJK,
    NOT_DONE,
    RUN_ID_LABELS,
    RUN_ID_WORDS,
    RUN_NOUN_BEFORE,
)
from agent.chat.catalog import CATALOG
from agent.chat.record import acted, applied_deltas, evidence
from tools.catalog import Done, Evidence

__all__ = ["ACTIONS", "EDITED", "Claim", "caveat", "check", "without"]

# The word right before a verb that makes it an act of the agent's ("I launched", "it was pushed", "and
# installed"); a verb that opens its clause ("Done: launched run r-4242") is one too. Any other word
# makes it a state ("you have prime installed"). English only: the other languages' verbs are perfective.
AGENTIVE = {"i", "we", "i've", "we've", "was", "were", "been", "have", "has", "and", "then", "successfully", "just",
            "now", "also"}
# How far before a word its negation or condition is looked for, and after a word its id or value.
LOOK_BEHIND = 120  # characters
LOOK_AHEAD = 48  # characters
# The most id and value claims an answer gets: a caveat longer than this says no more (the search for them
# stops there), and the report's notes are cut by it (`without`) claim by claim.
MAX_CLAIMS = 20
LATIN = r"[A-Za-z0-9_\-\u00c0-\u024f]"  # what a Latin word and a name go on with


def _alternation(words: tuple[str, ...] | list[str] | set[str]) -> str:
    """Words as one pattern: a Latin word only as a whole word, not a part of a name (score-env, run_dir);
    Chinese and Japanese anywhere."""
    latin = sorted((w for w in words if not _cjk(w)), key=len, reverse=True)
    cjk = sorted((w for w in words if _cjk(w)), key=len, reverse=True)
    parts = [rf"(?<!{LATIN})(?:{'|'.join(map(re.escape, latin))})(?!{LATIN})"] if latin else []
    return "|".join(parts + ([f"(?:{'|'.join(map(re.escape, cjk))})"] if cjk else []))


def _cjk(text: str) -> bool:
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" for c in text)


# Every action word of every language in one pattern, so an answer is read once; each word to its kind
# and whether it is English (whose verbs must be said of the agent, AGENTIVE).
VERB_OF = {word.lower(): (kind, english) for english, table in ((True, ACTIONS), (False, FOREIGN_ACTIONS))
           for kind, words in table.items() for word in words}
# "Training started", "started the run": a launch claim without the word.
STARTED = r"\btraining (?:has )?started\b|\bstarted (?:the |a |your )?(?:training|run)\b"
VERB = re.compile(_alternation(list(VERB_OF)) + "|" + STARTED, re.I)
NOUN_OF = {word.lower(): kind for kind, words in ACTION_NOUNS.items() for word in words}
NOUN = re.compile(_alternation(list(NOUN_OF)), re.I)
DONE_WORDS = re.compile(_alternation(DONE), re.I)
NOT_DONE_WORDS = re.compile(_alternation(NOT_DONE), re.I)
METRIC = re.compile(_alternation([w for words in METRICS.values() for w in words]) + r"|\bpass@\d+", re.I)
METRIC_OF = {word: family for family, words in METRICS.items() for word in words}
RUN_CUE = re.compile(_alternation([*RUN_ID_WORDS, "run"]), re.I)
HUB_CUE = re.compile(_alternation(HUB_WORDS), re.I)
# The ASCII words of a text, with the characters ids and paths are made of; CJK around them is not theirs.
CHUNK = re.compile(r"[A-Za-z0-9_./@-]+")
ID_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{3,}")
HUB_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
QUANTITY = re.compile(r"\d[\d.]*(?:e-?\d+|[kmgbt]i?b?|x|gb|steps?|s|ms|h|gpus?)?", re.I)  # 1e-6, 300M, 8x, 4B
FILE_SUFFIX = re.compile(r"\.(toml|py|jsonl?|md|log|txt|ya?ml|csv|png|sh|cfg|ini)$", re.I)
WORDS = re.compile(r"[\w']+")
# A value: a decimal point or (in German, French, Spanish) a comma, but not a thousands group (1,000).
NUMBER = re.compile(r"(-?\d+(?:\.\d+|,(?:\d{1,2}|\d{4,})(?!\d))?(?:e-?\d+)?)(\s*[%％])?")
CJK_STOP = tuple(stop for stop in METRIC_STOP if _cjk(stop))  # in a run of characters, not a word of its own
# Between a metric and its value: punctuation, or a word.
BETWEEN = re.compile(r"[\s:=：/()（）—–,，、-]+|[^\W\d_]+")
# A value a sentence in a language the check does not know states: a decimal or a percent.
DECIMAL = re.compile(r"(?<![\w.,])(\d+[.,]\d+|\d+(?=\s*[%％]))(\s*[%％])?(?!\w|[.,]\d)")


class Claim(BaseModel):
    kind: str  # launched | pushed | installed | stopped | edited | evaluated | run id | Hub id | metric
    said: str  # the words of the answer that make it
    clause: str  # the part of the answer they are in
    happened: str  # what the record shows instead


def check(answer: str, records: list[dict[str, Any]], user_words: str = "") -> list[Claim]:
    """The claims of `answer` that `records` (Session.tool_calls(ok_only=False)) do not support.
    Ids and values the person wrote themselves (`user_words`) are theirs, not claims."""
    parts, user_words = units(answer), normal(user_words)
    acts = [{} if part.cell else _acts(part) for part in parts]
    return [*_actions(parts, acts, records), *_ids(parts, acts, records, user_words),
            *_metrics(parts, records, user_words)]


def caveat(claims: list[Claim]) -> str:
    """The one line a surface shows under the answer."""
    return "not in the tool record: " + "; ".join(f"{c.said} ({c.happened})" for c in claims)


def without(text: str, claims: list[Claim]) -> str:
    """`text` less every sentence, Markdown line or table row that makes one of `claims` (and a table's
    header, when no row of it is left)."""
    def claimed(piece: str) -> bool:
        return any(c.clause in piece or piece.strip() in c.clause for c in claims)

    kept: list[str] = []
    for table, lines in itertools.groupby(normal(text).splitlines(), key=lambda line: line.lstrip().startswith("|")):
        if table:
            rows = list(lines)
            left = [row for row in rows[2:] if not claimed(row)] if len(rows) > 2 else rows
            kept += rows[:2] + left if left or len(rows) <= 2 else []
        else:
            kept += [s for line in lines for s in re.split(r"(?<=[.!?])\s+", line) if s.strip() and not claimed(s)]
    return " ".join(kept).strip()


# -- actions ---------------------------------------------------------------------------------------


# A full stop or colon ends a clause only before a space: `rl.toml` and 0.93 stay whole.
CLAUSE_END = re.compile(r"[.:](?=\s|$)|[;!?\n。！？；：]+")


def _is_claim(text: str, start: int, end: int, agentive: bool) -> bool:
    """Whether the word at text[start:end] says it was done: no negation, condition or plan shortly before
    it in its clause, and (for an English verb, not `agentive`) said of the agent or opening its clause."""
    window = CLAUSE_END.split(text[max(0, start - LOOK_BEHIND):start])[-1]
    if any(mark in window[-4:] for mark in NOT_A_CLAIM_CJK):
        return False
    before = WORDS.findall(window.lower())[-NEGATION_WINDOW:]
    if set(before) & NOT_A_CLAIM or any(word.endswith("n't") for word in before):
        return False
    if re.match(r"\s+(nothing|none)\b", text[end:end + 12], re.I):  # "I changed nothing"
        return False
    clause = WORDS.findall(re.split(r",\s+", window)[-1].lower())
    return agentive or not clause or clause[-1] in AGENTIVE


def _acts(part: Unit) -> dict[str, str]:
    """Each kind of action `part` claims was done, with the words that claim it."""
    found: dict[str, str] = {}
    for match in VERB.finditer(part.text):
        kind, english = VERB_OF.get(match.group(0).lower(), (Done.LAUNCHED, False))  # "training started"
        if kind not in found and _is_claim(part.text, match.start(), match.end(), agentive=not english):
            found[kind] = match.group(0)
    # A label, a table row or a checklist item that names the action and says it is done ("| Launch | ✅ |")
    structured = part.label or " : " in part.text or part.text.startswith("✅")
    if structured and DONE_WORDS.search(part.text) and not NOT_DONE_WORDS.search(part.text):
        for match in NOUN.finditer(part.text):
            found.setdefault(NOUN_OF[match.group(0).lower()], part.text[:60])
    return found


def _actions(parts: list[Unit], acts: list[dict[str, str]], records: list[dict[str, Any]]) -> list[Claim]:
    found = []
    for kind in ACTIONS:
        claimed = next(((part, said[kind]) for part, said in zip(parts, acts, strict=True) if kind in said), None)
        tools = tuple(entry.name for entry in CATALOG if entry.done == kind)
        if claimed and not _done(kind, tools, records):
            found.append(Claim(kind=str(kind), said=claimed[1], clause=claimed[0].source,
                               happened=_what_happened(kind, tools, records)))
    return found


def _done(kind: str, tools: tuple[str, ...], records: list[dict[str, Any]]) -> bool:
    if kind == EDITED:
        return any(applied_deltas(r) for r in records if r["ok"])
    return any(r["ok"] and r["name"] in tools and acted(r) and _went_through(r["result"]) for r in records)


def _went_through(result: dict[str, Any] | None) -> bool:
    """A call that ran may still say it did not act (a plan, a dry run, a push that sent nothing)."""
    result = result or {}
    return not result.get("dry_run") and all(result.get(flag) is not False
                                             for flag in ("launched", "pushed", "restarted", "resumed"))


def _what_happened(kind: str, tools: tuple[str, ...], records: list[dict[str, Any]]) -> str:
    if kind == EDITED:
        edits = [r for r in records if evidence(r) in (Evidence.EDIT, Evidence.PROPOSAL)]
        return "no config change was written" + (f": {edits[-1]['name']} {_status(edits[-1])}" if edits else "")
    tried = [r for r in records if r["name"] in tools]
    if not tried:
        return f"no {' or '.join(tools)} call was made"
    last = {r["name"]: r for r in tried}  # each tool's last call, in the order first tried
    return ", ".join(f"{name} {_status(record)}" for name, record in last.items())


def _status(record: dict[str, Any]) -> str:
    problem = record.get("error") or {}
    if "declined" in problem:
        return "was declined"
    if "refused" in problem:
        return "was refused by its preview"
    if problem:
        return f"failed: {problem.get('code', 'error')}"
    return "ran but did not act" if record["ok"] else "did not run"


def _record_text(records: list[dict[str, Any]]) -> str:
    """Every argument and result of the calls that ran, as one text to look values up in."""
    return " ".join(json.dumps([r["arguments"], r["result"]], ensure_ascii=False) for r in records if r["ok"])


def _foreign(text: str) -> bool:
    """Words of a language the check may not know: letters outside ASCII."""
    return not text.isascii() and any(not c.isascii() and c.isalpha() for c in text)


def _chunks(text: str) -> list[str]:
    return [chunk.rstrip(".-@/") for chunk in CHUNK.findall(text)]


def _id_like(chunk: str) -> bool:
    """A name the platform makes: letters and digits (r-4242, saturn-7k2p), not a quantity or a model."""
    return (bool(ID_SHAPE.fullmatch(chunk)) and any(c.isdigit() for c in chunk) and any(c.isalpha() for c in chunk)
            and not QUANTITY.fullmatch(chunk) and not chunk.lower().startswith(MODEL_FAMILIES))


def _hub_like(chunk: str) -> bool:
    return bool(HUB_SHAPE.fullmatch(chunk)) and not FILE_SUFFIX.search(chunk)


def _run_ids(part: Unit, claims_an_action: bool) -> list[str]:
    """The ids `part` says are a run's: under a run-id label, right after a run word, or (where the words
    are not known, or an action is claimed) any id it names."""
    found = []
    if part.label in RUN_ID_LABELS:
        found += [c for c in _chunks(part.text.split(":", 1)[-1])[:1] if _id_like(c)]
    for cue in RUN_CUE.finditer(part.text):
        if cue.group(0).lower() == "run":  # a noun after a determiner or opening its unit, never the verb
            before = WORDS.findall(part.text[max(0, cue.start() - 20):cue.start()].lower())
            if before and before[-1] not in RUN_NOUN_BEFORE:
                continue
        after = [c for c in _chunks(part.text[cue.end():cue.end() + LOOK_AHEAD])
                 if c.lower() not in ("id", "is", "was", "named", "called", "ist", "est", "es", "#")]
        found += after[:1] if after and _id_like(after[0]) else []
    if claims_an_action or _foreign(part.text):
        found += [c for c in _chunks(part.text) if _id_like(c) and ("-" in c or "_" in c)]
    return found


def _hub_ids(part: Unit) -> list[str]:
    if part.label in HUB_LABELS or HUB_CUE.search(part.text) or _foreign(part.text):
        return [c.split("@")[0] for c in _chunks(part.text) if _hub_like(c.split("@")[0])]  # owner/name@0.1.0
    return []


def _ids(parts: list[Unit], acts: list[dict[str, str]], records: list[dict[str, Any]], user_words: str) -> list[Claim]:
    known = set(_chunks(_record_text(records) + " " + user_words))
    found, seen = [], set()
    for part, said in zip(parts, acts, strict=True):
        for kind, values in (("run id", _run_ids(part, bool(said))), ("Hub id", _hub_ids(part))):
            for value in values:
                if value in seen or value in known:
                    continue
                seen.add(value)
                found.append(Claim(kind=kind, said=f"run {value}" if kind == "run id" else value, clause=part.source,
                                   happened="no tool result names it"))
                if len(found) == MAX_CLAIMS:
                    return found
    return found


# -- metric values ---------------------------------------------------------------------------------


def _values(text: str, claims_only: bool) -> list[tuple[str, str, str, bool]]:
    """Each metric `text` states with its value: (family, the words, the digits, a percent)."""
    found = []
    for match in METRIC.finditer(text):
        # "stop if reward stays below 0.3", "it should reach reward 0.9": a condition or a forecast, no claim
        if claims_only and not _is_claim(text, match.start(), match.end(), agentive=True):
            continue
        window, position, words = text[match.end():match.end() + LOOK_AHEAD], 0, 0
        while words <= METRIC_GAP:
            number = NUMBER.match(window, position)
            if number:
                family = METRIC_OF.get(match.group(0).lower(), "reward")  # pass@k
                found.append((family, (match.group(0) + window[:number.end()]).strip(), number.group(1),
                              bool(number.group(2))))
                break
            step = BETWEEN.match(window, position)
            word = step.group(0).lower() if step else ""
            if not step or word in METRIC_STOP or any(stop in word for stop in CJK_STOP):
                break
            words += word.isalpha()
            position = step.end()
    return found


def _measured(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Each metric's values in the record, by the names of the fields (or the words) that hold them."""
    found: dict[str, list[float]] = {family: [] for family in METRICS}

    def walk(value: Any, names: str) -> None:
        if isinstance(value, dict):
            # {"name": "reward", "value": 0.5}: a row names its metric in a field
            named = " ".join(str(v) for k, v in value.items() if k in ("name", "metric", "key", "label"))
            for key, item in value.items():
                walk(item, f"{names} {named} {key}")
        elif isinstance(value, list):
            for item in value:
                walk(item, names)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer no float holds (a record's 10**400) is no value a claim can state
                return
            words = re.findall(r"[a-z]+", names.lower())
            for family, keys in METRIC_KEYS.items():
                if any(word.startswith(keys) for word in words):
                    found[family].append(number)
        elif isinstance(value, str):  # a rendered summary: "reward 0.42"
            for family, _, digits, percent in _values(value, claims_only=False):
                found[family].append(_number(digits) / (100 if percent else 1))

    for record in records:
        if record["ok"]:
            walk([record["arguments"], record["result"]], "")
    return found


def _number(digits: str) -> float:
    return float(digits.replace(",", "."))


class _Recorded:
    """The values one claim may be held to, rounded once for each number of places a claim is written with:
    each claim is then one lookup, not a pass over every recorded value (5,000 values and a 90 KB answer of
    values took 28 s that way)."""

    def __init__(self, numbers: list[float]):
        self._numbers = numbers
        self._rounded: dict[int, set[float]] = {}

    def holds(self, digits: str, percent: bool) -> bool:
        """Whether a value written `digits` (a percent, when `percent`) is one of these, within its rounding."""
        value = _number(digits)
        places = len(re.split(r"[.,]", digits)[1]) if re.search(r"[.,]", digits) else 0
        candidates = [(value, places)] + ([(value / 100, places + 2)] if percent else [])
        return any(round(v, p) in self._at(p) for v, p in candidates)

    def _at(self, places: int) -> set[float]:
        if places not in self._rounded:
            self._rounded[places] = {round(number, places) for number in self._numbers}
        return self._rounded[places]


def _metrics(parts: list[Unit], records: list[dict[str, Any]], user_words: str) -> list[Claim]:
    measured = _measured(records)
    # the person's own numbers are theirs, whatever they named
    theirs = [_number(n) for n in re.findall(r"-?\d+(?:[.,]\d+)?", user_words)]
    by_family = {family: _Recorded(numbers + theirs) for family, numbers in measured.items()}
    anywhere = _Recorded([n for numbers in measured.values() for n in numbers] + _all_numbers(records) + theirs)
    found, seen = [], set()
    for part in parts:
        stated = [(said, digits, percent, by_family[family])
                  for family, said, digits, percent in _values(part.text, claims_only=True)]
        if not stated and _foreign(part.text):  # its metric's word is not known: any field may hold the value
            stated = [(m.group(0).strip(), m.group(1), bool(m.group(2)), anywhere)
                      for m in DECIMAL.finditer(part.text)]
        for said, digits, percent, recorded in stated:
            if said in seen or recorded.holds(digits, percent):
                continue
            seen.add(said)
            found.append(Claim(kind="metric", said=said, clause=part.source, happened="no tool result has that value"))
            if len(found) == MAX_CLAIMS:
                return found
    return found


def _all_numbers(records: list[dict[str, Any]]) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", _record_text(records))]
