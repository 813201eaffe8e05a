"""The replay navigator, without a screen: whatever the user and the reading thread do, and in
whatever order, each frame shows the fold of the events up to its cursor, and a frame that says
what changed names everything that did. The one exception is marked: a provisional frame of the
journal's last part (`end` before the pass got there), which is the fold of that part alone,
with the rows it cuts said so, until the exact one replaces it."""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from support.journal_strategies import (
    SETTINGS,
    journals,
    parsed_events,
    prefix_summaries,
    stored_views,
)
from support.journals import fixture_events, summary, write

from engine_adapter.journal import TYPE_CODES
from engine_adapter.journal import index as journal_index_module
from engine_adapter.replay import FoldTail, Frame, JournalReplay, Navigator, Seek, Wait, code_class
from engine_adapter.replay.tail import CUT_TITLE, Tail
from engine_adapter.view import APPROVALS, GRANTS, RUN, USAGE, VERIFICATION, fold_events

PATTERNS = [None, code_class({TYPE_CODES["tool_start"]}),
            code_class({TYPE_CODES["approval_requested"], TYPE_CODES["model_update"]})]
# What the status line, the panels and the approval bar show, and the flag that redraws each.
PANELS = {
    RUN | USAGE: lambda v: (v.task, v.engine, v.model, v.status, v.phase, v.turn, v.result,
                            v.error, v.input_tokens, v.output_tokens, v.cost_usd, v.model_calls),
    VERIFICATION: lambda v: tuple(v.checks.items()),
    GRANTS: lambda v: tuple(v.grants),
    APPROVALS: lambda v: tuple(v.pending_rows.items()),
}

operations = st.lists(st.one_of(
    st.tuples(st.just("grow"), st.integers(1, 3_000)),
    st.tuples(st.just("seek"), st.integers(0, 10_000)),
    st.tuples(st.just("checkpoint"), st.integers(0, 10)),
    st.tuples(st.just("step"), st.sampled_from([-1, 1]), st.integers(0, len(PATTERNS) - 1)),
    st.tuples(st.just("last")),
    st.tuples(st.just("play"), st.booleans()),
    st.tuples(st.just("tick"), st.integers(0, len(PATTERNS) - 1)),
    st.tuples(st.just("arrive"), st.integers(0, 10)),
), min_size=3, max_size=40)


