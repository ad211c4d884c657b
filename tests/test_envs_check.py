"""env check: real vf-validate and vf-eval on installed environments, and the reading of reward code.

The tests marked slow score the degenerate replies with the real vf-eval (a minute or two each here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import openai
import pytest
from eval_support import ENVIRONMENTS, REPO, episode, rlpilot, use_environments_venv

from agent.chat.catalog import by_name
from tools.envs.check import CHILDREN_HOME, SHORTCUT_TASKS, EnvCheckInput, env_check, scan_file
from tools.envs.shortcuts import KINDS, REPLIES, DegeneratePolicy, judge
from tools.framework.contract import Context, load
from tools.framework.errors import BadInput

KEYWORD_ENV = REPO / "tests" / "environments" / "yes_keyword"

BAD_ENV = '''\
import os
import verifiers.v1 as vf

GOOD_WORDS = ["correct", "right answer"]
CACHE = "http://localhost:6379/0"  # service


def mentions(text):
    return any(word in text for word in GOOD_WORDS)  # keyword


def cache():
    import redis  # service

    return redis.Redis.from_url(CACHE)


class BadData(vf.TaskData):
    answer: str


class BadTask(vf.Task[BadData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def keyword(self, trace: vf.Trace) -> float:
        host = os.environ.get("SEARCH_URL")  # service
        return 1.0 if "yes" in trace.last_reply.lower() or mentions(trace.last_reply) else 1.0  # keyword

    async def validate(self, runtime) -> bool:
        return False


class BadTaskset(vf.Taskset[BadTask, vf.TasksetConfig]):
    def load(self):
        return [BadTask(BadData(prompt=f"q{i}", answer="a"), self.config.task) for i in range(3)]


__all__ = ["BadTaskset"]
'''


@pytest.fixture
def venv_workspace(tmp_path_factory, tmp_path, monkeypatch):
    return tmp_path, use_environments_venv(tmp_path_factory, monkeypatch)


def marked(comment: str) -> list[int]:
    return [n for n, line in enumerate(BAD_ENV.splitlines(), 1) if line.endswith(comment)]


def lines_of(findings, code):
    return sorted(f.line for f in findings if f.code == code)


@pytest.mark.slow
def test_the_example_environments_pass(venv_workspace):
    workspace, _ = venv_workspace
    events = []
    result = env_check(EnvCheckInput(env=str(ENVIRONMENTS / "reverse_words"), num_examples=3),
                       Context(workspace=workspace, emit=events.append))
    assert result.findings == [], result.render()
    # A check of a minute says which part runs, before its tools' own lines.
    stages = [(e["done"], e["label"]) for e in events if e["type"] == "progress"]
    assert stages == [(0, "env check: reading its source"), (1, "env check: vf-validate: gold and no-op answers"),
                      (2, "env check: scoring degenerate replies")]
    assert events.index({"type": "progress", "done": 1, "total": 3,
                         "label": "env check: vf-validate: gold and no-op answers"}) < next(
        i for i, e in enumerate(events) if e["type"] == "log")
    assert result.validation.tasks == 3 and result.validation.valid == 3
    assert Path(result.validation.results).is_relative_to(workspace / ".rlpilot" / "validate")
    assert result.exit_code() == 0
    # Every degenerate reply was scored on every task; an echo earns partial credit, well below a shortcut.
    scores = {s.kind: s for s in result.shortcuts.scores}
    assert list(scores) == list(KINDS) and all(s.tasks == 3 for s in scores.values())
    assert 0 < scores["echo"].max < 0.5 and scores["yes"].max == 0.0
    assert Path(result.shortcuts.traces).is_relative_to(workspace / ".rlpilot" / "shortcuts")
    # Where the time went, adding up: the two programs' own wall times, and rlpilot's around them.
    timing = result.timing
    assert [program.what for program in timing.programs] == ["vf-validate", "vf-eval"]
    assert timing.seconds == pytest.approx(sum(p.seconds for p in timing.programs) + timing.rlpilot, abs=0.003)
    assert [part.what for part in timing.parts] == ["reading the source", "reading its roles",
                                                    "finding where it is installed", "other"]
    assert result.render().splitlines()[-1].startswith("took ")
    # The children's HOME is rlpilot's and outlives the check: verifiers prepares its chat program once.
    home = workspace / ".rlpilot" / CHILDREN_HOME
    assert list((home / ".cache" / "verifiers" / "runtimes" / "scripts").glob("*.py"))
    assert home.stat().st_mode & 0o077 == 0


@pytest.mark.slow
def test_an_environment_that_is_not_installed_is_validated_from_its_source(tmp_path, monkeypatch):
    """The first five minutes: the bundled example checks out before anything is installed."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # rlpilot's own environment, which lacks the example
    result = env_check(EnvCheckInput(env=str(ENVIRONMENTS / "tiny_arith"), num_examples=2),
                       Context(workspace=tmp_path))
    [finding] = result.findings
    assert (finding.code, finding.severity) == ("not-installed", "warning")
    # rlpilot never installs into its own environment (README.md): the fix makes the workspace one instead.
    assert sys.prefix not in finding.fix and "`uv venv`" in finding.fix
    assert f"`uv pip install --python {tmp_path / '.venv' / 'bin' / 'python'} -e {ENVIRONMENTS / 'tiny_arith'}`" \
        in finding.fix
    assert "no Python environment of its own" in finding.message
    # A folder under the workspace's environments/ is what `env install NAME` takes.
    shutil.copytree(ENVIRONMENTS / "tiny_arith", tmp_path / "environments" / "tiny_arith")
    local = env_check(EnvCheckInput(env="tiny_arith", num_examples=1, shortcuts=False), Context(workspace=tmp_path))
    assert local.findings[0].fix == "install it before an eval: give it one and install there: " \
                                    "`rlpilot env install tiny_arith --create-venv`"
    assert result.validation.valid == 2 and result.exit_code() == 0
    assert {s.kind: s.max for s in result.shortcuts.scores} == dict.fromkeys(KINDS, 0.0)
    with pytest.raises(BadInput) as missing:
        env_check(EnvCheckInput(env="no-such-env"), Context(workspace=tmp_path))
    assert missing.value.code == "env-not-found"


