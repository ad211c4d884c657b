"""The command forms of `eval run`: which command runs the eval on the installed stack, and its flags.

The playbook's `prime eval run my-env -m gpt-4.1-mini -n 20 -r 3 -s` now fails: prime 0.18 runs
evals on the platform only (https://pypi.org/project/prime/0.18.0/). So:
- verifiers >= 0.4: `vf-eval` with every costly default set explicitly: its defaults are a
  remote model, every task, a Prime sandbox and an upload. `--no-push` only when the user said so.
- no `vf-eval` in the workspace, but a prime-rl checkout at v0.9 or later: prime-rl's own
  `uv run eval` in the checkout. Its defaults cost more still: a paid model on Prime Inference,
  every task, 128 requests in flight, a dashboard server on port 7788, and an upload by
  `[monitors.prime]`; each is set explicitly.
- an older stack: the local `prime eval run ... -s` (prime <= 0.6), else vf-eval's old flags;
- a local verifiers v0 environment on a 0.4 stack: its own release's vf-eval, in a runtime of its own;
- `--hosted`: `prime eval run owner/name --hosted ... --follow` on the platform.
"""

from __future__ import annotations

import ast
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.evals.results import LEGACY_RESULTS, STREAM_DIR, TRACES_FILE, stream_chunks
from tools.framework.contract import Arg, Confirmation, Context
from tools.framework.eras import Dialect, prime_cli_is_native, version_tuple
from tools.framework.errors import BadInput
from tools.framework.workspace import rlpilot_home
from tools.io import process
from tools.stack.info import HOW_TO_GET, StackResult
from tools.stack.prime_cli import cli_args, find_prime
from tools.verifiers.refs import EnvRef, local_env_dir
from tools.verifiers.source import Roles, base_name, exported_names, parse
from tools.verifiers.v0 import V0_REQUIREMENT, detect, ensure_runtime, runtime_dir, v0_message

Form = Literal["vf-eval", "prime-rl-eval", "vf-eval-legacy", "prime-local", "prime-hosted"]
OUTPUT_DIR = "outputs"
# A smoke eval needs at most n x r requests in flight; prime-rl's 128 is a burst a local server
# or a metered API should not get from a check.
SMOKE_CONCURRENCY = 32
# Counts past these are typos, not evals, refused here in one line (vf-eval ends in a traceback): a
# million examples is past any eval split, 1024 rollouts per example far past the 16-32 group sizes
# prime-rl's docs call common (docs/training.md, cited in tools/framework/playbook.py) [derived].
MAX_EXAMPLES = 1_000_000
MAX_ROLLOUTS = 1024


class EvalRunInput(BaseModel):
    env: Annotated[str, Arg(positional=True),
                   Field(description="The environment: an installed local name, or owner/name for --hosted.")]
    model: Annotated[str | None, Arg(short="-m"), Field(description="The model id sent to the endpoint.")] = None
    endpoint: Annotated[str | None, Arg(metavar="ALIAS", asks="model-family", answered_by=("model", "base_url")),
                        Field(description="An alias from configs/endpoints.toml (model, URL and key variable).")] = None
    # A key goes only where the user sent it: a URL and key variable are a person's to type.
    base_url: Annotated[str | None, Arg(metavar="URL", user_decision=True),
                        Field(description="OpenAI-compatible base URL (default: the alias's, else Prime "
                                          "Inference).")] = None
    api_key_var: Annotated[str | None, Arg(metavar="VAR", user_decision=True),
                           Field(description="NAME of the environment variable holding the API key.")] = None
    num_examples: Annotated[int, Arg(short="-n"),
                            Field(ge=1, le=MAX_EXAMPLES, description="Examples to evaluate.")] = 20
    rollouts: Annotated[int, Arg(short="-r"), Field(ge=1, le=MAX_ROLLOUTS,
                                                     description="Rollouts per example (group size).")] = 3
    hosted: Annotated[bool, Field(description="Run on the Prime platform (the environment must be published).")] \
        = False
    upload: Annotated[bool, Arg(user_decision=True),
                      Field(description="Upload results to the platform (vf-eval's default); --no-upload only "
                                        "when the user asked.")] = True
    # Where and how rollouts run costs money (`prime` is a paid sandbox): the user's call, not the model's.
    harness: Annotated[str | None, Arg(cli_only=True),
                       Field(description="vf-eval harness; default: the environment's own when it ships one, "
                                         "else `null` (a plain chat loop).")] = None
    runtime: Annotated[str, Arg(cli_only=True), Field(
        description="vf-eval runtime; `subprocess` runs on this machine, `prime` in a paid sandbox.")] = "subprocess"
    timeout_minutes: Annotated[float, Arg(cli_only=True),
                               Field(gt=0, description="Stop the eval after this long.")] = 30
    binding: Annotated[str | None, Arg(cli_only=True),
                       Field(description="The plan the user confirmed (its hash); a different plan is refused.")] = None
    yes: Annotated[Confirmation, Field(description="Run the eval (the user confirmed the plan).")] = False


