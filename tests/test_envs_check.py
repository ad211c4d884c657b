"""env check: real vf-validate on installed environments, and the reading of reward code."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from eval_support import ENVIRONMENTS, use_environments_venv

from tools.contract import BadInput, Context
from tools.envs.check import EnvCheckInput, env_check, scan_file

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


def test_the_example_environments_pass(venv_workspace):
    workspace, _ = venv_workspace
    result = env_check(EnvCheckInput(env=str(ENVIRONMENTS / "reverse_words"), num_examples=3),
                       Context(workspace=workspace))
    assert result.findings == [], result.render()
    assert result.validation.tasks == 3 and result.validation.valid == 3
    assert Path(result.validation.results).is_relative_to(workspace / ".rlpilot" / "validate")
    assert result.exit_code() == 0


def test_an_environment_that_is_not_installed_is_validated_from_its_source(tmp_path, monkeypatch):
    """The first five minutes: the bundled example checks out before anything is installed."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # rlpilot's own environment, which lacks the example
    result = env_check(EnvCheckInput(env=str(ENVIRONMENTS / "tiny_arith"), num_examples=2),
                       Context(workspace=tmp_path))
    [finding] = result.findings
    assert (finding.code, finding.severity) == ("not-installed", "warning") and "uv pip install" in finding.fix
    assert result.validation.valid == 2 and result.exit_code() == 0
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

    result = env_check(EnvCheckInput(env="bad-env", num_examples=3), Context(workspace=workspace))
    by_code = {f.code: f for f in result.findings}
    assert by_code["gold-fails"].severity == "error" and "3 of 3 gold answers" in by_code["gold-fails"].message
    assert by_code["noop-passes"].severity == "error" and "reward [1.0]" in by_code["noop-passes"].message
    assert lines_of(result.findings, "keyword-heuristic") == marked("# keyword")
    assert all(f.file == str(source) for f in result.findings if f.code == "keyword-heuristic")
    assert lines_of(result.findings, "background-service") == marked("# service")
    assert result.exit_code() == 1
    assert f"{source}:{marked('# keyword')[-1]}: reward `keyword`" in result.render()


@pytest.mark.parametrize(("body", "flagged"), [
    ('return 1.0 if "Paris" in completion else 0.0', True),
    ('return float(completion.lower().startswith("yes"))', True),
    ('return float(bool(re.search(r"correct answer", completion)))', True),
    ('return float(completion.count("because") > 2)', True),
    ('nums = re.findall(r"-?\\\\d+", completion)\n    return float(nums[-1:] == [answer])', False),
    ('return float(completion.split("\\\\n")[-1].strip() == answer)', False),
    ('return float("<answer>" in completion)', False),
])
def test_keyword_heuristics_in_a_v0_rubric(tmp_path, body, flagged):
    path = tmp_path / "env.py"
    path.write_text(f"import re\nimport verifiers as vf\n\n\ndef score(completion, answer):\n    {body}\n\n\n"
                    "rubric = vf.Rubric(funcs=[score], weights=[1.0])\n")
    found = [f for f in scan_file(path) if f.code == "keyword-heuristic"]
    assert bool(found) == flagged, found
    if flagged:
        assert found[0].line == 6 and "score" in found[0].message
