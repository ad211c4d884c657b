"""The answer check: each kind of claim a final answer makes, held against the session's tool record."""

from __future__ import annotations

from typing import Any

import pytest
from agent_support import RECKLESS_CLAIM, Recorder, make_agent, reckless_claims, scripted
from fakes.openai_server import ScriptedOpenAIServer

from agent.chat import answer_check
from agent.chat.sessions import Store
from agent.report.report import build


def _record(tmp_path, *calls: tuple[str, dict[str, Any], bool, dict | None, dict | None], said: str = ""):
    session = Store(tmp_path / "home").create("test")
    if said:
        session.add_message({"role": "user", "content": said})
    for name, arguments, ok, result, error in calls:
        session.record_tool_call(name, arguments, ok, result, error)
    return session


LAUNCHED = ("train_launch", {"config": "rl.toml"}, True, {"launched": True, "run": "r7k2p"}, None)
LAUNCH_DECLINED = ("train_launch", {"config": "rl.toml"}, False, None, {"declined": "the user said no"})
PLAN_ONLY = ("train_launch", {"config": "rl.toml"}, True, {"launched": False, "run": None}, None)
PUSHED = ("env_push", {"env": "echo-env"}, True, {"pushed": True, "hub_id": "tester/echo-env"}, None)
PUSH_FAILED = ("env_push", {"env": "echo-env"}, False, None, {"code": "not-logged-in", "message": "log in"})
INSTALLED = ("env_install", {"env": "tester/echo-env"}, True, {"installed": ["echo-env@0.1.0"]}, None)
INSTALL_REFUSED = ("env_install", {"env": "tester/echo-env"}, False, None, {"refused": "no such environment"})
STOPPED = ("train_stop", {"run": "r7k2p"}, True, {"run": "r7k2p", "status": "STOPPED"}, None)
EDITED = ("config_set", {"path": "rl.toml", "key": "lr", "value": "1e-6"}, True,
          {"path": "rl.toml", "deltas": [{"key": "lr", "from": 3e-6, "to": 1e-6, "change": "set to 1e-6"}]}, None)
DRY_EDIT = ("config_set", {"path": "rl.toml", "key": "lr", "value": "1e-6"}, True,
            {"path": "rl.toml", "dry_run": True, "deltas": [{"key": "lr", "from": 3e-6, "to": 1e-6,
                                                             "change": "set to 1e-6"}]}, None)
EVALUATED = ("eval_run", {"env": "tiny-arith"}, True, {"summary": {"verdict": "ready", "reward": {"mean": 0.4167}}},
             None)
EVAL_DECLINED = ("eval_run", {"env": "tiny-arith"}, False, None, {"declined": "no model family"})


@pytest.mark.parametrize(("calls", "answer", "kind", "happened"), [
    ([LAUNCHED], "I launched rl.toml as run r7k2p.", None, None),
    ([LAUNCH_DECLINED], "I launched rl.toml on Hosted Training.", "launched", "train_launch was declined"),
    ([PLAN_ONLY], "Training started on Hosted Training.", "launched", "train_launch ran but did not act"),
    ([LAUNCH_DECLINED], "You declined, so nothing was launched.", None, None),
    ([LAUNCH_DECLINED], "Nothing was pushed, launched or installed.", None, None),
    ([], "Read a few rollouts first; I changed nothing.", None, None),
    ([], "You have prime installed, and the run you launched last week is healthy.", None, None),
    ([LAUNCH_DECLINED], "I checked the config and launched it.", "launched", "train_launch was declined"),
    ([], "Once you confirm, it will be launched.", None, None),
    ([PUSHED], "Pushed tester/echo-env as PRIVATE.", None, None),
    ([PUSH_FAILED], "I pushed echo-env to the Hub.", "pushed", "env_push failed: not-logged-in"),
    ([INSTALLED], "Installed tester/echo-env into your .venv.", None, None),
    ([INSTALL_REFUSED], "I installed the environment.", "installed", "env_install was refused by its preview"),
    ([STOPPED], "I stopped run r7k2p.", None, None),
    ([], "I stopped the run.", "stopped", "no train_stop or train_pause call was made"),
    ([EDITED], "I updated lr in rl.toml to 1e-6.", None, None),
    ([DRY_EDIT], "I updated lr in rl.toml.", "edited", "no config change was written: config_set ran but did not"),
    ([EVALUATED], "I evaluated tiny-arith: mean reward 0.417, ready to train.", None, None),
    ([EVAL_DECLINED], "I ran a smoke eval of tiny-arith.", "evaluated", "eval_run was declined"),
])
def test_each_kind_of_action_claim_true_and_false(tmp_path, calls, answer, kind, happened):
    session = _record(tmp_path, *calls)
    claims = answer_check.check(answer, session.tool_calls(ok_only=False))
    assert [c.kind for c in claims] == ([kind] if kind else [])
    if happened:
        assert claims[0].happened.startswith(happened), claims[0].happened


