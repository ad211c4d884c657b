"""`rlpilot env install|status|push`: the Environments Hub through `prime env` (prime 0.18).

Facts the code relies on (read in prime_cli/commands/env.py, checked against the real CLI):
- `prime env install` exits 0 even when the install itself failed; only its summary says so.
- `prime env push` prompts for a Hub username when the account has none; with our closed stdin
  that prompt aborts, and the output says "missing a username".
- A successful push prints "Successfully pushed OWNER/NAME" and records the id in
  `<env>/.prime/.env-metadata.json`.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.envs.identity import Identity
from tools.envs.package import PackageReport, check_package
from tools.framework.contract import Arg, Confirmation, Context, ToolResult, not_confirmed
from tools.framework.errors import BadInput, ToolError
from tools.framework.findings import Finding
from tools.framework.workspace import Interpreter, workspace_interpreter
from tools.io import files, process
from tools.stack.prime_cli import (
    LOGIN_HINT,
    error_lines,
    find_prime,
    json_output,
    prime_environment,
    prime_login,
    raise_known_failure,
    run_prime,
)
from tools.verifiers.refs import FORMS, EnvRef, local_env_dir, parse_env_ref, pushed_hub_id
from tools.verifiers.source import project

HUB_URL = "https://app.primeintellect.ai/dashboard/environments"
INSTALL_TIMEOUT = 900.0

EnvArg = Annotated[str, Arg(positional=True, metavar="ENV"), Field(description=FORMS)]


def _local_dir_or_fail(ctx: Context, ref: EnvRef, path: Path | None = None) -> Path:
    folder = ctx.resolve_folder(path or local_env_dir(ctx.workspace, ref)).resolve()
    if not folder.is_dir():
        hint = "pass --path to its folder, or create it with `vf-init NAME` under environments/"
        if (ctx.workspace / "environments" / ref.name).is_dir() and ref.name != ref.folder_name:
            hint = f"rename environments/{ref.name} to environments/{ref.folder_name}: the module name uses '_'"
        raise BadInput("env-not-found", f"no environment folder {folder}", hint)
    return folder


# -- install ---------------------------------------------------------------------------------


class EnvInstallInput(BaseModel):
    env: EnvArg
    create_venv: Annotated[bool, Arg(user_decision=True), Field(
        description="When the workspace has no environment of its own, make it a uv project with a .venv "
                    "(`uv init --bare` where there is no pyproject.toml, then `uv venv`) and install there.")] = False
    into_rlpilot: Annotated[bool, Arg(user_decision=True), Field(
        description="Install into rlpilot's own environment (the next `uv sync` of rlpilot removes it).")] = False
    yes: Annotated[Confirmation, Field(description="Install (the user confirmed the plan).")] = False


class EnvInstallPlan(ToolResult):
    """What an install would put where: its code runs in that interpreter, so the user says yes first."""

    env: str
    source: Literal["local", "hub"]
    version: str | None = Field(description="The version that would be installed, when known.")
    folder: str | None = Field(None, description="A local environment's folder.")
    python: str = Field(description="The interpreter it would be installed into.")
    creates: list[str] = Field(default_factory=list, description="What would be made in the workspace first.")
    identity: Identity | None = Field(None, description="What a local folder is, as verifiers would load it.")
    dependencies: list[str] | None = Field(None, description="What a local package declares it needs (a Hub "
                                                             "package's are read by the CLI).")

    def render(self) -> str:
        origin = "from the Environments Hub" if self.source == "hub" else f"from {self.folder}"
        lines = [f"install {self.env} {self.version or '(version unknown)'} {origin} into {self.python}"]
        if self.identity:
            lines.append(f"is: {self.identity.shown()}")
        declared = (f" ({', '.join(self.dependencies)})" if self.dependencies else " (none declared)") \
            if self.dependencies is not None else ""
        # A new .venv has nothing yet: everything the package needs is downloaded and installed there.
        fresh = ", all of them new to the .venv it creates" if ".venv" in self.creates else ""
        lines.append(f"with its dependencies{declared} and theirs, from the package index{fresh}")
        lines.append("its code will run there (at install and whenever the environment is loaded)")
        return "\n".join(lines + ([f"first creates {', '.join(self.creates)} in the workspace"]
                                   if self.creates else []))


class EnvInstallResult(ToolResult):
    env: str
    source: Literal["local", "hub"]
    installed: list[str] = Field(description="What the CLI reports installed, as name@version; none before a yes.")
    python: str = Field(description="The workspace interpreter it was installed into.")
    created: list[str] = Field(default_factory=list, description="What --create-venv made in the workspace.")
    plan: EnvInstallPlan | None = Field(None, description="What a yes would install, where nothing was done yet.")
    next: str

    def render(self) -> str:
        if self.plan is not None:
            return f"{self.plan.render()}\nnext: {self.next}"
        made = [f"created {', '.join(self.created)} in the workspace"] if self.created else []
        return "\n".join([*made, f"installed {', '.join(self.installed)} into {self.python}", f"next: {self.next}"])

    def exit_code(self) -> int:
        return 0 if self.installed else 1


def install_argv(ref: EnvRef, folder: Path | None) -> list[str]:
    """`prime env install` of a Hub id, or of a local folder (whose parent the CLI searches)."""
    return ["env", "install", ref.text] + (["--path", str(folder.parent)] if folder else [])


def _is_rlpilots_own(interpreter: Interpreter) -> bool:
    # In rlpilot's checkout the workspace's .venv is rlpilot's own: found by pyproject, yet ours.
    return interpreter.found_by == "rlpilot" or interpreter.bin_dir.parent.resolve() == Path(sys.prefix).resolve()


def _install_target(args: EnvInstallInput, ctx: Context) -> tuple[Path, list[str]]:
    """The interpreter an install goes into, and what must be made for it first (`pyproject.toml`,
    `.venv`, only when the user asked): the workspace's, never rlpilot's own unless asked."""
    interpreter = workspace_interpreter(ctx.workspace, prime_environment(ctx.workspace))
    if args.into_rlpilot or not _is_rlpilots_own(interpreter):
        return interpreter.python, []
    venv = ctx.workspace / ".venv"
    if venv.exists() and venv.resolve() == Path(sys.prefix).resolve():
        raise BadInput("workspace-is-rlpilot", f"{ctx.workspace}'s environment {venv} is rlpilot's own: what is "
                       "installed there is removed by the next `uv sync`", "work in a folder of your own (the "
                       "README's 'Your own project'), or pass --into-rlpilot to install here anyway")
    if not args.create_venv:
        raise BadInput("no-workspace-venv", f"{ctx.workspace} has no Python environment of its own, and rlpilot "
                       f"does not install into its own ({interpreter.python})",
                       f"pass --create-venv to make {venv} (and a pyproject.toml where there is none), activate "
                       "one with VIRTUAL_ENV, or pass --into-rlpilot")
    to_make = [] if (ctx.workspace / "pyproject.toml").exists() else ["pyproject.toml"]
    return venv / "bin" / "python", to_make + ([] if venv.exists() else [".venv"])


def _make(parts: list[str], ctx: Context) -> Path:
    """Make the workspace's environment, as `_install_target` planned; return its interpreter."""
    if "pyproject.toml" in parts:
        # The prime CLI, vf-eval and rlpilot find a .venv beside the nearest pyproject.toml.
        _uv(["init", "--bare", "--no-workspace", "--name", _project_name(ctx.workspace)], ctx)
    if ".venv" in parts:
        _uv(["venv", "--quiet", "--python", sys.executable, str(ctx.workspace / ".venv")], ctx)
    return workspace_interpreter(ctx.workspace, prime_environment(ctx.workspace)).python


