"""`Connection`: one client's line stream to the host — reads messages, writes them in order
(one writer at a time), and says who the peer is."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from cockpit.host.wire import MAX_LINE, WireError, decode, encode

__all__ = ["Connection"]


class Connection:
    """A line-delimited JSON stream over an asyncio reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._lock = asyncio.Lock()
        self.closed = False

    async def read(self) -> dict[str, Any] | None:
        """The next message, or None at the end of the stream. `WireError` for a bad line."""
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise WireError("the stream ended inside a line") from None
            return None
        except asyncio.LimitOverrunError:
            raise WireError(f"a line longer than {MAX_LINE} bytes") from None
        except (ConnectionError, OSError):
            return None
        return decode(line)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message (waits while the peer is slow to read: only this connection)."""
        await self.send_line(encode(message))

    async def send_line(self, line: bytes) -> None:
        """Write one line already encoded, newline included."""
        if self.closed:
            return
        async with self._lock:
            try:
                self.writer.write(line)
                await self.writer.drain()
            except (ConnectionError, OSError):
                self.closed = True

    async def close(self) -> None:
        """Close the stream (idempotent)."""
        self.closed = True
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()
