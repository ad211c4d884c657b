"""eval run: the command built for each stack, endpoint aliases, and the checks made before spending.

The vf-eval runs themselves are in test_eval_e2e.py; here nothing reaches a model, and anything
that is not loopback goes to a closed proxy port.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from eval_support import REPO, use_environments_venv

from tools.contract import Context
from tools.envs.hub import EnvInstallInput, install_preview
from tools.errors import BadInput, ToolError
from tools.evals.endpoints import find_alias
from tools.evals.run import EvalRunInput, Target, eval_run, plan_command, resolve_target
from tools.installed import Package, PrimeRL
from tools.stack import StackInput, stack_info
from tools.workspace import workspace_interpreter

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
    return plan_command(args, target, stack, {"PATH": str(REPO / ".venv" / "bin")}, workspace, NAME)


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
    made = plan_command(args, target, v09, no_vf_eval, tmp_path, NAME)
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
        eval_run(EvalRunInput(env="me/tiny-arith", model="openai/gpt-4.1-mini", hosted=True),
                 Context(workspace=offline))
    assert refused.value.code == "not-logged-in"


def test_hosted_cannot_skip_the_upload(offline):
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(env="me/x", model="m", hosted=True, upload=False), Context(workspace=offline))
    assert refused.value.code == "hosted-always-uploads"


def test_a_model_or_an_endpoint_is_required(offline):
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(env="tiny-arith"), Context(workspace=offline))
    assert refused.value.code == "no-model" and "--endpoint" in refused.value.hint


def test_a_missing_environment_names_the_install_command(tmp_path_factory, monkeypatch):
    # The workspace's own environment (verifiers, vf-eval), built before HOME and the proxies change.
    venv = use_environments_venv(tmp_path_factory, monkeypatch)
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "environments" / "haiku_env").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))  # no ~/.prime login
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(env="haiku-env", model="m", base_url="http://127.0.0.1:9/v1"),
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
        eval_run(EvalRunInput(env="tiny-arith", model="m", base_url="http://127.0.0.1:9/v1"), ctx)
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
