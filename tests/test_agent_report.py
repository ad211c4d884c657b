"""The four-part report is built from what the tools recorded, whatever the model claims."""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_support import Recorder, call, make_agent
from diagnose_support import make_run, write_jsonl
from fakes.openai_server import Reply, ScriptedOpenAIServer

REPO = Path(__file__).resolve().parents[1]
TRAINING_CONFIG = REPO / "configs" / "training" / "tiny-arith.toml"


def test_report_lists_written_deltas_observed_findings_and_the_next_step(tmp_path):
    config = tmp_path / "rl.toml"
    shutil.copy(TRAINING_CONFIG, config)
    metrics = write_jsonl(tmp_path / "metrics.jsonl", make_run(steps=120, reward_mean=0.01))
    script = [
        call("config_tune", path=str(config), profile="complex", reward="binary"),  # proposed only
        call("config_tune", path=str(config), profile="complex", reward="binary", apply=True),
        call("diagnose", source=str(metrics)),
        call("report", notes="Reward is 0.9 already."),  # prose the report keeps apart from numbers
        Reply("Here is the report."),
    ]
    with ScriptedOpenAIServer(lambda request: script.pop(0)) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["config_tune", "diagnose", "report"], recorder)
        agent.send("tune and check my run")
    results = {e["name"]: e for e in recorder.of_type("tool_result")}
    applied = results["config_tune"]["result"]["deltas"]
    assert applied, "the complex profile changes the quick-test example config"
    report = recorder.of_type("report")[0]["report"]
    assert [(d["key"], d["to"]) for d in report["deltas"]] == [(d["key"], d["to"]) for d in applied]
    assert all(d["file"] == str(config) for d in report["deltas"])
    assert len(report["why"]) == len(applied)
    codes = [f["code"] for f in report["observed"]["runs"][0]["findings"]]
    assert "flat-reward" in codes
    assert report["next_step"]["stop_when"], "a next step always says when to stop"
    assert report["notes"] == "Reward is 0.9 already."


def test_report_of_an_empty_session_says_nothing_was_measured(tmp_path):
    with ScriptedOpenAIServer(lambda request: Reply("")) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["report"], recorder)
        agent.call(agent.tools["report"], {})
    text = recorder.of_type("tool_result")[0]["text"]
    assert "## 1. Config deltas applied\n- none" in text
    assert "nothing measured in this session yet" in text


def test_a_proposed_tuning_is_the_next_step_until_it_is_applied(tmp_path):
    config = tmp_path / "rl.toml"
    shutil.copy(TRAINING_CONFIG, config)
    with ScriptedOpenAIServer(lambda request: Reply("")) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["config_tune", "report"], recorder)
        agent.call(agent.tools["config_tune"], {"path": str(config), "profile": "complex", "reward": "binary"})
        agent.call(agent.tools["report"], {})
    report = recorder.of_type("report")[0]["report"]
    assert report["deltas"] == []  # proposed, not written
    step = report["next_step"]
    assert step["action"].startswith("apply the tuning proposed")
    assert {d["key"] for d in step["deltas"]} == {"orchestrator.group_size", "orchestrator.batch_size"}
