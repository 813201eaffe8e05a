"""One streamed Chat Completions reply, put together chunk by chunk.

Chunks come as the JSON the server sent (decoded, not turned into the SDK's typed models: see
`model`), and anything of an unexpected shape is ignored rather than trusted.
`ReplyAssembler.feed(chunk)` returns the text deltas to show at once (message and thought) and
keeps the rest, each capped (a tool call's name and id, the number of calls: beyond a cap it
raises `ReplyLimit`): tool calls assembled from their deltas (ids, names and argument fragments
may be split anywhere; parallel calls interleave by `index`), the finish reason and the usage.
Reasoning arrives as `reasoning_content` (llama.cpp, vLLM, DeepSeek), `reasoning` (Ollama,
OpenRouter) or inline `<think>…</think>` in the content (local servers without a reasoning
parser); all of it goes to the thought channel.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from engine_adapter.engines.builtin.models.base import TextDelta
from engine_adapter.engines.builtin.models.openai.sse import ReplyLimit

__all__ = ["MAX_CALLS", "MAX_ID", "MAX_NAME", "AssembledCall", "ReplyAssembler",
           "ThinkSplitter"]

MAX_NAME = 256
"""Characters of a tool call's function name (OpenAI allows 64)."""
MAX_ID = 256
"""Characters of a tool call's id."""
MAX_CALLS = 128
"""Tool calls in one reply."""
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")

_OPEN, _CLOSE = "<think>", "</think>"


@dataclass
class AssembledCall:
    """A tool call of the reply: the server's id, the function's name, its arguments' text."""

    id: str
    name: str
    arguments: str


def _join(current: str, fragment: str, cap: int, what: str) -> str:
    """An id or a name from its pieces. Some servers repeat the whole value in every delta
    instead of sending it once: a piece equal to what is there already is that repetition.
    Longer than `cap` characters: `ReplyLimit`."""
    if not fragment or fragment == current:
        return current
    if len(current) + len(fragment) > cap:
        raise ReplyLimit(f"sent a tool-call {what} of more than {cap:,} characters")
    return current + fragment


class ThinkSplitter:
    """Splits content into thought and message text at a `<think>` … `</think>` block at the
    start of the reply (tags may be cut anywhere between chunks: a possible start of a tag is
    held back until it is known). Tags later in the reply are ordinary text."""

    def __init__(self) -> None:
        self.thinking = False
        self._open = True  # a <think> may still start the reply
        self._closed = False  # a block just closed: the line breaks after it are dropped
        self._held = ""

    def feed(self, text: str) -> list[TextDelta]:
        """The deltas `text` makes, once joined with what was held back."""
        text, self._held = self._held + text, ""
        out: list[TextDelta] = []
        if self._open:
            stripped = text.lstrip()
            if stripped.startswith(_OPEN):
                self.thinking, self._open = True, False
                text = stripped[len(_OPEN):]
            elif _OPEN.startswith(stripped):  # whitespace, or a piece of the tag: wait
                self._held = text
                return out
            else:
                self._open = False
        if self.thinking:
            at = text.find(_CLOSE)
            if at >= 0:
                self._add(out, text[:at])
                self.thinking, self._closed = False, True
                text = text[at + len(_CLOSE):]
            else:
                keep = _partial_tag(text, _CLOSE)
                self._add(out, text[:len(text) - keep])
                self._held, text = text[len(text) - keep:], ""
        if self._closed and text:
            text = text.lstrip("\n")
            self._closed = not text
        self._add(out, text)
        return out

    def flush(self) -> list[TextDelta]:
        """What is still held back (the reply ended: it was not a tag after all)."""
        out: list[TextDelta] = []
        self._add(out, self._held)
        self._held = ""
        return out

    def _add(self, out: list[TextDelta], text: str) -> None:
        if text:
            out.append(TextDelta(text, "thought" if self.thinking else "message"))


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class _Partial:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = self.name = ""
        self.arguments: list[str] = []


class ReplyAssembler:
    """Feed it the chunks of one reply; read `calls()`, `finish_reason` and `usage` at the end."""

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None  # the server's usage, if it sent one
        self.chars = 0  # characters received (text, reasoning, arguments): an output estimate
        self._splitter = ThinkSplitter()
        self._partials: dict[int, _Partial] = {}
        self._last: int | None = None

    def feed(self, chunk: Any) -> list[TextDelta]:
        """The text deltas of one chunk (its JSON, decoded); tool-call pieces, usage and the
        finish reason are kept. Anything of an unexpected shape is ignored."""
        if not isinstance(chunk, dict):
            return []
        usage = chunk.get("usage")
        if isinstance(usage, dict):  # only the counts are kept, whatever else it holds
            self.usage = {k: usage[k] for k in _USAGE_KEYS if isinstance(usage.get(k), int)}
        out: list[TextDelta] = []
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue  # one reply is asked for; anything else is ignored
            delta = choice.get("delta")
            if isinstance(delta, dict):
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    self.chars += len(reasoning)
                    out.append(TextDelta(reasoning, "thought"))
                content = delta.get("content")
                if isinstance(content, str) and content:
                    self.chars += len(content)
                    out += self._splitter.feed(content)
                calls = delta.get("tool_calls")
                if isinstance(calls, list):
                    self._feed_calls(calls)
            if isinstance(choice.get("finish_reason"), str):
                self.finish_reason = choice["finish_reason"][:64]
        return out

    def flush(self) -> list[TextDelta]:
        """Text held back at the end of the reply."""
        return self._splitter.flush()

    def _feed_calls(self, deltas: list[Any]) -> None:
        for delta in deltas:
            if not isinstance(delta, dict):
                continue
            index, call_id = delta.get("index"), delta.get("id")
            call_id = call_id if isinstance(call_id, str) else ""
            if not isinstance(index, int):  # no index: a new id starts a call, else continue
                index = len(self._partials) if call_id or self._last is None else self._last
            partial = self._partials.get(index)
            if partial is None:
                if len(self._partials) >= MAX_CALLS:
                    raise ReplyLimit(f"sent more than {MAX_CALLS} tool calls in one reply")
                partial = self._partials[index] = _Partial()
            self._last = index
            if call_id:
                partial.id = _join(partial.id, call_id, MAX_ID, "id")
            function = delta.get("function")
            if isinstance(function, dict):
                name, arguments = function.get("name"), function.get("arguments")
                if isinstance(name, str) and name:
                    partial.name = _join(partial.name, name, MAX_NAME, "name")
                if isinstance(arguments, str) and arguments:
                    self.chars += len(arguments)
                    partial.arguments.append(arguments)

    def calls(self) -> list[AssembledCall]:
        """The reply's tool calls in the server's order; a call without an id gets one."""
        return [AssembledCall(p.id or f"call-{uuid.uuid4().hex[:12]}", p.name,
                              "".join(p.arguments))
                for _, p in sorted(self._partials.items())]