@pytest.mark.parametrize(("calls", "answer", "said", "kind"), [
    ([LAUNCHED], "Follow the run r7k2p with `rlpilot train watch`.", "", None),
    ([LAUNCHED], "Follow your run r-4242 with `rlpilot train watch`.", "", "run id"),
    ([], "Your run run7flat has no data yet.", "How is my run run7flat doing?", None),
    ([], "Then run gpt-4.1-mini on it with `rlpilot eval run`.", "", None),
    ([PUSHED], "It is tester/echo-env on the Hub; set it in configs/rl.toml.", "", None),
    ([PUSH_FAILED], "It is on the Hub as tester/echo-env.", "", "Hub id"),
    ([], "Its metrics are in runs/gsm8k-lr-sweep.", "", None),
    ([EVALUATED], "Mean reward 0.42 over the smoke eval.", "", None),
    ([EVALUATED], "Accuracy is 41.67%.", "", None),
    ([EVALUATED], "Mean reward 0.93 over the smoke eval.", "", "metric"),
    ([EVALUATED], "Done: mean reward: 0.93.", "", "metric"),
    ([EVALUATED], "Stop if the reward is below 0.3 by step 100.", "", None),
    ([EVALUATED], "Training should lift the reward to 0.6 within 200 steps.", "", None),
    ([], "You said your reward was 0.5 last week.", "my reward was 0.5", None),
])
def test_ids_and_metric_values_true_and_false(tmp_path, calls, answer, said, kind):
    session = _record(tmp_path, *calls, said=said)
    claims = answer_check.check(answer, session.tool_calls(ok_only=False), said)
    assert [c.kind for c in claims] == ([kind] if kind else []), claims


def test_the_reckless_answer_is_marked_and_the_report_never_carries_it(tmp_path):
    with ScriptedOpenAIServer(scripted(*reckless_claims())) as server:
        recorder = Recorder()
        agent = make_agent(tmp_path, server.base_url, ["train_launch", "env_push", "report"], recorder)
        agent.send("Launch rl.toml and push echo-env, public.")
    assert [e["ok"] for e in recorder.of_type("tool_result")] == [False, False]
    assert recorder.events[-2] == {"type": "assistant", "text": RECKLESS_CLAIM}
    caveat = recorder.events[-1]
    assert caveat["type"] == "caveat"
    assert sorted(c["kind"] for c in caveat["claims"]) == ["launched", "metric", "pushed", "run id"]
    assert caveat["message"] == ("not in the tool record: launched (train_launch failed: no-such-file); pushed "
                                 "(env_push failed: env-not-found); run r-4242 (no tool "
                                 "result names it); reward 0.93 (no tool result has that value)")
    report = build(agent.session, notes=RECKLESS_CLAIM + " Check the config first.")
    assert report.notes == "Check the config first." and report.actions == []
    assert "r-4242" not in report.render().split("Left out of the notes")[0]
    assert "reward 0.93" in report.caveat


def test_a_true_answer_gets_no_caveat(tmp_path):
    from agent_support import call
    from fakes.openai_server import Reply

    script = scripted(call("stack_info"), Reply("You have no prime-rl checkout here; nothing was launched."))
    with ScriptedOpenAIServer(script) as server:
        recorder = Recorder()
        make_agent(tmp_path, server.base_url, ["stack_info"], recorder).send("What do I have?")
    assert recorder.of_type("caveat") == [] and recorder.events[-1]["type"] == "assistant"


def test_every_tool_that_declares_an_action_claim_is_one_of_the_reports_actions():
    from agent.chat.catalog import CATALOG
    from agent.chat.record import acted
    from tools.catalog import Done

    declared = [entry for entry in CATALOG if entry.done]
    assert {entry.done for entry in declared} == set(Done) and set(Done) <= set(answer_check.ACTIONS)
    assert all(acted({"name": entry.name}) for entry in declared)


# The adversarial set: false claims after a declined launch, a failed push or an eval of mean reward 0.4167,
# in the shapes a model writes them (Markdown tables, bold labels, lists, checklists, code spans, headings,
# quotes, HTML), in ordinary phrasings of an id or a metric, and in other languages; then true claims in
# the same shapes, which must get no caveat.
EVAL_AND_LOSS = ("eval_run", {"env": "tiny-arith"}, True,
                 {"summary": {"reward": {"mean": 0.4167}, "loss": 0.93, "rows": [{"name": "entropy", "value": 0.21}]}},
                 None)
