"""eval summarize: verdicts, statistics and recommendations on real-shaped run files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from eval_support import REPO, episode, legacy_row, rlpilot, write_legacy, write_traces
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.contract import BadInput, Context
from tools.evals.summarize import SummarizeInput, eval_summarize


def summarize(path: Path):
    return eval_summarize(SummarizeInput(path=path), Context(workspace=path.parent))


def codes(summary) -> list[str]:
    return [r.code for r in summary.recommendations]


def test_mixed_binary_groups_are_ready_with_the_exact_numbers(tmp_path):
    run = write_traces(tmp_path / "run", {0: [1, 0, 1], 1: [0, 0, 1], 2: [1, 1, 1], 3: [0, 0, 0]})
    s = summarize(run)
    assert (s.format, s.rollouts, s.examples, s.errored) == ("traces", 12, 4, 0)
    assert (s.env, s.model) == ("tiny-arith", "stub-model")
    assert s.reward.mean == pytest.approx(0.5) and s.reward.std == pytest.approx(0.5)
    assert (s.reward.min, s.reward.max, s.reward_kind) == (0.0, 1.0, "binary")
    assert (s.zero_variance_fraction, s.all_fail_fraction, s.all_pass_fraction) == (0.5, 0.25, 0.25)
    # pass@3 is the share of groups with at least one pass: 3 of 4.
    assert (s.pass_at_k.k, s.pass_at_k.value) == (3, 0.75)
    assert s.verdict == "ready"
    assert codes(s) == ["difficulty-filtering", "proceed"]
    assert all(r.reason for r in s.recommendations)


@pytest.mark.parametrize(("groups", "verdict", "expected"), [
    ({i: [0, 0, 0] for i in range(10)}, "too-hard", {"check-verifier", "easier-data", "larger-group"}),
    ({i: [1, 1, 1] for i in range(10)}, "too-easy", {"harder-data", "difficulty-filtering"}),
    ({**{i: [1, 1, 1] for i in range(5)}, **{i: [0, 0, 0] for i in range(5, 10)}}, "no-diversity",
     {"add-variance", "larger-group", "difficulty-filtering"}),
    ({i: [0.5] for i in range(4)}, "no-diversity", {"more-rollouts", "filtering-conservative"}),
])
def test_verdicts_and_their_recommendations(tmp_path, groups, verdict, expected):
    s = summarize(write_traces(tmp_path / "run", groups))
    assert s.verdict == verdict
    assert expected <= set(codes(s)), codes(s)


def test_too_hard_needs_a_low_mean_not_only_failing_groups(tmp_path):
    # 9 of 10 groups fail, but the tenth passes everywhere: mean 0.1 > 0.05, so not too-hard.
    groups = {**{i: [0, 0, 0] for i in range(9)}, 9: [1, 1, 1]}
    s = summarize(write_traces(tmp_path / "run", groups))
    assert s.verdict == "no-diversity"


def test_continuous_rewards_use_thresholds(tmp_path):
    groups = {0: [0.96, 0.99], 1: [0.01, 0.04], 2: [0.3, 0.7]}
    s = summarize(write_traces(tmp_path / "run", groups))
    assert s.reward_kind == "continuous"
    assert s.all_pass_fraction == pytest.approx(1 / 3) and s.all_fail_fraction == pytest.approx(1 / 3)
    assert s.zero_variance_fraction == 0.0
    assert "filtering-conservative" in codes(s) and "difficulty-filtering" not in codes(s)


def test_nothing_passing_asks_for_a_verifier_check_even_when_rewards_vary(tmp_path):
    s = summarize(write_traces(tmp_path / "run", {0: [0.2, 0.6], 1: [0.3, 0.5]}))
    assert (s.pass_at_k.value, s.verdict) == (0.0, "ready")
    assert "check-verifier" in codes(s)


def test_more_than_half_errored_is_broken_and_exits_1(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    lines = [episode(0, 1.0), episode(1, None, error="All connection attempts failed"),
             episode(2, None, error="All connection attempts failed")]
    (run / "traces.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    s = summarize(run)
    assert (s.verdict, s.errored, s.rollouts) == ("broken", 2, 3)
    assert s.errors == {"ProviderError: All connection attempts failed": 2}
    assert codes(s) == ["fix-errors"]
    assert s.exit_code() == 1
    # Errored rollouts carry no reward: the stats cover the one that finished.
    assert s.reward.mean == 1.0


def test_no_rollouts_is_broken(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "traces.jsonl").write_text("")
    s = summarize(run)
    assert (s.verdict, s.rollouts, codes(s)) == ("broken", 0, ["rerun-eval"])


def test_garbled_and_truncated_lines_are_counted_and_skipped(tmp_path):
    run = write_traces(tmp_path / "run", {0: [1, 0], 1: [0, 1]})
    good = (run / "traces.jsonl").read_text()
    truncated = json.dumps(episode(2, 1.0))[:200]
    (run / "traces.jsonl").write_text(good + "[1, 2]\n{not json\n" + json.dumps({"id": "x"}) + "\n\n" + truncated)
    s = summarize(run)
    assert s.rollouts == 4 and s.skipped_lines == 4
    where = [w.split(": skipped")[0] for w in s.warnings]
    assert where == [f"{run / 'traces.jsonl'}:{n}" for n in (5, 6, 7, 9)]
    assert "truncated or garbled" in s.warnings[1] and "not a verifiers episode" in s.warnings[2]


def test_legacy_run_directory(tmp_path):
    run = write_legacy(tmp_path / "outputs" / "evals" / "tiny-arith--stub-model" / "ab12cd34",
                       {0: [1, 0, 1], 1: [0, 0, 0]})
    s = summarize(run)
    assert (s.format, s.rollouts, s.examples, s.env, s.model) == ("legacy", 6, 2, "tiny-arith", "stub-model")
    assert s.all_fail_fraction == 0.5


def test_a_legacy_error_counts_as_errored(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = [legacy_row(0, 1.0), legacy_row(0, None, error="RateLimitError: 429")]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "metadata.json").write_text("{}")
    s = summarize(run)
    assert (s.errored, s.errors) == (1, {"RateLimitError: 429": 1})


rewards = st.sampled_from([0.0, 1.0]) | st.floats(0, 1, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(groups=st.dictionaries(st.integers(0, 30), st.lists(rewards, min_size=1, max_size=5), min_size=1,
                              max_size=8))
def test_legacy_and_traces_summaries_agree_on_the_same_data(tmp_path_factory, groups):
    base = tmp_path_factory.mktemp("same")
    new = summarize(write_traces(base / "traces", groups)).model_dump(exclude={"path", "format"})
    old = summarize(write_legacy(base / "legacy", groups)).model_dump(exclude={"path", "format"})
    assert new == old


def test_a_folder_of_runs_reads_the_newest(tmp_path):
    outputs = tmp_path / "outputs"
    old = write_traces(outputs / "old-run", {0: [0, 0]})
    new = write_traces(outputs / "new-run", {0: [1, 0]})
    os.utime(old / "traces.jsonl", (1, 1))
    assert summarize(outputs).path == str(new / "traces.jsonl")


def test_bad_paths_say_what_to_do(tmp_path):
    with pytest.raises(BadInput) as missing:
        summarize(tmp_path / "nowhere")
    assert missing.value.code == "no-such-path"
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput) as empty:
        summarize(tmp_path / "empty")
    assert "rlpilot eval run" in empty.value.hint
    validate = tmp_path / "validate"
    validate.mkdir()
    (validate / "results.jsonl").write_text('{"index": 0, "mode": "all", "valid": true}\n')
    (validate / "summary.json").write_text("{}")
    with pytest.raises(BadInput) as checks:
        summarize(validate / "results.jsonl")
    assert "env check" in checks.value.hint


def test_cli_json_is_one_document_and_exit_codes_follow_the_verdict(tmp_path):
    write_traces(tmp_path / "ok", {0: [1, 0, 1], 1: [0, 1, 0]})
    done = rlpilot("eval", "summarize", "ok", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "ready"
    write_traces(tmp_path / "bad", {0: [None, None]}, error="boom")
    assert rlpilot("eval", "summarize", "bad", cwd=tmp_path).returncode == 1
    missing = rlpilot("eval", "summarize", "nowhere", "--json", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout == "" and "does not exist" in missing.stderr


def test_the_bundled_example_run_is_ready(tmp_path):
    s = summarize(REPO / "environments" / "tiny_arith" / "examples" / "smoke-eval")
    assert (s.rollouts, s.examples, s.errored, s.reward.mean, s.verdict) == (18, 6, 0, 0.5, "ready")
    assert (s.env, s.model, s.pass_at_k.k) == ("tiny-arith", "stub-model", 3)
