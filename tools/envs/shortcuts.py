"""Reward shortcuts: replies that say nothing about the task, scored by the environment's own rubric.

A policy learns whatever the reward pays for. If an empty reply, the prompt echoed back, a bare
"yes", a refusal, the answer format with nothing inside or one line repeated earns reward, RL can
find that instead of the task, and only after the GPUs are spent. So before any model is used,
rlpilot serves these replies itself, from a loopback OpenAI-compatible server it starts and
stops, and runs the workspace's real `vf-eval` against it: one rollout of each reply per task,
scored exactly as training would score it, read back from vf-eval's own traces.jsonl.

A reply is a shortcut on a task when it earns more than SHORTCUT_SHARE of the way from the
environment's floor (zero, or the lowest reward these replies got on that task when the
environment pays below zero, as format penalties do) to vf-validate's SOLVED reward; reaching
SOLVED is an error, since such a reply passes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tools.evals.results import locate, read_run, records
from tools.evals.samples import episode_texts
from tools.framework.contract import Context
from tools.framework.findings import Finding
from tools.framework.timing import Stopwatch
from tools.io import process
from tools.verifiers.source import Roles

# verifiers 0.4 (cli/validate.py SOLVED): a reward of 1.0 solves a task; an untouched task that
# reaches it fails vf-validate's no-op check.
SOLVED = 1.0
# More than half a solve for a reply without content is a gradient toward the shortcut that
# competes with the task itself (the same "more than half" the eval verdicts use).
SHORTCUT_SHARE = 0.5
SHORTCUT_TIMEOUT = 600
MODEL = "rlpilot-degenerate-replies"
KEY_VARIABLE = "RLPILOT_LOOPBACK_KEY"  # vf-eval wants a key variable; the loopback server ignores it
_SHOWN = 80
# Each role a plain chat loop run on this machine: no sandbox, no tools, no login.
LOCAL_AGENT = [("harness.id", "null"), ("runtime.type", "subprocess")]

REPLIES: dict[str, Callable[[str], str]] = {
    "empty": lambda prompt: "",
    "echo": lambda prompt: prompt,
    "yes": lambda prompt: "yes",
    "refusal": lambda prompt: "I'm sorry, but I can't help with that.",
    # The answer formats environments parse most (XML tags, a LaTeX box, an "Answer:" line), all empty.
    "empty-format": lambda prompt: "<think></think>\n<answer></answer>\n\\boxed{}\nAnswer:",
    "repeated-line": lambda prompt: "\n".join(["Let me check that again."] * 32),
}
KINDS = tuple(REPLIES)


class ShortcutScore(BaseModel):
    kind: str
    reply: str
    tasks: int
    mean: float | None
    max: float | None


class ShortcutCheck(BaseModel):
    traces: str
    tasks: int
    errored: int
    scores: list[ShortcutScore]


class DegeneratePolicy:
    """A chat-completions server on 127.0.0.1: the n-th request for a prompt gets the n-th degenerate reply."""

    def __init__(self, extra: dict[str, Callable[[str], str]] | None = None) -> None:
        # `extra` replies (a v0 check's gold answers) follow the degenerate ones; judge() ignores them.
        self.kinds = KINDS + tuple(extra or {})
        self.replies = {**REPLIES, **(extra or {})}
        self.sent: dict[str, str] = {}  # reply text -> its kind, to tell the replies apart in the traces
        self._asked: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> DegeneratePolicy:
        # A short poll: shutdown waits for it, and the person waits for shutdown (the default is half a second).
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reply(self, request: dict[str, Any]) -> str:
        users = [m for m in request.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
        prompt = _text(users[-1].get("content")) if users else ""
        with self._lock:
            kind = self.kinds[self._asked[prompt] % len(self.kinds)]
            self._asked[prompt] += 1
            text = self.replies[kind](prompt)
            self.sent[text.strip()] = kind
        return text


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _handler(policy: DegeneratePolicy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # vf-eval's log is the one that matters
            pass

        def do_GET(self) -> None:
            self._send(200, "application/json", json.dumps({"object": "list", "data": [{"id": MODEL}]}))

        def do_POST(self) -> None:
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError:
                self._send(400, "application/json", json.dumps({"error": {"message": "body is not JSON"}}))
                return
            text = policy.reply(request)
            head = {"id": f"degenerate-{time.monotonic_ns()}", "created": int(time.time()), "model": MODEL}
            usage = {"prompt_tokens": 0, "completion_tokens": len(text.split()),
                     "total_tokens": len(text.split())}
            if not request.get("stream"):
                self._send(200, "application/json", json.dumps({
                    **head, "object": "chat.completion", "usage": usage,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}]}))
                return
            chunk = {**head, "object": "chat.completion.chunk"}
            events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                             "finish_reason": None}]},
                      {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
            if (request.get("stream_options") or {}).get("include_usage"):
                events.append({**chunk, "choices": [], "usage": usage})
            self._send(200, "text/event-stream",
                       "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n")

        def _send(self, status: int, kind: str, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def check_shortcuts(vf_eval: str, taskset_id: str, tasks: int, folder: Path, ctx: Context,
                    environ: dict[str, str], roles: Roles,
                    clock: Stopwatch) -> tuple[ShortcutCheck | None, list[Finding]]:
    """Run vf-eval with every degenerate reply on each task; the replies that score are findings. Each
    declared role plays a plain chat loop here; roles that could not be read keep their own defaults."""
    name = f"{taskset_id}--shortcuts--{time.strftime('%Y%m%d-%H%M%S')}"

    def log(stream: str, line: str) -> None:
        if stream == "stderr":  # vf-eval logs its progress there
            ctx.emit({"type": "log", "line": line})

    with DegeneratePolicy() as policy:
        argv = [vf_eval, taskset_id, "-m", MODEL, "-n", str(tasks), "-r", str(len(KINDS)),
                "--client.base-url", policy.base_url, "--client.api-key-var", KEY_VARIABLE,
                *roles.flags(LOCAL_AGENT), "--run.name", name, "--output-dir", str(folder), "--no-rich", "--no-push"]
        ctx.emit({"type": "log", "line": "scoring degenerate replies: " + " ".join(argv)})
        outcome = process.run(argv, cwd=ctx.workspace, env={**environ, KEY_VARIABLE: "loopback"},
                              timeout=SHORTCUT_TIMEOUT, on_line=log)
    clock.program("vf-eval", outcome.seconds)
    traces = folder / name / "traces.jsonl"
    missing = missing_module(_output(outcome)) if not outcome.ok else None
    if missing:
        python = Path(vf_eval).parent / "python"
        return None, [Finding(code="shortcut-check-failed", severity="warning",
                              message=f"vf-eval could not load {taskset_id}: it imports {missing!r}, which is not "
                                      f"installed in {python}",
                              fix=f"install what provides it: `uv pip install --python {python} "
                                  f"{missing.split('.')[0]}` (and list it in the environment's dependencies)")]
    if not outcome.ok or not traces.is_file():
        return None, [Finding(code="shortcut-check-failed", severity="warning",
                              message=f"vf-eval could not score the degenerate replies (exit {outcome.returncode}): "
                                      f"{outcome.said(3)}",
                              fix="fix what it says; `rlpilot env check ENV --no-shortcuts` skips this check")]
    return judge(traces, policy.sent)


def _output(outcome: process.ProcessResult) -> str:
    return "\n".join([*outcome.stdout_tail, *outcome.stderr_tail])


def missing_module(output: str) -> str | None:
    found = re.findall(r"ModuleNotFoundError: No module named '([\w.]+)'", output)
    return found[-1] if found else None


def judge(traces: Path, sent: dict[str, str]) -> tuple[ShortcutCheck, list[Finding]]:
    run = read_run(locate(traces))
    replies = {number: reply_text(record).strip() for number, record, why in records(traces) if why is None}
    rewards: dict[str, dict[str, tuple[float, int]]] = {}  # task -> kind -> (reward, line)
    for rollout in run.rollouts:
        kind = sent.get(replies.get(rollout.line, ""))
        if kind and rollout.reward is not None:
            best = rewards.setdefault(rollout.example, {}).get(kind)
            if best is None or rollout.reward > best[0]:  # any role paid for a degenerate reply is a shortcut
                rewards[rollout.example][kind] = (rollout.reward, rollout.line)
    scores, findings = [], []
    for kind in KINDS:
        got = {task: by_kind[kind] for task, by_kind in rewards.items() if kind in by_kind}
        values = [reward for reward, _ in got.values()]
        scores.append(ShortcutScore(kind=kind, reply=_shown(REPLIES[kind]("<the prompt>")), tasks=len(got),
                                    mean=sum(values) / len(values) if values else None,
                                    max=max(values, default=None)))
        hits = [(task, reward, line) for task, (reward, line) in got.items()
                if reward > _bar(rewards[task])]
        if hits:
            task, reward, line = max(hits, key=lambda hit: hit[1])
            bar = _bar(rewards[task])
            findings.append(Finding(
                code="reward-shortcut", severity="error" if reward >= SOLVED else "warning",
                file=str(traces), line=line,
                message=f"the {kind} reply {_shown(replies[line])!r} scores {reward:g} on task idx {task}, above the "
                        f"{bar:g} a reply without content may reach there ({len(hits)} of {len(got)} tasks pay it)",
                fix="make the reward depend on a correct answer (parse and compare it, or use a judge): a policy "
                    "learns this reply instead of the task"))
    errored = [r for r in run.rollouts if r.errored]
    if errored:
        findings.append(Finding(code="shortcut-rollouts-errored", severity="warning", file=str(traces),
                                line=errored[0].line,
                                message=f"{len(errored)} of {len(run.rollouts)} degenerate-reply rollouts errored "
                                        f"instead of scoring (first: {errored[0].error}); their replies were not "
                                        "judged",
                                fix="an environment should score any reply, however poor, rather than fail on it"))
    return ShortcutCheck(traces=str(traces), tasks=len(rewards), errored=len(errored), scores=scores), findings


def reply_text(record: dict[str, Any]) -> str:
    """The reply of a verifiers 0.4 episode, or of a v0 results.jsonl row (its `completion`)."""
    if "task" in record:
        return episode_texts(record)[1]
    completion = record.get("completion")
    if isinstance(completion, str):
        return completion
    replies = [m for m in completion or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    return _text(replies[-1].get("content")) if replies else ""


def _bar(task: dict[str, tuple[float, int]]) -> float:
    """The most a reply without content may earn on this task."""
    floor = min(0.0, *(reward for reward, _ in task.values()))
    return floor + SHORTCUT_SHARE * (SOLVED - floor)


def _shown(text: str) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= _SHOWN else flat[:_SHOWN] + "..."
