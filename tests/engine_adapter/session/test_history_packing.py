"""A long run's history is packed: lines older than the decoded window are kept compressed,
CHUNK at a time, and every reader still gets every item, in order, whatever its pace."""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from support.event_loop import run

from engine_adapter import ModelUpdate, Session, TaskState
from engine_adapter.session.history import CHUNK, EventLog


def _lines(n: int) -> list[bytes]:
    return [json.dumps({"type": "model_update", "seq": i, "text": f"delta {i % 7}"}).encode()
            for i in range(n)]


def test_old_lines_are_packed_and_read_back_exactly() -> None:
    lines = _lines(3 * CHUNK + 40)
    log: EventLog[bytes] = EventLog(lambda line: line, window=16, pack=True)
    for line in lines:
        log.append(line)
    assert log._packed == 3 * CHUNK  # what is behind the window, a whole block at a time
    assert list(log) == lines
    assert [log[i] for i in (0, CHUNK - 1, CHUNK, 2 * CHUNK + 5, -1)] == \
        [lines[0], lines[CHUNK - 1], lines[CHUNK], lines[2 * CHUNK + 5], lines[-1]]
    assert list(log[CHUNK - 2:CHUNK + 2]) == lines[CHUNK - 2:CHUNK + 2]


def test_packing_keeps_a_fraction_of_the_lines() -> None:
    lines = _lines(8 * CHUNK)
    log: EventLog[bytes] = EventLog(lambda line: line, window=16, pack=True)
    for line in lines:
        log.append(line)
    blocks = {id(item): item for item in log._items if isinstance(item, bytearray)}
    kept = sum(sys.getsizeof(block) for block in blocks.values())
    raw = sum(sys.getsizeof(line) for line in lines[:log._packed])
    assert kept * 4 < raw


def test_a_log_of_other_items_is_never_packed() -> None:
    log: EventLog[object] = EventLog(lambda item: item, window=4, pack=True)
    items = [{"n": i} for i in range(CHUNK + 10)]
    for item in items:
        log.append(item)
    assert log._packed == 0 and list(log) == items


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30),
       st.integers(min_value=CHUNK, max_value=3 * CHUNK), st.integers(min_value=1, max_value=64))
def test_any_lines_read_back_as_appended(palette: list[bytes], n: int, window: int) -> None:
    """Lines of any bytes (newlines, NULs, empty), any count, any window."""
    lines = [palette[(i * 7) % len(palette)] for i in range(n)]
    log: EventLog[bytes] = EventLog(lambda line: line, window=window, pack=True)
    for line in lines:
        log.append(line)
    assert list(log) == lines


def test_a_reader_from_the_start_gets_every_event_of_a_long_session() -> None:
    """A real Session: a reader that only starts after the run (as a client attaching late
    does) reads every event from the packed history, in order."""
    n = 7 * CHUNK  # past the decoded window (4096) by more than a block

    class Streamer:
        event_sink = approval_controller = cancel_token = None

        async def run(self, state: TaskState) -> TaskState:
            for i in range(n):
                self.event_sink.emit(ModelUpdate(text=f"d{i}"))
            state.status = "completed"
            return state

    session = Session(Streamer(), TaskState(task="t"))

    async def main() -> list[str]:
        await session.run()
        # A reader that starts now, from the first event, as a client attaching late does.
        return [e.text async for e in session._log.cursor(0) if e.type == "model_update"]

    texts = run(main())
    assert texts == [f"d{i}" for i in range(n)]
    assert session._log._packed > 0
    seqs = [e.seq for e in session.history]
    assert seqs == list(range(len(seqs)))


def test_a_shed_log_keeps_nothing_decoded_and_reads_the_same() -> None:

    def decode(line: bytes) -> bytes:
        return bytes(bytearray(line))  # (a new object: what was decoded again shows)

    lines = _lines(3 * CHUNK + 40)
    log: EventLog[bytes] = EventLog(decode, window=CHUNK, pack=True)
    for line in lines:
        log.append(line, decoded=line)  # the writer's own objects: the window keeps them
    assert log[-1] is lines[-1] and log._packed == 2 * CHUNK
    log.shed()
    assert log._packed == 3 * CHUNK  # every whole block packed, the window's too
    assert all(slot is None for slot in log._recent)
    assert log[-1] is not lines[-1]  # decoded again, from the stored form
    assert list(log) == lines  # and every item reads back as it was
    log.append(b"after")  # an event recorded after the end (a rewind) still appends
    assert log[-1] == b"after" and len(log) == len(lines) + 1


def test_a_session_sheds_its_decoded_events_only_once_it_has_ended() -> None:
    class Streamer:
        event_sink = approval_controller = cancel_token = None

        async def run(self, state: TaskState) -> TaskState:
            for i in range(2 * CHUNK):
                self.event_sink.emit(ModelUpdate(text=f"d{i}"))
            session.shed()  # (while it runs: nothing is let go)
            assert any(slot is not None for slot in session._log._recent)
            state.status = "completed"
            return state

    session = Session(Streamer(), TaskState(task="t"))
    run(session.run())
    before = [e.model_dump() for e in session.history]
    session.shed()
    assert all(slot is None for slot in session._log._recent)
    assert [e.model_dump() for e in session.history] == before
