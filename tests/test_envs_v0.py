"""verifiers v0 environments (`load_environment`, verifiers <= 0.3): detected, checked, smoke-evaluated and
pushed as what they are, with tests/environments/tiny_v0_sum.

The slow tests make rlpilot's verifiers<0.4 runtime with uv, offline, from uv's cache (.ci/run fills it
with `verifiers<0.4`); where the cache lacks it they skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eval_support import REPO
from fakes.openai_server import ScriptedOpenAIServer, last_user_text
from ops_support import prime_env, rlpilot

from agent.bench.standin import PrimeAPI
from tools.envs.hub import push_argv
from tools.envs.package import check_package
from tools.verifiers.v0 import detect

V0_ENV = REPO / "tests" / "environments" / "tiny_v0_sum"
V1_ENV = REPO / "tests" / "environments" / "yes_keyword"


def packages(python: Path) -> list[str]:
    listed = subprocess.run(["uv", "pip", "list", "--python", str(python), "--format", "json"],
                            capture_output=True, text=True, check=True)
    return sorted(f"{p['name']}=={p['version']}" for p in json.loads(listed.stdout))


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with the v0 environment under environments/ and a .venv of its own (empty)."""
    folder = tmp_path / "ws"
    shutil.copytree(V0_ENV, folder / "environments" / "tiny_v0_sum",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".prime", "dist"))
    (folder / "pyproject.toml").write_text('[project]\nname = "ws"\nversion = "0"\n')
    subprocess.run(["uv", "venv", "-q", str(folder / ".venv"), "--python", sys.executable], check=True)
    return folder, folder / ".venv" / "bin" / "python"


def test_the_source_says_which_verifiers_api_it_is_written_for(tmp_path):
    v0 = detect(V0_ENV)
    assert v0.is_v0 and "__init__.py defines `load_environment`" in v0.signs
    assert "it requires 'verifiers>=0.2,<0.4'" in v0.signs  # the second sign
    assert detect(V1_ENV).api == "v1"
    # A requirement below 0.4 alone is a v0 sign; a Taskset exported from a submodule is v1.
    only_pin = tmp_path / "pinned"
    (only_pin / "pinned").mkdir(parents=True)
    (only_pin / "pyproject.toml").write_text('[project]\nname = "pinned"\ndependencies = ["verifiers==0.3.1"]\n')
    (only_pin / "pinned" / "__init__.py").write_text("from .env import make\n")
    assert detect(only_pin).is_v0
    exported = 'from .taskset import PinnedTaskset\n__all__ = ["PinnedTaskset"]\n'
    (only_pin / "pinned" / "__init__.py").write_text(exported)
    (only_pin / "pyproject.toml").write_text('[project]\nname = "pinned"\ndependencies = ["verifiers>=0.4"]\n')
    assert detect(only_pin).api == "v1"


def test_a_v0_package_is_published_as_v0_never_told_to_declare_verifiers_0_4():
    report = check_package(V0_ENV)
    assert report.ok and report.api == "v0"
    text = " ".join(f.message + " " + f.fix for f in report.findings)
    assert "verifiers v0 environment" in text and "verifiers 0.4 cannot load it" in text
    assert "pin `verifiers<0.4`" in text and "vf-init" in text
    assert "declare `verifiers>=0.4`" not in text and "taskset" not in text.replace("Taskset", "")
    assert push_argv(V0_ENV, "PRIVATE", None, report.api)[-2:] == ["--runtime", "v0"]
    assert "--runtime" not in push_argv(V1_ENV, "PRIVATE", None, check_package(V1_ENV).api)


def test_push_a_v0_environment_to_the_stand_in_through_the_real_prime_cli(workspace, tmp_path):
    folder, python = workspace
    before = packages(python), packages(Path(sys.executable))
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api)
        pushed = rlpilot("env", "push", "tiny-v0-sum", "--visibility", "PRIVATE", "--json", cwd=folder, env=env)
    assert pushed.returncode == 0, pushed.stderr + pushed.stdout
    report = json.loads(pushed.stdout)
    # Its requirement's 0.2 floor alone would have made prime list it as v1.
    assert report["runtime"] == "legacy verifiers v0" and report["hub_id"] == "tester/tiny-v0-sum"
    assert api.environments["tester/tiny-v0-sum"]["runtime_hint"] == "VERIFIERS_V0"  # what the Hub stores
    assert "verifiers>=0.4" not in pushed.stdout and "verifiers<0.4" in report["next"]
    assert (packages(python), packages(Path(sys.executable))) == before


def _offline(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**env, "RLPILOT_HOME": str(tmp_path / "state")}


def _skip_without_cached_verifiers(result: subprocess.CompletedProcess) -> None:
    said = result.stdout + result.stderr
    if "v0-runtime-unavailable" in said and "a cache holding verifiers<0.4" in said:
        pytest.skip("uv's cache holds no verifiers<0.4 (.ci/run fills it: `uv pip install 'verifiers<0.4'`)")


