"""The model client: Chat Completions with streaming and tool calls, on any OpenAI-compatible API.

Retries (tenacity) cover what a retry can fix: 429 (honouring Retry-After), 5xx, timeouts and
dropped connections. Other 4xx mean the request is wrong and are raised at once. Each attempt
may be silent at most `[agent] request_timeout_s`, and all of them together, bodies included, take at
most `request_budget_s` (configs/rlpilot.toml): a dead server, one that streams forever or one that
drips a byte a second costs the user at most that long (the HTTP door, tools/io/http.py, holds every
read to it). A Retry-After that is negative, not a number or past the budget is not waited for. A reply that is not
a chat completion (a body that is not JSON, an SSE line that is not, a stream with no events)
is a ModelError like any other: the loop shows it as one error event and the session goes on.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt, stop_before_delay, wait_exponential_jitter

from configs.settings import load_settings
from tools.io.http import BodyTooLarge, Deadlines, http_client, openai_client, within

if TYPE_CHECKING:
    import openai

# The openai SDK is imported inside the functions that talk to a server: it takes a second or more to
# import, and the commands that only list, render or show help (`rlpilot sessions`, `skill`, `mcp --help`)
# never talk to one (issue 46's targets, bench/bench_help.py).

MAX_RETRY_AFTER_S = 60.0
# The whole of asking a server its context length: a model list that drips in is not waited for.
CONTEXT_PROBE_S = 3.0


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key_var: str
    source: str  # where the choice came from, to say so to the user

    def api_key(self) -> str:
        # A local server often needs no key; the SDK insists on one.
        return os.environ.get(self.api_key_var) or "EMPTY"


def assistant_endpoint(workspace: Path, base_url: str | None = None, model: str | None = None,
                     alias: str | None = None, api_key_var: str = "OPENAI_API_KEY") -> Endpoint | None:
    """Flags, then an alias from configs/endpoints.toml, then configs/rlpilot.toml, then
    the usual key variables. None means offline: no model to talk to."""
    if alias:
        return _from_alias(workspace, alias, model)
    if base_url:
        endpoint = Endpoint(base_url, model or "", api_key_var, "--base-url")
        return endpoint if model else _the_served_model(endpoint)
    for choice in load_settings(workspace).assistant:
        if os.environ.get(choice.api_key_var):
            return Endpoint(choice.base_url, model or choice.model, choice.api_key_var,
                            f"configs/rlpilot.toml ({choice.api_key_var} is set)")
    return None


def _the_served_model(endpoint: Endpoint) -> Endpoint:
    """A URL given without --model: the model is the one the server lists; never a made-up name."""
    from tools.framework.errors import BadInput

    try:
        with http_client(Deadlines(overall=CONTEXT_PROBE_S)) as client:
            answer = client.get(f"{endpoint.base_url.rstrip('/')}/models",
                                headers={"Authorization": f"Bearer {endpoint.api_key()}"})
        served = [m["id"] for m in answer.json().get("data") or [] if isinstance(m, dict) and m.get("id")]
    except (httpx.HTTPError, ValueError, AttributeError, TypeError) as error:
        raise BadInput("model-required", f"{endpoint.base_url} did not say which model it serves "
                       f"({type(error).__name__})", "is the server running? name the model with --model") from None
    if len(served) != 1:
        listed = f"serves {', '.join(served[:8])}" if served else "lists no model"
        raise BadInput("model-required", f"{endpoint.base_url} {listed}", "name the model with --model")
    return Endpoint(endpoint.base_url, served[0], endpoint.api_key_var, "--base-url, the one model it lists")


def _from_alias(workspace: Path, alias: str, model: str | None) -> Endpoint:
    from tools.evals.endpoints import find_alias

    entry = find_alias(alias, workspace)
    return Endpoint(entry.url, model or entry.model, entry.key_var, f"{entry.source} [{alias}]")


class ModelError(Exception):
    """The model endpoint failed in a way retrying did not fix; the message says what to do."""


class ContextOverflow(ModelError):
    """The request did not fit the model's context: the loop retries it once with less history."""


class MalformedReply(Exception):
    """The server answered, but not with a chat completion."""


class EmptyStream(MalformedReply):
    """The stream ended without an event: some servers stream nothing where they answer a plain request."""


# How servers word a request too long for the model (vLLM, llama.cpp, OpenAI) and a refusal of tool
# calls (vLLM started without them); matched in the 400's text.
_CONTEXT_WORDS = ("context length", "context_length", "context size", "context window", "exceed_context",
                  "too many tokens", "maximum context")
_TOOL_CHOICE_WORDS = ("tool_choice", "tool choice", "auto-tool-choice", "tool calling")


def _malformed() -> tuple[type[Exception], ...]:
    """What a body that is not a chat completion raises inside the SDK's parsing, or in ours."""
    import openai

    return (json.JSONDecodeError, openai.APIResponseValidationError, AttributeError, TypeError, KeyError,
            IndexError, MalformedReply)


