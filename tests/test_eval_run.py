"""eval run: the command built for each stack, endpoint aliases, and the checks made before spending.

The vf-eval runs themselves are in test_eval_e2e.py; here nothing reaches a model, and anything
that is not loopback goes to a closed proxy port.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eval_support import ENVIRONMENTS, REPO, use_environments_venv
from fakes.openai_server import ScriptedOpenAIServer

from tools.envs.hub import EnvInstallInput, install_preview
from tools.evals.endpoints import find_alias
from tools.evals.forms import EvalRunInput, Target, bundled_harness, plan_command
from tools.evals.plan import resolve_target
from tools.evals.run import eval_plan, eval_run
from tools.framework.contract import Context
from tools.framework.errors import BadInput, ToolError
from tools.framework.workspace import workspace_interpreter
from tools.stack.info import StackInput, stack_info
from tools.stack.installed import Package, PrimeRL
from tools.verifiers.source import SINGLE_AGENT

NAME = "tiny-arith--stub--20260101-000000-abcd"


@pytest.fixture
def offline(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no ~/.prime login
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture(scope="module")
def stack():
    return stack_info(StackInput(), Context(workspace=REPO))


def plan(stack, workspace: Path, **fields):
    args = EvalRunInput(env="tiny-arith", model="stub", **fields)
    target = Target("stub", "http://127.0.0.1:8000/v1", "STUB_API_KEY")
    return plan_command(args, target, stack, {"PATH": str(REPO / ".venv" / "bin")}, workspace, NAME, roles=SINGLE_AGENT)


def test_vf_eval_sets_every_costly_default_explicitly(stack, tmp_path):
    made = plan(stack, tmp_path)
    assert made.form == "vf-eval" and Path(made.argv[0]).name == "vf-eval"
    # No --no-push: the default upload stays unless the user declines it.
    assert made.argv[1:] == [
        "tiny-arith", "-m", "stub", "-n", "20", "-r", "3", "--client.base-url", "http://127.0.0.1:8000/v1",
        "--client.api-key-var", "STUB_API_KEY", "--env.agent.harness.id", "null",
        "--env.agent.runtime.type", "subprocess", "--run.name", NAME, "--output-dir", "outputs", "--no-rich"]
    assert made.run_dir == tmp_path / "outputs" / NAME
    assert plan(stack, tmp_path, upload=False).argv[-1] == "--no-push"


def test_a_prime_rl_09_checkout_runs_uv_run_eval_with_every_costly_default_explicit(stack, tmp_path):
    checkout = PrimeRL(path=str(tmp_path / "prime-rl"), version="0.9.1", dialect="prime-rl-v0.9", found_by="test")
    v09 = stack.model_copy(update={"verifiers": None, "prime_rl": checkout, "uv": Package(version="0.9", path="uv"),
                                   "logged_in": True})
    args = EvalRunInput(env="tiny-arith", model="stub")
    target = Target("stub", "http://127.0.0.1:8000/v1", "STUB_API_KEY")
    no_vf_eval = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(tmp_path / "ws" / ".venv")}
    made = plan_command(args, target, v09, no_vf_eval, tmp_path, NAME, roles=SINGLE_AGENT)
    assert made.form == "prime-rl-eval"
    # prime-rl's defaults are a paid model on Prime Inference, every task, 128 in flight, a
    # dashboard on port 7788 and an upload: each is named, the upload as the user chose it.
    assert made.argv == [
        "uv", "run", "eval", "tiny-arith", "-m", "stub", "-n", "20", "-r", "3", "-c", "32",
        "--client.base-url", "http://127.0.0.1:8000/v1", "--client.api-key-var", "STUB_API_KEY",
        "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
        "--run.name", NAME, "--output-dir", str(tmp_path / "outputs"), "--no-dashboard", "--monitors.prime"]
    # It runs in the checkout, in the checkout's own environment, and writes into the workspace.
    assert made.cwd == tmp_path / "prime-rl" and "VIRTUAL_ENV" not in made.environ
    assert made.run_dir == tmp_path / "outputs" / NAME
    small = plan_command(args.model_copy(update={"num_examples": 2, "rollouts": 2, "upload": False}), target, v09,
                         no_vf_eval, tmp_path, NAME)
    assert small.argv[10:12] == ["-c", "4"] and small.argv[-1] == "--no-monitors.prime"
    with pytest.raises(BadInput) as refused:
        plan_command(args, target, v09.model_copy(update={"logged_in": False}), no_vf_eval, tmp_path, NAME)
    assert refused.value.code == "upload-needs-login" and "--no-upload" in refused.value.hint
    # While the workspace has vf-eval, it stays the local eval.
    with_vf = v09.model_copy(update={"verifiers": stack.verifiers})
    assert plan_command(args, target, with_vf, {"PATH": str(REPO / ".venv" / "bin")}, tmp_path, NAME).form == "vf-eval"


def test_older_stacks_get_their_own_commands(stack, tmp_path):
    old_prime = stack.model_copy(update={"verifiers": Package(version="0.2.0"), "prime": Package(version="0.6.26")})
    made = plan(old_prime, tmp_path, upload=False)
    assert made.form == "prime-local"
    assert made.argv[1:] == ["eval", "run", "tiny-arith", "-m", "stub", "-n", "20", "-r", "3",
                             "-b", "http://127.0.0.1:8000/v1", "-k", "STUB_API_KEY", "-s", "--skip-upload"]
    legacy_vf = stack.model_copy(update={"verifiers": Package(version="0.3.0"), "prime": None})
    made = plan(legacy_vf, tmp_path)
    assert made.form == "vf-eval-legacy"
    assert made.argv[1:] == ["tiny-arith", "-m", "stub", "-n", "20", "-r", "3",
                             "-b", "http://127.0.0.1:8000/v1", "-k", "STUB_API_KEY", "-s"]


def test_hosted_builds_a_prime_command_that_prime_itself_accepts(stack, offline):
    made = plan(stack, offline, hosted=True)
    assert made.form == "prime-hosted"
    assert made.argv[1:] == ["eval", "run", "tiny-arith", "--hosted", "-m", "stub", "-n", "20", "-r", "3",
                             "-b", "http://127.0.0.1:8000/v1", "-k", "STUB_API_KEY", "--follow",
                             "--eval-name", NAME, "--plain"]
    # The real prime 0.18 parses the whole argv first and only then finds no login: our flags are its flags.
    with pytest.raises(ToolError) as refused:
        eval_run(EvalRunInput(yes=True, env="me/tiny-arith", model="openai/gpt-4.1-mini", hosted=True),
                 Context(workspace=offline))
    assert refused.value.code == "not-logged-in"


def test_hosted_cannot_skip_the_upload(offline):
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(yes=True, env="me/x", model="m", hosted=True, upload=False), Context(workspace=offline))
    assert refused.value.code == "hosted-always-uploads"


def test_a_model_or_an_endpoint_is_required(offline):
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(yes=True, env="tiny-arith"), Context(workspace=offline))
    assert refused.value.code == "no-model" and "--endpoint" in refused.value.hint


def test_a_missing_environment_names_the_install_command(tmp_path_factory, monkeypatch):
    # The workspace's own environment (verifiers, vf-eval), built before HOME and the proxies change.
    venv = use_environments_venv(tmp_path_factory, monkeypatch)
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "environments" / "haiku_env").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))  # no ~/.prime login
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(yes=True, env="haiku-env", model="m", base_url="http://127.0.0.1:9/v1"),
                 Context(workspace=workspace))
    assert refused.value.code == "env-not-installed"
    assert "`rlpilot env install haiku-env`" in refused.value.hint
    assert f"uv pip install --python {venv / 'bin' / 'python'}" in refused.value.hint
    assert "environments/haiku_env" in refused.value.hint


def test_without_a_workspace_venv_the_hint_makes_one_and_never_installs_into_rlpilots(offline, monkeypatch):
    """The interpreter falls back to rlpilot's own (README: the last resort), which `env install`
    refuses without `--create-venv`: the hint is the command that works there."""
    shutil.copytree(REPO / "environments" / "tiny_arith", offline / "environments" / "tiny_arith")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)
    ctx = Context(workspace=offline)
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(yes=True, env="tiny-arith", model="m", base_url="http://127.0.0.1:9/v1"), ctx)
    assert refused.value.code == "env-not-installed" and "rlpilot's own Python" in str(refused.value)
    assert re.findall(r"`([^`]*)`", refused.value.hint) == ["rlpilot env install tiny-arith --create-venv"]
    # What the hint names is what `env install` takes here, into a new workspace .venv; without the flag it refuses.
    with pytest.raises(BadInput) as bare:
        install_preview(EnvInstallInput(env="tiny-arith"), ctx)
    assert bare.value.code == "no-workspace-venv"
    hinted = install_preview(EnvInstallInput(env="tiny-arith", create_venv=True), ctx)
    assert hinted.python == str(offline / ".venv" / "bin" / "python") and ".venv" in hinted.creates
    assert workspace_interpreter(offline).is_fallback


def test_bundled_aliases_and_the_workspace_file_wins(tmp_path):
    local = find_alias("local-vllm", tmp_path)
    assert (local.model, local.url, local.key_var) == ("Qwen/Qwen3-0.6B", "http://localhost:8000/v1", "VLLM_API_KEY")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "endpoints.toml").write_text(
        '[[endpoint]]\nendpoint_id = "local-vllm"\nmodel = "mine"\napi_base_url = "http://127.0.0.1:7/v1"\n'
        'api_key_var = "MY_KEY"\n')
    mine = find_alias("local-vllm", tmp_path)
    assert (mine.model, mine.url, mine.key_var) == ("mine", "http://127.0.0.1:7/v1", "MY_KEY")
    with pytest.raises(BadInput) as unknown:
        find_alias("nope", tmp_path)
    assert unknown.value.code == "unknown-endpoint" and "gpt-4.1-mini" in unknown.value.hint


@pytest.mark.parametrize(("text", "says"), [
    ('[[endpoint]]\nendpoint_id = "a"\nmodel = "m"\n', "lacks url, key"),
    ('[[endpoint]]\nendpoint_id = "a"\nmodel = "m"\nurl = "u"\nkey = "K"\n'
     '[[endpoint]]\nendpoint_id = "a"\nmodel = "other"\nurl = "v"\nkey = "K"\n', "multiple model ids"),
    ('[[endpoint]]\nendpoint_id = "a"\nmodel = "m"\nurl = "u"\nkey = "K"\nclient_type = "x"\n', "rename it"),
    ("endpoint = [", "not valid TOML"),
])
def test_a_bad_endpoints_file_says_where(tmp_path, text, says):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "endpoints.toml").write_text(text)
    with pytest.raises(BadInput) as bad:
        find_alias("a", tmp_path)
    assert str(tmp_path / "configs" / "endpoints.toml") in bad.value.message
    assert says in bad.value.message + bad.value.hint


def test_an_alias_gives_model_url_and_key_locally_and_only_the_model_hosted(tmp_path):
    local = resolve_target(EvalRunInput(env="tiny-arith", endpoint="local-vllm"), tmp_path)
    assert local == Target("Qwen/Qwen3-0.6B", "http://localhost:8000/v1", "VLLM_API_KEY")
    flags_win = resolve_target(EvalRunInput(env="tiny-arith", endpoint="local-vllm", base_url="http://127.0.0.1:1/v1"),
                               tmp_path)
    assert flags_win.base_url == "http://127.0.0.1:1/v1" and flags_win.key_var == "VLLM_API_KEY"
    hosted = resolve_target(EvalRunInput(env="me/tiny-arith", endpoint="gpt-4.1-mini", hosted=True), tmp_path)
    assert hosted == Target("gpt-4.1-mini", None, None)
    # No alias and no URL: Prime Inference, named explicitly rather than left to vf-eval's default.
    plain = resolve_target(EvalRunInput(env="tiny-arith", model="openai/gpt-4.1-mini"), tmp_path)
    assert plain == Target("openai/gpt-4.1-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY")


def test_the_harness_an_environment_ships_is_read_from_its_source(tmp_path):
    def harness_of(source: str) -> str | None:
        module = tmp_path / "env_module.py"
        module.write_text(source)
        return bundled_harness(module)

    taskset = "import verifiers.v1 as vf\n\nclass MyTaskset(vf.Taskset[vf.Task, vf.TasksetConfig]):\n    pass\n"
    assert harness_of(taskset + "\n__all__ = ['MyTaskset']\n") is None
    assert harness_of(taskset + "\nclass MyHarness(vf.Harness[vf.HarnessConfig]):\n    pass\n\n"
                      "__all__ = ['MyTaskset', 'MyHarness']\n") == "MyHarness"
    assert harness_of("from verifiers.v1 import Harness\n\nclass Mine(Harness):\n    pass\n\n"
                      "__all__: list[str] = ('Mine',)\n") == "Mine"
    # verifiers looks for it in `__all__` only: a harness left out of it is not the environment's.
    assert harness_of(taskset + "\nclass MyHarness(vf.Harness):\n    pass\n\n__all__ = ['MyTaskset']\n") is None
    assert harness_of("def load_environment(:\n") is None and bundled_harness(tmp_path / "missing.py") is None
    assert bundled_harness(None) is None
    # The repo's own: rlpilot-brain plays with rlpilot's agent, tiny-arith has no harness of its own.
    assert bundled_harness(ENVIRONMENTS / "rlpilot_brain" / "rlpilot_brain" / "__init__.py") == "BrainHarness"
    assert bundled_harness(ENVIRONMENTS / "tiny_arith" / "tiny_arith.py") is None


def test_the_harness_flag_is_left_out_for_an_environments_own_and_named_when_asked(stack, tmp_path):
    target = Target("stub", "http://127.0.0.1:8000/v1", "STUB_API_KEY")
    environ = {"PATH": str(REPO / ".venv" / "bin")}

    def argv(own: str | None, **fields) -> list[str]:
        args = EvalRunInput(env="rlpilot-brain", model="stub", **fields)
        return plan_command(args, target, stack, environ, tmp_path, NAME, own_harness=own, roles=SINGLE_AGENT).argv

    def harness_flag(made: list[str]) -> str | None:
        return made[made.index("--env.agent.harness.id") + 1] if "--env.agent.harness.id" in made else None

    assert harness_flag(argv("BrainHarness")) is None
    assert harness_flag(argv(None)) == "null"
    assert harness_flag(argv("BrainHarness", harness="bash")) == "bash"
    # prime-rl's `uv run eval` takes the same flags.
    checkout = PrimeRL(path=str(tmp_path / "prime-rl"), version="0.9.1", dialect="prime-rl-v0.9", found_by="test")
    v09 = stack.model_copy(update={"verifiers": None, "prime_rl": checkout, "uv": Package(version="0.9", path="uv")})
    made = plan_command(EvalRunInput(env="rlpilot-brain", model="stub", upload=False), target, v09,
                        {"PATH": "/usr/bin:/bin"}, tmp_path, NAME, own_harness="BrainHarness", roles=SINGLE_AGENT)
    assert made.form == "prime-rl-eval" and "--env.agent.harness.id" not in made.argv


@pytest.fixture(scope="module")
def harness_workspace(tmp_path_factory) -> Path:
    """A workspace venv (verifiers 0.4) holding an environment with a harness of its own (rlpilot-brain), one
    without (tiny-arith), and a verifiers v0 one installed from outside the workspace, as a Hub install is:
    `load_environment` and nothing else (tests/environments/tiny_v0_sum pins verifiers<0.4, which cannot share
    this venv). Installed from the warm uv cache."""
    base = tmp_path_factory.mktemp("harness")
    legacy = base / "legacy_sum"
    (legacy / "legacy_sum").mkdir(parents=True)
    (legacy / "pyproject.toml").write_text(
        '[project]\nname = "legacy-sum"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["legacy_sum"]\n')
    (legacy / "legacy_sum" / "__init__.py").write_text(
        'def load_environment(**kwargs):\n    raise RuntimeError("verifiers 0.4 never calls this")\n')
    venv = base / ".venv"
    subprocess.run(["uv", "venv", "-q", str(venv), "--python", sys.executable], check=True)
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    "-e", str(ENVIRONMENTS / "rlpilot_brain"), "-e", str(ENVIRONMENTS / "tiny_arith"),
                    "-e", str(legacy)], check=True)
    workspace = base / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def in_harness_workspace(harness_workspace, monkeypatch) -> Path:
    monkeypatch.setenv("VIRTUAL_ENV", str(harness_workspace.parent / ".venv"))
    for name in ("UV_PROJECT_ENVIRONMENT", "RLPILOT_HOME", "STUB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return harness_workspace


def test_the_preview_says_which_harness_plays_and_an_environments_own_is_not_overridden(in_harness_workspace):
    ctx = Context(workspace=in_harness_workspace)
    with ScriptedOpenAIServer(lambda request: "42") as server:
        def preview(env: str, **fields):
            return eval_plan(EvalRunInput(env=env, model="stub-model", base_url=server.base_url, **fields), ctx)

        own, plain, named = preview("rlpilot-brain"), preview("tiny-arith"), preview("rlpilot-brain", harness="bash")
    assert own.form == "vf-eval" and "--env.agent.harness.id" not in own.command
    assert own.harness == "the environment's own (BrainHarness)"
    assert "harness: the environment's own (BrainHarness)" in own.render()
    flag = plain.command.index("--env.agent.harness.id")
    assert plain.command[flag + 1] == "null" and "harness: null (a plain chat loop)" in plain.render()
    flag = named.command.index("--env.agent.harness.id")
    assert named.command[flag + 1] == "bash" and named.harness == "bash"
    # What the user confirmed names the harness: another one is another plan.
    assert len({own.binding(), named.binding()}) == 2


def test_a_verifiers_v0_environment_that_vf_eval_0_4_cannot_load_is_named_as_such(in_harness_workspace):
    with ScriptedOpenAIServer(lambda request: "42") as server, pytest.raises(ToolError) as failed:
        eval_run(EvalRunInput(yes=True, env="legacy-sum", model="stub-model", base_url=server.base_url, num_examples=1,
                              rollouts=1, upload=False), Context(workspace=in_harness_workspace))
    assert failed.value.code == "env-is-v0", failed.value
    assert "verifiers v0 environment" in failed.value.message
    assert "verifiers<0.4" in failed.value.hint and "vf-init NAME" in failed.value.hint
    assert server.requests == []


def test_counts_past_any_eval_are_refused_in_one_line(tmp_path):
    for flag in ("-n", "-r"):
        done = subprocess.run([str(REPO / ".venv" / "bin" / "rlpilot"), "eval", "run", "tiny-arith", "-m", "m",
                               flag, "99999999999999999999"], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "less than or equal to" in done.stderr


def test_an_eval_says_where_its_results_go_before_it_runs(in_harness_workspace):
    events: list[dict] = []
    ctx = Context(workspace=in_harness_workspace, emit=events.append)
    with ScriptedOpenAIServer(lambda request: "42") as server:
        # Stopped at once: only what it says before the eval runs is looked at.
        args = EvalRunInput(env="tiny-arith", model="stub-model", base_url=server.base_url, num_examples=1,
                            rollouts=1, timeout_minutes=0.001)
        preview, kept = eval_plan(args, ctx), eval_plan(args.model_copy(update={"upload": False}), ctx)
        with pytest.raises(ToolError):
            eval_run(args.model_copy(update={"yes": True}), ctx)
    said = "results uploaded to your Prime account's evaluations (https://app.primeintellect.ai/dashboard/evaluations)"
    assert said in preview.render()
    assert events[0] == {"type": "log", "line": preview.where_results_go()} and said in events[0]["line"]
    assert "results kept here (not uploaded)" in kept.render()


def test_eval_run_without_yes_says_its_plan_and_runs_nothing(in_harness_workspace):
    """Its catalog entry confirms (the key goes to the endpoint, the calls may cost, the results may be uploaded):
    on the command line it runs only on --yes, like train launch and env install."""
    with ScriptedOpenAIServer(lambda request: "42") as server:
        planned = subprocess.run([str(REPO / ".venv" / "bin" / "rlpilot"), "eval", "run", "tiny-arith", "-m",
                                  "stub-model", "--base-url", server.base_url, "-n", "1", "-r", "1"],
                                 cwd=in_harness_workspace, capture_output=True, text=True, timeout=120)
    assert planned.returncode == 1 and not server.requests, planned.stderr
    shown = planned.stdout.splitlines()
    assert shown[0].startswith(f"eval tiny-arith with stub-model against {server.base_url}")
    assert shown[-1] == "next: nothing was done: run it again with --yes to run the eval"
    assert not (in_harness_workspace / "outputs").exists()