@dataclass
class Target:
    model: str
    base_url: str | None
    key_var: str | None


@dataclass
class Plan:
    form: Form
    argv: list[str]
    results: Callable[[], Path | None]  # the results file, once it exists
    run_dir: Path | None = None
    cwd: Path | None = None  # where it runs, when not the workspace
    environ: dict[str, str] | None = None  # its environment, when not the workspace's
    progress: Callable[[], Path | None] | None = None  # a file with a line per finished rollout, if not results
    python: Path | None = None  # the interpreter that imports the environment, when not the workspace's
    prepare: Callable[[], None] | None = None  # makes what the command needs (a v0 runtime) just before it runs
    harness: str | None = None  # what plays each rollout, as the preview names it; None where the form has none
    roles: Roles | None = None  # the roles given the agent flags; None where the form takes none


def run_name(env: str, model: str, stamp: str | None = None) -> str:
    def slug(text: str) -> str:
        return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")

    stamp = stamp or f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"
    return f"{slug(env.split('/')[-1])}--{slug(model)}--{stamp}"


def plan_command(args: EvalRunInput, target: Target, stack: StackResult, environ: dict[str, str],
                 workspace: Path, name: str, own_harness: str | None = None, roles: Roles | None = None) -> Plan:
    """The command of the form the stack runs. `own_harness`: the Harness the environment ships
    (`bundled_harness`), which vf-eval 0.4 and prime-rl's eval run unless --harness names another.
    `roles`: what the environment declares (`read_roles`); each gets the harness and runtime flags,
    and none does while they are not read."""
    roles = roles or Roles(None, "the environment's source was not read")
    counts = ["-m", target.model, "-n", str(args.num_examples), "-r", str(args.rollouts)]
    if args.hosted:
        keys = (["-b", target.base_url] if target.base_url else []) + \
               (["-k", target.key_var] if target.key_var else [])
        # The samples land where the summary reads them.
        samples = rlpilot_home(workspace, environ) / "evals" / name / LEGACY_RESULTS
        return Plan("prime-hosted", [find_prime(environ), *cli_args(["eval", "run", args.env, "--hosted", *counts,
                                                                     *keys, "--follow", "--eval-name", name])],
                    results=lambda: samples if samples.is_file() else None, run_dir=samples.parent)
    verifiers = stack.verifiers.version if stack.verifiers else None
    modern = bool(verifiers) and version_tuple(verifiers) >= (0, 4)
    # The order `stack` lists: vf-eval while the workspace has it, then prime-rl's own CLI.
    if not process.which("vf-eval", environ) and stack.prime_rl and stack.prime_rl.dialect is Dialect.V09:
        return _prime_rl_eval(args, target, stack, environ, workspace, name, own_harness, roles)
    if modern:
        vf_eval = _program("vf-eval", environ, "install verifiers in the workspace: `uv add 'verifiers>=0.4'`, "
                           "or point RLPILOT_PRIME_RL at a prime-rl checkout of v0.9 or later (`uv run eval`)")
        run_dir = workspace / OUTPUT_DIR / name
        flags, harness = _agent_flags(args, own_harness, roles)
        argv = [vf_eval, args.env, *counts, "--client.base-url", target.base_url, "--client.api-key-var",
                target.key_var, *flags, "--run.name", name, "--output-dir", OUTPUT_DIR,
                "--no-rich"] + ([] if args.upload else ["--no-push"])
        traces = run_dir / TRACES_FILE
        return Plan("vf-eval", argv, results=lambda: traces if traces.is_file() else None, run_dir=run_dir,
                    harness=harness, roles=roles)
    legacy = ["-b", target.base_url, "-k", target.key_var, "-s"]
    since = time.time()
    if stack.prime and not prime_cli_is_native(stack.prime.version):
        prime = _program("prime", environ, "install the Prime CLI")
        argv = [prime, "eval", "run", args.env, *counts, *legacy] + ([] if args.upload else ["--skip-upload"])
        return Plan("prime-local", argv, results=lambda: _newest_legacy_results(workspace, since))
    if verifiers:
        vf_eval = _program("vf-eval", environ, "reinstall verifiers in the workspace")
        return Plan("vf-eval-legacy", [vf_eval, args.env, *counts, *legacy],
                    results=lambda: _newest_legacy_results(workspace, since))
    raise BadInput("no-local-eval", "nothing installed can run a local eval: verifiers is missing from the "
                   "workspace's Python", "add it: `uv add 'verifiers>=0.4'`, point RLPILOT_PRIME_RL at a prime-rl "
                   "checkout of v0.9 or later (`uv run eval`), or run with --hosted")


