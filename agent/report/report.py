"""The four-part report, built from what the session's tools recorded, never from the model.

1. the config deltas applied (the edits the config tools actually wrote), 2. why each,
3. the observed metrics and failure signatures (numbers the eval and diagnose tools computed),
4. the next tuning step with its stop conditions. The model may add notes in prose.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agent.chat import answer_check
from agent.chat.catalog import by_name, named
from agent.chat.record import acted, applied_deltas, evidence, user_words
from agent.chat.sessions import Session, SessionNotFound, Store, with_content
from tools.catalog import Evidence
from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.deltas import Delta
from tools.framework.errors import BadInput
from tools.framework.findings import rank
from tools.framework.workspace import rlpilot_home


class ReportInput(BaseModel):
    notes: Annotated[str | None, Field(description="Your own words to add; numbers must come from tools.")] = None
    session: Annotated[str | None, Arg(cli_only=True), Field(description="The session to report on.")] = None


class NextStep(BaseModel):
    action: str
    deltas: list[Delta] = Field(default_factory=list)
    stop_if: list[str] = Field(default_factory=list, description="Signs the step failed: stop and roll back.")
    done_when: list[str] = Field(default_factory=list, description="Signs the step worked.")


class Report(ToolResult):
    session: str
    deltas: list[Delta]
    why: list[str]
    observed: dict[str, Any]
    next_step: NextStep
    notes: str | None = None
    # The claims of the notes the tool record does not hold: left out of `notes`, named here.
    caveat: str | None = None
    # What this session did beyond its own machine's files (installed, pushed, launched, stopped), as recorded.
    actions: list[dict[str, Any]] = Field(default_factory=list)

    def carries_anything(self) -> bool:
        """Whether the session did or measured something the report can show (else it is all "none")."""
        return bool(self.deltas or self.actions or any(self.observed.get(part) for part in ("evals", "runs", "spend")))

    def render(self) -> str:
        done = "; ".join(_action_text(action) for action in self.actions)
        lines = [f"Actions this session: {done}", ""] if done else []
        lines += ["## 1. Config deltas applied"]
        lines += [f"- `{d.key}`: {shown(d.from_)} -> {shown(d.to)}" + (f" ({d.file})" if d.file else "")
                  for d in self.deltas] or ["- none"]
        lines += ["", "## 2. Why"]
        lines += [f"- {reason}" for reason in self.why] or ["- no deltas were applied"]
        lines += ["", "## 3. Observed metrics and failure signatures"]
        for evaluation in self.observed.get("evals", []):
            reward = evaluation.get("reward") or {}
            lines.append(f"- eval {evaluation.get('source', '')}: verdict {evaluation.get('verdict')}, "
                         f"mean reward {shown(reward.get('mean'))}, "
                         f"{share(evaluation.get('zero_variance_fraction'))} of example groups with zero variance")
        for run in self.observed.get("runs", []):
            lines.append(f"- run {run.get('source', '')}: {run.get('steps')} steps")
            for finding in run.get("findings", []):
                where = f", steps {step_range(finding['steps'])}" if finding.get("steps") else ""
                summary = finding.get("summary") or ""
                evidence = ", ".join(f"{name} {shown(value)}" for name, value in (finding.get("evidence") or {}).items()
                                     if not said(value, summary))
                lines.append(f"  - {finding['code']} ({finding['severity']}{where}): {finding.get('summary') or ''}"
                             + (f" ({evidence})" if evidence else ""))
        for spend in self.observed.get("spend", []):
            projected = f", about ${spend['projected_usd']:.2f} at {spend['max_steps']} steps" \
                if spend.get("projected_usd") is not None else ""
            lines.append(f"- spend of run {spend['run']}: ${spend['total_usd']:.2f} so far{projected}")
        if not any(self.observed.get(part) for part in ("evals", "runs", "spend")):
            lines.append("- nothing measured in this session yet")
        lines += ["", "## 4. Next step", f"- {self.next_step.action}"]
        lines += [f"  - {_delta_step(d)}" for d in self.next_step.deltas]
        lines += [f"  - done when: {sign}" for sign in self.next_step.done_when]
        lines += [f"  - stop if: {sign}" for sign in self.next_step.stop_if]
        if self.notes:
            lines += ["", self.notes]
        if self.caveat:
            lines += ["", f"Left out of the notes, {self.caveat}"]
        return "\n".join(lines)


def shown(value: Any) -> str:
    """A value as a person writes it: 5e-7, 0.167, 300, true, unset; a table by its keys."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() or abs(value) >= 100:
            return str(round(value))
        if abs(value) < 1e-3:
            mantissa, exponent = f"{value:.2g}".split("e")
            return f"{mantissa}e{int(exponent)}"
        return f"{value:.3g}"
    if isinstance(value, dict):
        return f"a table of {', '.join(map(str, value))}" if value else "an empty table"
    if isinstance(value, list):
        return ", ".join(map(shown, value)) or "none"
    return str(value)


