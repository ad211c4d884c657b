"""eval run --hosted: the real prime 0.18 CLI against a local stand-in of the Prime API.

The stand-in adds the hosted-evaluation endpoints (prime_evals 0.2.4 `create_hosted_evaluation`,
prime_cli `_display_logs_follow`, `prime eval samples`) to the hub's stand-in.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from ops_support import prime_env, use_env

from agent.bench.standin import PrimeAPI
from tools.evals.run import EvalRunInput, eval_run
from tools.evals.samples import SamplesInput, eval_samples
from tools.framework.contract import Context
from tools.framework.errors import BadInput, ToolError


class HostedEvalAPI(PrimeAPI):
    def __init__(self, samples: list[dict[str, Any]], status: str = "COMPLETED"):
        super().__init__()
        self.samples, self.status = samples, status
        self.created: list[dict[str, Any]] = []
        self._routes = [
            ("GET", re.compile(r"/api/v1/environmentshub/(?P<owner>[^/]+)/(?P<name>[^/]+)/@latest"), self._latest),
            ("POST", re.compile(r"/api/v1/hosted-evaluations"), self._create),
            ("GET", re.compile(r"/api/v1/hosted-evaluations/(?P<id>[^/]+)/logs"), self._logs_of),
            ("GET", re.compile(r"/api/v1/evaluations/(?P<id>[^/]+)/samples"), self._samples),
            ("GET", re.compile(r"/api/v1/evaluations/(?P<id>[^/]+)"), self._status),
        ] + self._routes

    def _latest(self, owner: str, name: str, **_: Any):
        return 200, {"data": {"id": f"env-{owner}-{name}", "visibility": "PRIVATE"}}

    def _create(self, body: dict[str, Any], **_: Any):
        self.created.append(body)
        return 200, {"evaluation_id": f"eval-{uuid.uuid4().hex[:8]}"}

    def _logs_of(self, id: str, **_: Any):
        return 200, {"logs": "rollout 1/4 done\nrollout 4/4 done\n"}

    def _status(self, id: str, **_: Any):
        return 200, {"id": id, "status": self.status}

    def _samples(self, id: str, **_: Any):
        return 200, {"samples": self.samples, "total": len(self.samples), "page": 1}


def test_a_hosted_eval_reports_its_id_link_and_the_platforms_samples(tmp_path, monkeypatch):
    samples = [{"example_id": i // 2, "score": float(i % 2 == 0 and i < 6), "input": f"What is {i} + 1?",
                "output": f"{i + 1}"} for i in range(8)]
    # A local environment that was pushed: its Hub id comes from what `prime env push` recorded.
    metadata = tmp_path / "environments" / "tiny_arith" / ".prime" / ".env-metadata.json"
    metadata.parent.mkdir(parents=True)
    metadata.write_text(json.dumps({"owner": "tester", "name": "tiny-arith", "version": "0.1.0"}))
    with HostedEvalAPI(samples) as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        result = eval_run(EvalRunInput(yes=True, env="tiny-arith", model="openai/gpt-4.1-mini", num_examples=4,
                                       rollouts=2, hosted=True), Context(workspace=tmp_path))
    [created] = api.created
    assert created["environment_ids"] == ["env-tester-tiny-arith"]
    assert created["inference_model"] == "openai/gpt-4.1-mini"
    assert (created["eval_config"]["num_examples"], created["eval_config"]["rollouts_per_example"]) == (4, 2)
    assert result.ok and result.form == "prime-hosted" and "tester/tiny-arith" in result.command
    assert result.evaluation_id.startswith("eval-")
    assert result.viewer_url.endswith(f"/dashboard/evaluations/{result.evaluation_id}")
    s = result.summary
    assert (s.rollouts, s.examples, s.reward.mean, s.format) == (8, 4, 0.375, "legacy")
    assert (s.all_fail_fraction, s.zero_variance_fraction, s.verdict) == (0.25, 0.25, "ready")
    # The platform's samples stay readable with `eval samples`.
    shown = eval_samples(SamplesInput(path=Path(result.run_dir), n=1, which="best"), Context(workspace=tmp_path))
    assert (shown.samples[0].prompt, shown.samples[0].reply) == ("What is 0 + 1?", "1")


def test_a_failed_hosted_eval_names_the_evaluation(tmp_path, monkeypatch):
    with HostedEvalAPI([], status="FAILED") as api:
        use_env(monkeypatch, prime_env(tmp_path / "home", api))
        with pytest.raises(ToolError) as failed:
            eval_run(EvalRunInput(yes=True, env="tester/tiny-arith", model="m", hosted=True),
                     Context(workspace=tmp_path))
    assert failed.value.code == "eval-failed" and "evaluation eval-" in failed.value.message


def test_an_unpublished_local_environment_cannot_run_hosted(tmp_path):
    (tmp_path / "environments" / "tiny_arith").mkdir(parents=True)
    with pytest.raises(BadInput) as refused:
        eval_run(EvalRunInput(yes=True, env="tiny-arith", model="m", hosted=True), Context(workspace=tmp_path))
    assert refused.value.code == "env-not-published" and "rlpilot env push tiny-arith" in refused.value.hint