def install_preview(args: EnvInstallInput, ctx: Context) -> EnvInstallPlan:
    """`env install`'s preview: the same checks, what the folder is, the id and version, what it brings,
    and the interpreter it goes into. With no prime CLI it refuses here, before anything is made."""
    ref = parse_env_ref(args.env)
    folder = None if ref.is_hub else _local_dir_or_fail(ctx, ref)
    python, creates = _install_target(args, ctx)
    find_prime(prime_environment(ctx.workspace))
    identity = dependencies = None
    if folder is not None:
        report = check_package(folder)
        version, identity = report.version, report.identity
        dependencies = [d for d in project(folder).get("dependencies", []) if isinstance(d, str)]
    elif ref.version:
        version = ref.version
    else:
        version = env_status(EnvStatusInput(env=ref.hub_id), ctx).version
        version = f"{version} (the latest)" if version else None
    return EnvInstallPlan(env=ref.text, source="hub" if ref.is_hub else "local", version=version,
                          folder=str(folder) if folder else None, python=str(python), creates=creates,
                          identity=identity, dependencies=dependencies)


def _project_name(workspace: Path) -> str:
    return re.sub(r"[^a-z0-9]+", "-", workspace.resolve().name.lower()).strip("-") or "workspace"


def _uv(args: list[str], ctx: Context) -> None:
    outcome = process.run(["uv", *args], cwd=ctx.workspace, env=prime_environment(ctx.workspace), timeout=300)
    if not outcome.ok:
        raise ToolError("venv-failed", f"`uv {' '.join(args)}` failed in {ctx.workspace}: "
                        f"{' | '.join(outcome.stderr_tail[-3:]) or outcome.returncode}",
                        "create the environment yourself (`uv venv`), then install again")