def command(tool: str) -> str:
    """What a person types for the tool called `tool` (`rlpilot config restore`); a name no tool has, as is."""
    entry = named(tool)
    return f"rlpilot {' '.join(entry.command)}" if entry else tool


def typed(tool: str) -> str:
    """What a person types for a tool the report names itself; a name no tool has fails here, not in a report."""
    return f"rlpilot {' '.join(by_name(tool).command)}"


def call_text(tool: str, arguments: dict[str, Any]) -> str:
    """A recorded call in a person's words: the command, then the arguments it was given."""
    given = ", ".join(f"{key} {shown(value)}" for key, value in arguments.items() if value is not None)
    return f"{command(tool)} ({given})" if given else command(tool)


def _action_text(action: dict[str, Any]) -> str:
    return call_text(action["tool"], action["arguments"])


_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")


def said(value: Any, text: str) -> bool:
    """Whether `text` already gives the number `value`, to the digits it shows (0.010 gives 0.0102)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return any(abs(float(match.group(0)) - value) <= 0.5 * 10 ** -len(match.group(1) or "")
               for match in _NUMBER.finditer(text))


def share(fraction: float | None) -> str:
    return "an unknown share" if fraction is None else f"{fraction:.0%}"


def step_range(steps: list[int]) -> str:
    first, last = steps[0], steps[-1]
    return str(first) if first == last else f"{first}-{last}"


def _delta_step(delta: Delta) -> str:
    """A proposed change in words: the intent when the tool gave one, the value otherwise."""
    words = delta.change
    if delta.to is not None:  # the value says it; words that only restate it are left out
        value = f"set `{delta.key}` to {shown(delta.to)}"
        words = "" if words.startswith("set to") else words
    else:
        value = f"`{delta.key}`"
    now = f"now {shown(delta.from_)}" if delta.from_ is not None else ""
    aside = ", ".join(part for part in (words, now) if part)
    return value + (f" ({aside})" if aside else "") + (f"; {delta.why}" if delta.why else "")


def report(args: ReportInput, ctx: Context) -> Report:
    """The report of the session named, the chat's own, or else the newest one (the first `rlpilot sessions` lists)."""
    store = Store(rlpilot_home(ctx.workspace))
    session_id = args.session or ctx.session_id or next((s["id"] for s in with_content(store.list())), None)
    if not session_id:
        raise BadInput("no-session", f"no sessions with anything in them in {store.path}: the report is built "
                       "from what a chat's tools recorded, and commands typed on the command line are not recorded",
                       "work in `rlpilot chat` (its slash commands take the same arguments: `/check rl.toml`), "
                       "then `rlpilot report`")
    try:
        session = store.open(session_id)
    except SessionNotFound:
        raise BadInput("unknown-session", f"no session {session_id} in {store.path}",
                       "list them with `rlpilot sessions`") from None
    return build(session, args.notes)


