"""`rlpilot eval run`: the playbook's smoke eval, in the form the installed stack understands.

The form and its flags are tools/evals/forms.py's, the checks and the preview tools/evals/plan.py's;
this runs the command, follows its progress and reads its results. Every rollout can error while
the CLI exits 0, so the run is judged by its results file.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from pydantic import Field

from tools.evals.forms import OUTPUT_DIR, EvalRunInput, Form, Plan
from tools.evals.plan import EVALUATIONS_URL, EvalPlan, prepare
from tools.evals.results import LEGACY_METADATA, LEGACY_RESULTS, locate, read_run
from tools.evals.summarize import EvalSummary, summarize_run
from tools.framework.contract import Context, ToolResult, not_confirmed
from tools.framework.errors import BadInput, ToolError
from tools.framework.timing import Stopwatch, TimingSplit
from tools.io import files, process
from tools.stack.failure_texts import raised_by
from tools.stack.prime_cli import cli_args, raise_known_failure

VIEWER_URL = EVALUATIONS_URL + "/{id}"
_POLL_SECONDS = 0.5
# What the progress poll reads of the results file at a time: it counts lines, so a burst of rollouts between
# two polls (each a whole message graph) is never held at once.
_PROGRESS_CHUNK = 1 << 20


class EvalRunResult(ToolResult):
    form: Form
    command: list[str]
    env: str
    model: str
    base_url: str | None
    upload: bool
    run_dir: str | None = None
    evaluation_id: str | None = None
    viewer_url: str | None = None
    timing: TimingSplit = Field(description="Where the time went: the eval program's own (its process's wall "
                                            "time), and rlpilot's around it.")
    ok: bool
    problem: str | None = None
    hint: str | None = Field(None, description="What to do about the problem.")
    summary: EvalSummary | None = None
    plan: EvalPlan | None = Field(None, description="What a yes would run, where nothing was run yet.")
    next: str | None = None

    def render(self) -> str:
        if self.plan is not None:
            return f"{self.plan.render()}\nnext: {self.next}"
        lines = [f"ran        {' '.join(self.command)}",
                 f"took       {self.timing.seconds:.0f} s: {self.timing.render()}"]
        lines += [f"results    {self.run_dir}"] if self.run_dir else []
        lines += [f"evaluation {self.evaluation_id}  {self.viewer_url}"] if self.evaluation_id else []
        lines += [f"FAILED     {self.problem}", f"fix        {self.hint}"] if self.problem else []
        if self.summary:
            lines += ["", self.summary.render()]
        return "\n".join(lines)

    def exit_code(self) -> int:
        return 0 if self.ok else 1


def eval_plan(args: EvalRunInput, ctx: Context) -> EvalPlan:
    """`eval run`'s preview: the checks it makes, and the model, URL, key variable and counts it would use."""
    return prepare(args, ctx, stamp="<started-at>").preview()


def eval_run(args: EvalRunInput, ctx: Context) -> EvalRunResult:
    clock = Stopwatch(ctx.started)
    if not args.yes:  # the key goes to the endpoint, the calls may cost, the results may leave: the person says yes
        plan = eval_plan(args, ctx)
        return EvalRunResult(form=plan.form, command=plan.command, env=plan.env, model=plan.model,
                             base_url=plan.base_url, upload=plan.upload, timing=clock.split(), ok=False, plan=plan,
                             next=not_confirmed("run the eval"))
    with clock.part("checking the plan"):
        prepared = prepare(args, ctx)
        if args.binding and args.binding != prepared.preview().binding():
            raise ToolError("changed-since-preview", "the eval would now run differently from what was confirmed "
                            "(model, URL, key variable or counts)", "look at the new preview and confirm again")
    args, target, plan, environ = prepared.args, prepared.target, prepared.plan, prepared.environ
    if plan.prepare is not None:
        with clock.part("preparing the environment"):
            plan.prepare()
    ctx.emit({"type": "log", "line": prepared.preview().where_results_go()})
    ctx.emit({"type": "log", "line": "running " + " ".join(plan.argv)})
    outcome, total = _run_with_progress(plan, args, environ, ctx)
    clock.program(plan.form, outcome.seconds)
    result = EvalRunResult(form=plan.form, command=outcome.argv, env=args.env, model=target.model,
                           base_url=target.base_url, upload=args.upload, timing=clock.split(), ok=True,
                           run_dir=str(plan.run_dir) if plan.run_dir else None)
    text = outcome.stdout_tail + outcome.stderr_tail
    if plan.form == "prime-hosted":
        _read_hosted_ids(result, text)
        result.run_dir = None
    if outcome.timed_out:
        raise ToolError("eval-timed-out", f"the eval did not finish in {args.timeout_minutes:g} minutes",
                        "raise --timeout-minutes, or lower -n / -r; finished rollouts stay in "
                        f"{plan.run_dir or 'the output folder'}")
    if not outcome.ok:
        _raise_failure(outcome, text, result)
    if plan.form == "prime-hosted" and result.evaluation_id and plan.run_dir:
        _fetch_hosted_samples(result, plan.argv[0], plan.run_dir, environ, ctx, clock)
    results = plan.results()
    if results is None:
        if plan.form == "prime-hosted":
            result.timing = clock.split()
            return result
        raise ToolError("no-results", f"the eval exited 0 but wrote no results file ({plan.run_dir or OUTPUT_DIR})",
                        f"look at its log: {outcome.said()}")
    result.run_dir = str(plan.run_dir or results.parent)
    with clock.part("summarizing the results"):
        result.summary = summarize_run(read_run(locate(results)))
    if result.summary.rollouts and result.summary.errored == result.summary.rollouts:
        top = next(iter(result.summary.errors), "unknown error")
        result.ok = False
        result.problem = f"every rollout errored ({result.summary.errored} of {total}); most common: {top}"
        result.hint = next((row.hint for row in raised_by("eval") if row.found_in(top)),
                           "read a failed rollout with `rlpilot eval samples RUN`, fix the cause, run again")
    result.timing = clock.split()  # again, now that the summary is made
    return result


