"""The fast paths of replay must be invisible: indexing a chunk at C speed gives the same index
as line by line, and folding a stream of `model_update` lines in one step gives the same view as
folding each event."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_journal_index import summary

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ModelUpdate,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
)
from engine_adapter import journal_index as journal_index_module
from engine_adapter.events import dump_event
from engine_adapter.fold import MessageItem, RunFold
from engine_adapter.journal_index import STREAM, JournalIndex
from engine_adapter.replay import JournalReplay, JournalText

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text that stresses the byte checks: quotes, backslashes, the channel and turn markers
# themselves, newlines, control characters, non-ASCII.
texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(['","channel":"message"}', ',"turn":1,"text":"', '\\', '"', "\n", "é—✓",
                     "\x1b[31m", '\\"', "\\n"]),
)


@st.composite
def runs(draw) -> list:
    """A journal of one task: streams on two channels over a few turns, broken now and then by
    a tool call, a turn boundary, a seq gap, or a null turn."""
    events: list = [AgentStart(task="t", engine="test")]
    turn = 1
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["stream", "stream", "stream", "tool", "turn", "gap"]))
        if kind == "stream":
            channel = draw(st.sampled_from(["message", "thought"]))
            stream_turn = draw(st.sampled_from([turn, turn, None]))
            for text in draw(st.lists(texts, min_size=1, max_size=14)):
                events.append(ModelUpdate(text=text, turn=stream_turn, channel=channel))
        elif kind == "tool":
            call = f"c{len(events)}"
            events += [ToolStart(call_id=call, tool="shell", tool_input={"command": "ls"}),
                       ToolEnd(call_id=call, tool="shell", ok=True, output="out")]
        elif kind == "turn":
            events += [TurnEnd(turn=turn), TurnStart(turn=turn + 1)]
            turn += 1
        else:
            events.append(None)  # a gap in seq numbers here
    events.append(AgentEnd(status="completed", result="done"))
    stamped, seq = [], 0
    for event in events:
        if event is None:
            seq += 3
            continue
        stamped.append(event.model_copy(update={"seq": seq, "ts": 100.0 + seq,
                                                "session_id": "s"}))
        seq += 1
    return stamped


def write(path, events) -> None:
    path.write_bytes(b"".join(dump_event(e) + b"\n" for e in events))


@SETTINGS
@given(events=runs(), seeks=st.lists(st.integers(min_value=0, max_value=400), min_size=1,
                                     max_size=6),
       block=st.sampled_from([200, 1_000, 1 << 20]), spacing=st.sampled_from([1, 5, 1_000]))
def test_streams_folded_in_one_step_equal_folding_each_event(tmp_path, events, seeks, block,
                                                             spacing) -> None:
    path = tmp_path / "run.jsonl"
    write(path, events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_READ_BLOCK", block)  # streams cut by blocks
        replay = JournalReplay(path, spacing=spacing)
        replay.advance()
        for k in [len(events), *(seek % (len(events) + 1) for seek in seeks)]:
            view = replay.state_at(k)
            assert summary(view) == summary(RunFold().apply_all(events[:k])), k
        replay.close()


def test_a_long_stream_is_one_item_whose_text_stays_in_the_journal(tmp_path) -> None:
    events = [AgentStart(task="t", engine="test"), TurnStart(turn=1),
              *(ModelUpdate(text=f"word {k} ", turn=1) for k in range(50)), TurnEnd(turn=1)]
    events = [e.model_copy(update={"seq": i, "ts": float(i), "session_id": "s"})
              for i, e in enumerate(events)]
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path)
    replay.advance()
    view = replay.state_at(len(events))
    message = view.items[-1]
    assert isinstance(message, MessageItem)
    assert [type(p) for p in message.parts] == [JournalText]  # not read yet
    assert message.seqs == range(2, 52)
    chars, _ = message.size_hint()
    assert abs(chars - len("".join(f"word {k} " for k in range(50)))) <= 50
    assert message.text == "".join(f"word {k} " for k in range(50))
    replay.close()


lines = st.one_of(
    st.sampled_from([b"", b"   ", b"\r", b"not json", b'{"type":"from_the_future","seq":1}',
                     b'{"type":"tool_end"', b"\xff\xfe", b'{"a":1}']),
    st.builds(lambda e: dump_event(e), st.sampled_from([
        AgentStart(task="t", engine="x"), ModelUpdate(text="hi"),
        ToolEnd(call_id="c", tool="shell", ok=False, output='"ok":true'),
        ToolEnd(call_id="c", tool="shell", ok=True, output='"ok":false'),
        AgentEnd(status="failed", error="boom")])),
)


@SETTINGS
@given(body=st.lists(lines, max_size=30), chunk=st.sampled_from([64, 256, 8 << 20]),
       crlf=st.booleans())
def test_fast_scan_equals_line_by_line_scan(tmp_path, body, chunk, crlf) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(line + (b"\r\n" if crlf else b"\n") for line in body))

    def scanned(fast: bool) -> tuple:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(journal_index_module, "_CHUNK", chunk)
            if not fast:
                patch.setattr(JournalIndex, "_index_clean", lambda *_: False)
            with JournalIndex(path) as index:
                index.scan()
                return _index_state(index)

    assert scanned(fast=True) == scanned(fast=False)


def _index_state(index: JournalIndex) -> tuple:
    return (list(index.offsets), [c & ~STREAM for c in index.codes], index.lines, index.end,
            dict(index.corrupt), index.unknown, [index.line_number(p) for p in range(len(index))])


def _helper_journal(path, *, corrupt: bool) -> None:
    """A few hundred lines, with blank lines and (optionally) a corrupt one in the middle."""
    events = [AgentStart(task="t", engine="test"),
              *(ModelUpdate(text=f"w{k} ", turn=1) for k in range(300)),
              ToolEnd(call_id="c", tool="shell", ok=False, output="x"),
              AgentEnd(status="completed", result="done")]
    lines = [dump_event(e.model_copy(update={"seq": i, "session_id": "s"}))
             for i, e in enumerate(events)]
    if corrupt:
        lines[150:150] = [b"", b"{not json", b""]
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("corrupt", [False, True])
def test_a_helper_process_indexes_the_same_as_this_process(tmp_path, corrupt) -> None:
    """The helper indexes clean chunks and stops at the first that is not (a corrupt line):
    this process does the rest, and the index is the one a plain scan builds."""
    path = tmp_path / "big.jsonl"
    _helper_journal(path, corrupt=corrupt)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", 2_000)  # many frames
        progress: list[int] = []
        with JournalIndex(path) as helped:
            helped.scan_with_helper(min_bytes=0,
                                    progress=lambda: progress.append(len(helped)))
            fast = _index_state(helped)
        with JournalIndex(path) as plain:
            plain.scan()
            assert fast == _index_state(plain)
    assert len(progress) >= 2  # frames landed one by one
    assert progress[-1] < len(plain) if corrupt else progress[-1] == len(plain)


def test_without_a_helper_process_this_process_indexes_it_all(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    _helper_journal(path, corrupt=False)

    def no_processes(*_args, **_kwargs):
        raise OSError("no fork here")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module.subprocess, "Popen", no_processes)
        with JournalIndex(path) as index:
            assert index.scan_with_helper(min_bytes=0) == 303


def test_a_stopped_helper_leaves_a_consistent_index(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    _helper_journal(path, corrupt=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", 2_000)
        with JournalIndex(path) as index:
            index.scan_with_helper(min_bytes=0, progress=index.stop_helper)
            assert 0 < len(index) < 303  # stopped after the first frame, not finished here
            index.scan()  # a plain scan goes on from where it stopped
            with JournalIndex(path) as plain:
                plain.scan()
                assert _index_state(index) == _index_state(plain)


def test_the_inspector_finds_events_by_seq_when_positions_are_shifted(tmp_path) -> None:
    """A corrupt line shifts positions against seqs: events are still found by their seq."""
    from test_journal_index import fixture_events

    events = fixture_events()
    lines = [dump_event(e) for e in events]
    lines[5:5] = [b"{torn", b"not an event either"]
    path = tmp_path / "shifted.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    replay = JournalReplay(path)
    replay.index.scan()
    assert all(replay.event_with_seq(e.seq) == e for e in events)
    assert replay.event_with_seq(len(events) + 5) is None
    assert replay.event_with_seq(events[-1].seq, before=10) is None  # not among the first 10
    replay.close()


@SETTINGS
@given(events=runs(), chunk=st.sampled_from([300, 2_000, 8 << 20]))
def test_the_stream_hint_is_set_only_where_a_line_continues_the_channel_before(
        tmp_path, events, chunk) -> None:
    path = tmp_path / "run.jsonl"
    write(path, events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", chunk)
        with JournalIndex(path) as index:
            index.scan()
            flagged = [i for i, code in enumerate(index.codes) if code & STREAM]
    for i in flagged:
        before, this = events[i - 1], events[i]
        assert i > 0 and before.type == this.type == "model_update"
        assert before.channel == this.channel  # (replay checks the turn itself)


def test_read_through_indexes_and_folds_side_by_side(tmp_path) -> None:
    """What the viewer, `cockpit export` and the benchmark run: the same view as a plain pass,
    an error from the indexing thread raised to the caller, and a stop honoured."""
    import threading

    path = tmp_path / "big.jsonl"
    _helper_journal(path, corrupt=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", 2_000)
        told: list[str] = []
        replay = JournalReplay(path)
        assert replay.read_through(helper_min_bytes=0, batch=50,
                                   progress=lambda: told.append("folded"),
                                   indexed=lambda: told.append("indexed"))
        plain = JournalReplay(path)
        plain.advance()
        assert summary(replay.state_at(len(replay))) == summary(plain.state_at(len(plain)))
        assert "indexed" in told and told.count("folded") >= 2
        plain.close()
        replay.close()

        def broken(*_args, **_kwargs):
            raise OSError("the disk went away")

        failing = JournalReplay(path)
        patch.setattr(failing.index, "scan_with_helper", broken)
        with pytest.raises(OSError, match="went away"):
            failing.read_through()
        failing.close()

    stopped = threading.Event()
    stopped.set()
    replay = JournalReplay(path)
    assert not replay.read_through(stop=stopped)
    replay.close()