def env_install(args: EnvInstallInput, ctx: Context) -> EnvInstallResult:
    ref = parse_env_ref(args.env)
    plan = install_preview(args, ctx)  # said before anything is made or installed, on every surface
    if not args.yes:  # the package's code runs in the workspace's Python: only the person says yes
        return EnvInstallResult(env=ref.text, source=plan.source, installed=[], python=plan.python, plan=plan,
                                next=not_confirmed("install", "nothing was installed or created"))
    for line in plan.render().splitlines():
        ctx.emit({"type": "log", "line": line})
    argv = install_argv(ref, Path(plan.folder) if plan.folder else None)
    python, created = Path(plan.python), plan.creates
    try:
        if created:
            python = _make(created, ctx)
        return _install(ref, argv, python, created, ctx)
    except ToolError:
        _unmake(created, ctx)  # a failed install leaves the workspace as it found it
        raise


def _unmake(parts: list[str], ctx: Context) -> None:
    for part in (".venv", "pyproject.toml"):
        if part in parts:
            files.remove(ctx.workspace / part, root=ctx.workspace, best_effort=True)


def _install(ref: EnvRef, argv: list[str], python: Path, created: list[str], ctx: Context) -> EnvInstallResult:
    outcome = run_prime(argv, ctx, what=f"installing {ref.text}", timeout=INSTALL_TIMEOUT, check=False, stream=True)
    text = outcome.stdout
    # The CLI's closing summary ("Installed 1 environment:", then one "✓ name@version" each); uv's
    # own "Installed 1 package" lines come before it.
    summary = re.split(r"^Installed \d+ environments?:$", text, maxsplit=1, flags=re.M)
    installed = re.findall(r"^✓ (\S+@\S+)$", summary[1].split("Failed to install")[0], re.M) \
        if len(summary) == 2 else []
    if not outcome.ok or "Failed to install" in text or not installed:
        raise_known_failure(outcome, f"installing {ref.text}", prime_environment(ctx.workspace))  # exit 0 too
        not_found = "HTTP 404" in text or "not found" in text.lower()
        raise ToolError(
            "env-not-found" if not_found and ref.is_hub else "install-failed",
            f"installing {ref.text} into {python} failed: {error_lines(outcome)}",
            f"check the id with `rlpilot env status {ref.hub_id}`" if ref.is_hub and not_found
            else "read the error above; a missing dependency usually needs `uv add` in the workspace",
        )
    return EnvInstallResult(
        env=ref.text, source="hub" if ref.is_hub else "local", installed=installed, python=str(python),
        created=created,
        # prime prints a verifiers 0.3 hint (`from verifiers import load_environment`) that fails on 0.4.
        next=f"smoke-test it with the first go-to instruct model (any alias of configs/endpoints.toml works): "
             f"`rlpilot eval run {ref.name} --endpoint {ctx.settings.go_to('instruct')[0]} --num-examples 5`",
    )


# -- status ----------------------------------------------------------------------------------


class EnvStatusInput(BaseModel):
    env: EnvArg


class EnvStatusResult(ToolResult):
    hub_id: str
    visibility: str | None
    version: str | None
    content_hash: str | None
    created_at: str | None
    url: str

    def render(self) -> str:
        return "\n".join([
            f"{self.hub_id}  ({self.visibility or 'visibility unknown'})",
            f"latest version  {self.version or 'none pushed'}",
            f"page            {self.url}",
        ])


def status_argv(hub_id: str) -> list[str]:
    return ["env", "status", hub_id, "--output", "json"]


