"""`end` before the whole journal is read: a provisional view of its last part, said to be one,
replaced by the exact view once the pass gets there (navigator and viewer)."""

from __future__ import annotations

import asyncio
import threading

from support.journals import summary, write
from support.pilot import until_shown
from support.replay_app import shown_equals_fold

from engine_adapter.events import (
    AgentEnd,
    AgentStart,
    ModelUpdate,
    ModelUsage,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    dump_event,
)
from engine_adapter.replay import FoldTail, Frame, JournalReplay, Navigator, Wait
from engine_adapter.replay.tail import CUT_TITLE, fold_tail
from engine_adapter.view import fold_events


def _run() -> list:
    """A run whose last part starts inside a stream and holds a tool's end, not its start."""
    events = [AgentStart(task="fix the bug", engine="test"), TurnStart(turn=1),
              ModelUsage(input_tokens=1_000, output_tokens=50),
              ToolStart(call_id="c1", tool="shell", tool_input={"command": "make"}),
              *(ModelUpdate(text=f"word {k} ", turn=1) for k in range(200)),
              ToolEnd(call_id="c1", tool="shell", ok=False, output="boom", error="exit 2"),
              ModelUsage(input_tokens=7, output_tokens=3),
              TurnEnd(turn=1), AgentEnd(status="failed", error="make failed")]
    return [e.model_copy(update={"seq": i, "ts": 100.0 + i, "session_id": "s"})
            for i, e in enumerate(events)]


def _part_bytes(events: list, first: int) -> int:
    """A part size that starts just before event `first`'s line (inside the line before)."""
    lines = [dump_event(e) + b"\n" for e in events]
    return sum(map(len, lines[first:])) + 5


def test_the_last_part_is_folded_alone_and_says_what_it_cuts(tmp_path) -> None:
    events = _run()
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path)
    tail = fold_tail(replay.index, _part_bytes(events, 100))  # inside the stream
    assert tail is not None and not tail.whole and tail.events == len(events) - 100
    assert tail.last_type == "agent_end"
    notice, message, tool, *_ = tail.view.items
    assert notice.kind == "notice" and "still being read" in notice.text
    assert message.kind == "message" and message.text.startswith(f"⋯ {events[100].text}")
    assert tool.kind == "tool" and tool.title == CUT_TITLE and tool.status == "failed"
    # Its totals are the part's alone (the screen hides them), its rows the part's fold.
    assert tail.view.input_tokens == 7
    exact = fold_events(events[100:])
    assert [i.kind for i in tail.view.items[1:]] == [i.kind for i in exact.items]
    whole = fold_tail(replay.index, 10 << 20)
    assert whole is not None and whole.whole
    assert summary(whole.view) == summary(fold_events(events))  # no marks on the whole file
    replay.close()


def _opened(tmp_path, tail_bytes: int | None = None) -> tuple[list, JournalReplay, Navigator]:
    """The run's journal, its first step read and the first frame shown."""
    events = _run()
    path = tmp_path / "run.jsonl"
    write(path, events)
    replay = JournalReplay(path)
    navigator = Navigator(replay, tail_bytes=_part_bytes(events, 100)
                          if tail_bytes is None else tail_bytes)
    replay.advance(max_bytes=600)
    assert navigator.grew().cursor == 0
    return events, replay, navigator


def _end(navigator: Navigator):
    """`end`, with the part folded (in the viewer: another thread) and handed back."""
    step = navigator.last()
    if not isinstance(step, FoldTail):
        return step
    return navigator.tail_arrived(navigator.fold_tail(step))


def test_end_before_the_pass_shows_the_last_part_then_the_exact_end(tmp_path) -> None:
    events, replay, navigator = _opened(tmp_path)
    frame = _end(navigator)
    assert isinstance(frame, Frame) and frame.provisional is not None and frame.cursor == -1
    assert navigator.provisional_label.startswith("⋯ reading the whole journal: ")
    assert "totals, marks and earlier rows follow" in navigator.provisional_label
    assert isinstance(navigator.step(-1), Wait)  # stepping needs the exact view
    assert navigator.play(True) is None and not navigator.playing
    assert navigator.last() is None  # (asked again: still the same provisional view)
    replay.advance(max_bytes=2_000)
    assert navigator.grew() is None and navigator.provisional is not None
    replay.read_through()
    frame = navigator.grew(complete=True)  # no key pressed: the exact end replaces it
    assert isinstance(frame, Frame) and frame.provisional is None
    assert frame.cursor == len(events) - 1 and navigator.provisional is None
    assert summary(frame.view) == summary(fold_events(events))
    replay.close()