def _explain(error: Exception, endpoint: Endpoint, waited: str) -> ModelError:
    import openai

    where = f"{endpoint.model} at {endpoint.base_url}"
    # Streamed, the door's BodyTooLarge comes as it is; a plain reply is read by the SDK, which wraps it as a
    # connection error: either way the server answered, too much.
    too_large = _caused_by(error, BodyTooLarge)
    if too_large is not None:
        return ModelError(f"{where} sent a reply too large to read: {too_large}; check that --base-url points at "
                          "an OpenAI-compatible chat API that honours max_tokens ([agent] reply_tokens in "
                          "configs/rlpilot.toml)")
    if isinstance(error, _malformed()):
        return ModelError(f"{where} answered with something that is not a chat completion ({type(error).__name__}: "
                          f"{str(error)[:200]}); check that --base-url points at an OpenAI-compatible API")
    if isinstance(error, openai.AuthenticationError):
        return ModelError(f"{where} refused the API key in ${endpoint.api_key_var}; set a valid key")
    if isinstance(error, openai.NotFoundError):
        return ModelError(f"{where}: model or route not found; check --model and --base-url")
    text = f"{getattr(error, 'message', '')} {getattr(error, 'body', '')}".lower()
    if isinstance(error, openai.BadRequestError) and any(words in text for words in _CONTEXT_WORDS):
        return ContextOverflow(f"{where}: the conversation no longer fits the model's context ({error.message}); "
                               "start a new session, or lower [agent] reply_tokens or context_tokens in "
                               "configs/rlpilot.toml")
    if isinstance(error, openai.BadRequestError) and any(words in text for words in _TOOL_CHOICE_WORDS):
        return ModelError(f"{where} refused the tool calls rlpilot needs ({error.message}); start the server "
                          "with tool calling on (vLLM: --enable-auto-tool-choice --tool-call-parser NAME; "
                          "llama.cpp: --jinja)")
    if isinstance(error, openai.APIStatusError):
        return ModelError(f"{where} answered HTTP {error.status_code}: {error.message}")
    if isinstance(error, openai.APITimeoutError | httpx.TimeoutException):
        return ModelError(f"{where} did not answer in time ({waited}); raise [agent] request_timeout_s or "
                          "request_budget_s in configs/rlpilot.toml for a slow server")
    return ModelError(f"could not reach {where} ({type(error).__name__}); is the server running?")


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


@dataclass
class Reply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None  # "length": cut at the reply budget

    def message(self) -> dict[str, Any]:
        # Text, even empty, beside tool calls: OpenAI takes null there, but some servers refuse it.
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


def _retryable(error: BaseException) -> bool:
    import openai

    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    # Nothing listens there (waiting will not start the server), or it answered past the bound (asking again
    # brings the same answer).
    if _caused_by(error, (ConnectionRefusedError, BodyTooLarge)) is not None:
        return False
    return isinstance(error, openai.APITimeoutError | openai.APIConnectionError | httpx.TransportError)