def env_status(args: EnvStatusInput, ctx: Context) -> EnvStatusResult:
    ref = parse_env_ref(args.env)
    if ref.is_hub:
        hub_id = ref.hub_id
    else:
        hub_id = pushed_hub_id(_local_dir_or_fail(ctx, ref))
        if hub_id is None:
            raise BadInput("env-not-pushed", f"environments/{ref.folder_name} has not been pushed from here "
                           "(no .prime/.env-metadata.json)", f"pass its Hub id owner/name, or push it with "
                           f"`rlpilot env push {ref.name} --visibility PUBLIC|PRIVATE`")
    outcome = run_prime(status_argv(hub_id), ctx, what=f"reading {hub_id}", check=False)
    if not outcome.ok:
        if "404" in outcome.stdout:
            raise ToolError("env-not-found", f"{hub_id} is not on the Environments Hub (or is private to "
                            "another account)", "check the owner and name; private environments need your login")
        raise ToolError("prime-failed", f"reading {hub_id} failed: {error_lines(outcome)}", "retry")
    data = json_output(outcome)
    latest = data.get("latest_version") or {}
    return EnvStatusResult(
        hub_id=hub_id, visibility=data.get("visibility"), version=latest.get("semantic_version"),
        content_hash=latest.get("content_hash"), created_at=latest.get("created_at"), url=f"{HUB_URL}/{hub_id}",
    )


# -- push ------------------------------------------------------------------------------------

# Left out of a push, as `prime env push` builds the package (caches, builds, eval outputs).
_NOT_PUSHED = {"__pycache__", "build", "dist", "outputs"}
MAX_PUSHED_FILES = 5000


class EnvPushInput(BaseModel):
    env: EnvArg
    path: Annotated[Path | None, Arg(metavar="DIR"),
                    Field(description="The environment's folder (default: environments/<name>).")] = None
    visibility: Annotated[Literal["PUBLIC", "PRIVATE"] | None,
                          Arg(asks="visibility", prompt="Push {package} {version} from {path} to the Hub as "
                                                        "PUBLIC or PRIVATE?"),
                          Field(description="Who may see it on the Hub; the user chooses.")] = None
    binding: Annotated[str | None, Arg(cli_only=True),
                       Field(description="The hash of the files the user confirmed; other files are not pushed.")] \
        = None