def test_a_bad_environment_is_reported_file_by_line(venv_workspace):
    workspace, venv = venv_workspace
    package = workspace / "environments" / "bad_env"
    (package / "bad_env").mkdir(parents=True)
    (package / "pyproject.toml").write_text(textwrap.dedent('''\
        [project]
        name = "bad-env"
        version = "0.1.0"
        dependencies = ["verifiers>=0.4"]
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"
        [tool.hatch.build.targets.wheel]
        packages = ["bad_env"]
        '''))
    source = package / "bad_env" / "__init__.py"
    source.write_text(BAD_ENV)
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "--no-deps", "-e",
                    str(package)], check=True)

    result = env_check(EnvCheckInput(env="bad-env", num_examples=3, shortcuts=False), Context(workspace=workspace))
    assert result.shortcuts is None
    by_code = {f.code: f for f in result.findings}
    assert by_code["gold-fails"].severity == "error" and "3 of 3 gold answers" in by_code["gold-fails"].message
    assert by_code["noop-passes"].severity == "error" and "reward [1.0]" in by_code["noop-passes"].message
    assert lines_of(result.findings, "keyword-heuristic") == marked("# keyword")
    assert all(f.file == str(source) for f in result.findings if f.code == "keyword-heuristic")
    assert lines_of(result.findings, "background-service") == marked("# service")
    assert result.exit_code() == 1
    assert f"({source}:{marked('# keyword')[-1]}): reward `keyword`" in result.render()


