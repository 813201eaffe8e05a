"""`HostStream`: an asyncio line stream to a host (its socket, or a `--via` command's stdio),
greeted: what `RemoteSession` follows a run on and the fleet view watches the host on."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.host.wire import MAX_LINE, decode, encode, hello, hello_problem

if TYPE_CHECKING:
    from cockpit.host.via import ViaLog

__all__ = ["READ_CHUNK", "VIA_LOG_NAME", "HostStream"]

VIA_LOG_NAME = "via.log"
"""The file in the state dir that takes a `--via` command's stderr while a view runs."""

READ_CHUNK = 64 * 1024
"""The most bytes `readlines` takes in one read (a client catching up on a long run parses
what one read brought before the loop goes on: a few hundred events, milliseconds)."""


def _abandon_started(started: asyncio.Future[Any]) -> None:
    """End the `--via` command a cancelled `HostStream.open` started (see there)."""
    if started.cancelled() or started.exception() is not None:
        return
    from cockpit.host.via import abandon_via

    sock, process, _since = started.result()
    abandon_via(sock, process)


class HostStream:
    """A greeted connection to a host: `write` messages, `readline` its lines, `close` it
    (and its `--via` command)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 process: subprocess.Popen[bytes] | None, greeting: dict[str, Any]) -> None:
        self.reader = reader
        self.writer = writer
        self.process = process
        self.greeting = greeting
        self._pending = b""  # what `readlines` read past its last whole line

    @classmethod
    async def open(cls, path: Path, via: str | None = None) -> HostStream:
        """Connect (through `via`'s stdio when given) and greet; `OSError` if the host cannot
        be reached, `ConnectionError` (saying why) if the other side is no cockpit host of this
        protocol."""
        process = None
        log: ViaLog | None = None
        since = 0
        if via is not None:
            from cockpit.host.via import ViaLog, abandon_via, logged_via
            from cockpit.paths import state_dir

            # Its stderr into a log, not over the full-screen view this stream feeds; what it
            # said last is the reason shown when it fails.
            log = ViaLog(state_dir() / VIA_LOG_NAME)
            starting = asyncio.get_running_loop().run_in_executor(None, logged_via, via, log)
            try:
                sock, process, since = await asyncio.shield(starting)
            except asyncio.CancelledError:
                # The thread cannot be stopped part way: what it starts is ended once it has
                # (a command in its own session would otherwise outlive the cockpit).
                starting.add_done_callback(_abandon_started)
                raise
            try:
                reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE)
            except BaseException:
                abandon_via(sock, process)
                raise
        else:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
        stream = cls(reader, writer, process, {})
        try:
            writer.write(encode(hello()))
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                raise ConnectionError("the host closed the connection") from None
            greeting = decode(line)
            problem = hello_problem(greeting)
            if problem is not None:
                raise ConnectionError(problem)
        except BaseException as exc:
            await stream.close()
            if log is not None and isinstance(exc, OSError | ValueError):
                said = await asyncio.to_thread(log.said, since)
                if said:  # (after close: the command has ended and said all it will)
                    raise ConnectionError(f"{exc} (the --via command said: {said})") from exc
            raise
        stream.greeting = greeting
        return stream

    def write(self, message: dict[str, Any]) -> None:
        """Send one message (buffered; `OSError` if the connection is gone)."""
        if self.writer.is_closing():
            raise ConnectionError("the connection to the host is closed")
        self.writer.write(encode(message))

    async def readline(self) -> bytes:
        """The host's next line; `ConnectionError` once it hung up."""
        if b"\n" in self._pending:
            line, _, self._pending = self._pending.partition(b"\n")
            return line + b"\n"
        if self._pending:  # (the start of a line `readlines` read)
            self._pending, start = b"", self._pending
            return start + await self.readline()
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            raise ConnectionError("the host closed the connection") from None

    async def readlines(self) -> list[bytes]:
        """The host's next whole lines, at least one: all that one read brought (a batch of
        events the host wrote at once comes in one wait, not one a line: a client catching
        up on a long run waited a loop turn — often a frame — for each event). Each ends with
        its newline; `ConnectionError` once it hung up, `ValueError` for a line longer than
        `MAX_LINE`."""
        data = self._pending
        while b"\n" not in data:
            if len(data) > MAX_LINE:
                raise ValueError("the host sent a line longer than the limit")
            more = await self.reader.read(READ_CHUNK)
            if not more:
                raise ConnectionError("the host closed the connection")
            data += more
        end = data.rindex(b"\n") + 1
        self._pending = data[end:]
        return [line + b"\n" for line in data[:end - 1].split(b"\n")]  # (JSON: no bare \r)

    async def close(self) -> None:
        """Hang up, and end a `--via` command."""
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()
        if self.process is not None:
            from cockpit.host.via import close_via

            await asyncio.to_thread(close_via, self.process)
