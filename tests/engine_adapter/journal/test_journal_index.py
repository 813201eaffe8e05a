"""The journal index and replay seeking: offsets, codes, bad input, follow mode, checkpoints."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.journals import fixture_events, summary, write

from engine_adapter import (
    JournalError,
)
from engine_adapter.events import dump_event
from engine_adapter.journal.index import JournalIndex
from engine_adapter.journal.line_kinds import BAD_OUTCOME, CORRUPT, TYPE_CODES, UNKNOWN
from engine_adapter.replay import JournalReplay
from engine_adapter.view import RunFold, RunView


def test_index_offsets_and_codes(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events)
    with JournalIndex(path) as index:
        assert index.scan() == len(events)
        assert len(index) == len(events)
        for i, event in enumerate(events):
            assert index.event(i) == event
            assert index.codes[i] & 0x3F == TYPE_CODES[event.type]
        bad = [i for i, c in enumerate(index.codes) if c & BAD_OUTCOME]
        kinds = [(events[i].type) for i in bad]
        assert kinds == ["tool_end", "approval_resolved"]  # turn 3's tool, turn 4's denial
        assert index.line_number(5) == 6


def test_scan_is_incremental_and_waits_for_a_whole_line(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events[:3])
    with JournalIndex(path) as index:
        assert index.scan() == 3
        half = dump_event(events[3])
        with open(path, "ab") as f:
            f.write(half[:10])
        assert index.scan() == 0 and index.pending == 10
        with open(path, "ab") as f:
            f.write(half[10:] + b"\n")
        assert index.scan() == 1
        assert index.event(3) == events[3]


def test_bad_input_missing_path_and_directory(tmp_path) -> None:
    with pytest.raises(JournalError, match="no journal at"):
        JournalIndex(tmp_path / "nope.jsonl")
    with pytest.raises(JournalError, match="is a directory"):
        JournalIndex(tmp_path)


def test_bad_input_empty_file(tmp_path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with JournalIndex(path) as index:
        assert index.scan() == 0 and not index.settle() and len(index) == 0


def test_bad_input_binary_garbage(tmp_path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(bytes(range(256)) * 20 + b"\n\xff\xfe\x00{\n")
    with JournalIndex(path) as index:
        index.scan()
        assert len(index) >= 1
        assert all(code == CORRUPT for code in index.codes)


def test_bad_input_torn_last_line(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events, extra=dump_event(events[0])[:25])
    replay = JournalReplay(path)
    replay.advance()
    assert not replay.index.settle()
    assert replay.index.torn_tail
    assert len(replay) == len(events)
    assert summary(replay.state_at(len(replay))) == summary(RunFold().apply_all(events))


def test_a_complete_last_event_without_newline_is_kept(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events[:-2], extra=dump_event(events[-2]))
    with JournalIndex(path) as index:
        index.scan()
        assert index.settle() and len(index) == len(events) - 1 and not index.torn_tail
        with open(path, "ab") as f:  # the writer finishes the line and goes on
            f.write(b"\n" + dump_event(events[-1]) + b"\n")
        assert index.scan() == 1
        assert index.event(len(events) - 1) == events[-1]
        assert index.line_number(len(events) - 1) == len(events)


def test_bad_input_corrupt_middle_line_is_a_marked_gap(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    lines = [dump_event(e) for e in events]
    lines.insert(5, b'{"type":"tool_end","oops": tru')  # looks like an event, is not
    lines.insert(9, b"\x00\x01 not json at all")
    path.write_bytes(b"\n".join(lines) + b"\n")
    replay = JournalReplay(path)
    replay.advance()
    index = replay.index
    assert index.codes[9] == CORRUPT  # found by its bytes
    assert index.codes[5] == CORRUPT  # found when parsed by the fold pass
    assert sorted(index.corrupt.values()) == [6, 10]  # 1-based line numbers
    assert summary(replay.state_at(len(replay))) == summary(RunFold().apply_all(events))


def test_bad_input_newer_event_types_are_unknown_not_fatal(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    lines = [dump_event(e) for e in events]
    lines.insert(3, b'{"type":"hologram_projected","session_id":"s","seq":99,"ts":1.5,"x":1}')
    path.write_bytes(b"\n".join(lines) + b"\n")
    replay = JournalReplay(path)
    replay.advance()
    assert replay.index.codes[3] == UNKNOWN and replay.index.unknown == 1
    unknown = replay.index.event(3)
    assert unknown is not None and unknown.type == "hologram_projected"
    view = replay.state_at(len(replay))
    assert view.events == len(events) + 1  # counted, folded as "changes nothing"
    assert [i.kind for i in view.items] == [i.kind for i in RunFold().apply_all(events).items]


def test_blank_lines_are_not_positions_but_line_numbers_count_them(tmp_path) -> None:
    events = fixture_events()[:4]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join([dump_event(events[0]), b"", b"",
                                 *[dump_event(e) for e in events[1:]]]) + b"\n")
    with JournalIndex(path) as index:
        index.scan()
        assert len(index) == 4
        assert [index.line_number(i) for i in range(4)] == [1, 4, 5, 6]


def test_search_finds_lines_and_counts_each_once(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events)
    with JournalIndex(path) as index:
        index.scan()
        hits = index.search("THINKING 2")
        assert [events[i].text for i in hits] == ["thinking 2.0 ", "thinking 2.1 ",
                                                  "thinking 2.2 "]
        assert index.search("no such words") == []
        assert index.search("out 3") == [i for i, e in enumerate(events)
                                         if getattr(e, "output", "") == "out 3"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seeks=st.lists(st.integers(min_value=0, max_value=200), min_size=1, max_size=12),
       spacing=st.sampled_from([1, 3, 7, 50]), fold_first=st.booleans(),
       share=st.booleans())
def test_state_at_k_equals_folding_the_first_k_events(tmp_path, seeks, spacing,
                                                      fold_first, share) -> None:
    """Whatever sequence of seeks (and whether the checkpoint pass ran, and whether views are
    shared with the checkpoints as the viewer does), the view at k is the view of folding the
    first k events directly, and no seek changes a stored checkpoint."""
    events = fixture_events(turns=6)
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path, spacing=spacing, max_checkpoints=4)
    replay.index.scan()
    if fold_first:
        replay.advance()
    current: tuple[int, RunView] | None = None
    n = len(events)
    for seek in seeks:
        k = seek % (n + 1)
        view = replay.state_at(k, start=current, share=share)
        assert summary(view) == summary(RunFold().apply_all(events[:k])), k
        # The viewer folds forward into what it shows: never into a stored checkpoint.
        current = (k, view.copy() if replay.is_stored(view) else view)
    for position in replay.checkpoints:
        stored = replay.nearest(position)[1]
        assert summary(stored) == summary(RunFold().apply_all(events[:position])), position
    replay.close()


def test_checkpoints_stay_few_and_seeks_stay_short(tmp_path) -> None:
    events = fixture_events(turns=60)
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path, spacing=5, max_checkpoints=4)
    replay.advance(max_bytes=(len(events) * 60) // 3)
    replay.advance()
    assert len(replay.checkpoints) <= 4 + 1  # the spaced ones and the tail
    position, _ = replay.nearest(len(events))
    assert position == len(events)  # the tail: jumping to the end folds nothing


def test_follow_mode_sees_a_writer_in_another_task(tmp_path) -> None:
    """A writer appends with the real journal class in one task; the follower, in another,
    sees each event land (waiting on the follower's own progress, not on a clock)."""
    from engine_adapter import JsonlEventJournal

    events = fixture_events()
    path = tmp_path / "live.jsonl"
    journal = JsonlEventJournal(path, fsync="never")
    replay = JournalReplay(path)
    seen: list[int] = []

    async def writer(wrote: asyncio.Queue) -> None:
        for event in events:
            journal.write(event)
            await wrote.put(event.seq)
            await asyncio.sleep(0)
        journal.close()
        await wrote.put(None)

    async def follower(wrote: asyncio.Queue) -> None:
        while (seq := await wrote.get()) is not None:
            replay.advance()
            seen.append(len(replay))
            assert replay.state_at(len(replay)).events == seq + 1

    async def main() -> None:
        wrote: asyncio.Queue = asyncio.Queue()
        await asyncio.gather(writer(wrote), follower(wrote))

    asyncio.run(main())
    assert seen == list(range(1, len(events) + 1))
    assert summary(replay.state_at(len(replay))) == summary(RunFold().apply_all(events))


def test_a_line_longer_than_a_read_block_inside_a_run_of_streamed_text(tmp_path) -> None:
    """Lines inside a run of streamed text are found by counting newlines from the run's first
    line; one longer than the block read to count them is passed whole (it once looped)."""
    lines = [b'{"type":"model_update","session_id":"s","seq":%d,"ts":1.0,"turn":1,"text":"%s",'
             b'"channel":"message"}' % (i, b"y" * (1_200_000 if i == 2 else 10)) for i in range(6)]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with JournalIndex(path) as index:
        index.scan()
        assert [index.raw(i) for i in range(len(index))] == lines
