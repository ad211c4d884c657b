"""The HTTP door: every client rlpilot speaks to models and the platform with is built here.

Each has three deadlines. `connect`: to open the connection. `idle_read`: the longest silence
between two reads (httpx's read timeout). `overall`: the whole exchange, body included, however
the bytes trickle in: a server that drips a byte a second, or streams forever, never trips an idle
timeout, so the body is read through a guard that ends it at the deadline with httpx's own
`ReadTimeout`. A caller with a budget of its own (a chat turn) narrows every request made inside
`within(deadline)` to that budget.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

# An absolute time.monotonic() no request made in this context may outlive (a turn's budget).
_BUDGET: contextvars.ContextVar[float] = contextvars.ContextVar("rlpilot_http_budget", default=math.inf)


@dataclass(frozen=True)
class Deadlines:
    overall: float
    idle_read: float | None = None  # None: the overall deadline, as one silence may last that long
    connect: float = 10.0

    def timeout(self) -> httpx.Timeout:
        idle = self.idle_read or self.overall
        return httpx.Timeout(connect=min(self.connect, self.overall), read=idle, write=idle, pool=self.connect)


@contextlib.contextmanager
def within(deadline: float) -> Iterator[None]:
    """Every request made in this block, and the reading of its body, ends by `deadline` (monotonic)."""
    token = _BUDGET.set(min(deadline, _BUDGET.get()))
    try:
        yield
    finally:
        _BUDGET.reset(token)


class _Guarded(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, deadline: float, request: httpx.Request):
        self._inner, self._deadline, self._request = inner, deadline, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout("the whole answer took longer than its deadline", request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _DeadlineTransport(httpx.BaseTransport):
    def __init__(self, overall: float):
        self._inner = httpx.HTTPTransport()
        self._overall = overall

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = min(time.monotonic() + self._overall, _BUDGET.get())
        if time.monotonic() >= deadline:
            raise httpx.ReadTimeout("no time left for this request", request=request)
        response = self._inner.handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers, extensions=response.extensions,
                              stream=_Guarded(response.stream, deadline, request))

    def close(self) -> None:
        self._inner.close()


def http_client(deadlines: Deadlines, *, base_url: str = "", headers: dict[str, str] | None = None) -> httpx.Client:
    """An httpx client held to `deadlines` on every request it makes."""
    return httpx.Client(base_url=base_url, headers=headers, timeout=deadlines.timeout(),
                        transport=_DeadlineTransport(deadlines.overall))


def openai_client(base_url: str, api_key: str, deadlines: Deadlines):
    """An OpenAI SDK client over an `http_client`; the SDK retries nothing (callers own retries, so
    that they are counted once)."""
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=deadlines.timeout(), max_retries=0,
                         http_client=http_client(deadlines))
