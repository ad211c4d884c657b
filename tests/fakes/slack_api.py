"""A local stand-in of the Slack Web API, for the real slack_sdk WebClient that bolt uses.

    with SlackAPI() as slack:
        WebClient(token=..., base_url=slack.base_url)   # "http://127.0.0.1:<port>/api/"
        slack.calls("chat.postMessage")                 # every call's arguments, in order
        slack.posted()                                  # posted messages, each with its ts

A real HTTP server on 127.0.0.1 and a free port; `SocketModeServer` is the websocket end of
Socket Mode, for the real socket-mode client. It answers `auth.test` as a bot user `UBOT`,
gives every posted message a fresh `ts`, and answers any other method with `{"ok": true}`.
Arguments arrive form-encoded or as JSON (the SDK uses both); JSON-valued form fields such as
`blocks` are decoded so tests can read them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from aiohttp import WSMsgType, web

BOT_USER = "UBOT"
TEAM = "T0TEST"


class SlackAPI:
    def __init__(self) -> None:
        self.socket_url: str | None = None  # what apps.connections.open hands out (a SocketModeServer's url)
        self.requests: list[dict[str, Any]] = []
        self.uploads: dict[str, bytes] = {}  # file id -> the bytes files_upload_v2 sent
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [r["args"] for r in self.requests if method is None or r["method"] == method]

    def posted(self) -> list[dict[str, Any]]:
        """Every chat.postMessage, with the `ts` it was given."""
        with self._lock:
            return [{**r["args"], "ts": r["answer"]["ts"]} for r in self.requests if r["method"] == "chat.postMessage"]

    def wait_for(self, method: str, count: int = 1, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.calls(method)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{method} called {len(self.calls(method))} times, not {count}, within {timeout}s")

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "user_id": BOT_USER, "bot_id": "BBOT", "team_id": TEAM, "user": "rlpilot",
                    "team": "test", "url": "https://test.invalid/"}
        if method in ("chat.postMessage", "chat.update"):
            ts = args.get("ts") or f"1700000000.{next(self._ts):06d}"
            return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": {"text": args.get("text")}}
        if method == "apps.connections.open":
            return {"ok": True, "url": self.socket_url}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._ts):08d}"
            return {"ok": True, "file_id": file_id, "upload_url": f"{self.base_url[:-len('api/')]}upload/{file_id}"}
        if method == "files.completeUploadExternal":
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in args.get("files", [])]}
        return {"ok": True}

    def __enter__(self) -> SlackAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                method = self.path.split("?")[0].rsplit("/", 1)[-1]
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.startswith("/upload/"):  # step 2 of files_upload_v2: the file's bytes
                    with api._lock:
                        api.uploads[method] = data
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                raw = data.decode()
                if "json" in (self.headers.get("Content-Type") or ""):
                    args = json.loads(raw or "{}")
                else:
                    args = {k: _maybe_json(v[0]) for k, v in parse_qs(raw).items()}
                with api._lock:
                    answer = api._answer(method, args)
                    api.requests.append({"method": method, "args": args, "answer": answer,
                                         "authorization": self.headers.get("Authorization")})
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll: shutdown waits for it at the end of every test (the default is half a second).
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


class SocketModeServer:
    """Slack's end of Socket Mode: a websocket on 127.0.0.1 that says hello, sends envelopes and
    keeps the acknowledgements the app sends back.

        with SlackAPI() as slack, SocketModeServer() as socket:
            slack.socket_url = socket.url       # apps.connections.open points the app here
            ...                                 # connect the app's SocketModeHandler
            socket.send("events_api", {...})    # an envelope; returns its envelope_id
            socket.acks                         # what the app acknowledged
    """

    def __init__(self) -> None:
        self.acks: list[dict[str, Any]] = []
        self.connected = threading.Event()
        self._ids = itertools.count(1)
        self._loop: Any = None
        self._socket: Any = None
        self._runner: Any = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/link"

    def send(self, kind: str, payload: dict[str, Any]) -> str:
        assert self.connected.wait(30), "the app never connected"
        envelope_id = f"envelope-{next(self._ids)}"
        message = {"type": kind, "envelope_id": envelope_id, "payload": payload, "accepts_response_payload": False}
        asyncio.run_coroutine_threadsafe(self._socket.send_json(message), self._loop).result(10)
        return envelope_id

    def __enter__(self) -> SocketModeServer:
        async def link(request: web.Request) -> web.WebSocketResponse:
            socket = web.WebSocketResponse()
            await socket.prepare(request)
            self._socket = socket
            await socket.send_json({"type": "hello", "num_connections": 1, "debug_info": {},
                                    "connection_info": {"app_id": "A0TEST"}})
            self.connected.set()
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    self.acks.append(json.loads(message.data))
            return socket

        async def serve() -> None:
            app = web.Application()
            app.router.add_get("/link", link)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self._port = site._server.sockets[0].getsockname()[1]

        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(serve(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)


def _maybe_json(value: str) -> Any:
    if value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value
