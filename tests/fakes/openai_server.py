"""A scripted OpenAI-compatible chat server on 127.0.0.1, for real clients (openai, vf-eval).

Interface:

    from fakes.openai_server import ScriptedOpenAIServer, Reply

    def script(request: dict) -> Reply | str:      # the parsed JSON body of one request
        return "42"                                 # or Reply(content=..., tool_calls=[...])

    with ScriptedOpenAIServer(script, model="stub-model") as server:
        server.base_url      # "http://127.0.0.1:<free port>/v1"
        ...                  # point the client at it; any API key is accepted
        server.requests      # every chat-completions body received, in arrival order

Routes: `POST /v1/chat/completions` (a plain JSON completion, or with `"stream": true` SSE
chunks: a role chunk, the content in pieces, tool-call deltas, a finish chunk, a usage chunk
when `stream_options.include_usage` is set, then `data: [DONE]`), and `GET /v1/models`.
A script that raises answers HTTP 500 with the error text, so a client sees a server error.
A `Reply` may carry `tool_calls=[{"name": ..., "arguments": {...}}]`; their ids are generated,
and arguments given as a string are sent as they are (to script malformed JSON). A script may
return `Failure(status, message, headers)` for an HTTP error, or a `Reply(delay=...)` that
answers late. A `Raw(body, content_type)` is sent as it is with HTTP 200, to script a broken
server: a body that is not JSON, an SSE stream with lines that are not JSON, or no events at all.

It can also run as a process: `python tests/fakes/openai_server.py --echo` serves a script that
answers every request with its last user message, and prints the base URL on its first line.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" when there are any, else "stop"
    delay: float = 0.0  # seconds to wait before answering, to make a client time out


@dataclass
class Failure:
    """An HTTP error answer, e.g. `Failure(429, headers={"Retry-After": "0"})`."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Raw:
    """Exactly these bytes as the answer, e.g. `Raw(b"data: {oops\\n\\n", "text/event-stream")`."""

    body: bytes
    content_type: str = "application/json"


Script = Callable[[dict[str, Any]], "Reply | Failure | Raw | str"]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message, flattening content parts."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


class ScriptedOpenAIServer:
    def __init__(self, script: Script, model: str = "stub-model", chunk_size: int = 4,
                 context_tokens: int | None = None):
        self.script = script
        self.model = model
        self.context_tokens = context_tokens  # reported as vLLM does, `max_model_len` in /v1/models
        self.chunk_size = chunk_size
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll: shutdown waits for it at the end of every test (the default is half a second).
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, request: dict[str, Any]) -> Reply | Failure | Raw:
        with self._lock:
            self.requests.append(request)
        reply = self.script(request)
        if isinstance(reply, Reply) and reply.delay:
            time.sleep(reply.delay)
        return Reply(content=reply) if isinstance(reply, str) else reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    model = {"id": server.model, "object": "model"}
                    if server.context_tokens:
                        model["max_model_len"] = server.context_tokens
                    self._json(200, {"object": "list", "data": [model]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "body is not JSON"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    reply = server._answer(request)
                except Exception as error:  # the script's failure becomes the client's server error
                    self._json(500, {"error": {"message": f"{type(error).__name__}: {error}"}})
                    return
                if isinstance(reply, Failure):
                    self._json(reply.status, {"error": {"message": reply.message}}, reply.headers)
                    return
                if isinstance(reply, Raw):
                    self._raw(reply)
                    return
                if request.get("stream"):
                    self._stream(request, reply)
                else:
                    self._json(200, _completion(request, reply, server.model))

            def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _raw(self, reply: Raw) -> None:
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def _stream(self, request: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
                for chunk in _chunks(request, reply, server.model, server.chunk_size, include_usage):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments", {}))},
        }
        for call in reply.tool_calls
    ]


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(request: dict[str, Any], reply: Reply) -> dict[str, int]:
    # Whitespace words stand in for tokens: clients only need plausible, consistent counts.
    prompt = sum(len(str(m.get("content") or "").split()) for m in request.get("messages", []))
    completion = len((reply.content or "").split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _envelope(request: dict[str, Any], model: str, obj: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": obj, "created": int(time.time()),
            "model": request.get("model") or model}


def _completion(request: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        **_envelope(request, model, "chat.completion"),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}],
        "usage": _usage(request, reply),
    }


def _chunks(request: dict[str, Any], reply: Reply, model: str, size: int, include_usage: bool):
    base = _envelope(request, model, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    yield chunk({"role": "assistant", "content": ""})
    text = reply.content or ""
    for start in range(0, len(text), size):
        yield chunk({"content": text[start:start + size]})
    for index, call in enumerate(_tool_calls(reply)):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
    yield chunk({}, _finish(reply))
    if include_usage:
        yield {**base, "choices": [], "usage": _usage(request, reply)}


if __name__ == "__main__":
    if "--echo" not in sys.argv:
        sys.exit("usage: python tests/fakes/openai_server.py --echo")
    with ScriptedOpenAIServer(last_user_text) as served:
        print(served.base_url, flush=True)
        threading.Event().wait()
