"""Bounds in bytes on what comes from outside (docs/bounds.md): four small inputs that each grew rlpilot past a
gigabyte, now refused or cut with one line, the peak of a forked copy of the test process held under
CEILING; and the answer-tag reader, which was quadratic on a reply shaped against it."""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
from pathlib import Path

import zstandard
from security_support import MiB, peak_growth

from tools.configs.document import load
from tools.training.episodes import read_episodes

CEILING = 300 * MiB
ATTACK = 400 * MiB  # what each input makes of itself unbounded: past the ceiling


def test_a_toml_built_to_swell_the_parser_is_refused_before_parsing(tmp_path):
    """8 MiB of distinct table headers: tomllib's tables for them took 812 MiB and 55 s."""
    path = tmp_path / "rl.toml"
    path.write_text("".join(f"[t{i}]\n" for i in range(800_000)))
    growth, said = peak_growth(lambda: load(path))
    assert "BadInput" in said and "table headers, over 200000" in said, said
    assert 0 <= growth < CEILING, growth
    deep = tmp_path / "deep.toml"
    deep.write_text("x = 1\n[" + ".".join(["a"] * 60_000) + "]\n")  # quadratic in tomllib: 22 s
    started = time.monotonic()
    growth, said = peak_growth(lambda: load(deep))
    assert "deep.toml:2: a key of more than 32 parts" in said and time.monotonic() - started < 20, said


def test_a_child_printing_one_endless_line_is_cut():
    from tools.io import process

    code = "import sys\nchunk = 'a' * (1 << 20)\nfor _ in range(400):\n    sys.stdout.write(chunk)\nprint('end')\n"
    growth, said = peak_growth(lambda: [len(line) for line in process.run(
        [sys.executable, "-c", code], env=process.minimal_environment(), timeout=100).stdout_tail])
    assert 0 <= growth < CEILING, (growth, said)
    cut = process.LINE_BYTES + len(f" [rlpilot: line cut at {process.LINE_BYTES >> 10} KiB]")
    assert said == repr([cut]), said  # the line, cut with a note; the rest of it read past


def _episode(index: int, reply: str) -> bytes:
    record = {"id": f"e{index}", "ok": True, "errors": [], "task": {"key": f"k{index}", "data": {"idx": index}},
              "traces": [{"id": f"t{index}", "agent": {"name": "agent", "trainable": True},
                          "rewards": {"r": {"score": 1.0, "weight": 1.0}}, "stop_condition": "completed",
                          "info": {"kind": "train", "dispatch": {"step": 0}},
                          "nodes": [{"message": {"role": "user", "content": "q"}},
                                    {"message": {"role": "assistant", "content": reply}, "parent": 0}]}]}
    return json.dumps(record).encode() + b"\n"


def test_a_trace_chunk_that_inflates_to_gigabytes_is_refused(tmp_path):
    """A sealed chunk of a few hundred KiB whose episodes' replies are a MiB each: every one was kept."""
    stream = tmp_path / "run" / "monitors" / "file" / "traces" / "stream"
    stream.mkdir(parents=True)
    with (stream / "00000.jsonl.zst").open("wb") as chunk:
        with zstandard.ZstdCompressor(level=19).stream_writer(chunk) as writer:
            reply = "a" * MiB
            for index in range(ATTACK // MiB):
                writer.write(_episode(index, reply))
    assert (stream / "00000.jsonl.zst").stat().st_size < MiB
    growth, said = peak_growth(lambda: len(read_episodes(tmp_path / "run").samples))
    assert "inflates past 64 MiB, over 100 times its size" in said, said
    assert 0 <= growth < CEILING, growth


class _EndlessReply(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose streamed answer never ends: a 64 KiB delta after another."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": "a" * 65536}, "finish_reason": None}]}
        event = f"data: {json.dumps(delta)}\n\n".encode()
        try:
            while True:
                self.wfile.write(event)
        except OSError:
            return

    def log_message(self, *args) -> None:
        pass


def test_a_model_streaming_one_endless_reply_is_stopped_by_its_size():
    from agent.chat.model import Endpoint, ModelClient

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EndlessReply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = Endpoint(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", "NO_SUCH_KEY_VAR", "test")
        client = ModelClient(endpoint, timeout=30, attempts=1, budget=90)
        growth, said = peak_growth(lambda: client.complete([{"role": "user", "content": "hi"}], []), timeout=100)
    finally:
        server.shutdown()
    assert "ModelError" in said and "went past 16 MiB, rlpilot's bound on one answer" in said, said
    assert 0 <= growth < CEILING, growth


def test_the_answer_tag_reader_is_linear_on_replies_shaped_against_it():
    """200 KB of opening tags with no close: the pattern read from each one to the end (over 120 s here)."""
    from tools.evals.samples import Sample
    from tools.training.rollouts import hacking_evidence

    for reply in ("<answer>" * 25_000, "\\boxed{" * 28_000, "<answer>x</final>" * 12_000):
        samples = [Sample(example=str(i), line=i, reward=1.0, error=None, prompt="q", reply=reply) for i in range(4)]
        started = time.monotonic()
        hacking_evidence(samples, 0)
        assert time.monotonic() - started < 10, reply[:20]


def test_each_bound_is_listed_in_the_docs():
    from tools.io import files, http, process
    from tools.training import rollouts

    text = (Path(__file__).resolve().parents[2] / "docs" / "bounds.md").read_text()
    for module, name in ((process, "LINE_BYTES"), (process, "OUTPUT_BYTES"), (process, "TAIL_BYTES"),
                         (http, "BODY_BYTES"), (http, "REPLY_BYTES"), (files, "INFLATION_LIMIT"),
                         (files, "INFLATED_FLOOR"), (files, "TOML_KEY_DEPTH"), (files, "TOML_KEYS"),
                         (files, "TOML_HEADERS"), (files, "CONFIG_LIMIT"), (files, "LINE_LIMIT"),
                         (files, "SOURCE_LIMIT"), (files, "PICTURE_LIMIT"), (files, "LOG_TAIL_LIMIT"),
                         (rollouts, "ANSWER_SCAN_CHARS")):
        assert f"`{name}`" in text and hasattr(module, name), name
