"""The eval question's preview and the eval that runs agree: the run name, and whether a key is sent."""

from __future__ import annotations

from pathlib import Path

from eval_support import arithmetic_script, use_environments_venv
from fakes.openai_server import ScriptedOpenAIServer

from tools.evals.run import EvalRunInput, eval_plan, eval_run
from tools.framework.contract import Context


def test_the_preview_names_the_run_the_eval_writes_and_no_key_for_a_local_server(tmp_path_factory, monkeypatch):
    use_environments_venv(tmp_path_factory, monkeypatch)
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    workspace = tmp_path_factory.mktemp("ws")
    ctx = Context(workspace=workspace)
    with ScriptedOpenAIServer(arithmetic_script()) as server:  # a loopback server that takes no key
        args = EvalRunInput(env="tiny-arith", model="stub-model", base_url=server.base_url, num_examples=2,
                            rollouts=1, upload=False)
        preview = eval_plan(args, ctx)
        ran = eval_run(args.model_copy(update={"binding": preview.binding(), "yes": True}), ctx)
    assert preview.api_key_var is None and "with no key" in preview.render()
    shown = preview.command[preview.command.index("--run.name") + 1]
    assert shown == "tiny-arith--stub-model--<started-at>"
    written = Path(ran.run_dir).name
    assert written.startswith(shown.removesuffix("<started-at>")) and written != shown
    assert ran.command[ran.command.index("--run.name") + 1] == written
