"""`OpenAIModel`: the built-in engine's model over any OpenAI-compatible Chat Completions server
(OpenAI, OpenRouter, Ollama, llama.cpp's llama-server, vLLM, LM Studio), through the official
`openai` SDK, streaming, with tool calling.

Each `respond` is one streamed request: the tools are the engine's (schemas from their
`ToolSpec`s) plus `finish`; text and reasoning stream out as they come; tool calls are put
together from their deltas and become one decision each, in order. Usage comes from the server
(`stream_options.include_usage`) or, when it sends none, from a size estimate; the cost only
from a known price and the server's own counts. A rate limit, a server error, a timeout or a
cut stream is tried again after a pause, each retry announced (`Retrying`); anything else ends
the run with the server's words (`ModelError`). The SDK's own retries are off: every retry is
one the human sees. The requests are made and the streams read and parsed on the model's own I/O
thread (`reader`): the caller's loop, the screen's, gets the parsed deltas in batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import openai

from engine_adapter.engines.builtin.models.base import (
    ModelError,
    ModelOutput,
    ModelReply,
    ModelRequest,
    RawDecision,
    Retrying,
    TextDelta,
    Usage,
)
from engine_adapter.engines.builtin.models.openai.errors import (
    TOOLS_HINT,
    Verdict,
    Where,
    is_context_overflow,
    judge,
)
from engine_adapter.engines.builtin.models.openai.messages import Prompt, build_messages
from engine_adapter.engines.builtin.models.openai.reader import shared_io
from engine_adapter.engines.builtin.models.openai.schema import FINISH, function_tools
from engine_adapter.engines.builtin.models.openai.sse import CappedStream, ReplyLimit
from engine_adapter.engines.builtin.models.openai.stream import AssembledCall, ReplyAssembler

__all__ = ["DEFAULT_RETRY_DELAYS", "OpenAIModel", "Price", "default_system_prompt",
           "window_from_listing"]

DEFAULT_RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0)
"""Seconds before each retry (a server's Retry-After, up to two minutes, wins)."""

_CHARS_PER_TOKEN = 3.5  # until the server's usage says otherwise
_MAX_REPLY_CHARS = 4_000_000  # a reply longer than this is a server gone wrong: stop reading
_TOOLLESS_LIMIT = 3  # replies without a tool call, none ever made: the server ignores tools


def default_system_prompt() -> str:
    """The shipped system prompt (`prompts/system.md`)."""
    return resources.files(__package__).joinpath("prompts", "system.md").read_text("utf-8")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class _Cut(Exception):
    """The stream ended before the server said the reply was complete."""


class OpenAIModel:
    """A `Model` served by an OpenAI-compatible endpoint.

    Args:
        model: The model id the server knows (`qwen3-coder`, `gpt-4.1-mini`).
        base_url: The API root, usually ending in `/v1`.
        api_key: The key, or None for a server that needs none (a placeholder is sent).
        key_variable: The environment variable the key was read from (named in errors).
        name: How the model is shown (default: `model`).
        system_prompt: The system prompt (default: the shipped one).
        price: Dollars per million tokens; None: cost unknown (tokens only).
        context_window: Tokens the model can take in; None: asked from the server, else
            unknown (no eliding until the server says the conversation is too long).
        tool_output_cap: Characters of one tool output the model sees.
        max_output_tokens: Sent as `max_tokens` when given.
        retry_delays: Seconds before each retry; their number is the number of retries.
        timeout: Seconds to wait for the server (connect: `connect_timeout`).
    """

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None,
                 key_variable: str | None = "OPENAI_API_KEY", name: str | None = None,
                 system_prompt: str | None = None, price: Price | None = None,
                 context_window: int | None = None, tool_output_cap: int = 12_000,
                 max_output_tokens: int | None = None,
                 retry_delays: Sequence[float] = DEFAULT_RETRY_DELAYS, timeout: float = 600.0,
                 connect_timeout: float = 10.0) -> None:
        self.model = model
        self.name = name or model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.key_variable = key_variable
        self.system_prompt = system_prompt if system_prompt is not None else \
            default_system_prompt()
        self.price = price
        self.context_window = context_window
        self.tool_output_cap = tool_output_cap
        self.max_output_tokens = max_output_tokens
        self.retry_delays = tuple(retry_delays)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.chars_per_token = _CHARS_PER_TOKEN
        self._asked_window = context_window is not None
        self._ask_usage = True  # `stream_options.include_usage`, until a server refuses it
        self._io = shared_io()
        self._client: openai.AsyncOpenAI | None = None  # kept, used on the I/O loop only

    @property
    def where(self) -> Where:
        return Where(self.base_url, self.model, self.key_variable, self.api_key is not None)

    def client(self) -> openai.AsyncOpenAI:
        """A new SDK client for this endpoint (no SDK retries: ours are shown)."""
        return openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key or "no-key", max_retries=0,
            timeout=openai.Timeout(self.timeout, connect=self.connect_timeout))

    def _kept_client(self) -> openai.AsyncOpenAI:
        """One client kept across turns (used on the I/O loop): making one loads the system's
        certificates (about 0.1 s here) and a kept one reuses its connection."""
        if self._client is None:
            self._client = self.client()
        return self._client

    async def aclose(self) -> None:
        """Close the kept client (its connections); the next call makes a new one."""
        if self._client is not None:
            client, self._client = self._client, None
            await self._io.run(client.close())

    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelOutput]:
        """Stream one reply: text, then usage, then one decision a tool call (see module)."""
        tools = function_tools(request.tools)
        fixed = len(json.dumps(tools))
        attempt = 0
        client = self._kept_client()
        if not self._asked_window:
            self._asked_window = True
            self.context_window = await self._io.run(_ask_window(client, self.model))
        while True:
            prompt = self._prompt(request, fixed)
            assembler = ReplyAssembler()
            try:
                async for delta in self._stream(client, prompt, tools, assembler):
                    yield delta
                break
            except (openai.OpenAIError, OSError, _Cut) as exc:
                verdict = self._judge(exc, prompt, assembler)
            if not verdict.retry or attempt >= len(self.retry_delays):
                tries = f" (gave up after {attempt + 1} attempts)" if attempt else ""
                raise ModelError(verdict.message + tries) from None
            delay = verdict.delay if verdict.delay is not None else self.retry_delays[attempt]
            attempt += 1
            yield Retrying(attempt, len(self.retry_delays), delay, verdict.message)
            await asyncio.sleep(delay)
        for out in self._finish(request, prompt, assembler):
            yield out

    def _prompt(self, request: ModelRequest, fixed: int) -> Prompt:
        limit = None
        if self.context_window:
            room = self.context_window - (self.max_output_tokens or
                                          min(8_192, self.context_window // 4))
            limit = int(max(room, self.context_window // 4) * self.chars_per_token * 0.9)
        return build_messages(self.system_prompt, request, output_cap=self.tool_output_cap,
                              limit_chars=limit, fixed_chars=fixed)

    async def _stream(self, client: openai.AsyncOpenAI, prompt: Prompt,
                      tools: list[dict[str, Any]],
                      assembler: ReplyAssembler) -> AsyncIterator[TextDelta]:
        body: dict[str, Any] = {
            "model": self.model, "messages": prompt.messages, "tools": tools, "stream": True}
        if self._ask_usage:
            body["stream_options"] = {"include_usage": True}
        if self.max_output_tokens:
            body["max_tokens"] = self.max_output_tokens

        async def read(put: Callable[[list[TextDelta]], None]) -> None:
            """(on the I/O loop) The request and its stream, parsed into `assembler`."""
            # The SDK's request, errors and SSE decoding, but each chunk left as its decoded
            # JSON: building the typed chunk models costs about a millisecond a chunk
            # (measured here), more than everything else the cockpit does with it.
            # Read through `CappedStream`: every line, the reply's bytes, names, ids and the
            # number of calls capped (the SDK's own decoder has no limit at all).
            stream = await client.post("/chat/completions", body=body, cast_to=object,
                                       stream=True, stream_cls=CappedStream)
            try:
                feed = assembler.feed
                async for chunk in stream:
                    deltas = feed(chunk)
                    if deltas:
                        put(deltas)
                    if assembler.chars > _MAX_REPLY_CHARS:
                        raise ReplyLimit(f"sent a reply of more than {_MAX_REPLY_CHARS:,} "
                                         "characters")
            except ReplyLimit as exc:
                raise ModelError(f"{self.base_url} {exc}; stopped reading it") from None
            finally:
                with contextlib.suppress(Exception):
                    await stream.close()
            put(assembler.flush())
            if assembler.finish_reason is None:
                raise _Cut("the stream ended before the reply was complete")

        async for batch in self._io.stream(read):
            for delta in batch:
                yield delta

    def _judge(self, exc: BaseException, prompt: Prompt, assembler: ReplyAssembler) -> Verdict:
        if isinstance(exc, _Cut):
            return Verdict(True, f"{self.base_url}: {exc}")
        if (self._ask_usage and isinstance(exc, openai.BadRequestError)
                and "stream_options" in str(exc.body) + exc.message):
            self._ask_usage = False  # an older server: ask without it, estimate the usage
            return Verdict(True, f"{self.base_url} does not take stream_options "
                           f"({judge(exc, self.where).message}); asking without it", 0.0)
        if is_context_overflow(exc):
            # Too long for the model: shrink what we believe the window is and elide more.
            tokens = int(prompt.chars / self.chars_per_token)
            self.context_window = max(1_024, int(min(self.context_window or tokens, tokens) * 0.7))
            return Verdict(True, f"the conversation is too long for the model ("
                           f"{judge(exc, self.where).message}); eliding older tool outputs", 0.0)
        verdict = judge(exc, self.where)
        if assembler.chars and verdict.retry:
            return Verdict(True, f"the stream was cut mid-reply: {verdict.message}",
                           verdict.delay)
        return verdict

    def _finish(self, request: ModelRequest, prompt: Prompt,
                assembler: ReplyAssembler) -> Iterator[ModelOutput]:
        """Usage, then the decisions of a complete reply."""
        usage = assembler.usage or {}
        given, made = _count(usage.get("prompt_tokens")), usage.get("completion_tokens")
        reported = given is not None
        if given is not None:
            input_tokens = max(0, given)
            output_tokens = max(0, int(made)) if isinstance(made, int) else 0
            if input_tokens > 0:
                self.chars_per_token = min(8.0, max(1.5, prompt.chars / input_tokens))
        else:
            input_tokens = int(prompt.chars / self.chars_per_token)
            output_tokens = max(1, int(assembler.chars / self.chars_per_token))
        cost = self.price.cost(input_tokens, output_tokens) if self.price and reported else None
        yield Usage(input_tokens, output_tokens, cost)
        calls = assembler.calls()
        cut = assembler.finish_reason == "length"
        for call in calls:
            yield _decision(call, cut)
        if not calls:
            yield RawDecision(None, error=self._toolless(request, cut))

    def _toolless(self, request: ModelRequest, cut: bool) -> str:
        replies = [e for e in request.transcript if isinstance(e, ModelReply)]
        if not cut and len(replies) + 1 >= _TOOLLESS_LIMIT and not any(
                raw.call_id for reply in replies for raw in reply.calls):
            raise ModelError(f"{self.name} answered {len(replies) + 1} times without calling a "
                             f"tool: the server at {self.base_url} may be ignoring the tools. "
                             f"{TOOLS_HINT}")
        if cut:
            return ("your reply was cut at the output token limit before it called a tool: "
                    "think less, call a tool sooner")
        return (f"your reply called no tool: every reply must call a tool, or {FINISH} with "
                "the result")


def _decision(call: AssembledCall, cut: bool) -> RawDecision:
    """One assembled tool call as the engine's decision."""
    shown = {"action": "tool", "tool": call.name, "input": call.arguments}
    if not call.name:
        return RawDecision(shown, call.id, error="a tool call without a function name")
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        why = (" (the reply was cut at the output token limit: make the call smaller, e.g. an "
               "edit instead of a whole file)" if cut else "")
        return RawDecision(shown, call.id, error=f"the arguments of {call.name} are not valid "
                           f"JSON ({exc}){why}; send the call again with a JSON object")
    if call.name == FINISH:
        if not isinstance(arguments, dict):
            return RawDecision(shown, call.id, error="the arguments of finish must be an object")
        return RawDecision({"action": "finish", **{k: arguments[k] for k in
                                                   ("result", "success") if k in arguments}},
                           call.id)
    return RawDecision({"action": "tool", "tool": call.name, "input": arguments}, call.id)


def window_from_listing(entry: Any) -> int | None:
    """The context window a server's model listing states, if it does (vLLM `max_model_len`,
    OpenRouter `context_length`, LM Studio `max_context_length`, llama.cpp `meta.n_ctx_train`)."""
    data = entry if isinstance(entry, dict) else getattr(entry, "model_extra", None) or {}
    for key in ("max_model_len", "context_length", "max_context_length", "context_window"):
        value = data.get(key)
        if isinstance(value, int) and value > 0:
            return value
    meta = data.get("meta")
    if isinstance(meta, dict):
        value = meta.get("n_ctx") or meta.get("n_ctx_train")
        if isinstance(value, int) and value > 0:
            return value
    return None


async def _ask_window(client: openai.AsyncOpenAI, model: str) -> int | None:
    """The model's context window, if the server's model listing says (never an error)."""
    try:
        async with asyncio.timeout(5):
            page = await client.models.list()
            for entry in page.data:
                if entry.id == model:
                    return window_from_listing(entry)
    except Exception:  # a server without /models, or one that answers oddly: no window known
        return None
    return None


def _count(value: object) -> int | None:
    """A token count the server reported, or None (missing, or not a whole number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
