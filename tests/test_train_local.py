"""Local prime-rl runs: a stand-in checkout run by the real `uv run rl`, a stand-in nvidia-smi on PATH."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
from eval_support import environments_venv
from ops_support import prime_env, rlpilot, use_env

from tools.framework.contract import Context
from tools.framework.errors import BadInput
from tools.framework.workspace import rlpilot_home
from tools.training import local, records
from tools.training.launch import LaunchInput, train_launch
from tools.training.runs import PauseInput, RunInput, train_checkpoints, train_pause, train_status
from tools.training.serve import CheckpointEvalInput, train_eval
from tools.training.watch import WatchInput, train_watch

CHECKOUT = Path(__file__).parent / "fakes" / "prime_rl_checkout"
CURRENT = "prime-rl/main-2026-08-21/examples/basic/reverse-text/rl.toml"
TRANSITION = "prime-rl/v0.7.0/examples/reverse_text/rl.toml"
H100 = "NVIDIA H100 80GB HBM3, 81559"


@pytest.fixture
def machine(tmp_path: Path):
    """A workspace, a copy of the stand-in checkout, and an environment whose PATH we control."""
    checkout = shutil.copytree(CHECKOUT, tmp_path / "prime-rl")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools_path = f"{Path(shutil.which('uv')).parent}:{Path(sys.executable).parent}:/usr/bin:/bin"

    def environment(gpus: int | None, **extra: str) -> dict[str, str]:
        smi = bin_dir / "nvidia-smi"
        smi.unlink(missing_ok=True)
        if gpus is not None:
            smi.write_text("#!/bin/sh\n" + "".join(f'echo "{i}, {H100}"\n' for i in range(gpus)))
            smi.chmod(0o755)
        return prime_env(tmp_path / "home", PATH=f"{bin_dir}:{tools_path}", RLPILOT_HOME=str(tmp_path / "state"),
                         RLPILOT_PRIME_RL=str(checkout), **extra)

    yield workspace, Path(checkout), environment
    # A failed test must not leave a run behind.
    for saved in (tmp_path / "state" / "runs").glob("*/record.json"):
        record = records.RunRecord.model_validate_json(saved.read_text())
        if record.pid and local.group_members(record.pid):
            os.killpg(record.pid, signal.SIGKILL)


def _config(workspace: Path, fixtures: Path, source: str, max_steps: int) -> Path:
    text = (fixtures / source).read_text()
    lines = [line for line in text.splitlines() if not line.startswith("max_steps")]
    path = workspace / "rl.toml"
    path.write_text(f"max_steps = {max_steps}\n" + "\n".join(lines) + "\n")
    return path


def test_preflight_reports_every_problem_at_once(machine, shared_fixtures, monkeypatch):
    workspace, _, environment = machine
    config = _config(workspace, shared_fixtures, TRANSITION, 5)
    use_env(monkeypatch, environment(gpus=1))
    result = train_launch(LaunchInput(config=config, target="local", yes=True), Context(workspace=workspace))
    assert not result.launched and result.exit_code() == 1
    codes = {p.code: p for p in result.errors}
    assert set(codes) == {"dialect-mismatch", "not-enough-gpus", "dry-run-failed"}
    assert "--to prime-rl-current" in codes["dialect-mismatch"].fix
    assert "asks for 2 GPUs" in codes["not-enough-gpus"].message and "has 1" in codes["not-enough-gpus"].message
    assert "orchestrator.train.env" in codes["dry-run-failed"].message
    assert not records.runs_dir(workspace).exists()


def test_no_checkout_and_no_gpu(machine, shared_fixtures, monkeypatch):
    workspace, _, environment = machine
    config = _config(workspace, shared_fixtures, CURRENT, 5)
    env = environment(gpus=None)
    del env["RLPILOT_PRIME_RL"]
    use_env(monkeypatch, env)
    result = train_launch(LaunchInput(config=config, target="local"), Context(workspace=workspace))
    assert {p.code for p in result.errors} == {"no-prime-rl", "no-gpus"}


def test_a_hosted_only_key_stops_a_local_launch_as_config_check_target_local_says(machine, shared_fixtures,
                                                                                   monkeypatch):
    workspace, _, environment = machine
    config = _config(workspace, shared_fixtures, CURRENT, 5)
    config.write_text('gpu_type = "H100_80GB"\n' + config.read_text())
    env = environment(gpus=2)
    use_env(monkeypatch, env)
    result = train_launch(LaunchInput(config=config, target="local"), Context(workspace=workspace))
    assert not result.launched
    assert ("unknown-key", "gpu_type") in {(p.code, p.key) for p in result.errors}
    checked = rlpilot("config", "check", str(config), "--target", "local", "--json", cwd=workspace, env=env)
    assert ("unknown-key", "gpu_type") in {(f["code"], f["key"]) for f in json.loads(checked.stdout)["findings"]}


def test_the_preview_says_which_gpus_and_checkout_a_local_run_uses(machine, shared_fixtures, monkeypatch):
    workspace, checkout, environment = machine
    config = _config(workspace, shared_fixtures, CURRENT, 5)
    use_env(monkeypatch, environment(gpus=2))
    preview = train_launch(LaunchInput(config=config, target="local"), Context(workspace=workspace))
    [runs_on] = [line for line in preview.render().splitlines() if line.lstrip().startswith("runs on")]
    assert "runs on     this machine's 2 GPU(s): 2 x NVIDIA H100 80GB HBM3 (nvidia-smi); prime-rl " in runs_on
    assert runs_on.endswith(f" at {checkout.resolve()}"), runs_on
    # Refused for want of both, the preview still says where it would have run.
    env = environment(gpus=None)
    del env["RLPILOT_PRIME_RL"]
    use_env(monkeypatch, env)
    refused = train_launch(LaunchInput(config=config, target="local"), Context(workspace=workspace))
    assert "  runs on     this machine (no NVIDIA GPU found); no prime-rl checkout" in refused.render().splitlines()


def test_launch_follow_across_a_restart_and_stop_with_nothing_left(machine, shared_fixtures, monkeypatch):
    workspace, _, environment = machine
    _config(workspace, shared_fixtures, CURRENT, 100000)
    env = environment(gpus=2, STANDIN_STEP_SECONDS="0.05")

    preview = rlpilot("train", "launch", "rl.toml", "--local", "--json", cwd=workspace, env=env)
    assert preview.returncode == 1, preview.stderr
    plan = json.loads(preview.stdout)["plan"]
    # The preview runs nothing from the checkout: its dry run comes after the yes.
    assert "after your yes" in plan["validation"] and "for 0.6B parameters" in plan["memory"]
    assert plan["train_gpus"] + plan["infer_gpus"] == 2

    # Each rlpilot below is a new process: the run and its record outlive the one that launched it.
    launched = rlpilot("train", "launch", "rl.toml", "--local", "--yes", "--json", cwd=workspace, env=env)
    assert launched.returncode == 0, launched.stderr
    run = json.loads(launched.stdout)["run"]
    assert json.loads(launched.stdout)["plan"]["validation"] == "passed `uv run rl @ CONFIG --dry-run`"
    use_env(monkeypatch, env)
    record = records.load(workspace, run)
    assert record is not None and record.target == "local"
    deadline = time.monotonic() + 60
    while train_status(RunInput(run=run), Context(workspace=workspace)).metrics.steps < 3:
        assert time.monotonic() < deadline, (records.run_dir(workspace, run) / "output.log").read_text()
        time.sleep(0.2)

    status = rlpilot("train", "status", run, "--json", cwd=workspace, env=env)
    state = json.loads(status.stdout)
    assert state["status"] == "running" and state["running"] and state["metrics"]["last_step"] >= 3
    assert 0 < state["metrics"]["latest"]["reward_mean"] <= 1
    logs = json.loads(rlpilot("train", "logs", run, "--json", cwd=workspace, env=env).stdout)
    assert any(line.startswith("Step ") for line in logs["lines"])
    trainer = json.loads(rlpilot("train", "logs", run, "--component", "trainer", "--json", cwd=workspace,
                                 env=env).stdout)
    assert trainer["lines"] and "Loss" in trainer["lines"][-1]
    helper = int(next(records.run_dir(workspace, run).glob("outputs/**/helper.pid")).read_text())

    stopped = rlpilot("train", "stop", run, "--yes", "--json", cwd=workspace, env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout) == {"run": run, "target": "local", "status": "stopped", "stopped": True,
                                        "still_running": [], "next": None}
    assert local.group_members(record.pid) == []
    assert not Path(f"/proc/{helper}").exists() or "Z" in Path(f"/proc/{helper}/stat").read_text().split()[2]
    assert "Received SIGTERM" in (records.run_dir(workspace, run) / "output.log").read_text()
    after = json.loads(rlpilot("train", "status", run, "--json", cwd=workspace, env=env).stdout)
    assert after["status"] == "stopped" and not after["running"]


def test_a_finished_run_reports_its_exit(machine, shared_fixtures, monkeypatch):
    workspace, _, environment = machine
    config = _config(workspace, shared_fixtures, CURRENT, 3)
    use_env(monkeypatch, environment(gpus=2, STANDIN_STEP_SECONDS="0.01"))
    result = train_launch(LaunchInput(config=config, target="local", yes=True), Context(workspace=workspace))
    assert result.launched, result.render()
    deadline = time.monotonic() + 60
    while (status := train_status(RunInput(run=result.run), Context(workspace=workspace))).running:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert status.status == "finished" and status.details["exit"]["returncode"] == 0
    assert status.metrics.last_step == 3
    assert os.environ["RLPILOT_HOME"] in status.details["log"]
    assert train_checkpoints(RunInput(run=result.run), Context(workspace=workspace)).checkpoints == []
    with pytest.raises(BadInput) as error:
        train_pause(PauseInput(run=result.run, yes=True), Context(workspace=workspace))
    assert error.value.code == "pause-is-hosted-only" and "train stop" in error.value.hint


def test_watch_follows_a_local_run_to_its_end(machine, shared_fixtures, monkeypatch):
    workspace, _, environment = machine
    config = _config(workspace, shared_fixtures, CURRENT, 40)
    use_env(monkeypatch, environment(gpus=2, STANDIN_STEP_SECONDS="0.05"))
    run = train_launch(LaunchInput(config=config, target="local", yes=True), Context(workspace=workspace)).run
    events = []
    result = train_watch(WatchInput(run=run, every="1s"), Context(workspace=workspace, emit=events.append))
    assert result.ended and result.status == "finished" and not result.stop_suggested
    assert result.last_step == 40 and result.checks >= 2
    assert [(e["done"], e["total"]) for e in events if e["type"] == "progress"][-1] == (40, 40)


def test_a_checkpoint_is_served_evaluated_and_stopped(machine, monkeypatch, tmp_path_factory):
    workspace, _, environment = machine
    env = environment(gpus=2, VIRTUAL_ENV=str(environments_venv(tmp_path_factory.getbasetemp() / "eval-venv")))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "UV_OFFLINE"):  # vf-eval's harness set-up may use the index
        del env[name]
    use_env(monkeypatch, env)
    result = train_eval(CheckpointEvalInput(checkpoint="outputs/step_40", env="tiny-arith", num_examples=3, yes=True,
                                            rollouts=2, upload=False), Context(workspace=workspace))
    assert result.server[1:3] == ["run", "inference"] and result.still_running == []
    assert result.eval.ok and result.eval.model == "outputs/step_40"
    assert result.eval.summary.rollouts == 6 and result.eval.summary.reward.mean == 1.0
    assert "127.0.0.1" in result.base_url


def test_train_eval_without_yes_says_its_plan_and_serves_nothing(machine, monkeypatch):
    """Its catalog entry confirms: without the person's yes no server starts and no eval runs."""
    workspace, _, environment = machine
    use_env(monkeypatch, environment(gpus=2))
    plan = train_eval(CheckpointEvalInput(checkpoint="outputs/step_40", env="tiny-arith"), Context(workspace=workspace))
    assert plan.eval is None and plan.exit_code() == 1 and plan.server[1:3] == ["run", "inference"]
    assert plan.render().splitlines() == [plan.plan, "next: nothing was done: run it again with --yes to serve and "
                                                     "evaluate it"]
    assert plan.plan.startswith("would serve outputs/step_40 with `") and "then stop the server" in plan.plan
    assert not (rlpilot_home(workspace) / "serve").exists()
