"""A watch that keeps watching: incremental polls, the budget and its stop question, stalls.

Hosted runs: the real `prime` CLI against the stand-in, whose run moves (`PrimeAPI.grow`): each
metrics read reveals the next steps, and the spend and `last_updated_at` follow.
"""

from __future__ import annotations

import json
import queue
import subprocess
from pathlib import Path

import pytest
from diagnose_support import make_run, rows
from ops_support import RLPILOT, prime_env, rlpilot, use_env

from agent.bench.standin import PrimeAPI
from agent.chat.watching import BackgroundWatch
from tools.diagnose.readers import read
from tools.diagnose.stats import continuing
from tools.diagnose.tool import DiagnoseInput, diagnose, judge
from tools.framework.contract import Context
from tools.training.watch import FileSource, HostedSource, Watcher, WatchInput, train_watch

NOW = "2026-12-01T08:00:00Z"


def _hosted_run(api: PrimeAPI, run: str, max_steps: int | None) -> None:
    api.runs[run] = {"id": run, "userId": "u", "status": "RUNNING", "maxSteps": max_steps, "createdAt": NOW,
                     "updatedAt": NOW}


def _healthy_rows(steps: int, seconds_per_step: int = 60) -> list[dict]:
    return [{"step": s, "timestamp": 1796112000 + s * seconds_per_step,  # 2026-12-01T08:00:00Z on
             "train/agg/all/agent/reward/mean": 0.2 + 0.002 * s, "entropy/all/mean": 0.5} for s in range(1, steps + 1)]


def _append(path: Path, run: list[dict], start: int, first_row: int = 0) -> None:
    """Append the metrics.jsonl rows of steps `start`.. (two rows a step), from the step's `first_row`."""
    with path.open("a") as handle:
        for row in rows(run)[2 * start + first_row:]:
            handle.write(json.dumps(row) + "\n")


def test_each_poll_reads_only_what_is_new_and_keeps_what_a_full_read_sees(tmp_path):
    run = make_run(300)
    path = tmp_path / "metrics.jsonl"
    _append(path, run[:200], 0)
    line = json.dumps(rows(run)[400]) + "\n"
    with path.open("a") as handle:
        handle.write(line[:30])  # a line still being written
    watcher = Watcher("local1", FileSource(path))
    watcher.poll()
    assert watcher.last_step == 199 and watcher.source.offset < path.stat().st_size
    with path.open("a") as handle:
        handle.write(line[30:])
    _append(path, run, 200, first_row=1)
    read_before = watcher.source.offset
    assert watcher.poll() == [] and watcher.last_step == 299  # a healthy run: nothing new to say
    assert path.stat().st_size - read_before < path.stat().st_size / 2  # the second poll read only the new part
    _, whole = read(path)
    for name, series in whole.series.items():
        kept = watcher.so_far.run.series[name]
        assert list(kept.steps) == list(series.steps) and list(kept.values) == list(series.values), name


@pytest.mark.parametrize("cuts", [(160,), (161,), (37, 74, 111, 148, 185, 222, 259), (100, 170, 171, 200)],
                         ids=["at-the-resume", "inside-a-step", "every-37-lines", "across-the-resume"])
def test_a_resumed_run_that_logs_steps_again_is_kept_by_the_watch_as_diagnose_keeps_it(tmp_path, cuts):
    """A run resumed from its step-40 checkpoint logs steps 40 to 79 again, with new values: the later value of
    a step wins in a diagnose of the whole file, and in a watch that read the same bytes in polls, wherever the
    polls cut them; both judge the same series and say the same. Here the first attempt's grad norm spiked
    from step 50, which the resumed attempt trains again without."""
    spiked = make_run(120, seed=1, grad_norm=lambda step, rng: 40.0 if step >= 50 else 0.25)
    lines = [json.dumps(row) + "\n" for row in rows(spiked)[:2 * 80] + rows(make_run(120, seed=2))[2 * 40:]]
    whole = tmp_path / "metrics.jsonl"
    whole.write_text("".join(lines))
    diagnosed = diagnose(DiagnoseInput(source=str(whole)), Context(workspace=tmp_path))

    polled = tmp_path / "polled" / "metrics.jsonl"
    polled.parent.mkdir()
    polled.touch()
    watcher = Watcher("resumed", FileSource(polled))
    for start, end in zip((0, *cuts), (*cuts, len(lines)), strict=True):
        with polled.open("a") as handle:
            handle.write("".join(lines[start:end]))
        watcher.poll()
    _, read_whole = read(whole)
    kept = watcher.so_far.run
    assert sorted(kept.series) == sorted(read_whole.series) and list(kept.steps) == list(read_whole.steps)
    for name, series in read_whole.series.items():
        assert list(kept.series[name].steps) == list(series.steps), name
        assert list(kept.series[name].values) == list(series.values), name
    with continuing(watcher.so_far.sweeps):  # the judgement the watch's next poll makes, going on from its last
        _, found = judge(kept, None)
    assert [(f.code, f.severity, f.first_step, f.summary) for f in found] == \
        [(f.code, f.severity, f.first_step, f.summary) for f in diagnosed.findings]
    assert "grad-norm-spike" not in [f.code for f in found]


def test_a_finding_is_reported_once_when_it_first_appears(tmp_path):
    path = tmp_path / "metrics.jsonl"
    run = make_run(200, reward_mean=0.0)
    _append(path, run[:100], 0)
    watcher = Watcher("local2", FileSource(path))
    first = watcher.poll()
    _append(path, run, 100)
    assert [e.code for e in first if e.code == "flat-reward"] == ["flat-reward"]
    assert first[[e.code for e in first].index("flat-reward")].stop  # an error on a running run: the stop question
    assert all(e.code != "flat-reward" for e in watcher.poll())


