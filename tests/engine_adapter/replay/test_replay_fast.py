"""The fast paths of replay must be invisible: folding a stream of `model_update` lines in one
step gives the same view as folding each event, and a journal in any other JSON layout replays
the same as the cockpit's own."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.journals import summary

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ModelUpdate,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
)
from engine_adapter.events import dump_event
from engine_adapter.journal import index as journal_index_module
from engine_adapter.replay import JournalReplay
from engine_adapter.replay.fold_lines import JournalText
from engine_adapter.view import MessageItem, RunFold

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
        patch.setattr(journal_index_module, "_CHUNK", block)  # ... and by chunks
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


# Ways other tools write the same JSON: key order, spaces, escapes, padding.
SEPARATORS = [(",", ":"), (", ", ": "), (",", ": "), (" ,", " :"), (",\t", ":  ")]


@st.composite
def layouts(draw):
    """A function writing an event as one JSON line, as some other writer might."""
    sort_keys = draw(st.booleans())
    separators = draw(st.sampled_from(SEPARATORS))
    ascii_only = draw(st.booleans())
    shuffle = draw(st.randoms(use_true_random=False))
    pad = draw(st.sampled_from(["", " ", "\t"]))

    def write_one(event) -> bytes:
        data = event.model_dump(mode="json")
        if not sort_keys:
            keys = list(data)
            shuffle.shuffle(keys)
            data = {k: data[k] for k in keys}
        return (pad + json.dumps(data, sort_keys=sort_keys, separators=separators,
                                 ensure_ascii=ascii_only) + pad).encode()

    return write_one


@SETTINGS
@given(events=runs(), layout=layouts(), chunk=st.sampled_from([300, 8 << 20]))
def test_any_layout_of_the_same_events_replays_the_same(tmp_path, events, layout,
                                                        chunk) -> None:
    """Written with sorted keys, spaces, other key orders or padding (as other JSONL writers
    do), the same events index and replay the same as the cockpit's own layout."""
    own, other = tmp_path / "own.jsonl", tmp_path / "other.jsonl"
    write(own, events)
    other.write_bytes(b"".join(layout(e) + b"\n" for e in events))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", chunk)
        replays = [JournalReplay(own, spacing=7), JournalReplay(other, spacing=7)]
        for replay in replays:
            assert replay.read_through()
            assert not replay.index.corrupt and not replay.index.unknown
        a, b = replays
        assert list(a.index.codes) == list(b.index.codes)
        for k in range(len(events) + 1):
            assert summary(a.state_at(k)) == summary(b.state_at(k)), k
        for replay in replays:
            replay.close()


def test_the_cockpit_s_own_journal_takes_the_one_step_path(tmp_path, monkeypatch) -> None:
    """A journal the real journal class writes is folded a stream at a time (not a line at a
    time), so the fast path is not silently lost when the event layout changes."""
    from engine_adapter import JsonlEventJournal

    events = [AgentStart(task="t", engine="test"), TurnStart(turn=1),
              *(ModelUpdate(text=f"w{k} ", turn=1) for k in range(40)), TurnEnd(turn=1),
              AgentEnd(status="completed")]
    path = tmp_path / "own.jsonl"
    journal = JsonlEventJournal(path, fsync="never")
    for i, event in enumerate(events):
        journal.write(event.model_copy(update={"seq": i, "ts": float(i), "session_id": "s"}))
    journal.close()
    one_step: list[int] = []
    real = RunFold.apply_stream

    def counted(self, first, last, count, text):
        one_step.append(count)
        return real(self, first, last, count, text)

    monkeypatch.setattr(RunFold, "apply_stream", counted)
    replay = JournalReplay(path)
    replay.read_through()
    assert one_step == [40]
    assert replay.state_at(len(replay)).items[1].text == "".join(f"w{k} " for k in range(40))
    replay.close()



def test_read_through_reports_progress_and_honours_a_stop(tmp_path) -> None:
    import threading

    events = [AgentStart(task="t", engine="test"),
              *(ModelUpdate(text=f"w{k} ", turn=1) for k in range(300)),
              AgentEnd(status="completed", result="done")]
    events = [e.model_copy(update={"seq": i, "session_id": "s"}) for i, e in enumerate(events)]
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(dump_event(e) + b"\n" for e in events))
    told: list[int] = []
    replay = JournalReplay(path)
    assert replay.read_through(first_bytes=500, progress=lambda: told.append(len(replay)))
    assert told[0] < told[-1] == len(events)  # a small first step, then the rest
    assert summary(replay.state_at(len(replay))) == summary(RunFold().apply_all(events))
    replay.close()
    stopped = threading.Event()
    stopped.set()
    replay = JournalReplay(path)
    assert not replay.read_through(stop=stopped)
    replay.close()


def test_the_inspector_finds_events_by_seq_when_positions_are_shifted(tmp_path) -> None:
    """A corrupt line shifts positions against seqs: events are still found by their seq."""
    from support.journals import fixture_events

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
@given(events=runs(), block=st.sampled_from([200, 1_000, 1 << 20]))
def test_chained_lines_fold_as_unchained_ones_do(tmp_path, events, block) -> None:
    """The writer's chain mark at each line's end changes nothing the fold shows, on the
    one-step path and off it."""
    from engine_adapter import JsonlEventJournal

    path = tmp_path / "chained.jsonl"
    path.unlink(missing_ok=True)
    with JsonlEventJournal(path, fsync="never") as journal:
        for event in events:
            journal.write(event)
    assert b',"chain":"' in path.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_READ_BLOCK", block)
        patch.setattr(journal_index_module, "_CHUNK", block)
        replay = JournalReplay(path)
        replay.advance()
        for k in range(len(events) + 1):
            assert summary(replay.state_at(k)) == summary(RunFold().apply_all(events[:k])), k
        replay.close()
