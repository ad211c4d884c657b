"""Stand-in of prime-rl's `inference` entry point: an OpenAI-compatible server for a checkpoint.

`uv run inference --model.name MODEL --server.port PORT`. It serves `GET /v1/models` and
`POST /v1/chat/completions` (plain or streamed) on 127.0.0.1, answering "What is A + B" with
the right sum, as a trained checkpoint would. It takes a moment to come up, like a real server.
"""

import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> int:
    args = sys.argv[1:]
    model = args[args.index("--model.name") + 1]
    port = int(args[args.index("--server.port") + 1])
    time.sleep(1.0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(json.dumps({"object": "list", "data": [{"id": model, "object": "model"}]}).encode(),
                       "application/json")

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            question = request["messages"][-1]["content"]
            question = question if isinstance(question, str) else " ".join(p.get("text", "") for p in question)
            numbers = re.search(r"(\d+) \+ (\d+)", question)
            text = f"The answer is {int(numbers[1]) + int(numbers[2])}." if numbers else "I do not know."
            base = {"id": "cmpl-1", "created": int(time.time()), "model": model}
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            if not request.get("stream"):
                body = {**base, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}
                return self._send(json.dumps(body).encode(), "application/json")
            chunks = [{"role": "assistant", "content": ""}, {"content": text}, {}]
            events = [{**base, "object": "chat.completion.chunk", "choices": [
                {"index": 0, "delta": delta, "finish_reason": "stop" if not delta else None}]} for delta in chunks]
            if (request.get("stream_options") or {}).get("include_usage"):
                events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
            payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._send(payload.encode(), "text/event-stream")

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0