@pytest.mark.parametrize(("body", "flagged"), [
    ('return 1.0 if "Paris" in completion else 0.0', True),
    ('return float(completion.lower().startswith("yes"))', True),
    ('return float(bool(re.search(r"correct answer", completion)))', True),
    ('return float(completion.count("because") > 2)', True),
    ('nums = re.findall(r"-?\\\\d+", completion)\n    return float(nums[-1:] == [answer])', False),
    ('return float(completion.split("\\\\n")[-1].strip() == answer)', False),
    ('return float("<answer>" in completion)', False),
    # a phrase list in a regex decides the reward; a key test in an assert or before its lookup does not
    ('return float(bool(re.search(r"\\b(great|excellent|well done)\\b", completion, re.I)))', True),
    ('return float(re.search("|".join(PRAISE), completion) is not None)', True),
    ('assert "answer" in info, "the parser must set it"\n    return float(info["answer"] == answer)', False),
    ('parsed = parse(completion)\n    return float("answer" in parsed and parsed["answer"] == answer)', False),
])
def test_keyword_heuristics_in_a_v0_rubric(tmp_path, body, flagged):
    path = tmp_path / "env.py"
    path.write_text(f"import re\nimport verifiers as vf\n\n\ndef score(completion, answer):\n    {body}\n\n\n"
                    'rubric = vf.Rubric(funcs=[score], weights=[1.0])\nPRAISE = ["great", "well done"]\n')
    found = [f for f in scan_file(path) if f.code == "keyword-heuristic"]
    assert bool(found) == flagged, found
    if flagged:
        assert found[0].line == 6 and "score" in found[0].message


def test_a_module_level_phrase_regex_that_a_reward_searches_with_is_flagged(tmp_path):
    path = tmp_path / "env.py"
    path.write_text('import re\nimport verifiers as vf\n\nPOLITE = re.compile(r"\\b(thank you|please)\\b")\n\n\n'
                    "def polite(completion):\n    return 1.0 if POLITE.search(completion) else 0.0\n\n\n"
                    "rubric = vf.Rubric(funcs=[polite])\n")
    [found] = [f for f in scan_file(path) if f.code == "keyword-heuristic"]
    assert found.line == 8 and "compiled regex `POLITE`" in found.message


