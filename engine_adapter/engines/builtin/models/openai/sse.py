"""The event stream of a chat completion, read with a cap on everything the server sends.

The SDK's own decoder imposes "no line or event size limit": a server that never sends a line
end, or one 1 GiB `data:` line, is read until memory runs out. `CappedStream` is the SDK's
`AsyncStream` (its request, status errors and `[DONE]`), but the bytes go through `SseLines`,
which stops with `ReplyLimit` at a line or event longer than `MAX_LINE` bytes or a reply longer
than `MAX_REPLY_BYTES`; the assembler (`stream`) caps what the chunks hold (names, ids, the
number of calls) and the model the characters of text, reasoning and arguments.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2  # the SDK's HTTP client: its errors become the SDK's, as the SDK's stream does
import openai

__all__ = ["MAX_LINE", "MAX_REPLY_BYTES", "CappedStream", "ReplyLimit", "SseLines"]

MAX_LINE = 8 * 1024 * 1024
"""Bytes of one line (and of one event's `data`): a chunk bigger than this is no real reply.
(Some servers send a whole tool call in one chunk: a big `write_file` still fits.)"""

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""Bytes of one whole streamed reply, comments and keep-alives included."""


class ReplyLimit(Exception):
    """The server sent more than a cap allows; the message says what (no URL: the model adds
    it)."""


class SseLines:
    """Bytes of a `text/event-stream`, in any pieces, to the `data` of each event (lines end
    in LF, CRLF or CR; comments and other fields are skipped), every size capped."""

    def __init__(self, *, max_line: int | None = None, max_total: int | None = None) -> None:
        self.max_line = MAX_LINE if max_line is None else max_line
        self.max_total = MAX_REPLY_BYTES if max_total is None else max_total
        self.total = 0
        self._buffer = bytearray()  # the start of a line (never holds an LF)
        self._cr = False  # the buffer ends in a CR (an LF may follow)
        self._data: list[bytes] = []
        self._size = 0

    def feed(self, piece: bytes) -> list[str]:
        """The data of each event `piece` completes."""
        self.total += len(piece)
        if self.total > self.max_total:
            raise ReplyLimit(f"sent a reply of more than {self.max_total:,} bytes")
        self._buffer += piece
        out: list[str] = []
        if self._cr or b"\r" in piece:
            self._scan(out)  # rare: servers end their lines with LF
        elif b"\n" in piece:
            *lines, rest = self._buffer.split(b"\n")
            for line in lines:
                self._line(bytes(line), out)
            self._buffer = rest
        if len(self._buffer) > self.max_line:
            raise ReplyLimit(f"sent a line of more than {self.max_line:,} bytes "
                             "(or no line end at all)")
        return out

    def _scan(self, out: list[str]) -> None:
        """Lines ended by LF, CRLF or CR; a CR at the very end waits for the next piece."""
        buffer = self._buffer
        start = 0
        while True:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start, lf if lf >= 0 else len(buffer))
            end = cr if cr >= 0 else lf
            if end < 0 or (end == cr and cr + 1 == len(buffer)):
                break
            self._line(bytes(buffer[start:end]), out)
            start = end + (2 if end == cr and buffer[cr + 1: cr + 2] == b"\n" else 1)
        del buffer[:start]
        self._cr = buffer.endswith(b"\r")

    def finish(self) -> list[str]:
        """The data of the events still open when the stream ended."""
        out: list[str] = []
        if self._buffer:
            self._line(bytes(self._buffer.rstrip(b"\r")), out)
            self._buffer.clear()
        self._line(b"", out)
        return out

    def _line(self, line: bytes, out: list[str]) -> None:
        if not line:
            if self._data:
                out.append(b"\n".join(self._data).decode("utf-8", "replace"))
            self._data, self._size = [], 0
            return
        if line.startswith(b":"):
            return  # a comment (a keep-alive)
        name, _, value = line.partition(b":")
        if name == b"data":
            value = value[1:] if value.startswith(b" ") else value
            self._size += len(value) + 1
            if self._size > self.max_line:
                raise ReplyLimit(f"sent an event of more than {self.max_line:,} bytes")
            self._data.append(value)


class CappedStream(openai.AsyncStream[object]):
    """The SDK's stream of decoded JSON chunks, read through `SseLines` (see the module).
    Pass it as `stream_cls` to the client's `post`."""

    async def __aiter__(self) -> AsyncIterator[object]:
        response = self.response
        lines = SseLines()
        try:
            async for piece in self._pieces():
                for data in lines.feed(piece):
                    if data.startswith("[DONE]"):
                        return
                    yield self._decoded(data)
            for data in lines.finish():
                if data.startswith("[DONE]"):
                    return
                yield self._decoded(data)
        finally:
            await response.aclose()

    async def _pieces(self) -> AsyncIterator[bytes]:
        """The body's bytes; the HTTP client's errors as the SDK's (so a cut is retried)."""
        response = self.response
        try:
            async for piece in response.aiter_bytes():
                yield piece
        except httpx2.TimeoutException as exc:
            raise openai.APITimeoutError(request=response.request) from exc
        except (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream) as exc:
            raise openai.APIConnectionError(request=response.request) from exc

    def _decoded(self, data: str) -> Any:
        try:
            value = json.loads(data)
        except ValueError:
            raise ReplyLimit(f"sent an event that is not JSON ({data[:80]!r})") from None
        error = value.get("error") if isinstance(value, dict) else None
        if error:  # a server error in the stream, as the SDK reads it
            message = error.get("message") if isinstance(error, dict) else None
            raise openai.APIError(message if isinstance(message, str) and message else
                                  "An error occurred during streaming",
                                  request=self.response.request, body=error)
        return value