def test_a_run_that_spends_past_its_budget_ends_with_the_stop_question_and_is_not_stopped(tmp_path, monkeypatch):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        _hosted_run(api, "run-b", max_steps=None)  # no max_steps: only the spend itself can reach the budget
        api.grow("run-b", _healthy_rows(400), per_read=45, usd_per_step=0.1)  # 4.50 USD a read
        events = []
        result = train_watch(WatchInput(run="run-b", every="1s", budget_usd=5.0, rounds=8),
                             Context(workspace=tmp_path, emit=events.append))
        assert not api.seen("PUT", "/api/v1/rft/runs/run-b/stop")
    assert result.stop_suggested and result.reason.startswith("budget-reached") and result.exit_code() == 1
    assert result.spend.total_usd >= 5.0 and result.stopped is None
    assert result.question.prompt == "Stop run run-b?" and result.question.options == ["yes", "no"]
    assert "rlpilot train stop run-b" in result.next
    codes = [e.code for e in result.findings]
    assert codes.index("budget-warning") < codes.index("budget-reached")  # warned before it was reached
    assert any(e.get("finding", {}).get("code") == "budget-warning" for e in events)
    assert api.runs["run-b"]["status"] == "RUNNING"


def test_on_the_command_line_yes_answers_the_stop_question_of_a_projected_overspend(tmp_path):
    with PrimeAPI() as api:
        env = prime_env(tmp_path / "home", api)
        _hosted_run(api, "run-y", max_steps=500)
        api.grow("run-y", _healthy_rows(500), per_read=10, usd_per_step=0.05)  # 25 USD at 500 steps
        done = rlpilot("train", "watch", "run-y", "--every", "1s", "--budget-usd", "5", "--rounds", "4", "--yes",
                       "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["reason"].startswith("budget-projected") and result["spend"]["projected_usd"] == 25.0
    assert result["stopped"]["status"] == "STOPPED" and api.seen("PUT", "/api/v1/rft/runs/run-y/stop")


def test_a_stall_from_the_platform_clock_and_new_samples_read_for_reward_hacking(tmp_path, monkeypatch):
    with PrimeAPI() as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        _hosted_run(api, "run-s", max_steps=400)
        bare = {"completion": [{"role": "assistant", "content": "<answer>7</answer>"}], "reward": 1.0}
        api.samples["run-s"] = {5: [bare] * 6 + [{**bare, "reward": 0.0, "completion": "I think it over " * 5}]}
        api.grow("run-s", _healthy_rows(400), per_read=10, usd_per_step=0.0, seconds_per_step=60, hang_after=10)
        watcher = Watcher("run-s", HostedSource("run-s", Context(workspace=tmp_path), with_spend=False))
        seen = []
        while watcher.polls < 8 and not any(e.code == "stalled" for e in seen):
            seen += watcher.poll()
    [stall] = [e for e in seen if e.code == "stalled"]
    # the sampled rollouts were read as they appeared, for reward hacking
    [hacking] = [e for e in seen if e.code == "reward-hacking-suspected"]
    assert hacking.at_step == 5 and "rlpilot train rollouts run-s --step 5" in hacking.summary
    assert stall.at_step == 10 and stall.stop and "steps took 60 s" in stall.summary
    assert watcher.last_step == 10
    # every metrics read after the first asked only for the steps past the last one held
    asked = [r["query"].get("min_step") for r in api.seen("GET", "/api/v1/rft/runs/run-s/metrics")]
    assert asked[0] is None and all(a is not None for a in asked[1:])


def test_a_background_watch_hands_over_each_new_event_while_the_caller_goes_on(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.touch()
    arrived: queue.Queue = queue.Queue()
    watch = BackgroundWatch(Watcher("local3", FileSource(path)), every=0.05, on_event=arrived.put).start()
    _append(path, make_run(120, reward_mean=0.0), 0)  # the run goes on while the watch polls
    event = arrived.get(timeout=30)
    while event.code != "flat-reward":
        event = arrived.get(timeout=30)
    assert event.stop and event.kind == "finding"
    watch.stop()
    assert not watch.alive  # the event that asks for a decision ends the watch; stop() is then harmless


def test_a_background_watch_stops_when_asked(tmp_path):
    path = tmp_path / "metrics.jsonl"
    _append(path, make_run(60), 0)
    watch = BackgroundWatch(Watcher("local4", FileSource(path)), every=0.05, on_event=lambda e: None).start()
    assert watch.alive
    watch.stop()
    assert not watch.alive and watch.watcher.polls >= 1


def test_the_terminal_chat_offers_watch_and_starts_one_in_the_background(tmp_path):
    with PrimeAPI() as api:
        env = {k: v for k, v in prime_env(tmp_path / "home", api).items() if k not in ("OPENAI_API_KEY",)}
        env.pop("PRIME_API_KEY")  # no model endpoint either: the offline chat still serves slash commands
        done = subprocess.run([RLPILOT, "chat", "--json"], input="/help\n/watch run-t --every 1m\n", cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    notices = [json.loads(line).get("message", "") for line in done.stdout.splitlines() if line.strip()]
    assert any("/watch" in n and "rlpilot train watch" in n for n in notices)
    assert "watching run-t in the background: new findings come here" in notices