@pytest.mark.slow
def test_env_check_runs_a_v0_environment_in_a_runtime_of_its_own(workspace, tmp_path):
    folder, python = workspace
    before = packages(python), packages(Path(sys.executable))
    env = _offline(prime_env(tmp_path / "home"), tmp_path)
    # Runtimes made before: one for an older pyproject of this folder, idle for a day (replaced: it goes),
    # one as old for another folder of the same name (kept: not this environment's).
    runtimes = tmp_path / "state" / "v0-runtimes"
    for digest, source in (("0ld0ld0ld0ld", folder / "environments" / "tiny_v0_sum"),
                           ("e1sewhere000", tmp_path / "elsewhere" / "tiny_v0_sum")):
        (runtimes / f"tiny_v0_sum-{digest}").mkdir(parents=True)
        (runtimes / f"tiny_v0_sum-{digest}" / ".rlpilot-source").write_text(str(source.resolve()))
        (runtimes / f"tiny_v0_sum-{digest}" / ".rlpilot-ready").write_text("then")
        os.utime(runtimes / f"tiny_v0_sum-{digest}" / ".rlpilot-ready", (time.time() - 86400,) * 2)
    checked = rlpilot("env", "check", "tiny-v0-sum", "-n", "4", "--yes", "--json", cwd=folder, env=env,
                      timeout=900)
    _skip_without_cached_verifiers(checked)
    result = json.loads(checked.stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert result["api"] == "v0" and result["v0"]["env_class"] == "SingleTurnEnv" and result["v0"]["rows"] == 8
    assert re.fullmatch(r"0\.[23]\.\d+", result["v0"]["verifiers"])
    assert result["v0"]["python"].startswith(str(tmp_path / "state" / "v0-runtimes"))
    # Each dataset answer, sent back as the reply, scores; no degenerate reply does.
    assert result["v0"]["gold_tasks"] == 4 and result["v0"]["gold_passed"] == 4
    assert {s["kind"]: s["max"] for s in result["shortcuts"]["scores"]}["yes"] == 0
    codes = {f["code"]: f for f in result["findings"]}
    assert "reward-shortcut" not in codes and "not found" not in checked.stdout
    assert "verifiers 0.4 cannot load it" in codes["verifiers-v0"]["message"]
    assert (packages(python), packages(Path(sys.executable))) == before
    kept = sorted(path.name for path in runtimes.iterdir())
    assert "tiny_v0_sum-0ld0ld0ld0ld" not in kept and "tiny_v0_sum-e1sewhere000" in kept and len(kept) == 2, kept


@pytest.mark.slow
def test_eval_run_smoke_evaluates_a_v0_environment_with_its_own_vf_eval(workspace, tmp_path):
    folder, python = workspace
    before = packages(python), packages(Path(sys.executable))

    def answer(request: dict) -> str:  # right on every task: the sum of the two numbers asked about
        return str(sum(int(n) for n in re.findall(r"\d+", last_user_text(request))))

    env = _offline(prime_env(tmp_path / "home"), tmp_path) | {"STUB_API_KEY": "x"}
    with ScriptedOpenAIServer(answer) as server:
        ran = rlpilot("eval", "run", "--yes", "tiny-v0-sum", "-m", "stub-model", "--base-url", server.base_url,
                      "--api-key-var", "STUB_API_KEY", "-n", "3", "-r", "2", "--no-upload", "--json",
                      cwd=folder, env=env, timeout=900)
    _skip_without_cached_verifiers(ran)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = json.loads(ran.stdout)
    assert result["form"] == "vf-eval-legacy" and Path(result["command"][0]).name == "vf-eval"
    assert result["command"][0].startswith(str(tmp_path / "state" / "v0-runtimes"))
    assert {"-b", "-k", "-s", "-n", "-r"} <= set(result["command"])
    assert result["summary"]["rollouts"] == 6 and result["summary"]["errored"] == 0
    assert len(server.requests) == 6
    assert (packages(python), packages(Path(sys.executable))) == before


def test_env_check_of_a_v0_environment_installs_nothing_without_a_yes(workspace, tmp_path):
    import http.server
    import threading

    asked: list[str] = []

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's API
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    folder, _ = workspace
    env = {k: v for k, v in _offline(prime_env(tmp_path / "home"), tmp_path).items() if k != "UV_OFFLINE"}
    env.update(UV_DEFAULT_INDEX=f"http://127.0.0.1:{server.server_address[1]}/simple",
               UV_CACHE_DIR=str(tmp_path / "empty-cache"))  # nothing cached: a runtime could only come from it
    try:
        checked = rlpilot("env", "check", "tiny-v0-sum", "-n", "4", "--json", cwd=folder, env=env, timeout=300)
        codes = {f["code"]: f for f in json.loads(checked.stdout)["findings"]}
        assert checked.returncode == 1 and asked == [] and not (tmp_path / "state" / "v0-runtimes").exists()
        said = codes["v0-runtime-needs-yes"]
        assert "verifiers<0.4" in said["message"] and "nothing was installed" in said["message"]
        assert "--yes" in said["fix"]
        # The same check with the yes asks that index, the one uv would install from.
        confirmed = rlpilot("env", "check", "tiny-v0-sum", "-n", "4", "--yes", "--json", cwd=folder, env=env,
                            timeout=300)
        assert "v0-runtime-unavailable" in confirmed.stdout and asked
    finally:
        server.shutdown()
        server.server_close()