def _caused_by(error: BaseException | None,
               kind: type[BaseException] | tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of `kind` in the chain that raised `error`, itself included."""
    while error is not None:
        if isinstance(error, kind):
            return error
        error = error.__cause__ or error.__context__
    return None


def _wait(retry_state) -> float:
    error = retry_state.outcome.exception()
    response = getattr(error, "response", None)
    if response is not None and response.headers.get("retry-after"):
        try:
            asked = float(response.headers["retry-after"])
        except ValueError:
            asked = math.nan  # an HTTP date, or nonsense: back off as for no header
        if math.isfinite(asked) and asked >= 0:
            return min(asked, MAX_RETRY_AFTER_S)
    return wait_exponential_jitter(multiplier=0.5, max=20)(retry_state)


class ModelClient:
    def __init__(self, endpoint: Endpoint, *, stream: bool = True, timeout: float | None = None,
                 attempts: int = 5, budget: float | None = None):
        self.endpoint = endpoint
        self.stream = stream
        self.timeout = timeout or load_settings(None).agent.request_timeout_s
        self.budget = budget or load_settings(None).agent.request_budget_s
        self._deadline = 0.0
        self._attempts = 0
        agent = load_settings(None).agent
        self.reply_tokens = agent.reply_tokens
        self._reply_key = "max_tokens"  # the name every OpenAI-compatible server knows; see complete()
        self._context: int | None = None
        # Silence ends an attempt after `timeout`; the budget ends everything, a never-ending stream included.
        self._client = openai_client(endpoint.base_url, endpoint.api_key(),
                                     Deadlines(overall=self.budget, idle_read=self.timeout))
        # No retry starts that would begin after the budget; the last attempt gets what is left of it.
        self._complete = retry(retry=retry_if_exception(_retryable), wait=_wait, reraise=True,
                               stop=stop_after_attempt(attempts) | stop_before_delay(self.budget))(self._complete_once)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 on_text: Callable[[str], None] | None = None) -> Reply:
        import openai

        started = time.monotonic()
        self._deadline, self._attempts = started + self.budget, 0
        try:
            with within(self._deadline):
                return self._complete_or_adapt(messages, tools, on_text)
        except (openai.APIError, httpx.TransportError, BodyTooLarge, *_malformed()) as error:
            spent = time.monotonic() - started
            waited = (f"{self._attempts} attempt(s) of up to {self.timeout:g} s each, {spent:.0f} s in all, "
                      f"within a budget of {self.budget:g} s")
            raise _explain(error, self.endpoint, waited) from error

    def _complete_or_adapt(self, messages, tools, on_text) -> Reply:
        """A completion, asked again once in the form this server wants where it refused the first."""
        import openai

        try:
            return self._complete(messages, tools, on_text)
        except EmptyStream:
            self.stream = False  # this server answers plain requests only: ask it so from now on
            return self._complete(messages, tools, on_text)
        except openai.BadRequestError as error:
            # OpenAI's newer models take max_completion_tokens and refuse max_tokens by name.
            if self._reply_key != "max_tokens" or "max_completion_tokens" not in str(error.message):
                raise
            self._reply_key = "max_completion_tokens"
            return self._complete(messages, tools, on_text)

    def _complete_once(self, messages, tools, on_text) -> Reply:
        self._attempts += 1
        request: dict[str, Any] = {"model": self.endpoint.model, "messages": messages,
                                   self._reply_key: self.reply_tokens}
        if tools:
            request["tools"] = tools
            request["tool_choice"] = "auto"  # named: some servers take no tools without it
        if not self.stream:
            response = self._post(request, stream=False)
            first = response.choices[0]
            choice = first.message
            calls = [ToolCall(c.id, c.function.name, c.function.arguments or "") for c in choice.tool_calls or []]
            usage = response.usage
            if on_text and choice.content:
                on_text(choice.content)
            return Reply(choice.content or "", calls, usage and usage.prompt_tokens,
                         usage and usage.completion_tokens, first.finish_reason)
        return self._streamed(request, on_text)

    def _post(self, body: dict[str, Any], stream: bool):
        """POST the request as the plain JSON it already is.

        `chat.completions.create` walks every message through the SDK's typed-dict transform,
        a cost that grows with the transcript (most of a tool round trip in bench/bench_agent.py);
        the SDK's documented `post` sends the body as is and parses the same response types.
        """
        import openai
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        timeout = max(1.0, min(self.timeout, self._deadline - time.monotonic()))
        return self._client.post("/chat/completions", body=body, cast_to=ChatCompletion, stream=stream,
                                 stream_cls=openai.Stream[ChatCompletionChunk], options={"timeout": timeout})

    def _streamed(self, request: dict[str, Any], on_text) -> Reply:
        chunks = self._post({**request, "stream": True, "stream_options": {"include_usage": True}}, stream=True)
        text: list[str] = []
        calls: dict[int, ToolCall] = {}
        reply = Reply("")
        received = False
        for chunk in chunks:
            received = True
            if chunk.usage:
                reply.prompt_tokens = chunk.usage.prompt_tokens
                reply.completion_tokens = chunk.usage.completion_tokens
            for choice in chunk.choices:
                reply.finish_reason = choice.finish_reason or reply.finish_reason
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if on_text:
                        on_text(delta.content)
                for part in delta.tool_calls or []:
                    call = calls.setdefault(part.index, ToolCall("", "", ""))
                    call.id = part.id or call.id
                    if part.function:
                        call.name += part.function.name or ""
                        call.arguments += part.function.arguments or ""
        if not received:
            raise EmptyStream("the stream ended without a single event")
        reply.text = "".join(text)
        reply.tool_calls = [calls[i] for i in sorted(calls)]
        return reply

    def context_tokens(self) -> int | None:
        """The model's context length as its server reports it (vLLM's /models `max_model_len`,
        llama.cpp's /props `n_ctx`), asked once, within CONTEXT_PROBE_S; None where it does not say."""
        if self._context is None:
            with within(time.monotonic() + CONTEXT_PROBE_S):
                self._context = _reported_context(self._client, self.endpoint) or 0
        return self._context or None


def _reported_context(client: openai.OpenAI, endpoint: Endpoint) -> int | None:
    import openai

    try:
        listed = client.get("/models", cast_to=httpx.Response, options={"timeout": CONTEXT_PROBE_S}).json()
        models = [model for model in listed.get("data") or [] if isinstance(model, dict)]
        for model in models:
            if model.get("id") == endpoint.model or len(models) == 1:  # a local server serves one, by any name
                found = model.get("max_model_len") or model.get("context_length")
                if isinstance(found, int) and found > 0:
                    return found
        root = endpoint.base_url.rstrip("/").removesuffix("/v1")
        with http_client(Deadlines(overall=CONTEXT_PROBE_S)) as plain:
            props = plain.get(f"{root}/props").json()
        found = props.get("default_generation_settings", {}).get("n_ctx") or props.get("n_ctx")
        return found if isinstance(found, int) and found > 0 else None
    except (openai.APIError, httpx.HTTPError, ValueError, AttributeError, TypeError):
        return None
