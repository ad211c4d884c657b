"""Roles from the environment's own declaration (issue 33): verifiers 0.4 names an environment's roles as the
AgentConfig fields of its EnvConfig, and rlpilot's flags go to those roles, never to an `agent` it assumed.

tests/environments/pair_arith is shaped like verifiers' own multi-role environments (code_golf,
proposer_solver): a package whose __init__ re-exports an Env, its EnvConfig and a Taskset from a
submodule, with the roles `alice` and `bob`. On the code before this change every flag was `--env.agent.*`,
which verifiers 0.4 refuses for it ("Extra inputs are not permitted").
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from eval_support import REPO
from fakes.openai_server import ScriptedOpenAIServer

from tools.evals.run import EvalRunInput, eval_plan, eval_run
from tools.framework.contract import Context
from tools.verifiers.source import read_roles

PAIR = REPO / "tests" / "environments" / "pair_arith"


def test_the_roles_are_read_from_the_env_config_through_the_package_and_unknown_ones_get_no_flags(tmp_path):
    roles = read_roles(PAIR)
    assert roles.names == ["alice", "bob"] and "PairArithEnvConfig" in roles.why
    assert roles.flags([("runtime.type", "subprocess")]) == [
        "--env.alice.runtime.type", "subprocess", "--env.bob.runtime.type", "subprocess"]
    # An Env imported from a package that is not there to read: unknown, so no flag at all.
    other = tmp_path / "other_env"
    (other / "other_env").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "other-env"\nversion = "0.1.0"\n')
    (other / "other_env" / "__init__.py").write_text(
        "from someone_elses.envs import ArenaEnv\nfrom other_env.taskset import OtherTaskset\n\n"
        "__all__ = ['ArenaEnv', 'OtherTaskset']\n")
    unknown = read_roles(other)
    assert unknown.names is None and "ArenaEnv" in unknown.why
    assert unknown.flags([("runtime.type", "subprocess")]) == []


def test_a_migrated_config_gives_each_declared_role_the_local_agent(tmp_path):
    from tools.configs.migrate import migrate
    from tools.stack.installed import Installed

    shutil.copytree(PAIR, tmp_path / "environments" / "pair_arith")
    config = tmp_path / "rl.toml"
    config.write_text('[model]\nname = "Qwen/Qwen3-0.6B"\n\n[orchestrator]\nbatch_size = 128\n'
                      'rollouts_per_example = 8\n\n[[orchestrator.train.env]]\nid = "pair-arith"\n\n'
                      '[[orchestrator.train.env]]\nid = "someone/other-env"\n')
    result = migrate(config, "prime-rl-current", tmp_path / "out.toml", workspace=tmp_path, installed=Installed())
    pair, other = tomllib.loads((tmp_path / "out.toml").read_text())["orchestrator"]["train"]["source"]
    local = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    assert pair["env"] == {"taskset": {"id": "pair-arith"}, "alice": local, "bob": local}
    # No source to read the roles from: nothing is guessed, and the change says so.
    assert other["env"] == {"taskset": {"id": "someone/other-env"}}
    why = {step.key: step.why for step in result.changes}["orchestrator.train.env[1]"]
    assert "roles of someone/other-env could not be read" in why


@pytest.fixture(scope="module")
def pair_venv(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("pair")
    venv = base / ".venv"
    subprocess.run(["uv", "venv", "-q", str(venv), "--python", sys.executable], check=True)
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "-e", str(PAIR)],
                   check=True)
    (base / "ws").mkdir()
    return base


@pytest.mark.slow
def test_an_eval_of_a_two_role_environment_runs_with_its_roles_flags(pair_venv, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", str(pair_venv / ".venv"))
    for name in ("UV_PROJECT_ENVIRONMENT", "RLPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    ctx = Context(workspace=pair_venv / "ws")
    with ScriptedOpenAIServer(lambda request: "The answer is 2.") as server:
        args = EvalRunInput(env="pair-arith", model="stub-model", base_url=server.base_url, api_key_var="NO_KEY",
                            num_examples=1, rollouts=1, upload=False)
        preview = eval_plan(args, ctx)
        result = eval_run(args.model_copy(update={"yes": True}), ctx)
    assert "roles: alice, bob (the AgentConfig fields of PairArithEnvConfig)" in preview.render()
    assert "--env.alice.harness.id" in preview.command and "--env.agent.harness.id" not in preview.command
    assert result.ok and result.summary.errored == 0, result.render()
    # One episode, both seats played it: the first task (0 + 2) is answered right by each, each seat judged apart.
    assert len(server.requests) == 2
    assert {role: part.reward.mean for role, part in result.summary.roles.items()} == {"alice": 1.0, "bob": 1.0}
