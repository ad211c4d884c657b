"""`rlpilot env install|status|push` through the real prime CLI and the local stand-in of the Prime API."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ops_support import env_package, prime_env, prime_parses, rlpilot, use_env

from agent.bench.standin import PrimeAPI
from tools.envs.hub import (
    EnvInstallInput,
    EnvPushInput,
    env_install,
    env_push,
    install_argv,
    push_argv,
    status_argv,
)
from tools.framework.contract import Context
from tools.framework.errors import BadInput, ToolError
from tools.verifiers.refs import parse_env_ref


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_installed_prime_parses_every_hub_argv_we_build(tmp_path):
    folder = tmp_path / "environments" / "echo_env"
    path, params = prime_parses(install_argv(parse_env_ref("echo-env"), folder))
    assert path == ["env", "install"] and params["env_ids"] == ("echo-env",) and params["path"] == str(folder.parent)
    _, params = prime_parses(install_argv(parse_env_ref("primeintellect/gsm8k@0.1.2"), None))
    assert params["env_ids"] == ("primeintellect/gsm8k@0.1.2",) and params["path"] == "./environments"
    path, params = prime_parses(status_argv("tester/echo-env"))
    assert path == ["env", "status"] and params["output"] == "json"
    for owner in (None, "my-team"):
        path, params = prime_parses(push_argv(folder, "PRIVATE", owner))
        assert path == ["env", "push"] and params["env_id"] is None
        assert params["path"] == str(folder) and params["visibility"] == "PRIVATE" and params["owner"] == owner


@pytest.mark.parametrize("text", ["-rf", "--with=pip", "a/b/c", "../x", "owner/", "/name", "name@1.0", "a b", ""])
def test_env_references_are_checked_before_anything_runs(text):
    with pytest.raises(BadInput) as error:
        parse_env_ref(text)
    assert error.value.code == "bad-env-id"


def test_hub_ids_and_local_names():
    hub = parse_env_ref("primeintellect/reverse-text@0.1.3")
    assert (hub.owner, hub.name, hub.version, hub.hub_id) == ("primeintellect", "reverse-text", "0.1.3",
                                                              "primeintellect/reverse-text")
    local = parse_env_ref("reverse-text")
    assert not local.is_hub and local.folder_name == "reverse_text"


def test_push_without_visibility_asks_the_user_and_runs_nothing(workspace, tmp_path):
    env_package(workspace, "echo-env")
    with PrimeAPI() as api:
        done = rlpilot("env", "push", "echo-env", cwd=workspace, env=prime_env(tmp_path / "home", api))
    assert done.returncode == 2 and done.stdout == ""
    assert "PUBLIC" in done.stderr and "PRIVATE" in done.stderr and "--visibility" in done.stderr
    assert api.requests == []


def test_push_reports_every_package_problem_at_once(workspace, monkeypatch, tmp_path):
    env_package(workspace, "echo-env", verifiers="verifiers", module="import verifiers.v1 as vf\n")
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        result = env_push(EnvPushInput(env="echo-env", visibility="PUBLIC"), Context(workspace=workspace))
    assert not result.pushed and result.exit_code() == 1
    codes = {f.code: f for f in result.findings}
    assert set(codes) == {"no-all", "verifiers-unpinned"}
    assert "legacy verifiers v0" in codes["verifiers-unpinned"].message
    assert "verifiers>=0.4" in codes["verifiers-unpinned"].fix
    assert api.requests == []


def test_push_without_login_is_one_clear_line(workspace, tmp_path):
    env_package(workspace, "echo-env")
    # The workspace's Python notes each run: the login is known from a file, before any package check runs.
    ran = tmp_path / "interpreter-ran"
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho \"$*\" >> {ran}\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api, logged_in=False, VIRTUAL_ENV=str(python.parent.parent))
        done = rlpilot("env", "push", "echo-env", "--visibility", "PRIVATE", cwd=workspace, env=env)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "prime login" in lines[0] and "PRIME_API_KEY" in lines[0]
    assert api.requests == []
    assert not ran.exists(), ran.read_text()


def test_push_then_status_against_the_stand_in(workspace, tmp_path):
    folder = env_package(workspace, "echo-env")
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api)
        pushed = rlpilot("env", "push", "echo-env", "--visibility", "PRIVATE", "--json", cwd=workspace, env=env)
        assert pushed.returncode == 0, pushed.stderr
        status = rlpilot("env", "status", "echo-env", "--json", cwd=workspace, env=env)
    report = json.loads(pushed.stdout)
    assert report["hub_id"] == "tester/echo-env" and report["runtime"] == "verifiers v1"
    assert report["version"] == "0.1.0" and report["visibility"] == "PRIVATE"
    assert api.seen("POST", "/api/v1/environmentshub/resolve")[0]["body"] == {"name": "echo-env",
                                                                             "visibility": "PRIVATE"}
    wheel = next(data for data in api.uploads.values() if data[:2] == b"PK")
    assert "echo_env.py" in zipfile.ZipFile(io.BytesIO(wheel)).namelist()
    assert json.loads((folder / ".prime" / ".env-metadata.json").read_text())["owner"] == "tester"
    # The local name finds its Hub id through the metadata the push left behind.
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["visibility"] == "PRIVATE" and json.loads(status.stdout)["version"] == "0.1.0"


def test_push_never_waits_on_the_username_prompt(workspace, monkeypatch, tmp_path):
    env_package(workspace, "echo-env")
    with PrimeAPI(username=None) as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        with pytest.raises(ToolError) as error:
            env_push(EnvPushInput(env="echo-env", visibility="PUBLIC"), Context(workspace=workspace))
    assert error.value.code == "hub-username-missing"
    assert "prime env push" in error.value.hint
    assert not api.seen("PATCH", "/api/v1/user/slug")


def _workspace_venv(workspace: Path) -> Path:
    (workspace / "pyproject.toml").write_text('[project]\nname = "my-envs"\nversion = "0.1.0"\n')
    subprocess.run(["uv", "venv", "-q", "--python", sys.executable, workspace / ".venv"], check=True)
    return workspace / ".venv" / "bin" / "python"


def test_install_a_local_environment_into_the_workspace_interpreter(workspace, monkeypatch, tmp_path):
    python = _workspace_venv(workspace)
    env_package(workspace, "echo-env", verifiers=None, module="VALUE = 42\n")
    use_env(monkeypatch, prime_env(tmp_path / "home"))
    result = env_install(EnvInstallInput(env="echo-env", yes=True), Context(workspace=workspace))
    assert result.installed == ["echo-env@local"] and result.python == str(python)
    assert "from verifiers import" not in result.next
    imported = subprocess.run([python, "-c", "import echo_env; print(echo_env.VALUE)"], capture_output=True,
                              text=True)
    assert imported.stdout.strip() == "42"


def test_a_failed_install_is_a_failure_although_prime_exits_0(workspace, monkeypatch, tmp_path):
    _workspace_venv(workspace)
    folder = env_package(workspace, "echo-env", verifiers="no-such-package-rlpilot-test>=1")
    use_env(monkeypatch, prime_env(tmp_path / "home"))
    with pytest.raises(ToolError) as error:
        env_install(EnvInstallInput(env="echo-env", yes=True), Context(workspace=workspace))
    assert error.value.code == "install-failed" and str(folder.parent.parent) not in error.value.hint


def test_install_a_hub_environment_served_by_the_stand_in(workspace, monkeypatch, tmp_path):
    python = _workspace_venv(workspace)
    source = env_package(tmp_path, "echo-env", verifiers=None, module="VALUE = 7\n")
    subprocess.run(["uv", "build", "-q", "--wheel", "--out-dir", tmp_path / "dist", source], check=True,
                   env=prime_env(tmp_path / "home"))
    wheel = next((tmp_path / "dist").glob("*.whl"))
    with PrimeAPI() as api:
        api.wheels[wheel.name] = wheel.read_bytes()
        api.environments["tester/echo-env"] = {"id": "env_1", "visibility": "PUBLIC", "version": "0.1.0",
                                               "hash": "abc", "wheel_url": api.file_url(wheel.name)}
        env = prime_env(tmp_path / "home", api)
        del env["UV_OFFLINE"]  # uv must download the wheel from the stand-in; NO_PROXY keeps that on loopback
        use_env(monkeypatch, env)
        result = env_install(EnvInstallInput(env="tester/echo-env", yes=True), Context(workspace=workspace))
    assert result.source == "hub" and result.installed == ["tester/echo-env@latest"]
    imported = subprocess.run([python, "-c", "import echo_env; print(echo_env.VALUE)"], capture_output=True,
                              text=True)
    assert imported.stdout.strip() == "7"


def test_a_private_environment_without_login_says_how_to_log_in(workspace, monkeypatch, tmp_path):
    _workspace_venv(workspace)
    with PrimeAPI() as api:
        api.environments["tester/secret-env"] = {"id": "env_2", "visibility": "PRIVATE", "version": "0.1.0",
                                                 "hash": "abc"}
        use_env(monkeypatch, prime_env(tmp_path / "home", api, logged_in=False))
        with pytest.raises(ToolError) as error:
            env_install(EnvInstallInput(env="tester/secret-env", yes=True), Context(workspace=workspace))
    assert error.value.code == "not-logged-in" and "PRIME_API_KEY" in error.value.hint


REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["tiny_arith", "reverse_words"])
def test_each_bundled_environment_pushes_to_the_stand_in(workspace, tmp_path, name):
    # Both derive from the generic base `vf.Taskset[Task, Config]`, which the Hub's loader accepts.
    shutil.copytree(REPO / "environments" / name, workspace / "environments" / name,
                    ignore=shutil.ignore_patterns("__pycache__", ".prime", "examples"))
    with PrimeAPI() as api:
        done = rlpilot("env", "push", name, "--visibility", "PRIVATE", "--json", cwd=workspace,
                       env=prime_env(tmp_path / "home", api))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["pushed"] and report["hub_id"] == f"tester/{name.replace('_', '-')}"
    assert report["runtime"] == "verifiers v1" and report["findings"] == []


ALIASED_BASE = '''\
import verifiers.v1 as vf

__all__ = ["EchoTaskset"]

Base = vf.Taskset[vf.Task, vf.TasksetConfig]


class EchoTaskset(Base):
    """Its base is a name the source does not spell `Taskset`; only its MRO says what it is."""
'''


def test_the_taskset_is_judged_by_importing_it_as_the_hub_does(workspace, monkeypatch, tmp_path):
    env_package(workspace, "echo-env", module=ALIASED_BASE)
    env_package(workspace, "plain-env", module="__all__ = ['Plain']\n\n\nclass Plain:\n    pass\n")
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        pushed = env_push(EnvPushInput(env="echo-env", visibility="PRIVATE"), Context(workspace=workspace))
        refused = env_push(EnvPushInput(env="plain-env", visibility="PRIVATE"), Context(workspace=workspace))
    assert pushed.pushed and pushed.findings == []
    assert not refused.pushed and [f.code for f in refused.findings] == ["no-taskset-export"]
    assert "exports no Taskset subclass" in refused.findings[0].message


def test_a_package_this_machine_cannot_import_is_read_from_source_and_still_pushed(workspace, monkeypatch,
                                                                                   tmp_path):
    # The workspace's own interpreter has no verifiers: the Hub's check cannot run here.
    venv = tmp_path / "bare"
    subprocess.run(["uv", "venv", "-q", "--python", sys.executable, venv], check=True)
    folder = env_package(workspace, "generic-env", module=None)
    (folder / "generic_env.py").write_text(
        "import verifiers.v1 as vf\n\n__all__ = ['GenericTaskset']\n\n\n"
        "class GenericTaskset(vf.Taskset[vf.Task, vf.TasksetConfig]):\n    pass\n")
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api, VIRTUAL_ENV=str(venv)))
        result = env_push(EnvPushInput(env="generic-env", visibility="PUBLIC"), Context(workspace=workspace))
    assert result.pushed, result.render()
    assert [(f.code, f.severity) for f in result.findings] == [("package-not-importable", "warning")]
    assert "ModuleNotFoundError" in result.findings[0].message and str(venv) in result.findings[0].message


def test_install_never_goes_into_rlpilots_own_environment_unless_asked(workspace, tmp_path):
    env_package(workspace, "echo-env", verifiers=None, module="VALUE = 1\n")
    env = prime_env(tmp_path / "home")
    refused = rlpilot("env", "install", "echo-env", cwd=workspace, env=env)
    assert refused.returncode == 2 and "--create-venv" in refused.stderr and "--into-rlpilot" in refused.stderr
    # In rlpilot's own checkout the workspace's .venv is rlpilot's: the next `uv sync` would undo the install.
    checkout = rlpilot("env", "install", "tiny_arith", cwd=REPO, env=env)
    assert checkout.returncode == 2 and "rlpilot's own" in checkout.stderr and "uv sync" in checkout.stderr
    ours = subprocess.run([sys.executable, "-c", "import echo_env"], capture_output=True, cwd=tmp_path)
    assert ours.returncode != 0


def test_install_makes_the_workspace_a_project_with_its_venv_when_the_user_asks(workspace, tmp_path):
    env_package(workspace, "echo-env", verifiers=None, module="VALUE = 5\n")
    env = prime_env(tmp_path / "home")
    done = rlpilot("env", "install", "echo-env", "--create-venv", "--yes", "--json", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    python = workspace / ".venv" / "bin" / "python"
    assert result["created"] == ["pyproject.toml", ".venv"] and result["python"] == str(python)
    imported = subprocess.run([python, "-c", "import echo_env; print(echo_env.VALUE)"], capture_output=True,
                              text=True)
    assert imported.stdout.strip() == "5"
    again = rlpilot("env", "install", "echo-env", "--yes", "--json", cwd=workspace, env=env)  # found from now on
    assert again.returncode == 0 and json.loads(again.stdout)["created"] == []


def test_rlpilots_own_virtual_env_is_never_the_workspaces(workspace, tmp_path, monkeypatch):
    """`uv run --project /path/to/rlpilot` exports VIRTUAL_ENV for rlpilot's own environment."""
    from tools.framework.workspace import workspace_interpreter
    from tools.stack.prime_cli import prime_environment

    ours = {"VIRTUAL_ENV": sys.prefix}
    assert workspace_interpreter(workspace, ours).found_by == "rlpilot"
    other = tmp_path / "other-venv"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "python").symlink_to(sys.executable)
    assert workspace_interpreter(workspace, {"VIRTUAL_ENV": str(other)}).found_by == "VIRTUAL_ENV"
    env_package(workspace, "echo-env", verifiers=None, module="VALUE = 7\n")
    env = prime_env(tmp_path / "home", VIRTUAL_ENV=sys.prefix)
    refused = rlpilot("env", "install", "echo-env", cwd=workspace, env=env)
    assert refused.returncode == 2 and "--create-venv" in refused.stderr
    done = rlpilot("env", "install", "echo-env", "--create-venv", "--yes", "--json", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    python = workspace / ".venv" / "bin" / "python"
    assert json.loads(done.stdout)["python"] == str(python)
    imported = subprocess.run([python, "-c", "import echo_env; print(echo_env.VALUE)"], capture_output=True,
                              text=True)
    assert imported.stdout.strip() == "7"
    assert subprocess.run([sys.executable, "-c", "import echo_env"], capture_output=True, cwd=tmp_path).returncode
    # The workspace's .venv is found from now on, and children (prime, uv) do not see rlpilot's as active.
    assert workspace_interpreter(workspace, ours).python == python
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    assert "VIRTUAL_ENV" not in prime_environment(workspace)


def test_a_failed_install_with_create_venv_says_its_plan_first_and_leaves_nothing_behind(workspace, tmp_path):
    env_package(workspace, "echo-env", verifiers="no-such-package-rlpilot-test>=1", module="VALUE = 5\n")
    failed = rlpilot("env", "install", "echo-env", "--create-venv", "--yes", cwd=workspace,
                     env=prime_env(tmp_path / "home"))
    assert failed.returncode == 1 and "install-failed" in failed.stderr
    assert not (workspace / "pyproject.toml").exists() and not (workspace / ".venv").exists()
    # Before anything was made: what the folder is, what it brings, where it goes, and what is created first.
    said = failed.stderr.splitlines()
    plan = said.index(f"  install echo-env 0.1.0 from {workspace / 'environments' / 'echo_env'} into "
                      f"{workspace / '.venv' / 'bin' / 'python'}")
    assert said[plan + 1].startswith("  is: not an environment: a Python package `echo-env`")
    assert "(no-such-package-rlpilot-test>=1) and theirs" in said[plan + 2] and "new to the .venv" in said[plan + 2]
    assert said[plan + 4] == "  first creates pyproject.toml, .venv in the workspace"
    assert plan < next(i for i, line in enumerate(said) if "install-failed" in line)


def test_install_without_yes_says_its_plan_and_does_nothing(workspace, tmp_path):
    """Installing runs the package's code in the workspace's Python: the command line shows the plan and
    acts only on --yes, as every tool whose catalog entry confirms (train launch, restart, resume)."""
    env_package(workspace, "echo-env", verifiers=None, module="VALUE = 5\n")
    env = prime_env(tmp_path / "home")
    planned = rlpilot("env", "install", "echo-env", "--create-venv", cwd=workspace, env=env)
    assert planned.returncode == 1, planned.stderr
    shown = planned.stdout.splitlines()
    assert shown[0] == (f"install echo-env 0.1.0 from {workspace / 'environments' / 'echo_env'} into "
                        f"{workspace / '.venv' / 'bin' / 'python'}")
    assert "first creates pyproject.toml, .venv in the workspace" in shown
    assert shown[-1] == "next: nothing was installed or created: run it again with --yes to install"
    assert not (workspace / "pyproject.toml").exists() and not (workspace / ".venv").exists()
    as_json = json.loads(rlpilot("env", "install", "echo-env", "--create-venv", "--json", cwd=workspace,
                                 env=env).stdout)
    assert as_json["installed"] == [] and as_json["plan"]["creates"] == ["pyproject.toml", ".venv"]
    assert not (workspace / ".venv").exists()
