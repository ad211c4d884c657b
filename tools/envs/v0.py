"""`env check` of a verifiers v0 environment (`load_environment`, verifiers <= 0.3).

verifiers 0.4 imports a package's one exported Taskset; a v0 package has none, so 0.4's loader
says "taskset not found", which tells the user nothing true. Here the environment is loaded by a
release that can (tools.verifiers.v0 makes it), and its own vf-eval scores the dataset's answers and
the degenerate replies against a loopback policy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from tools.envs.shortcuts import KINDS, DegeneratePolicy, ShortcutCheck, judge, missing_module, reply_text
from tools.framework.contract import Context
from tools.framework.errors import ToolError
from tools.framework.findings import Finding
from tools.framework.timing import Stopwatch
from tools.framework.workspace import rlpilot_home
from tools.io import process
from tools.verifiers.v0 import V0_REQUIREMENT, _uv_environ, ensure_runtime, v0_message, v0_options

PROBE_TIMEOUT = 300.0
EVAL_TIMEOUT = 600.0
GOLD = "gold"
KEY_VARIABLE = "RLPILOT_LOOPBACK_KEY"  # the v0 client wants a key; the loopback policy ignores it
MODEL = "rlpilot-degenerate-replies"


# -- checks --------------------------------------------------------------------------------------

# Run by the v0 runtime's interpreter: import, load_environment(), and the rows the checks serve.
_PROBE = """
import json, sys
try:
    import verifiers as vf
    env = vf.load_environment(sys.argv[1])
    data = getattr(env, "eval_dataset", None) or getattr(env, "dataset", None)
    rows = []
    for row in (data.select(range(min(len(data), int(sys.argv[2])))) if data is not None else []):
        prompt = row.get("prompt") or []
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"] if isinstance(prompt, list) \\
            else [{"content": prompt}]
        content = users[-1].get("content") if users else row.get("question", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        rows.append({"prompt": content or "", "answer": row.get("answer")})
    print(json.dumps({"ok": True, "verifiers": getattr(vf, "__version__", "?"), "env": type(env).__name__,
                      "rows": len(data) if data is not None else 0,
                      "columns": list(getattr(data, "column_names", []) or []), "sample": rows}))
except BaseException as error:
    print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
"""


class V0Load(BaseModel):
    verifiers: str
    env_class: str
    rows: int
    columns: list[str]
    python: str
    gold_tasks: int = 0
    gold_passed: int = 0


def check_v0(env_dir: Path, name: str, tasks: int, shortcuts: bool, ctx: Context,
             environ: Mapping[str, str], clock: Stopwatch, *,
             yes: bool) -> tuple[V0Load | None, ShortcutCheck | None, list[Finding]]:
    """Import + `load_environment()` in the v0 runtime, then gold answers and degenerate replies through
    that release's own vf-eval against a loopback policy. The runtime is made only with the person's `yes`."""
    info = Finding(code="verifiers-v0", severity="info", file=str(env_dir), message=v0_message(name),
                   fix=f"checked with {V0_REQUIREMENT} in rlpilot's own runtime for it; {v0_options(name)}")
    try:
        with clock.part("preparing the environment"):
            python = ensure_runtime(env_dir, ctx.workspace, environ, ctx, confirmed=yes)
    except ToolError as error:
        return None, None, [Finding(code=error.code, severity="error", file=str(env_dir), message=error.message,
                                    fix=error.hint)]
    module = name.replace("-", "_")
    with clock.part("loading it in the v0 runtime"):
        probe = process.run([str(python), "-c", _PROBE, module, str(tasks)], cwd=env_dir, env=_uv_environ(environ),
                            timeout=PROBE_TIMEOUT)
    answer = next((json.loads(line) for line in reversed(probe.stdout_tail) if line.startswith("{")), None)
    if not answer or not answer.get("ok"):
        why = answer["error"] if answer else (probe.said(2) or f"exit {probe.returncode}")
        missing = missing_module(why)
        fix = (f"list what provides {missing!r} in the environment's dependencies, then run the check again"
               if missing else "fix what it says; it reproduces with "
               f"`{python} -c 'import verifiers as vf; vf.load_environment(\"{name}\")'`")
        return None, None, [info, Finding(code="v0-load-failed", severity="error", file=str(env_dir),
                                          message=f"load_environment() of {name} failed with verifiers<0.4: {why}",
                                          fix=fix)]
    load = V0Load(verifiers=answer["verifiers"], env_class=answer["env"], rows=answer["rows"],
                  columns=answer["columns"], python=str(python))
    findings = [info]
    if not load.rows:
        findings.append(Finding(code="v0-no-dataset", severity="error", file=str(env_dir),
                                message=f"{name}'s {load.env_class} has no dataset rows to evaluate",
                                fix="give load_environment() a dataset (or eval_dataset) with prompts"))
        return load, None, findings
    if not shortcuts:
        return load, None, findings
    answers = {row["prompt"]: str(row["answer"]) for row in answer["sample"] if row.get("answer") not in (None, "")}
    check, found = _score_replies(python, name, min(tasks, load.rows), answers, ctx, environ, clock)
    for finding in found:
        if finding.code == "shortcut-rollouts-errored" and "EmptyModelResponseError" in finding.message:
            # verifiers v0 itself refuses an empty reply before the rubric sees it: not the environment's doing.
            finding.severity = "info"
            finding.fix = "verifiers v0 aborts a rollout with no content (EmptyModelResponseError); nothing to fix"
    findings += found
    if check is not None and answers:
        load.gold_tasks, load.gold_passed, gold = _gold(Path(check.traces), answers)
        findings += gold
    return load, check, findings


def _score_replies(python: Path, name: str, tasks: int, answers: dict[str, str], ctx: Context,
                   environ: Mapping[str, str], clock: Stopwatch) -> tuple[ShortcutCheck | None, list[Finding]]:
    folder = rlpilot_home(ctx.workspace, environ) / "shortcuts" / f"{name}--v0--{time.strftime('%Y%m%d-%H%M%S')}"
    extra = {GOLD: lambda prompt: answers.get(prompt, "")} if answers else {}
    vf_eval = python.parent / "vf-eval"
    with DegeneratePolicy(extra) as policy:
        argv = [str(vf_eval), name, "-m", MODEL, "-b", policy.base_url, "-k", KEY_VARIABLE, "-n", str(tasks),
                "-r", str(len(KINDS) + len(extra)), "-c", "8", "-s", "-o", str(folder), "-d"]
        ctx.emit({"type": "log", "line": "scoring gold and degenerate replies: " + " ".join(argv)})
        outcome = process.run(argv, cwd=ctx.workspace, env={**_uv_environ(environ), KEY_VARIABLE: "loopback"},
                              timeout=EVAL_TIMEOUT,
                              on_line=lambda stream, line: ctx.emit({"type": "log", "line": line}))
        clock.program(f"vf-eval ({V0_REQUIREMENT})", outcome.seconds)
        results = sorted(folder.glob("evals/*/*/results.jsonl"))
        if not outcome.ok or not results:
            return None, [Finding(code="shortcut-check-failed", severity="warning",
                                  message=f"verifiers {V0_REQUIREMENT}'s vf-eval could not score the replies (exit "
                                          f"{outcome.returncode}): {outcome.said(3)}",
                                  fix="fix what it says; `rlpilot env check ENV --no-shortcuts` skips this check")]
        return judge(results[-1], policy.sent)


def _gold(results: Path, answers: dict[str, str]) -> tuple[int, int, list[Finding]]:
    """Rows whose reply was the dataset's own answer: the closest v0 has to a gold check."""
    from tools.evals.results import records

    gold = set(answers.values())
    scored = [(r.get("example_id"), r.get("reward")) for _, r, why in records(results)
              if why is None and reply_text(r).strip() in gold]
    failed = [example for example, reward in scored if not isinstance(reward, int | float) or reward < 1.0]
    findings = []
    if failed:
        findings.append(Finding(code="gold-fails", severity="warning", file=str(results),
                                message=f"{len(failed)} of {len(scored)} dataset answers, sent back as the reply, "
                                        f"do not score 1 (example_id {', '.join(map(str, failed[:5]))})",
                                fix="a v0 rubric may want a format around the answer (XML tags, \\boxed{}); if not, "
                                    "the answers or the reward are wrong"))
    return len(scored), len(scored) - len(failed), findings

