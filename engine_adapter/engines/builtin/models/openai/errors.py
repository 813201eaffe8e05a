"""What a failed Chat Completions call means for the run: try again (rate limit, server error,
a cut stream, a timeout) or stop with the server's own words and what to do about it.

`judge(exc, where)` turns an exception of the `openai` SDK (or of the stream under it) into a
`Verdict`: `retry` or not, and `message`, shown as it is. Messages quote the server verbatim and
add one hint: which key variable was read, which URL was not answering, which flag a local
server needs for tool calls.
"""

from __future__ import annotations

import errno
import re
import socket
from dataclasses import dataclass
from typing import Any

import openai

__all__ = ["TOOLS_HINT", "Verdict", "Where", "is_context_overflow", "judge", "server_message"]

TOOLS_HINT = ("cockpit needs a server and model with tool calling. Known local servers: "
              "llama.cpp: start `llama-server --jinja`; vLLM: `--enable-auto-tool-choice "
              "--tool-call-parser <parser>`; Ollama and LM Studio: pick a model that supports "
              "tools (qwen3, qwen2.5-coder, llama3.1…)")

_TOOL_TROUBLE = re.compile(
    r"jinja|auto-tool-choice|tool-call-parser|tool[ _]choice|does not support tools|"
    r"tools? (?:are|is) not supported|not support(?:ed)? (?:for )?tools?|"
    r"tool(?:s| calls?| use)? (?:is |are )?(?:not|un)supported|function calling", re.I)
_CONTEXT = re.compile(
    r"context (?:length|window|size)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? (?:the )?(?:available )?context|n_ctx|input is too long|reduce the length", re.I)


@dataclass(frozen=True)
class Where:
    """What a message needs to know about the call: the server, the model, the key."""

    base_url: str
    model: str
    key_variable: str | None  # the environment variable the key came from
    key_sent: bool  # whether any key was sent


@dataclass(frozen=True)
class Verdict:
    """Whether to try again (after `delay` seconds if the server said), and the message."""

    retry: bool
    message: str
    delay: float | None = None


_MESSAGE_CAP = 2_000  # characters of a server's message kept (an HTML error page, say)


def server_message(exc: Any) -> str:
    """The server's own error text: `error.message` of a JSON body, else the body, else the
    SDK's message; cut to 2,000 characters."""
    body = getattr(exc, "body", None)
    found = str(getattr(exc, "message", None) or exc)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        detail = body.get("detail") or body.get("message")
        if isinstance(message, str) and message.strip():
            found = message
        elif isinstance(detail, str) and detail.strip():
            found = detail
    elif isinstance(body, str) and body.strip():
        found = body
    found = found.strip()
    if len(found) > _MESSAGE_CAP:
        found = f"{found[:_MESSAGE_CAP]}… ({len(found) - _MESSAGE_CAP:,} more characters)"
    return found


def is_context_overflow(exc: Any) -> bool:
    """Whether the server refused the request for being longer than the model's context."""
    status = getattr(exc, "status_code", None)
    return status in (400, 413, 422) and bool(_CONTEXT.search(server_message(exc)))


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _refused(exc: BaseException) -> bool:
    return any(isinstance(e, ConnectionRefusedError)
               or (isinstance(e, OSError) and e.errno == errno.ECONNREFUSED)
               or "connection refused" in str(e).lower() for e in _chain(exc))


def _unresolved(exc: BaseException) -> bool:
    return any(isinstance(e, socket.gaierror) or "name or service not known" in str(e).lower()
               or "nodename nor servname" in str(e).lower() for e in _chain(exc))


def _cause(exc: BaseException) -> str:
    """The innermost cause's words (the SDK says only "Connection error.")."""
    inner = _chain(exc)[-1]
    return str(inner) or type(inner).__name__


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        try:
            seconds = float(value) * scale if value is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 <= seconds <= 120:
            return seconds
    return None


def judge(exc: BaseException, where: Where) -> Verdict:
    """Whether a failed call is worth another try, and what to tell the human."""
    url = where.base_url
    if isinstance(exc, openai.APIStatusError):
        status, said = exc.status_code, server_message(exc)
        if status in (401, 403):
            if where.key_sent and where.key_variable:
                key = f"the key was read from ${where.key_variable}"
            elif where.key_sent:
                key = "a key was sent"
            else:
                key = (f"no key was sent: set ${where.key_variable or 'OPENAI_API_KEY'}, or name "
                       "another variable with --api-key-env")
            verb = "rejected the API key" if status == 401 else "refused access"
            return Verdict(False, f"{url} {verb} ({status}): {said} ({key})")
        if status == 404:
            return Verdict(False, f"model {where.model!r} not found at {url} (404): {said}. "
                           f"See what it offers: cockpit models --base-url {url}")
        if status == 429 or status >= 500 or status == 408:
            return Verdict(True, f"{url} answered {status}: {said}", _retry_after(exc))
        if _TOOL_TROUBLE.search(said):
            return Verdict(False, f"{url} refused tool calls ({status}): {said}. {TOOLS_HINT}")
        return Verdict(False, f"{url} refused the request ({status}): {said}")
    if isinstance(exc, openai.APITimeoutError):
        return Verdict(True, f"{url} did not answer in time")
    if isinstance(exc, openai.APIConnectionError | OSError):
        if _refused(exc):
            return Verdict(False, f"cannot connect to {url}: connection refused. Is the server "
                           f"running at {url}?")
        if _unresolved(exc):
            return Verdict(False, f"cannot reach {url}: {_cause(exc)} (check the host name)")
        return Verdict(True, f"the connection to {url} failed: {_cause(exc)}")
    if isinstance(exc, openai.APIError):  # an error sent inside the stream
        return Verdict(True, f"{url} reported an error mid-reply: {server_message(exc)}")
    return Verdict(False, f"the model call failed: {type(exc).__name__}: {exc}")