def latest_per_source(observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One observation per file or environment, the latest, in the order of the latest reads: reading the same
    run twice is not two findings."""
    latest: dict[Any, dict[str, Any]] = {}
    for observation in observations:
        source = observation.get("source") or id(observation)
        latest.pop(source, None)
        latest[source] = observation
    return list(latest.values())


def build(session: Session, notes: str | None = None) -> Report:
    records = session.tool_calls()
    deltas = [delta for record in records for delta in applied_deltas(record)]
    evals = [_eval_observation(r) for r in records if evidence(r) is Evidence.EVAL]
    evals = latest_per_source([e for e in evals if e])
    runs = latest_per_source([dict(r["result"], source=r["arguments"].get("source")) for r in records
                              if evidence(r) is Evidence.RUN and r["result"]])
    notes, caveat = checked_notes(session, notes)
    return Report(
        session=session.id,
        deltas=deltas,
        why=[f"{d.key}: {d.why}" for d in deltas if d.why],
        observed={"evals": evals, "runs": [_run_observation(r) for r in runs], "spend": _spend(records)},
        next_step=_next_step(evals, runs, records),
        notes=notes,
        caveat=caveat,
        actions=[{"tool": r["name"], "arguments": r["arguments"]} for r in records if acted(r)],
    )


def checked_notes(session: Session, notes: str | None) -> tuple[str | None, str | None]:
    """The model's notes without the sentences whose claims the tool record does not hold, and the caveat
    naming them: the report carries only what happened."""
    if not notes:
        return notes, None
    claims = answer_check.check(notes, session.tool_calls(ok_only=False), user_words(session))
    if not claims:
        return notes, None
    return answer_check.without(notes, claims) or None, answer_check.caveat(claims)


def _spend(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest spend read of each hosted run (`train usage`, or a watch with a budget)."""
    latest = {r["result"]["run"]: dict(r["result"]["spend"], run=r["result"]["run"]) for r in records
              if evidence(r) is Evidence.SPEND and (r["result"] or {}).get("spend")}
    return list(latest.values())


def _eval_observation(record: dict[str, Any]) -> dict[str, Any] | None:
    result = record["result"] or {}
    summary = result.get("summary", result)
    if "verdict" not in summary:
        return None
    keep = ("verdict", "reward", "reward_kind", "zero_variance_fraction", "all_fail_fraction",
            "all_pass_fraction", "pass_at_k", "rollouts", "errored", "unjudged_because")
    observation = {k: summary[k] for k in keep if k in summary}
    observation["source"] = record["arguments"].get("path") or record["arguments"].get("env")
    observation["recommendations"] = summary.get("recommendations", [])
    return observation


def _run_observation(result: dict[str, Any]) -> dict[str, Any]:
    return {"source": result.get("source"), "steps": result.get("steps"), "primary": result.get("primary"),
            "findings": [{k: f.get(k) for k in ("code", "severity", "steps", "summary", "evidence")}
                         for f in result.get("findings", [])]}


def _roll_back(run: dict[str, Any], finding: dict[str, Any] | None) -> str:
    """Where to go back to when the next step fails: the diagnosis's rollback step, else the config."""
    step = (run.get("primary") or {}).get("rollback_step")
    if step is None and finding and finding.get("steps"):
        step = finding["steps"][0]
    restore = f"restore the config (`{typed('config_restore')}`)"
    return f"stop the run, {restore} and resume from step {step}" if step is not None else f"stop the run and {restore}"


_FIRST_STEPS_FAIL = "mean reward falls, or entropy collapses, over the first 50 steps: stop the run and restore " \
                    f"the config (`{typed('config_restore')}`)"
_EVAL_STILL_BROKEN = "most rollouts still error, or the verdict does not move after the fix: read the failing " \
                     f"samples (`{typed('eval_samples')}`) before changing anything else"


def _next_step(evals: list[dict[str, Any]], runs: list[dict[str, Any]], records: list[dict[str, Any]]) -> NextStep:
    if runs:
        # The diagnosis's primary finding explains the run; the others are its consequences or lesser.
        primary = (runs[-1].get("primary") or {}).get("code")
        problems = sorted((f for f in runs[-1].get("findings", []) if f.get("code") != "healthy"),
                          key=lambda f: (f.get("code") != primary, rank(f.get("severity"))))
        if not problems:
            return NextStep(action="the last run looks healthy: keep the settings and raise one knob at a time",
                            done_when=["mean reward keeps rising for 50 steps after the change"],
                            stop_if=[f"a diagnose finding of severity error appears: {_roll_back(runs[-1], None)}"])
        worst = problems[0]
        return NextStep(action=f"address {worst['code']}: " + "; ".join(worst.get("causes", [])[:2]),
                        deltas=[Delta.model_validate(d) for d in worst.get("deltas", [])],
                        done_when=list(worst.get("stop_when", [])),
                        stop_if=[f"{worst['code']} is still found 50 steps after the change, or a new error finding "
                                 f"appears: {_roll_back(runs[-1], worst)}"])
    if evals and evals[-1].get("verdict") == "unjudged":
        because = "; ".join(evals[-1].get("unjudged_because") or []) or "too few rollouts per example"
        return NextStep(action=f"the eval could not judge reward diversity ({because}): rerun it so that it can, "
                               "before changing the environment or training",
                        done_when=["the rerun's verdict is ready"], stop_if=[_EVAL_STILL_BROKEN])
    if evals and evals[-1].get("verdict") != "ready":
        last = evals[-1]
        advice = [f"{r['action']} ({r['reason']})" for r in last.get("recommendations", []) if isinstance(r, dict)]
        return NextStep(action=f"the eval verdict is {last.get('verdict')}: fix the environment before training"
                        + (f"; {advice[0]}" if advice else ""),
                        done_when=["a new smoke eval's verdict is ready"], stop_if=[_EVAL_STILL_BROKEN])
    proposed = [r for r in records if evidence(r) is Evidence.PROPOSAL and r["result"] and not applied_deltas(r)]
    if proposed and proposed[-1]["result"].get("deltas"):
        last = proposed[-1]
        return NextStep(action=f"apply the tuning proposed for {last['result'].get('path')} "
                               f"(`{typed('config_tune')} --apply`), check it, then launch a short run",
                        deltas=[Delta.model_validate(d) for d in last["result"]["deltas"]],
                        done_when=[f"`{typed('config_check')}` reports no errors",
                                   "mean reward rises over the first 50 steps"],
                        stop_if=[f"`{typed('config_check')}` reports an error: restore the config "
                                 f"(`{typed('config_restore')}`)", _FIRST_STEPS_FAIL])
    if evals:
        return NextStep(action="rewards vary at baseline: tune the config and launch a short run",
                        done_when=["mean reward rises over the first 50 steps", "no diagnose finding above info"],
                        stop_if=[_FIRST_STEPS_FAIL])
    if any(evidence(r) is Evidence.CHECK for r in records):
        return NextStep(action="smoke-eval the environment (20 examples x 3 rollouts) before training",
                        done_when=["the eval verdict is ready"], stop_if=[_EVAL_STILL_BROKEN])
    return NextStep(action=f"start with `{typed('stack_info')}`, then check and smoke-eval the environment",
                    done_when=["the eval verdict is ready"], stop_if=[_EVAL_STILL_BROKEN])