def v0_plan(args: EvalRunInput, ref: EnvRef, target: Target, stack: StackResult, environ: dict[str, str],
             ctx: Context, name: str) -> Plan | None:
    """A local verifiers v0 environment, while the workspace's verifiers is 0.4 or missing: its own release's
    vf-eval, from the verifiers<0.4 runtime rlpilot makes for it (never the workspace's Python)."""
    folder = local_env_dir(ctx.workspace, ref)
    if ref.is_hub or not folder.is_dir() or not detect(folder).is_v0:
        return None
    verifiers = stack.verifiers.version if stack.verifiers else None
    if verifiers and version_tuple(verifiers) < (0, 4):
        return None  # the workspace itself can load it: the legacy form below runs it there
    ctx.emit({"type": "log", "line": f"{v0_message(ref.name)}: running it with {V0_REQUIREMENT} in rlpilot's "
                                     "runtime for it"})
    python = runtime_dir(folder, ctx.workspace, environ) / "bin" / "python"
    output = rlpilot_home(ctx.workspace, environ) / "evals" / name
    # verifiers 0.3's own flags (scripts/eval.py): -b/-k name the endpoint, -s saves results.jsonl, -d no TUI.
    argv = [str(python.parent / "vf-eval"), ref.name, "-m", target.model, "-n", str(args.num_examples),
            "-r", str(args.rollouts), "-c", str(min(SMOKE_CONCURRENCY, args.num_examples * args.rollouts)),
            "-b", target.base_url, "-k", target.key_var, "-s", "-o", str(output), "-d"]

    def results() -> Path | None:
        found = sorted(output.glob(f"evals/*/*/{LEGACY_RESULTS}"))
        return found[-1] if found else None

    child = {k: v for k, v in environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    return Plan("vf-eval-legacy", argv, results=results, environ=child, python=python,
                # eval_run is confirmed before it runs (the chat's gate; on the command line, the command itself)
                prepare=lambda: ensure_runtime(folder, ctx.workspace, environ, ctx, confirmed=True))


def _agent_flags(args: EvalRunInput, own: str | None, roles: Roles) -> tuple[list[str], str]:
    """Each declared role's harness and runtime flags, and how the preview names what plays: --harness
    when given, else the environment's own (the flag left out: verifiers 0.4 then picks the taskset's
    bundled Harness), else `null`. verifiers' own fallback is its `bash` harness, which wants a sandbox
    and installs from the package index."""
    chosen = args.harness
    if chosen is None and own:
        settings, shown = [], f"the environment's own ({own})"
    else:
        harness = chosen or "null"
        settings, shown = [("harness.id", harness)], "null (a plain chat loop)" if harness == "null" else harness
    return roles.flags([*settings, ("runtime.type", args.runtime)]), shown


def shown_roles(roles: Roles | None) -> str | None:
    if roles is None or roles.names is not None:
        return roles.shown() if roles else None
    # verifiers' AgentConfig defaults: the taskset's harness, in a Prime sandbox (a paid one, with a login).
    return (f"{roles.shown()}: no role flags passed, so each role keeps its own defaults (its harness, else the "
            "taskset's; the `prime` sandbox runtime unless it pins another)")


def bundled_harness(module_file: Path | None) -> str | None:
    """The Harness subclass an environment's module defines and exports in `__all__`, read (not imported)
    from its source: verifiers 0.4 plays an unpinned agent with it (loaders.py `default_harness_id`).

    Read statically, like `env check` reads rewards, so a preview imports nothing. Not seen: a harness
    imported from a submodule or another package, a subclass of a subclass, an `__all__` built at run
    time; those environments get `null` as before, and `--harness NAME` names theirs.
    """
    tree = parse(module_file).tree if module_file is not None else None
    if tree is None:
        return None
    exported = set(exported_names(tree) or [])
    return next((node.name for node in tree.body if isinstance(node, ast.ClassDef) and node.name in exported
                 and any(base_name(base) == "Harness" for base in node.bases)), None)


def _prime_rl_eval(args: EvalRunInput, target: Target, stack: StackResult, environ: dict[str, str],
                   workspace: Path, name: str, own_harness: str | None, roles: Roles) -> Plan:
    """`uv run eval` in the checkout, its results in the workspace like vf-eval's."""
    checkout = Path(stack.prime_rl.path)
    if not stack.uv:
        raise BadInput("no-uv", f"uv is not installed; prime-rl {stack.prime_rl.version} at {checkout} evaluates "
                       "through `uv run eval`", HOW_TO_GET["uv"])
    if args.upload and not stack.logged_in:
        raise BadInput("upload-needs-login", "uploading the eval's results (`--monitors.prime`) needs a Prime login",
                       "run `prime login` (or export PRIME_API_KEY), or pass --no-upload to keep them here")
    run_dir = workspace / OUTPUT_DIR / name
    flags, harness = _agent_flags(args, own_harness, roles)
    argv = [stack.uv.path, "run", "eval", args.env, "-m", target.model, "-n", str(args.num_examples),
            "-r", str(args.rollouts), "-c", str(min(SMOKE_CONCURRENCY, args.num_examples * args.rollouts)),
            # ClientConfig's fields are verifiers' (base_url, api_key_var); pydantic_config takes either
            # spelling of a dotted flag, and vf-eval's tests run this one.
            "--client.base-url", target.base_url, "--client.api-key-var", target.key_var,
            # The single-source shorthand folds `--env.*` into the source's env block, as vf-eval does.
            *flags,
            # The checkout is the working folder: an absolute output dir keeps the run in the workspace.
            "--run.name", name, "--output-dir", str(workspace / OUTPUT_DIR), "--no-dashboard",
            # Upstream's docs (docs/eval.md) enable the platform upload with `--monitors.prime`; the
            # 2026-09 notes call it a default. Both ways are said, so the default never decides; the
            # `--no-` form is pydantic_config's for an optional sub-config (`--no-monitors.wandb`).
            "--monitors.prime" if args.upload else "--no-monitors.prime"]
    stream = run_dir / STREAM_DIR
    index = stream.parent / "stream.index.jsonl"  # one row per landed episode, beside the chunks
    # `uv run` must use the checkout's own environment, never the workspace's.
    child = {k: v for k, v in environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    return Plan("prime-rl-eval", argv, results=lambda: stream if stream_chunks(stream) else None, run_dir=run_dir,
                cwd=checkout, environ=child, progress=lambda: index if index.is_file() else None,
                python=checkout / ".venv" / "bin" / "python", harness=harness, roles=roles)


def _program(name: str, environ: dict[str, str], hint: str) -> str:
    found = process.which(name, environ)
    if not found:
        raise BadInput("program-not-found", f"`{name}` is not installed in the workspace", hint)
    return found


def _newest_legacy_results(workspace: Path, since: float) -> Path | None:
    """verifiers <= 0.3 writes outputs/evals/<env--model>/<id>/, or the same under environments/<env>/."""
    patterns = [f"{OUTPUT_DIR}/evals/*/*/{LEGACY_RESULTS}", f"environments/*/{OUTPUT_DIR}/evals/*/*/{LEGACY_RESULTS}"]
    found = [p for pattern in patterns for p in workspace.glob(pattern) if p.stat().st_mtime >= since - 1]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)
