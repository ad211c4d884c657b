"""Hosted Training: the real `prime train` CLI against the local stand-in of the Prime API."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from ops_support import prime_env, prime_parses, rlpilot, use_env

from agent.bench.standin import PrimeAPI
from tools.diagnose.readers import read
from tools.framework.contract import Context
from tools.framework.errors import ToolError
from tools.training import hosted, records
from tools.training.launch import LaunchInput, train_launch
from tools.training.runs import (
    PauseInput,
    ResumeInput,
    RunInput,
    train_checkpoints,
    train_pause,
    train_resume,
    train_status,
)
from tools.training.watch import WatchInput, train_watch

CURRENT = "prime-rl/main-2026-08-21/examples/basic/reverse-text/rl.toml"
LAB = "hosted-lab/reverse-text-rl.toml"
WANDB_KEY = "wandb_secret_value_0123456789"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_installed_prime_parses_every_train_argv_we_build(tmp_path):
    config = tmp_path / "rl.toml"
    config.write_text("max_steps = 1\n")
    path, params = prime_parses(hosted.launch_argv(config, ["WANDB_API_KEY", "HF_TOKEN"]))
    assert path == ["train", "run"] and params["yes"] and params["output"] == "json"
    assert params["env"] == ("WANDB_API_KEY", "HF_TOKEN") and params["config_path"] == str(config)
    assert prime_parses(hosted.launch_argv(config, []))[1]["env"] == ()
    assert prime_parses(hosted.validate_argv(config))[0] == ["train", "validate"]
    assert prime_parses(hosted.get_argv("run1"))[1] == {"run_id": "run1", "output": "json"}
    assert prime_parses(hosted.metrics_argv("run1"))[0] == ["train", "metrics"]
    _, logs = prime_parses(hosted.logs_argv("run1", "trainer", 200))
    assert (logs["component"], logs["tail"]) == ("trainer", 200)
    assert prime_parses(hosted.logs_argv("run1", None, 50))[1]["component"] is None
    assert prime_parses(hosted.stop_argv("run1"))[1]["force"] is True
    assert prime_parses(hosted.checkpoints_argv("run1"))[1]["output"] == "json"
    assert prime_parses(hosted.pause_argv("run1"))[1]["force"] is True
    path, params = prime_parses(hosted.resume_argv("run1", ["WANDB_API_KEY"]))
    assert path == ["train", "resume"] and params["yes"] and params["env"] == ("WANDB_API_KEY",)


def test_a_lab_era_config_is_refused_with_the_exact_migration(workspace, shared_fixtures, monkeypatch, tmp_path):
    config = shutil.copy(shared_fixtures / LAB, workspace / "rl.toml")
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        result = train_launch(LaunchInput(config=Path(config), target="hosted", yes=True), Context(workspace=workspace))
    assert not result.launched and result.exit_code() == 1
    [problem] = result.errors
    assert problem.code == "dialect-mismatch" and "hosted-lab" in problem.message
    assert problem.fix.startswith(f"rlpilot config migrate {config} --to prime-rl-current --output ")
    assert api.requests == []


def test_launch_without_login_is_one_clear_line(workspace, shared_fixtures, tmp_path):
    shutil.copy(shared_fixtures / CURRENT, workspace / "rl.toml")
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api, logged_in=False)
        done = rlpilot("train", "launch", "rl.toml", "--hosted", "--yes", cwd=workspace, env=env)
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "prime login" in line and "PRIME_API_KEY" in line
    assert api.requests == []


def test_preview_launch_and_follow_a_hosted_run(workspace, shared_fixtures, tmp_path):
    shutil.copy(shared_fixtures / CURRENT, workspace / "rl.toml")
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api, WANDB_API_KEY=WANDB_KEY, RLPILOT_HOME=str(tmp_path / "state"))

        preview = rlpilot("train", "launch", "rl.toml", "--hosted", "--json", cwd=workspace, env=env)
        assert preview.returncode == 1, preview.stderr
        plan = json.loads(preview.stdout)
        assert plan["launched"] is False and plan["problems"] == [] and "--yes" in plan["next"]
        summary = plan["plan"]
        assert summary["model"] == "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT" and summary["max_steps"] == 20
        assert (summary["train_gpus"], summary["infer_gpus"], summary["gpu_type"]) == (1, 1, "H200_141GB")
        assert (summary["price_per_gpu_hour"], summary["estimated_cost_per_hour"]) == (3.2, 6.4)
        assert "validates the config on submission" in summary["validation"]
        assert summary["secrets"] == ["WANDB_API_KEY"]
        assert not api.seen("POST", "/api/v1/training/runs")

        launched = rlpilot("train", "launch", "rl.toml", "--hosted", "--yes", "--json", cwd=workspace,
                           env=env)
        assert launched.returncode == 0, launched.stderr
        run = json.loads(launched.stdout)["run"]
        # The secret travelled from our environment to the platform, and by name only through argv and records.
        assert api.payloads[run]["wandbApiKey"] == WANDB_KEY
        record = (tmp_path / "state" / "runs" / run / "record.json").read_text()
        assert json.loads(record)["target"] == "hosted" and WANDB_KEY not in record + launched.stdout

        api.metrics[run] = [{"step": s, "train/agg/all/agent/reward/mean": 0.1 * s, "entropy/all/mean": 0.5}
                            for s in range(1, 6)]
        api.logs[run] = {"trainer": '{"timestamp": "2026-12-01T08:00:05Z", "level": "SUCCESS", '
                                    '"message": "Step 5 | 1.2s | Loss 0.0123"}'}
        status = rlpilot("train", "status", run, "--json", cwd=workspace, env=env)
        metrics = rlpilot("train", "metrics", run, "--json", cwd=workspace, env=env)
        logs = rlpilot("train", "logs", run, "--component", "trainer", "--json", cwd=workspace, env=env)
        stopped = rlpilot("train", "stop", run, "--yes", "--json", cwd=workspace, env=env)

    assert status.returncode == 0, status.stderr
    state = json.loads(status.stdout)
    assert state["status"] == "RUNNING" and state["running"] and state["metrics"]["last_step"] == 5
    assert state["metrics"]["latest"]["reward_mean"] == pytest.approx(0.5)
    source = Path(json.loads(metrics.stdout)["metrics"]["source"])
    assert read(source)[1].last_step == 5  # what `rlpilot diagnose` will read
    assert json.loads(logs.stdout)["lines"] == ["08:00:05 SUCCESS Step 5 | 1.2s | Loss 0.0123"]
    assert api.seen("GET", f"/api/v1/rft/runs/{run}/logs")[0]["query"]["component"] == ["trainer"]
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["status"] == "STOPPED"
    assert api.seen("PUT", f"/api/v1/rft/runs/{run}/stop")


def test_an_unknown_run_says_so(workspace, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        with pytest.raises(ToolError) as error:
            train_status(RunInput(run="run-nope"), Context(workspace=workspace))
    assert error.value.code == "run-not-found"


def test_watch_ends_with_the_question_when_the_reward_is_flat(workspace, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        api.runs["run-flat"] = {"id": "run-flat", "userId": "u", "status": "RUNNING", "maxSteps": 200,
                                "createdAt": "2026-12-01T08:00:00Z", "updatedAt": "2026-12-01T08:00:00Z"}
        api.metrics["run-flat"] = [{"step": s, "train/agg/all/agent/reward/mean": 0.0, "entropy/all/mean": 0.6}
                                   for s in range(1, 81)]
        events = []
        result = train_watch(WatchInput(run="run-flat", every="1s"), Context(workspace=workspace,
                                                                               emit=events.append))
    assert result.stop_suggested and result.exit_code() == 1 and result.checks == 1
    assert result.reason.startswith("flat-reward") and "rlpilot train stop run-flat" in result.next
    assert not api.seen("PUT", "/api/v1/rft/runs/run-flat/stop")  # the user decides, through train stop
    assert any(e.get("finding", {}).get("code") == "flat-reward" for e in events)
    assert result.samples == "`rlpilot train rollouts run-flat --step 80`"


def test_pause_checkpoints_and_resume_as_a_new_run(workspace, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api, WANDB_API_KEY=WANDB_KEY))
        api.runs["run-p"] = {"id": "run-p", "userId": "u", "status": "RUNNING", "baseModel": "Qwen/Qwen3-4B",
                             "maxSteps": 300, "gpuCount": 8, "createdAt": "2026-12-01T08:00:00Z",
                             "updatedAt": "2026-12-01T08:00:00Z"}
        api.checkpoints["run-p"] = [{"id": "ck1", "rftRunId": "run-p", "step": 100, "storageUrl": "s3://b/ck1",
                                     "status": "READY", "createdAt": "2026-12-01T09:00:00Z"}]
        ctx = Context(workspace=workspace)
        paused = train_pause(PauseInput(run="run-p", yes=True), ctx)
        [checkpoint] = train_checkpoints(RunInput(run="run-p"), ctx).checkpoints
        preview = train_resume(ResumeInput(run="run-p"), ctx)
        assert not api.seen("POST", "/api/v1/training/runs/run-p/resume")
        resumed = train_resume(ResumeInput(run="run-p", yes=True), ctx)
    assert paused.status == "PAUSING" and "resume" in paused.next
    assert (checkpoint.step, checkpoint.status, checkpoint.where) == (100, "READY", "s3://b/ck1")
    assert not preview.resumed and preview.exit_code() == 1 and "--yes" in preview.next
    assert "Qwen/Qwen3-4B" in preview.summary and preview.secrets == ["WANDB_API_KEY"]
    assert resumed.resumed and resumed.new_run in api.runs and resumed.new_run != "run-p"
    assert api.payloads[resumed.new_run] == {"wandbApiKey": WANDB_KEY}
    assert json.loads((workspace / ".rlpilot" / "runs" / resumed.new_run / "record.json").read_text())[
        "summary"]["resumed_from"] == "run-p"


@pytest.fixture
def no_prime(monkeypatch, tmp_path):
    """A machine with rlpilot but no prime CLI: rlpilot installed as a tool, without the dev group."""
    use_env(monkeypatch, prime_env(tmp_path / "home", PATH="/usr/bin:/bin"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "tool" / "bin" / "python"))


@pytest.mark.parametrize("follow", [train_status, train_checkpoints,
                                    lambda args, ctx: train_watch(WatchInput(run=args.run, rounds=1), ctx)],
                         ids=["status", "checkpoints", "watch"])
def test_an_unknown_run_without_the_prime_cli_is_named_unknown(workspace, no_prime, follow):
    with pytest.raises(ToolError) as error:
        follow(RunInput(run="NO-SUCH-RUN"), Context(workspace=workspace))
    assert error.value.code == "run-not-found"
    assert "no run NO-SUCH-RUN was launched from this workspace" in error.value.message
    assert "Prime CLI (`prime`) is not installed" in error.value.message


def test_a_known_hosted_run_without_the_prime_cli_names_the_cli(workspace, no_prime):
    records.save(workspace, records.RunRecord(id="run-here", target="hosted", config="rl.toml", started_at="now"))
    with pytest.raises(ToolError) as error:
        train_status(RunInput(run="run-here"), Context(workspace=workspace))
    assert error.value.code == "prime-not-installed"


def test_launch_without_the_prime_cli_names_the_cli_not_the_login(workspace, shared_fixtures, no_prime):
    config = shutil.copy(shared_fixtures / CURRENT, workspace / "rl.toml")
    with pytest.raises(ToolError) as error:
        train_launch(LaunchInput(config=Path(config), target="hosted", yes=True), Context(workspace=workspace))
    assert error.value.code == "prime-not-installed" and "prime login" not in error.value.hint


def test_stop_and_pause_without_yes_say_their_plan_and_do_nothing(workspace, tmp_path):
    """Their catalog entries confirm: on the command line they act only on --yes, like train launch."""
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api)
        api.runs["run-q"] = {"id": "run-q", "userId": "u", "status": "RUNNING", "createdAt": "2026-12-01T08:00:00Z",
                             "updatedAt": "2026-12-01T08:00:00Z"}
        stop = rlpilot("train", "stop", "run-q", cwd=workspace, env=env)
        pause = rlpilot("train", "pause", "run-q", cwd=workspace, env=env)
        assert not api.seen("PUT", "/api/v1/rft/runs/run-q/stop")
        assert not api.seen("POST", "/api/v1/training/runs/run-q/pause")
    assert (stop.returncode, pause.returncode) == (1, 1), stop.stderr + pause.stderr
    assert stop.stdout.splitlines() == [
        "run run-q (hosted): would stop: the platform stops it; a stopped run has no checkpoints left to restart from",
        "next: nothing was done: run it again with --yes to stop it"]
    assert pause.stdout.splitlines()[0].startswith("run run-q: would pause at a checkpoint and release its GPUs")
    assert pause.stdout.splitlines()[-1] == "next: nothing was done: run it again with --yes to pause it"
    assert api.runs["run-q"]["status"] == "RUNNING"