@pytest.mark.slow
def test_a_rubric_that_pays_for_a_keyword_pays_the_bare_keyword(tmp_path, monkeypatch):
    """Scored through vf-eval as training would: the reply that is only "yes" earns full marks."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # checked from its source folder, like an uninstalled env
    events: list[dict] = []
    result = env_check(EnvCheckInput(env=str(KEYWORD_ENV), num_examples=2), Context(workspace=tmp_path,
                                                                                     emit=events.append))
    [shortcut] = [f for f in result.findings if f.code == "reward-shortcut"]
    assert shortcut.severity == "error" and result.exit_code() == 1
    assert "the yes reply 'yes' scores 1 on task idx" in shortcut.message
    assert "(2 of 2 tasks pay it)" in shortcut.message
    # The finding points at the very rollout in vf-eval's traces: its reply is the keyword, its reward 1.
    rollout = json.loads(Path(shortcut.file).read_text().splitlines()[shortcut.line - 1])
    trace = rollout["traces"][0]
    assert trace["nodes"][-1]["message"]["content"] == "yes" and trace["rewards"]["agrees"]["score"] == 1.0
    assert {s.kind: s.max for s in result.shortcuts.scores} == {**dict.fromkeys(KINDS, 0.0), "yes": 1.0}
    assert any("scoring degenerate replies" in e.get("line", "") for e in events)


def shortcut_traces(folder: Path, rewards: dict[int, dict[str, float]]) -> tuple[Path, dict[str, str]]:
    """A traces.jsonl as vf-eval writes it for the degenerate policy, and what the policy sent."""
    sent = {REPLIES[kind](f"Question {i}?").strip(): kind for i in rewards for kind in KINDS}
    lines = [json.dumps(episode(i, reward, reply=REPLIES[kind](f"Question {i}?")))
             for i, by_kind in rewards.items() for kind, reward in by_kind.items()]
    folder.mkdir(parents=True)
    (folder / "traces.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder / "traces.jsonl", sent


@pytest.mark.parametrize(("rewards", "flagged"), [
    # Partial credit below half a solve is not a shortcut; full marks for "yes" is an error.
    ({0: {"echo": 0.24, "yes": 0.0}, 1: {"echo": 0.1, "yes": 0.0}}, {}),
    ({0: {"echo": 0.0, "yes": 1.0}, 1: {"echo": 0.0, "yes": 0.0}}, {"yes": "error"}),
    ({0: {"echo": 0.6, "yes": 0.0}}, {"echo": "warning"}),
    # A reward that pays the same for everything pays every degenerate reply.
    ({0: dict.fromkeys(KINDS, 1.0)}, dict.fromkeys(KINDS, "error")),
    # Below-zero format penalties lower the floor: -1 to 0.2 is more than half the way to a solve.
    ({0: {"empty": -1.0, "yes": 0.2, "echo": -0.5}}, {"yes": "warning"}),
])
def test_a_shortcut_is_judged_against_the_floor_and_a_solve(tmp_path, rewards, flagged):
    traces, sent = shortcut_traces(tmp_path / "run", rewards)
    check, findings = judge(traces, sent)
    assert {f.message.split()[1]: f.severity for f in findings} == flagged
    assert check.tasks == len(rewards) and check.errored == 0


def test_a_degenerate_reply_that_pays_one_role_of_a_zero_sum_game_is_a_shortcut(tmp_path):
    """Two players scored +1 and -1 for the same "yes": averaged per episode it paid 0 and was never flagged."""
    traces, sent = shortcut_traces(tmp_path / "run", {0: {"yes": 1.0, "echo": 0.0}, 1: {"yes": 1.0, "echo": 0.0}})
    lines = []
    for line in traces.read_text().splitlines():
        record = json.loads(line)
        winner = record["traces"][0]
        loser = {**winner, "agent": {**winner["agent"], "name": "player0"},
                 "rewards": {"correct": {"score": -winner["rewards"]["correct"]["score"], "weight": 1.0}}}
        record["traces"] = [{**winner, "agent": {**winner["agent"], "name": "player1"}}, loser]
        lines.append(json.dumps(record))
    traces.write_text("".join(line + "\n" for line in lines))
    check, findings = judge(traces, sent)
    assert {f.message.split()[1]: f.severity for f in findings} == {"yes": "error"}


def test_degenerate_rollouts_that_error_are_reported_not_judged(tmp_path):
    traces, sent = shortcut_traces(tmp_path / "run", {0: {"empty": 0.0, "yes": 0.0}})
    with traces.open("a") as handle:
        handle.write(json.dumps(episode(0, None, error="reply was empty")) + "\n")
    check, [finding] = judge(traces, sent)
    assert (finding.code, finding.severity, finding.line, check.errored) == ("shortcut-rollouts-errored", "warning",
                                                                              3, 1)
    assert "1 of 3 degenerate-reply rollouts errored" in finding.message and "reply was empty" in finding.message


def test_the_degenerate_policy_answers_each_prompt_with_each_reply_in_turn():
    """The real openai client, streamed and not, as vf-eval calls it."""
    with DegeneratePolicy() as policy:
        client = openai.OpenAI(base_url=policy.base_url, api_key="unused")
        asked = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}]
        plain = [client.chat.completions.create(model="m", messages=asked).choices[0].message.content
                 for _ in KINDS[:3]]
        streamed = []
        for _ in KINDS[3:]:
            chunks = client.chat.completions.create(model="m", messages=asked, stream=True,
                                                    stream_options={"include_usage": True})
            streamed.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
        wrapped = client.chat.completions.create(model="m", messages=asked).choices[0].message.content
    assert plain + streamed == [REPLIES[kind]("What is 2 + 2?") for kind in KINDS]
    assert wrapped == "" and policy.sent["What is 2 + 2?"] == "echo"


def test_the_shortcut_pass_is_a_cli_only_switch(tmp_path):
    assert "shortcuts" not in load(by_name("env_check")).model_schema()["properties"]
    done = rlpilot("env", "check", "--help", cwd=tmp_path)
    assert "--no-shortcuts" in done.stdout and str(SHORTCUT_TASKS) in done.stdout


# A stand-in for the workspace's vf-eval (an outside program): verifiers 0.4 refuses `--env.agent.*` for an
# environment whose own vf.Env names its roles otherwise, with pydantic's message; with its own roles' flags
# this one then fails to import a dependency the environment lacks.
_VF_EVAL_STAND_IN = """#!{python}
import pathlib, sys
with open(pathlib.Path(sys.argv[0]).with_name("calls.txt"), "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
if "--env.agent.harness.id" in sys.argv:
    print("1 validation error for EvalConfig\\nenv.agent\\n  Extra inputs are not permitted "
          "[type=extra_forbidden, input_value={{'harness': {{'id': 'null'}}}}, input_type=dict]", file=sys.stderr)
    sys.exit(1)
print("Traceback (most recent call last):\\n  File \\"duel_env/__init__.py\\", line 3, in <module>\\n"
      "ModuleNotFoundError: No module named 'chess.engine'", file=sys.stderr)
sys.exit(1)
"""


def test_each_declared_role_gets_the_local_agent_flags_and_a_missing_module_is_one_line(tmp_path):
    from tools.envs.shortcuts import check_shortcuts
    from tools.framework.timing import Stopwatch
    from tools.verifiers.source import Roles

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    vf_eval = bin_dir / "vf-eval"
    vf_eval.write_text(_VF_EVAL_STAND_IN.format(python=sys.executable))
    vf_eval.chmod(0o755)
    check, [finding] = check_shortcuts(str(vf_eval), "duel-env", 2, tmp_path / "out", Context(workspace=tmp_path),
                                       dict(os.environ), Roles(["white", "black"], "read"), Stopwatch())
    [call] = (bin_dir / "calls.txt").read_text().splitlines()
    assert ("--env.white.harness.id null --env.white.runtime.type subprocess --env.black.harness.id null "
            "--env.black.runtime.type subprocess") in call and "--env.agent" not in call
    assert check is None and finding.code == "shortcut-check-failed"
    assert "\n" not in finding.message and "Traceback" not in finding.message
    assert "'chess.engine'" in finding.message and str(bin_dir / "python") in finding.message
    assert f"`uv pip install --python {bin_dir / 'python'} chess`" in finding.fix


HUB_DATA_ENV = '''\
import os

import verifiers.v1 as vf


class HubData(vf.TaskData):
    answer: str


class HubTask(vf.Task[HubData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        return float(trace.last_reply.strip() == self.data.answer)

    async def validate(self, runtime) -> bool:
        return True


class HubTaskset(vf.Taskset[HubTask, vf.TasksetConfig]):
    def load(self):
        if os.environ.get("HF_DATASETS_OFFLINE") == "1":
            # What `datasets.load_dataset` (5.x, load.py) raises for a Hub dataset that is not in the cache.
            raise ConnectionError("Couldn't reach 'openai/gsm8k' on the Hub (OfflineModeIsEnabled)")
        return [HubTask(HubData(prompt="2+2?", answer="4"), self.config.task)]


__all__ = ["HubTaskset"]
'''


def test_a_dataset_not_in_the_cache_says_the_check_is_offline_and_how_to_allow_the_network(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # rlpilot's own environment: it has vf-validate
    package = tmp_path / "environments" / "hub_data"
    (package / "hub_data").mkdir(parents=True)
    (package / "pyproject.toml").write_text('[project]\nname = "hub-data"\nversion = "0.1.0"\n'
                                            'dependencies = ["verifiers>=0.4"]\n')
    (package / "hub_data" / "__init__.py").write_text(HUB_DATA_ENV)
    offline = env_check(EnvCheckInput(env="hub_data", num_examples=1, shortcuts=False), Context(workspace=tmp_path))
    [dataset] = [f for f in offline.findings if f.severity == "error"]
    assert dataset.code == "dataset-not-cached" and offline.exit_code() == 1
    assert "'openai/gsm8k' is not in the local Hugging Face cache" in dataset.message
    assert "env check runs offline" in dataset.message
    assert "`rlpilot env check hub_data --yes`" in dataset.fix
    online = env_check(EnvCheckInput(env="hub_data", num_examples=1, shortcuts=False, yes=True),
                       Context(workspace=tmp_path))
    assert online.validation.valid == 1 and not [f for f in online.findings if f.severity == "error"]
