"""`HostStream.readlines`: every whole line one read brought (a batch of events in one wait),
the start of the next line kept for the next call, `readline` after it served from what was
kept, a line longer than the limit refused, a hang-up said."""

from __future__ import annotations

import asyncio
import socket

import pytest
from support.event_loop import run

from cockpit.host import stream as stream_module
from cockpit.host.stream import HostStream


async def _pair() -> tuple[HostStream, socket.socket]:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=ours)
    return HostStream(reader, writer, None, {}), theirs


def test_lines_come_together_and_a_cut_line_waits_for_its_end() -> None:
    async def main() -> None:
        stream, host = await _pair()
        host.sendall(b'{"event":1}\n{"event":2}\n{"eve')
        assert await stream.readlines() == [b'{"event":1}\n', b'{"event":2}\n']
        reading = asyncio.ensure_future(stream.readlines())
        await asyncio.sleep(0)  # (its read is waiting: the cut line is not whole yet)
        assert not reading.done()
        host.sendall(b'nt":3}\n{"a"')
        assert await reading == [b'{"event":3}\n']
        host.sendall(b':4}\n{"b":5}\n')
        assert await stream.readline() == b'{"a":4}\n'  # from what readlines kept
        assert await stream.readlines() == [b'{"b":5}\n']
        host.close()
        with pytest.raises(ConnectionError):
            await stream.readlines()
        await stream.close()

    run(main())


def test_a_line_longer_than_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "MAX_LINE", 100)
    monkeypatch.setattr(stream_module, "READ_CHUNK", 64)

    async def main() -> None:
        stream, host = await _pair()
        host.sendall(b"x" * 300)
        with pytest.raises(ValueError, match="longer than the limit"):
            await stream.readlines()
        host.close()
        await stream.close()

    run(main())