def _run_with_progress(plan: Plan, args: EvalRunInput, environ: dict[str, str], ctx: Context):
    """Run the command, emitting finished rollouts out of expected as the results file grows."""
    state = {"total": args.num_examples * args.rollouts, "done": -1}
    stop = threading.Event()

    def report(done: int) -> None:
        if done != state["done"]:
            state["done"] = done
            ctx.emit({"type": "progress", "done": done, "total": state["total"], "label": "rollouts"})

    def on_line(stream: str, line: str) -> None:
        # vf-eval logs the real plan, which is smaller than -n x -r when the taskset is.
        planned = re.search(r"running (\d+)x(\d+) rollouts", line)
        if planned:
            state["total"] = int(planned[1]) * int(planned[2])
        if stream == "stderr" or plan.form == "prime-hosted":
            ctx.emit({"type": "log", "line": line})

    seen = {"path": None, "offset": 0, "lines": 0}

    def poll() -> None:
        seen["path"] = seen["path"] or (plan.progress or plan.results)()
        if seen["path"] is None:
            return
        try:
            with files.open_regular(seen["path"]) as handle:
                handle.seek(seen["offset"])
                while chunk := handle.read(_PROGRESS_CHUNK):
                    seen["lines"] += chunk.count(b"\n")
                    seen["offset"] += len(chunk)
        except BadInput:  # progress is a courtesy: the results are read, and a fault in them named, at the end
            return
        report(seen["lines"])

    def watch() -> None:
        while not stop.wait(_POLL_SECONDS):
            poll()

    report(0)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        outcome = process.run(plan.argv, cwd=plan.cwd or ctx.workspace, env=plan.environ or environ,
                              timeout=args.timeout_minutes * 60, on_line=on_line)
    finally:
        stop.set()
        watcher.join()
    poll()
    return outcome, state["total"]


def _raise_failure(outcome: process.ProcessResult, text: list[str], result: EvalRunResult) -> None:
    joined = "\n".join(text)
    where = f" (evaluation {result.evaluation_id}: {result.viewer_url})" if result.evaluation_id else ""
    if result.form == "prime-hosted":
        raise_known_failure(outcome, f"the hosted eval{where}", os.environ)
    for row in raised_by("eval"):
        if row.found_in(joined):
            raise ToolError(row.code, row.message + where, row.hint)
    raise ToolError("eval-failed", f"the eval exited with status {outcome.returncode}{where}: "
                    f"{outcome.said(3)}", "fix what the message says and run it again")


def _read_hosted_ids(result: EvalRunResult, text: list[str]) -> None:
    for line in text:
        found = re.search(r"Evaluation ID:\s*(\S+)", line)
        if found:
            result.evaluation_id = found[1]
        viewer = re.search(r"View results:\s*(\S+)", line)
        if viewer:
            result.viewer_url = viewer[1]
    if result.evaluation_id and not result.viewer_url:
        result.viewer_url = VIEWER_URL.format(id=result.evaluation_id)


def _fetch_hosted_samples(result: EvalRunResult, prime: str, folder: Path, environ: dict[str, str],
                          ctx: Context, clock: Stopwatch) -> None:
    """The platform's samples, as a legacy results file, so the summary reads them like any run.

    Samples are optional (`.samples[].example_id?`, `.score?` in prime 0.18's help): when they
    are missing or unreadable the result keeps the evaluation id and viewer link only.
    """
    outcome = process.run([prime, *cli_args(["eval", "samples", str(result.evaluation_id), "-n", "1000", "-o",
                                             "json"])], cwd=ctx.workspace, env=environ, timeout=120,
                          keep_lines=1_000_000)
    clock.program("prime eval samples", outcome.seconds)
    try:
        samples = json.loads(outcome.stdout).get("samples") or []
    except (ValueError, AttributeError):
        return
    rows = [{"example_id": s.get("example_id", s.get("id", i)), "reward": s.get("reward", s.get("score")),
             "prompt": s.get("prompt", s.get("input")), "completion": s.get("completion", s.get("output")),
             **({"error": s["error"]} if s.get("error") else {})}
            for i, s in enumerate(samples) if isinstance(s, dict)]
    if not rows:
        return
    files.write_text(folder / LEGACY_RESULTS, "".join(json.dumps(row) + "\n" for row in rows))
    files.write_text(folder / LEGACY_METADATA, json.dumps({"env_id": result.env, "model": result.model,
                                                      "evaluation_id": result.evaluation_id}))