class Screen:
    """What a screen holds after drawing frames: each row and each panel as last drawn."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.panels: dict[int, object] = {}

    def draw(self, frame: Frame) -> None:
        view = frame.view
        if frame.changes is None:
            self.rows = [_row(item) for item in view.items]
            self.panels = {flag: show(view) for flag, show in PANELS.items()}
            return
        for index in frame.changes.items:
            if index < len(self.rows):  # (new rows are drawn below)
                self.rows[index] = _row(view.items[index])
        for index, row in enumerate(self.rows):  # a message closed by a later event: the
            if dict(row).get("complete") is False:  # transcript redraws it unasked
                self.rows[index] = _row(view.items[index])
        self.rows[len(self.rows):] = [_row(item) for item in view.items[len(self.rows):]]
        for flag, show in PANELS.items():
            if frame.changes.parts & flag:
                self.panels[flag] = show(view)


def _row(item) -> tuple:
    return summary_of_item(item)


def summary_of_item(item) -> tuple:
    slots = {}
    for cls in type(item).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("parts", "_text"):
                value = getattr(item, name, None)
                slots[name] = list(value) if name == "seqs" else value
    if item.kind == "message":
        slots["text"] = item.text
    return tuple(sorted(slots.items()))


@SETTINGS
@given(lines=journals(), start=st.integers(0, 3_000), ops=operations, spacing=st.integers(1, 9),
       chunk=st.sampled_from([60, 500, 8 << 20]), follow=st.booleans(),
       sync=st.sampled_from([0, 3, 5_000]), tail=st.sampled_from([0, 120, 1_500, 8 << 20]))
def test_any_sequence_of_operations_shows_the_fold_of_the_prefix(
        tmp_path, lines, start, ops, spacing, chunk, follow, sync, tail) -> None:
    data = b"".join(line + b"\n" for line in lines)
    path = tmp_path / "nav.jsonl"
    path.write_bytes(b"")
    expected = prefix_summaries(parsed_events(lines))
    written = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_index_module, "_CHUNK", chunk)
        patch.setattr("engine_adapter.replay.navigator.SYNC_FOLD", sync)  # 0: every seek is a Seek
        patch.setattr("engine_adapter.replay.navigator.SYNC_ITEMS", sync)
        replay = JournalReplay(path, spacing=spacing, max_checkpoints=4)
        navigator = Navigator(replay, follow=follow, tail_bytes=tail)
        screen = Screen()
        pending: list[tuple[Seek | FoldTail, object]] = []

        def show(step) -> None:
            if isinstance(step, Seek):  # folded now, handed over later (or never)
                pending.append((step, navigator.fold(step)))
            elif isinstance(step, FoldTail):  # the same for a provisional end
                assert navigator.want_end and navigator.tail_asked and not navigator.complete
                pending.append((step, navigator.fold_tail(step)))
            elif isinstance(step, Wait):  # only a provisional view makes a key wait
                assert navigator.provisional is not None and step.reason
            elif isinstance(step, Frame) and step.provisional is not None:
                assert step.cursor == navigator.shown == -1 and step.changes is None
                assert navigator.provisional is step.provisional and not navigator.complete
                assert navigator.provisional_label.startswith("⋯ reading the whole journal")
                # (folded when asked: the file may have grown since)
                assert_the_fold_of_the_part(data[:step.provisional.end], step.provisional)
                screen.draw(step)
                event("a provisional frame")
            elif isinstance(step, Frame):
                assert navigator.provisional is None
                assert step.cursor == navigator.shown
                assert summary(step.view) == expected[step.cursor + 1], step.cursor
                screen.draw(step)
                assert screen.rows == [_row(item) for item in step.view.items]
                assert screen.panels == {flag: s(step.view) for flag, s in PANELS.items()}

        for op in [("grow", start), *ops]:
            if op[0] == "grow":
                written = min(len(data), written + op[1])
                path.write_bytes(data[:written])
                replay.advance()
                show(navigator.grew(complete=written == len(data)))
            elif op[0] == "seek":  # mostly inside what is known, now and then past it
                show(navigator.seek(op[1] % (navigator.total + 2) if op[1] % 5 else op[1]))
            elif op[0] == "checkpoint":  # onto a stored view, shown as it is
                show(navigator.seek(replay.checkpoints[op[1] % len(replay.checkpoints)] - 1))
            elif op[0] == "step":
                show(navigator.step(op[1], PATTERNS[op[2]]))
            elif op[0] == "last":
                show(navigator.last())
            elif op[0] == "play":
                navigator.play(op[1])
            elif op[0] == "tick":
                show(navigator.play_tick(PATTERNS[op[1]])[0])
            elif pending:
                asked, result = pending.pop(op[1] % len(pending))
                if isinstance(asked, FoldTail):
                    frame = navigator.tail_arrived(result)
                    assert frame is None or navigator.want_end
                else:
                    frame = navigator.arrived(asked, result)
                    assert frame is None or navigator.cursor + 1 == asked.target
                show(frame)
            for position, view in zip(replay.checkpoints, stored_views(replay), strict=True):
                assert summary(view) == expected[position]  # nothing folded into a checkpoint
            # The timeline's span: at least what is known, exactly it once all is read.
            assert navigator.span >= navigator.total
            assert navigator.span == navigator.total or not navigator.complete
        # The pass reaches the end: a provisional view gives way to the exact one, unasked.
        provisional = navigator.provisional is not None
        path.write_bytes(data)
        replay.read_through()
        step = navigator.grew(complete=True)
        if isinstance(step, Seek):
            step = navigator.arrived(step, navigator.fold(step))
        if provisional:
            assert isinstance(step, Frame) and step.provisional is None
            assert step.cursor == navigator.total - 1
            event("the exact end replaced a provisional frame")
        show(step)
        assert navigator.provisional is None
        for asked, result in pending:  # a provisional end folded too late is dropped
            if isinstance(asked, FoldTail):
                assert navigator.tail_arrived(result) is None
        replay.close()


def assert_the_fold_of_the_part(written: bytes, part: Tail) -> None:
    """A provisional view is the fold of whole lines at the file's end, from a line start,
    after a notice saying earlier rows follow; a row the part cuts says so, the others are as
    the fold of the part alone makes them."""
    assert 0 < part.begin < part.end == written.rfind(b"\n") + 1
    assert written[part.begin - 1:part.begin] == b"\n"
    events = [e for e in parsed_events(written[part.begin:part.end].split(b"\n")[:-1]) if e]
    want = fold_events(events)
    view = part.view
    notice, *rows = view.items
    assert notice.kind == "notice" and "still being read" in notice.text
    assert len(rows) == len(want.items)
    assert PANELS[RUN | USAGE](view) == PANELS[RUN | USAGE](want)  # (the screen hides these)
    for i, (got, wanted) in enumerate(zip(rows, want.items, strict=True)):
        got_summary, wanted_summary = dict(summary_of_item(got)), dict(summary_of_item(wanted))
        assert got_summary.pop("index") == wanted_summary.pop("index") + 1  # (the notice)
        if got.kind == "tool" and got.title == CUT_TITLE:  # its start lies before the part
            assert any(e.seq == wanted.seqs[0] and e.type == "tool_end" for e in events)
            got_summary.pop("title"), wanted_summary.pop("title")
        if got.kind == "message" and got.text != wanted.text:  # cut by the part's start
            assert i == 0 and got.text == "⋯ " + wanted.text
            got_summary.pop("text"), wanted_summary.pop("text")
        assert got_summary == wanted_summary


def test_end_before_the_end_is_known_lands_there_once_it_is(tmp_path) -> None:
    events = fixture_events(turns=8)
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path)
    navigator = Navigator(replay)
    replay.advance(max_bytes=400)
    first = navigator.grew()
    assert isinstance(first, Frame) and first.cursor == 0
    assert navigator.last() is None and navigator.want_end  # not known yet
    replay.read_through()
    frame = navigator.grew(complete=True)
    assert isinstance(frame, Frame) and frame.cursor == len(events) - 1
    assert not navigator.want_end
    replay.close()


def test_a_followed_journal_keeps_showing_what_lands_unless_the_user_moved_away(
        tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "live.jsonl"
    write(path, events[:6])
    replay = JournalReplay(path)
    navigator = Navigator(replay, follow=True)
    replay.read_through(settle=False)
    assert navigator.grew(complete=True).cursor == 5  # opens at its end
    write(path, events[:9])
    replay.advance()
    assert navigator.grew().cursor == 8  # at the end: follows
    navigator.seek(2)
    write(path, events)
    replay.advance()
    assert navigator.grew() is None and navigator.shown == 2  # moved away: stays
    replay.close()


def test_a_stale_seek_is_dropped(tmp_path) -> None:
    events = fixture_events(turns=6)
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path, spacing=1_000)
    replay.read_through()
    navigator = Navigator(replay)
    navigator.grew(complete=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("engine_adapter.replay.navigator.SYNC_FOLD", 0)
        seek = navigator.seek(20)
        assert isinstance(seek, Seek)
        view = navigator.fold(seek)
        navigator.seek(0)  # the user moved on while it folded
        assert navigator.arrived(seek, view) is None
        assert navigator.shown == 0
    replay.close()


def test_play_paces_by_timestamps_and_stops_at_the_end(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path)
    replay.read_through()
    navigator = Navigator(replay)
    navigator.grew(complete=True)
    assert navigator.play(True) == 1.0  # the events are a second apart (IDLE_CAP)
    navigator.speed = 4.0
    shown = []
    while navigator.playing:
        frame, delay = navigator.play_tick()
        shown.append(frame.cursor)
        assert delay is None or delay == 0.25
    assert shown == list(range(1, len(events)))
    replay.close()


def test_a_checkpoint_shown_as_is_is_copied_before_stepping_on(tmp_path, monkeypatch) -> None:
    events = fixture_events(turns=6)
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path, spacing=5, max_checkpoints=4)
    replay.read_through()
    navigator = Navigator(replay)
    navigator.grew(complete=True)
    monkeypatch.setattr("engine_adapter.replay.navigator.SYNC_FOLD", 3)
    position = replay.checkpoints[1]
    frame = navigator.seek(position - 1)  # the view after `position` events: a checkpoint
    assert isinstance(frame, Frame) and replay.is_stored(frame.view)
    stored = summary(frame.view)
    frame = navigator.step(1)
    assert summary(frame.view) == summary(fold_events(events[:position + 1]))
    assert summary(replay.nearest(position)[1]) == stored
    replay.close()
