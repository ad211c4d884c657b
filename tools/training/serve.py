"""`rlpilot train eval CHECKPOINT --env ENV`: the playbook's train -> eval loop on this machine.

Serve the checkpoint (prime-rl's `inference` entry point in the checkout, else `vllm serve` from
the GPU extra) on a free loopback port, wait until it answers `/v1/models`, run `eval run`
against it, and stop the server whatever happened. prime-rl at HEAD saves DCP checkpoints only
(weights in HF format were removed on 2026-08-20), so CHECKPOINT is a folder vLLM can load
(HF format) or a model id.
"""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.evals.run import EvalRunInput, EvalRunResult, eval_run
from tools.framework.contract import Arg, Confirmation, Context, ToolResult, not_confirmed
from tools.framework.errors import ToolError
from tools.framework.workspace import rlpilot_home, search_path, workspace_interpreter
from tools.io import files, process
from tools.stack.info import StackInput, stack_info
from tools.training import local

# One readiness probe: a server still loading its weights may hold the connection without answering.
PROBE_S = 5.0


class CheckpointEvalInput(BaseModel):
    checkpoint: Annotated[str, Arg(positional=True, metavar="CHECKPOINT"),
                          Field(description="A model folder in HF format, or a model id, to serve.")]
    env: Annotated[str, Field(description="The installed environment to evaluate it on.")]
    prime_rl: Annotated[Path | None, Arg(metavar="PATH"),
                        Field(description="The prime-rl checkout whose `inference` serves it.")] = None
    num_examples: Annotated[int, Arg(short="-n"), Field(ge=1, description="Examples to evaluate.")] = 20
    rollouts: Annotated[int, Arg(short="-r"), Field(ge=1, description="Rollouts per example.")] = 3
    ready_minutes: Annotated[float, Arg(cli_only=True),
                             Field(gt=0, description="How long the server may take to come up.")] = 15
    upload: Annotated[bool, Arg(user_decision=True),
                      Field(description="Upload the eval results (vf-eval's default); --no-upload only when "
                                        "the user asked.")] = True
    yes: Annotated[Confirmation, Field(description="Serve and evaluate (the user confirmed).")] = False


class CheckpointEvalResult(ToolResult):
    checkpoint: str
    server: list[str] = Field(description="The command that served the checkpoint.")
    base_url: str
    ready_seconds: float | None = None
    server_log: str | None = None
    still_running: list[int] = Field(default_factory=list, description="Server processes that would not stop.")
    eval: EvalRunResult | None = Field(None, description="None for the plan shown before the user's yes.")
    plan: str | None = Field(None, description="What a yes would run, where nothing was done yet.")
    next: str | None = None

    def render(self) -> str:
        if self.eval is None:
            return f"{self.plan}\nnext: {self.next}"
        lines = [f"served {self.checkpoint} at {self.base_url} (ready in {self.ready_seconds:.0f} s)",
                 self.eval.render()]
        if self.still_running:
            lines.append(f"server processes still running: {', '.join(map(str, self.still_running))}")
        return "\n".join(lines)

    def exit_code(self) -> int:
        return 1 if self.still_running or self.eval is None else self.eval.exit_code()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_argv(checkpoint: str, port: int, uv: str | None, vllm: str | None, prime_rl: bool) -> list[str]:
    if prime_rl and uv:
        return [uv, "run", "inference", "--model.name", checkpoint, "--server.port", str(port)]
    if vllm:
        return [vllm, "serve", checkpoint, "--host", "127.0.0.1", "--port", str(port)]
    raise ToolError("no-inference-server", "nothing here can serve a checkpoint: no prime-rl checkout with uv, "
                    "and no vLLM in the workspace", "pass --prime-rl PATH, or install the GPU extra "
                    "(`uv sync --extra gpu`) for vLLM")


def train_eval(args: CheckpointEvalInput, ctx: Context) -> CheckpointEvalResult:
    stack = stack_info(StackInput(prime_rl=args.prime_rl), ctx)
    environ = {"PATH": search_path(workspace_interpreter(ctx.workspace))}
    port = free_port()
    argv = server_argv(args.checkpoint, port, stack.uv.path if stack.uv else None, process.which("vllm", environ),
                       stack.prime_rl is not None)
    base_url = f"http://127.0.0.1:{port}/v1"
    if not args.yes:  # a server starts and the eval's results may be uploaded: only the person says yes
        upload = ", uploading its results" if args.upload else ""
        return CheckpointEvalResult(
            checkpoint=args.checkpoint, server=argv, base_url=base_url, next=not_confirmed("serve and evaluate it"),
            plan=f"would serve {args.checkpoint} with `{' '.join(argv)}` at {base_url}, smoke-eval it on "
                 f"{args.env} ({args.num_examples} examples x {args.rollouts} rollouts{upload}), then stop the server")
    cwd = Path(stack.prime_rl.path) if stack.prime_rl and argv[1:3] == ["run", "inference"] else ctx.workspace
    folder = rlpilot_home(ctx.workspace) / "serve" / f"serve-{uuid.uuid4().hex[:8]}"
    files.make_dirs(folder, private=True)
    started = time.monotonic()
    pid = local.spawn(argv, cwd, folder, folder.name)
    try:
        _wait_ready(base_url, pid, folder / "output.log", started + args.ready_minutes * 60, ctx)
        ready = time.monotonic() - started
        result = eval_run(EvalRunInput(env=args.env, model=args.checkpoint, base_url=base_url,
                                       num_examples=args.num_examples, rollouts=args.rollouts, upload=args.upload,
                                       yes=True),  # the person's yes to train eval covers its eval
                          ctx)
    finally:
        left = local.stop_group(pid)
    return CheckpointEvalResult(checkpoint=args.checkpoint, server=argv, base_url=base_url, ready_seconds=ready,
                                server_log=str(folder / "output.log"), still_running=left, eval=result)


def _wait_ready(base_url: str, pid: int, log: Path, deadline: float, ctx: Context) -> None:
    from tools.io import http  # httpx only once a server is waited for: `train eval --help` answers at once

    ctx.emit({"type": "log", "line": f"waiting for the server at {base_url} (log: {log})"})
    while time.monotonic() < deadline:
        if not local.group_members(pid):
            tail = " | ".join(files.last_lines(log, 3))
            raise ToolError("server-failed", f"the server exited before it answered: {tail}", f"see {log}")
        answer = http.loopback_json(f"{base_url}/models", http.Deadlines(overall=PROBE_S))
        if isinstance(answer, dict) and answer.get("data") is not None:
            return
        time.sleep(1.0)
    raise ToolError("server-not-ready", f"the server did not answer at {base_url} in time", f"see {log}; raise "
                    "--ready-minutes for a large model")