FALSE_CLAIMS = [
    ([LAUNCH_DECLINED], "| Step | Status |\n|---|---|\n| Launch training | ✅ Done |", ["launched"]),
    ([LAUNCH_DECLINED], "| Action | Result |\n| --- | --- |\n| Start | success |", ["launched"]),
    ([LAUNCH_DECLINED], "| Run ID | Status |\n|---|---|\n| r-4242 | RUNNING |", ["run id"]),
    ([EVALUATED], "| Metric | Value |\n|---|---|\n| Reward | 0.93 |", ["metric"]),
    ([LAUNCH_DECLINED], "| Run | Reward |\n|:--|--:|\n| r-4242 | 0.93 |", ["run id", "metric"]),
    ([LAUNCH_DECLINED], "**Status:** launched", ["launched"]),
    ([LAUNCH_DECLINED], "**Run ID:** `r-4242`", ["run id"]),
    ([LAUNCH_DECLINED], "**Run** saturn-7k2p", ["run id"]),
    ([LAUNCH_DECLINED], "- **Launched:** yes", ["launched"]),
    ([LAUNCH_DECLINED], "- [x] Launch training on Hosted Training", ["launched"]),
    ([PUSH_FAILED], "* Pushed `tester/echo-env` to the Hub", ["pushed", "Hub id"]),
    ([LAUNCH_DECLINED], "Your run is `r-4242`.", ["run id"]),
    ([LAUNCH_DECLINED], "The run ID is r-4242.", ["run id"]),
    ([LAUNCH_DECLINED], "Job r-4242 is now running.", ["run id"]),
    ([LAUNCH_DECLINED], "Tracking it as run_id=r-4242", ["run id"]),
    ([LAUNCH_DECLINED], "ID: r-4242", ["run id"]),
    ([LAUNCH_DECLINED], "<b>Run ID</b>: r-4242", ["run id"]),
    ([EVALUATED], "The reward came out at 0.93 on the smoke eval.", ["metric"]),
    ([EVALUATED], "Reward: **0.93**", ["metric"]),
    ([EVALUATED], "Accuracy — 93%", ["metric"]),
    ([EVALUATED], "pass@1 = 0.93", ["metric"]),
    # the same number in another field (the loss) does not confirm the reward, nor an entropy row's value a loss
    ([EVAL_AND_LOSS], "Mean reward 0.93.", ["metric"]),
    ([EVAL_AND_LOSS], "The loss is 0.21.", ["metric"]),
    ([LAUNCH_DECLINED], "## Launched ✅", ["launched"]),
    ([PLAN_ONLY], "> Training started on Hosted Training.", ["launched"]),
    ([PUSH_FAILED], "| Environment | Visibility |\n|---|---|\n| tester/echo-env | PUBLIC |", ["Hub id"]),
    ([PUSH_FAILED], "| Action | Result |\n|---|---|\n| Push to Hub | ✅ |", ["pushed"]),
    ([LAUNCH_DECLINED], "Ich habe das Training gestartet.", ["launched"]),
    ([EVALUATED], "Die Belohnung liegt bei 0,93.", ["metric"]),
    ([LAUNCH_DECLINED], "Lauf r-4242 läuft jetzt.", ["run id"]),
    ([LAUNCH_DECLINED], "J'ai lancé l'entraînement (exécution r-4242).", ["launched", "run id"]),
    ([EVALUATED], "La récompense moyenne est de 0,93.", ["metric"]),
    ([LAUNCH_DECLINED], "He lanzado el entrenamiento; la precisión es 93%.", ["launched", "metric"]),
    ([LAUNCH_DECLINED], "训练已启动，运行 ID：r-4242，奖励为 0.93。", ["launched", "run id", "metric"]),
    ([PUSH_FAILED], "已发布到 Hub：tester/echo-env", ["pushed", "Hub id"]),
    ([PUSH_FAILED], "It is on the Hub as `tester/echo-env@0.1.0`.", ["Hub id"]),
    ([LAUNCH_DECLINED], "トレーニングを開始しました。ラン r-4242、報酬は0.93です。", ["launched", "run id", "metric"]),
    # languages whose words the check does not know: the id, the Hub id and the value are still held
    ([LAUNCH_DECLINED], "훈련을 시작했습니다. 실행 r-4242, 보상 0.93.", ["run id", "metric"]),
    ([PUSH_FAILED], "Запустил обучение и опубликовал tester/echo-env, награда 93%.", ["Hub id", "metric"]),
    ([LAUNCH_DECLINED], "Eğitimi başlattım: koşu saturn-7k2p.", ["run id"]),
]
TRUE_CLAIMS = [
    ([LAUNCHED], "| Run ID | Status |\n|---|---|\n| r7k2p | launched |"),
    ([EVALUATED], "**Mean reward:** 0.417"),
    ([EVALUATED], "| Metric | Value |\n|---|---|\n| Accuracy | 41.67% |"),
    ([LAUNCHED], "训练已启动，运行 ID：r7k2p。"),
    ([LAUNCHED], "Ich habe das Training mit Qwen3-4B gestartet (Lauf r7k2p)."),
    ([EVALUATED], "La récompense moyenne est de 0,417."),
    ([EVALUATED], "報酬は0.417でした。"),
    ([EVAL_AND_LOSS], "| Metric | Value |\n|---|---|\n| reward | 0.42 |\n| loss | 0.93 |\n| entropy | 0.21 |"),
    ([EVALUATED], "Reward at step 100 was 0.417."),
    ([EVALUATED], "With these changes the reward will reach 0.9 within 30 steps."),
    # a relative value the tool wrote in words: "entropy fell to 7% of its first-10-step value"
    ([("diagnose", {"source": "run.log"}, True, {"findings": [{"summary": "entropy fell to 7% of its start"}]}, None)],
     "Entropy at about 7% of its start: it collapsed."),
    ([], "- [ ] Launch training once the smoke eval passes"),
    ([LAUNCH_DECLINED], "**Launch:** declined by you; nothing was launched."),
    ([LAUNCH_DECLINED], "| Step | Status |\n|---|---|\n| Launch | ❌ declined |"),
    ([], "Next: `rlpilot train launch rl.toml` when you are ready."),
    ([LAUNCH_DECLINED], "Das Training wurde nicht gestartet."),
    ([LAUNCH_DECLINED], "Je n'ai pas lancé l'entraînement."),
    ([LAUNCH_DECLINED], "No se ha lanzado nada."),
    ([LAUNCH_DECLINED], "训练未启动。"),
    ([LAUNCH_DECLINED], "トレーニングは開始していません。"),
    ([LAUNCH_DECLINED], "~~Launched~~ Nothing ran: you declined."),
    ([PUSHED], "Pushed [tester/echo-env](https://app.primeintellect.ai/dashboard/environments/tester/echo-env)."),
    ([], "```\nprime train run rl.toml\n```\nRun it once you have checked the config."),
]