class EnvPushResult(ToolResult):
    env: str
    path: str
    package: str | None = Field(None, description="The project name in its pyproject.toml.")
    files: int = Field(0, description="How many files the push sends.")
    fingerprint: str | None = Field(None, description="A hash of the files the push sends.")
    pushed: bool
    hub_id: str | None = Field(None, description="owner/name on the Hub, for the training config.")
    visibility: str | None = None
    version: str | None = None
    runtime: str | None = Field(None, description="How the Hub classifies the package.")
    url: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    identity: Identity | None = Field(None, description="What the folder is, as verifiers would load it, on what "
                                                       "evidence.")
    next: str

    def render(self) -> str:
        lines = [f"{f.severity}: {f.message}\n  fix: {f.fix}" for f in self.findings]
        if self.identity:
            lines.insert(0, f"is: {self.identity.shown()}")
        if self.pushed:
            lines.insert(0, f"pushed {self.hub_id} {self.version or ''} ({self.visibility}, {self.runtime})")
            lines.insert(1, f"page: {self.url}")
        elif self.refused():
            lines.insert(0, f"not pushed: {self.path} is not ready for the Hub")
        else:
            lines.insert(0, f"would push {self.package} {self.version or ''}: {self.files} files from {self.path}")
        return "\n".join(lines + [f"next: {self.next}"])

    def exit_code(self) -> int:
        return 0 if self.pushed else 1

    def refused(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    def binding(self) -> str | None:
        return self.fingerprint


def push_argv(folder: Path, visibility: str, owner: str | None, runtime: str | None = None) -> list[str]:
    # A v0 package often declares `verifiers>=0.2,<0.4`, whose floor prime would classify as v1.
    return ["env", "push", "--path", str(folder), "--visibility", visibility] + (["--owner", owner] if owner else []) \
        + (["--runtime", runtime] if runtime else [])


def push_preview(args: EnvPushInput, ctx: Context) -> EnvPushResult:
    """What a push would send, after every check the push makes (the id, the folder, login, the package)."""
    ref, folder, report = _checked_push(args, ctx)
    files = _pushed_files(folder)
    preview = EnvPushResult(env=ref.text, path=str(folder), package=report.name, version=report.version,
                            files=len(files), fingerprint=_fingerprint(folder, files), pushed=False,
                            findings=report.findings, identity=report.identity, next="choose PUBLIC or PRIVATE")
    if preview.refused():
        preview.next = f"fix the errors, then `rlpilot env push {ref.text} --visibility PUBLIC|PRIVATE`"
    return preview


def _require_login(ref: EnvRef, ctx: Context) -> None:
    if not prime_login(prime_environment(ctx.workspace))[0]:
        raise ToolError("not-logged-in", f"pushing {ref.name} needs a Prime login", LOGIN_HINT)


def _checked_push(args: EnvPushInput, ctx: Context) -> tuple[EnvRef, Path, PackageReport]:
    ref = parse_env_ref(args.env)
    if ref.version:
        raise BadInput("bad-env-id", f"{ref.text}: a push takes its version from pyproject.toml",
                       f"drop @{ref.version}, and set [project].version instead")
    folder = _local_dir_or_fail(ctx, ref, args.path)
    # Before the package check (it imports the package, seconds): without a login nothing can be pushed.
    _require_login(ref, ctx)
    environ = prime_environment(ctx.workspace)
    # The check imports the package: its code runs before anything is confirmed, so with no key and no network.
    importing = process.minimal_environment({"PATH": environ["PATH"]}, offline=True)
    report = check_package(folder, workspace_interpreter(ctx.workspace, environ).python, importing)
    if report.name and _normalized(report.name) != _normalized(ref.name):
        raise BadInput("env-mismatch", f"{folder} holds the package {report.name!r}, not {ref.name!r}",
                       f"push it by its own name (`rlpilot env push {report.name} --path {args.path or folder}`), "
                       f"or point --path at {ref.name}'s folder")
    return ref, folder, report


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pushed_files(folder: Path) -> list[Path]:
    """The files a push sends: the package, without caches, builds, outputs or hidden folders."""
    kept = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if path.is_file() and not any(p.startswith(".") or p in _NOT_PUSHED for p in parts):
            kept.append(path)
        if len(kept) > MAX_PUSHED_FILES:
            raise BadInput("env-too-large", f"{folder} has more than {MAX_PUSHED_FILES} files to push",
                           "move data and outputs out of the environment's folder")
    return kept


def _fingerprint(folder: Path, pushed: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in pushed:
        with files.open_regular(path) as handle:  # streamed: a large data file in the package costs no memory
            content = hashlib.file_digest(handle, "sha256").digest()
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + content)
    return digest.hexdigest()


def env_push(args: EnvPushInput, ctx: Context) -> EnvPushResult:
    if args.visibility is None:
        raise BadInput("visibility-required", f"choose who may see {args.env} on the Environments Hub: PUBLIC "
                       "(anyone) or PRIVATE (you and your team); rlpilot never picks for you",
                       "pass --visibility PUBLIC or --visibility PRIVATE")
    ref, folder, report = _checked_push(args, ctx)
    if not report.ok:
        return EnvPushResult(env=ref.text, path=str(folder), package=report.name, pushed=False,
                             findings=report.findings, identity=report.identity,
                             next=f"fix the errors, then `rlpilot env push {ref.text} --visibility {args.visibility}`")
    if args.binding and args.binding != _fingerprint(folder, _pushed_files(folder)):
        raise ToolError("changed-since-preview", f"the files in {folder} changed after the push was confirmed",
                        "look at the new preview and choose the visibility again")

    outcome = run_prime(push_argv(folder, args.visibility, ref.owner, report.api), ctx, what=f"pushing {ref.name}",
                        timeout=INSTALL_TIMEOUT, check=False, stream=True)
    text = outcome.stdout
    if "missing a username" in text.lower():
        raise ToolError("hub-username-missing", "your Prime account has no Hub username yet, and a push needs "
                        "one (it is public and can be chosen only once)",
                        "run `prime env push` once in a terminal to choose it, then push again")
    pushed = re.search(r"Successfully pushed (\S+/\S+)", text)
    if not outcome.ok or not pushed:
        raise ToolError("push-failed", f"pushing {folder} failed: {error_lines(outcome)}",
                        "read the error above and retry; `rlpilot env check` runs the environment locally first")
    runtime = re.search(r"Publishing as (.+?) \(from", text)
    hub_id = pushed.group(1)
    return EnvPushResult(
        env=ref.text, path=str(folder), package=report.name, pushed=True, hub_id=hub_id, visibility=args.visibility,
        version=report.version, runtime=runtime.group(1) if runtime else "Unclassified",
        url=f"{HUB_URL}/{hub_id}", findings=report.findings, identity=report.identity,
        next=f"install it with verifiers<0.4 (`uv add 'verifiers<0.4'`, then `rlpilot env install {hub_id}`); a "
             "v0 environment trains on a stack that still loads `load_environment`" if report.api == "v0" else
        f"point the training config at it, e.g. `rlpilot config set CONFIG "
             f"orchestrator.train.source[0].env.taskset.id={hub_id}` (prime-rl-current), "
             f"then `rlpilot train launch CONFIG --hosted`",
    )

