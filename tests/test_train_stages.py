"""Before a hosted launch: the model and GPU type against what the account is offered, and staged runs.

The real `prime` CLI talks to the local stand-in of the Prime API (PRIME_API_BASE_URL).
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from ops_support import prime_env, prime_parses, use_env

from agent.bench.standin import PrimeAPI
from tools.framework.contract import Context, not_confirmed
from tools.training import offers
from tools.training.launch import LaunchInput, stage_config, train_launch

CURRENT = "prime-rl/main-2026-08-21/examples/basic/reverse-text/rl.toml"
MODEL = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"


@pytest.fixture
def config(tmp_path: Path, shared_fixtures: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return Path(shutil.copy(shared_fixtures / CURRENT, folder / "rl.toml"))


def _launch(config: Path, **fields) -> object:
    return train_launch(LaunchInput(config=config, target="hosted", **fields), Context(workspace=config.parent))


def test_installed_prime_parses_the_offer_reads():
    assert prime_parses(offers.MODELS_ARGV)[0] == ["train", "models"]
    assert prime_parses(offers.GPUS_ARGV) == (["train", "gpus"], {"output": "json"})


def test_a_model_and_gpu_type_the_account_is_not_offered_are_errors_naming_the_offers(config, monkeypatch, tmp_path):
    config.write_text('gpu_type = "B200_180GB"\n' + config.read_text())
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        api.on_demand = []  # reserved capacity only: the cached models are all it can train
        api.models = [{"name": "Qwen/Qwen3-4B", "clusters": [{"clusterId": "c1", "clusterName": "east",
                                                              "gpuType": "H100_80GB"}]}]
        result = _launch(config)
    codes = {p.code: p for p in result.errors}
    assert set(codes) == {"model-not-offered", "gpu-type-not-offered"} and not result.launched
    assert MODEL in codes["model-not-offered"].message and "Qwen/Qwen3-4B" in codes["model-not-offered"].message
    assert "H100_80GB, H200_141GB" in codes["gpu-type-not-offered"].message
    assert "fix the errors" in result.next


def test_unreadable_offer_lists_are_said_and_the_launch_still_goes_to_its_confirmation(config, monkeypatch, tmp_path):
    config.write_text('gpu_type = "H200_141GB"\n' + config.read_text())
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        api.gpu_types = None  # an older platform: the endpoint is not there
        api.broken.add("/api/v1/training/available-fft-models")
        preview = _launch(config)
        assert not api.seen("POST", "/api/v1/training/runs")
        launched = _launch(config, yes=True)
    unread = [p for p in preview.problems if p.code == "offers-unreadable"]
    assert len(unread) == 2 and all(p.severity == "info" for p in unread)
    assert {"`prime train models`", "`prime train gpus`"} == {p.message.split(" could")[0] for p in unread}
    assert preview.next == not_confirmed("launch it") and not preview.errors
    assert any("cost        reported by the platform at launch" in line for line in preview.plan.lines())
    assert launched.launched and launched.plan.price_per_gpu_hour == 3.2  # what the platform answered at dispatch


def test_the_preview_shows_the_price_per_gpu_hour_and_an_hourly_estimate(config, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        api.on_demand = [{"gpuType": "H200_141GB", "pricePerGpuHour": 3.2, "availableNow": True},
                         {"gpuType": "H100_80GB", "pricePerGpuHour": 2.1, "availableNow": False}]
        preview = _launch(config)
    assert preview.plan.price_per_gpu_hour is None  # two on-demand types and no gpu_type: both are shown
    assert "H200_141GB $3.20/GPU-hour (about $6.40/hour)" in preview.plan.where
    assert "H100_80GB $2.10/GPU-hour (about $4.20/hour)" in preview.plan.where


def test_a_stage_is_a_sibling_config_that_differs_only_in_its_steps(config):
    text = config.read_text()
    proof = stage_config(config, "proof")
    assert proof == config.with_name("rl.proof.toml") and config.read_text() == text
    assert tomllib.loads(proof.read_text())["max_steps"] == 2
    changed = [line for line in proof.read_text().splitlines() if line not in text.splitlines()]
    assert changed == ["max_steps = 2"]
    split = config.with_name("split.toml")
    split.write_text('[trainer]\nmax_steps = 300\n\n[orchestrator]\nmax_steps = 300  # both parts\n')
    smoke = stage_config(split, "smoke").read_text()
    assert smoke == '[trainer]\nmax_steps = 10\n\n[orchestrator]\nmax_steps = 10  # both parts\n'


def test_proof_then_smoke_then_full_each_previewed_and_confirmed(config, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api, RLPILOT_HOME=str(tmp_path / "state")))
        launched = {}
        for stage, steps in (("proof", 2), ("smoke", 10), ("full", 20)):
            preview = _launch(config, stage=stage)
            assert not preview.launched and preview.next == not_confirmed("launch it")
            assert (preview.plan.stage, preview.plan.max_steps) == (stage, steps)
            assert len(api.seen("POST", "/api/v1/training/runs")) == len(launched)  # nothing ran unconfirmed
            result = _launch(config, stage=stage, yes=True)
            assert result.launched and result.plan.max_steps == steps
            launched[stage] = result
    proof, smoke, full = launched["proof"], launched["smoke"], launched["full"]
    assert [api.payloads[r.run]["config"]["max_steps"] for r in (proof, smoke, full)] == [2, 10, 20]
    assert proof.plan.config.endswith("rl.proof.toml") and full.plan.config == str(config)
    assert "--stage smoke" in proof.next and "--stage full" in smoke.next and "--stage" not in full.next


def _files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


@pytest.mark.parametrize("stage", ["proof", "smoke"])
def test_a_refused_staged_launch_leaves_nothing_behind(config, monkeypatch, tmp_path, stage):
    config.write_text(config.read_text().replace("batch_size = 128", "batch_size = 100"))  # not whole groups
    earlier = config.with_name(f"rl.{stage}.toml")
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        there = _files(config.parent)
        for yes in (False, True):
            result = _launch(config, stage=stage, yes=yes)
            assert result.refused() and _files(config.parent) == there
        earlier.write_text("# the user's own file of that name\n")  # put back as it was, not removed
        assert _launch(config, stage=stage, yes=True).refused()
    assert earlier.read_text() == "# the user's own file of that name\n"
    assert _files(config.parent) == there | {earlier.name}


def test_a_previewed_stage_leaves_nothing_and_its_launch_keeps_what_the_run_uses(config, monkeypatch, tmp_path):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        there = _files(config.parent)
        assert _launch(config, stage="proof").next == not_confirmed("launch it")
        assert _files(config.parent) == there
        assert _launch(config, stage="proof", yes=True).launched
    assert config.with_name("rl.proof.toml").exists() and any(config.parent.glob(".rlpilot/launches/rl.proof-*"))