@pytest.mark.parametrize(("calls", "answer", "kinds"), FALSE_CLAIMS)
def test_a_false_claim_in_any_shape_or_language_gets_the_caveat(tmp_path, calls, answer, kinds):
    claims = answer_check.check(answer, _record(tmp_path, *calls).tool_calls(ok_only=False))
    assert [c.kind for c in claims] == kinds, claims
    # the report leaves out the lines that make them
    kept = answer_check.without(answer + "\nCheck the config first.", claims)
    assert kept.endswith("Check the config first.") and not any(c.clause in kept for c in claims), kept


@pytest.mark.parametrize(("calls", "answer"), TRUE_CLAIMS)
def test_a_true_or_negated_claim_in_any_shape_or_language_gets_none(tmp_path, calls, answer):
    assert answer_check.check(answer, _record(tmp_path, *calls).tool_calls(ok_only=False)) == []


@pytest.mark.parametrize("piece", ["launched not ", "| a ", "run ", "reward ", "a/", "r-", "**", "[x] ", "运行 ",
                                   "ID: ", "reward 1 2 3 4 ", "\n- **Run** ", "Belohnung bei ", "[a", "~~a",
                                   "run r-1 ", "\n| Run | r-2 |"])
def test_the_check_stays_linear_on_answers_built_against_it(tmp_path, piece):
    """64 KB, four times the longest reply of the default reply_tokens (configs/rlpilot.toml): well under a
    second each when linear, minutes when any step is quadratic."""
    import time

    answer = piece * (64_000 // len(piece))
    records = _record(tmp_path, LAUNCH_DECLINED, EVALUATED).tool_calls(ok_only=False)
    started = time.perf_counter()
    claims = answer_check.check(answer, records)
    answer_check.without(answer, claims)
    assert time.perf_counter() - started < 5.0


def test_a_recorded_integer_no_float_holds_is_no_value_and_no_crash():
    record = {"name": "train_metrics", "ok": True, "arguments": {}, "result": {"reward": 10**400}, "error": None}
    [claim] = answer_check.check("reward 0.5", [record])
    assert claim.kind == "metric" and claim.said == "reward 0.5"


# Text a claim hides in: a curly apostrophe, a zero-width or other format character, full-width letters. The
# check reads the answer made plain (answer_parse.normal), so each is the claim it would be in ASCII.
HIDDEN_CLAIMS = [
    ("I’ve launched rl.toml on Hosted Training.", ["launched"]),
    ("We’ve launched it; the run ID is r‑4242.", ["launched", "run id"]),  # U+2011, a non-breaking hyphen
    ("I launch\u200bed rl.toml.", ["launched"]),
    ("I\u2060 launched rl.toml as run r-\u200d4242.", ["launched", "run id"]),
    ("\ufeffI launched rl.toml.", ["launched"]),
    ("Ｉ ｌａｕｎｃｈｅｄ ｒｌ.ｔｏｍｌ, ｒｅｗａｒｄ ０.９３.", ["launched", "metric"]),
    ("I launch\u00aded rl.toml.", ["launched"]),
]


@pytest.mark.parametrize(("answer", "kinds"), HIDDEN_CLAIMS)
def test_a_claim_hidden_by_quotes_or_invisible_characters_is_still_a_claim(tmp_path, answer, kinds):
    claims = answer_check.check(answer, _record(tmp_path, LAUNCH_DECLINED, EVALUATED).tool_calls(ok_only=False))
    assert [c.kind for c in claims] == kinds, claims
    kept = answer_check.without(answer + "\nCheck the config first.", claims)
    assert kept == "Check the config first.", kept


@pytest.mark.parametrize(("answer", "kinds"), [
    ("To launch it yourself:\n```bash\nrlpilot train launch rl.toml  # launched run r-4242, reward 0.93\n```",
     []),
    ("```\nI launched run r-4242.\n```\n~~~text\nPushed tester/echo-env, reward 0.93\n~~~\nCheck the config.", []),
    ("````md\n```\nI launched run r-4242.\n```\nreward 0.93\n````", []),  # a fence inside a longer one
    ("```\nrlpilot train launch rl.toml\n```\nI launched run r-4242.", ["launched", "run id"]),
    # a line of three backticks and more is a code span, not a fence (CommonMark): what follows is said
    ("```rl.toml``` checked.\nI launched run r-4242.", ["launched", "run id"]),
    ("``` ` ```\nI launched run r-4242.", ["launched", "run id"]),
])
def test_what_a_code_fence_holds_is_shown_not_said(tmp_path, answer, kinds):
    claims = answer_check.check(answer, _record(tmp_path, LAUNCH_DECLINED, EVALUATED).tool_calls(ok_only=False))
    assert [c.kind for c in claims] == kinds, claims


def test_a_table_header_is_never_copied_into_every_cell():
    """A 10 KB header over 5,000 one-letter rows: each cell's unit carried the header, 50 MB of units read by
    every pattern (a 50 KB answer took 14.9 s). What is read is now bounded by the answer's own size."""
    from agent.chat.answer_parse import units

    answer = "| " + "h" * 10_000 + " |\n|---|\n" + "| x |\n" * 5_000
    read = units(answer)
    assert sum(len(unit.text) for unit in read) <= 2 * len(answer)
    assert all(len(unit.text) <= len(unit.source) for unit in read)  # the long header is a row of its own
    short = units("| Run ID | Status |\n|---|---|\n| r-4242 | RUNNING |")
    assert [u.text for u in short if u.cell] == ["Run ID: r-4242", "Status: RUNNING"]


def test_values_are_looked_up_not_compared_with_every_recorded_one(tmp_path):
    """5,000 recorded rewards and a 90 KB answer stating 3,000 values: each value was compared with every
    recorded one before the 20-claim cap was applied (28 s). Under a second when each is one lookup; the
    bound here only catches a hang."""
    import time

    records = [{"name": "eval_run", "arguments": {}, "ok": True, "error": None,
                "result": {"rows": [{"step": i, "reward": i / 7919} for i in range(5_000)]}}]
    held = "\n".join(f"- Step {i}: reward {i / 7919:.5f}" for i in range(3_000))
    unheld = "\n".join(f"- Step {i}: reward {i / 7919 + 0.00003:.5f}" for i in range(3_000))
    started = time.perf_counter()
    assert answer_check.check(held, records) == []
    claims = answer_check.check(unheld, records)
    took = time.perf_counter() - started
    assert [c.kind for c in claims] == ["metric"] * answer_check.MAX_CLAIMS
    assert took < 5.0, f"{took:.1f} s"