def test_home_from_a_provisional_end_gives_the_end_up(tmp_path) -> None:
    _, replay, navigator = _opened(tmp_path)
    assert _end(navigator).provisional is not None
    frame = navigator.seek(0)
    assert frame.cursor == 0 and navigator.provisional is None and not navigator.want_end
    replay.read_through()
    assert navigator.grew(complete=True) is None and navigator.shown == 0
    replay.close()


def test_a_short_journal_or_no_tail_waits_for_the_exact_end(tmp_path) -> None:
    for tail_bytes in (0, 10 << 20):  # off, or the whole file: nothing provisional
        _, replay, navigator = _opened(tmp_path, tail_bytes)
        assert _end(navigator) is None and navigator.want_end
        replay.close()


def test_the_viewer_shows_a_provisional_end_and_then_the_exact_one(tmp_path, monkeypatch):
    """A journal whose pass is held after its first step (on an event the test sets, no
    sleep): `end` shows the last part at once, said to be provisional; once the pass goes on
    the exact end replaces it without a key."""
    from cockpit.replay import ReplayApp, ReplayScreen
    from engine_adapter.journal import index as journal_index

    events = _run()
    path = tmp_path / "run.jsonl"
    write(path, events)
    go_on = threading.Event()
    progress = ReplayScreen._progress

    def held(screen) -> None:  # the reading thread: report, then wait for the test
        progress(screen)
        go_on.wait(30)

    monkeypatch.setattr(ReplayScreen, "_progress", held)
    monkeypatch.setattr(ReplayScreen, "FIRST_SCAN", 600)
    monkeypatch.setattr(ReplayScreen, "GREW_EVERY", 0.0)
    monkeypatch.setattr(ReplayScreen, "TAIL_BYTES", _part_bytes(events, 100))
    monkeypatch.setattr(journal_index, "_CHUNK", 2_000)

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        try:
            async with app.run_test(size=(150, 36)) as pilot:
                screen = app.replay_screen
                await until_shown(pilot, lambda: app.position_shown == 0)
                await pilot.press("end")
                await until_shown(pilot, lambda: screen.navigator.provisional is not None)
                await pilot.pause()
                status = str(screen.display_widget.status_line.render())
                assert "⋯ reading the whole journal: " in status
                assert "showing its last" in status and "earlier rows follow" in status
                assert "1,007 in" not in status and "7 in" not in status  # no totals
                assert not screen.query_one("#run-side").display  # no checks nor grants
                timeline = str(screen.timeline.render())
                assert "the journal's last event" in timeline and "agent_end" in timeline
                assert not screen.complete
                await pilot.press("left")  # needs the exact view: says why it waits
                assert any("provisional" in n.message for n in app._notifications)
                go_on.set()
                await until_shown(pilot, lambda: app.position_shown == len(events) - 1)
                assert screen.navigator.provisional is None
                assert shown_equals_fold(app, events, len(events) - 1)
                await pilot.pause()
                status = str(screen.display_widget.status_line.render())
                assert "reading the whole journal" not in status and "1,007 in" in status
                assert screen.query_one("#run-side").display
        finally:
            go_on.set()

    asyncio.run(main())


def test_a_provisional_end_that_arrives_after_the_user_moved_on_is_dropped(tmp_path) -> None:
    """The part is folded in another thread: `end`, then `home` before it arrives, keeps the
    start; `end` pressed twice asks for one part."""
    _, replay, navigator = _opened(tmp_path)
    step = navigator.last()
    assert isinstance(step, FoldTail) and navigator.last() is None  # one part in flight
    tail = navigator.fold_tail(step)
    assert navigator.seek(0).cursor == 0
    assert navigator.tail_arrived(tail) is None and navigator.shown == 0
    assert navigator.provisional is None
    step = navigator.last()  # asked again: a new part
    assert isinstance(step, FoldTail)
    replay.read_through()
    assert navigator.grew(complete=True).cursor == len(replay) - 1  # the exact end came first
    assert navigator.tail_arrived(navigator.fold_tail(step)) is None
    assert navigator.provisional is None
    replay.close()
