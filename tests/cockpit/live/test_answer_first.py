"""What the keys answer is drawn first: an approval (or a key's answer) in a frame of its own,
the transcript's rows after it, behind any key already waiting; a flood's rows at a pace the loop
can keep (`cockpit.live.answer_first`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from support.event_loop import run
from support.live_app import gated, make_app, pending, plain, settle, turn

from cockpit.live.answer_first import FLOOD_ITEMS, AnswerFirst
from cockpit.widgets import ApprovalBar, RunDisplay
from engine_adapter.view import APPROVALS, ITEMS, RUN, USAGE, ChangeSet


class _Transcript:
    item_count = 0


class _Display:
    """Records what `AnswerFirst` asks the run display to draw."""

    def __init__(self) -> None:
        self.transcript = _Transcript()
        self.is_mounted = True
        self.view: Any = object()
        self.drawn: list[tuple[int, set[int], bool]] = []  # parts, items, transcript_later
        self.grow = 0  # items each full draw adds to the transcript

    def apply_changes(self, view: Any, changes: ChangeSet, *,
                      transcript_later: bool = False) -> None:
        self.view = view
        self.drawn.append((changes.parts, set(changes.items), transcript_later))
        if not transcript_later:
            self.transcript.item_count += self.grow


class _Loop:
    """Frames and the app's message queue, run by hand."""

    def __init__(self) -> None:
        self.after_frame: list[Callable[[], None]] = []
        self.queue: list[tuple[Callable[..., None], tuple[Any, ...]]] = []

    def after_refresh(self, callback: Callable[[], None]) -> None:
        self.after_frame.append(callback)

    def later(self, callback: Callable[..., None], *args: Any) -> None:
        self.queue.append((callback, args))

    def frame(self) -> None:
        callbacks, self.after_frame = self.after_frame, []
        for callback in callbacks:
            callback()

    def drain(self) -> None:
        while self.queue:
            callback, args = self.queue.pop(0)
            callback(*args)


def _changes(parts: int, *items: int) -> ChangeSet:
    changes = ChangeSet()
    changes.parts = parts
    changes.items = set(items)
    return changes


def _setup() -> tuple[AnswerFirst, _Display, _Loop]:
    display, loop = _Display(), _Loop()
    return AnswerFirst(lambda: display, loop.after_refresh, loop.later), display, loop



def _read_then_ask():
    """A run that reads a file, then asks to run `ls` (approval e1) and waits."""
    return make_app(turn(1, "Looking."), plain("r1", "read_file", {"path": "a.py"}, "x\n"),
                    gated("e1", "shell", {"command": "ls"}, tier=3), end=False)


def test_an_approval_is_drawn_first_and_the_transcript_after_its_frame():
    async def main():
        first, display, loop = _setup()
        first.deliver(object(), _changes(APPROVALS | ITEMS, 4, 5))
        assert display.drawn == [(APPROVALS | ITEMS, {4, 5}, True)]
        loop.drain()
        assert len(display.drawn) == 1  # nothing before the approval's frame
        loop.frame()
        loop.drain()
        assert len(display.drawn) == 2 and display.drawn[1][2] is False  # caught up

    run(main())


def test_a_key_waiting_when_the_frame_is_drawn_goes_before_the_transcript():
    async def main():
        first, display, loop = _setup()
        first.deliver(object(), _changes(APPROVALS | ITEMS, 4))
        loop.frame()
        first.key_pressed()  # the key arrived while the approval's frame was drawn
        loop.drain()
        assert len(display.drawn) == 1  # the transcript waits for the key's frame
        first.deliver(object(), _changes(USAGE | ITEMS, 6, 7, 8))  # new rows meanwhile
        assert display.drawn[-1][2] is True
        first.key_drawn()
        loop.drain()
        assert display.drawn[-1][2] is False and len(display.drawn) == 3

    run(main())


def test_a_streaming_replys_growth_follows_the_keys_frame():
    """While a key is answered the transcript waits, a reply's growth too (one item, drawn
    with the key's frame it made that frame several times dearer once the reply was long):
    once the key's action has run, it follows `KEY_FRAME` later, after the key's frame."""
    async def main():
        first, display, loop = _setup()
        first.key_pressed()
        first.deliver(object(), _changes(ITEMS | USAGE, 3))
        assert display.drawn == [(ITEMS | USAGE, {3}, True)]  # the status line's part at once
        first.key_answered()
        loop.drain()
        assert len(display.drawn) == 1  # not before the key's frame
        for _ in range(50):
            await asyncio.sleep(0.01)
            loop.drain()
            if len(display.drawn) == 2:
                break
        assert display.drawn[-1] == (0, set(), False)  # then the rows, with nothing else
        first.deliver(object(), _changes(ITEMS, 3))  # no key: drawn at once
        assert display.drawn[-1] == (ITEMS, {3}, False)

    run(main())


def test_a_floods_rows_wait_and_what_changes_the_run_is_drawn_at_once():
    async def main():
        first, display, _loop = _setup()
        display.grow = FLOOD_ITEMS
        first.deliver(object(), _changes(ITEMS | USAGE, 1))  # a flood's worth of new rows
        assert display.drawn == [(ITEMS | USAGE, {1}, False)]
        first.deliver(object(), _changes(ITEMS | USAGE, 2))
        first.deliver(object(), _changes(USAGE))
        assert len(display.drawn) == 1  # held: the next paint comes after FLOOD_WAIT
        first.deliver(object(), _changes(RUN))  # the run ended: now, with what was held
        assert display.drawn[-1] == (RUN | ITEMS | USAGE, {2}, False)

    run(main())


def test_a_held_flood_is_drawn_when_the_stream_stops():
    async def main():
        first, display, loop = _setup()
        display.grow = FLOOD_ITEMS
        first.deliver(object(), _changes(ITEMS, 1))
        first.deliver(object(), _changes(ITEMS, 2))
        assert len(display.drawn) == 1
        for _ in range(50):
            await asyncio.sleep(0.01)
            loop.drain()
            if len(display.drawn) == 2:
                break
        assert display.drawn[-1] == (ITEMS, {2}, False)

    run(main())


def test_the_pending_approval_keeps_its_row_in_sight_once_caught_up():
    """End to end: the approval is shown, and the transcript (its row, the room for the bar)
    follows, without a clock: a test that waits for the app to be idle sees both."""
    async def main():
        app = _read_then_ask()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(pilot.app) == ["e1"])
            display = app.query_one(RunDisplay)
            transcript, bar = display.transcript, display.approval_bar
            assert not display.transcript_behind
            assert transcript.item_count == len(app.view.items)
            assert transcript.scroll_y == transcript.max_scroll_y  # following, above the bar
            assert bar.approval_id is not None and bar.estimated_height > 0
            await pilot.press("y")
            await settle(pilot, lambda: not pending(pilot.app)
                         and not display.transcript_behind)
            assert bar.approval_id is None

    run(main())


def test_the_frame_that_closes_the_bar_on_y_is_drawn_before_the_transcript_catches_up():
    """End to end, through the real screen: `y`'s frame shows the bar closing and nothing of
    the transcript's part (the room it kept below its rows, the rows that came meanwhile),
    which follows that frame. A callback asked for "after the refresh" ran before it when the
    screen had not heard of the bar's layout yet (issue 29), and the transcript came first."""
    async def main():
        app = _read_then_ask()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(pilot.app) == ["e1"])
            display = app.query_one(RunDisplay)
            frames: list[tuple[bool, bool]] = []  # (bar shown, transcript waiting) each frame
            draw = app._display

            def drawn(screen: object, renderable: object) -> None:
                draw(screen, renderable)
                if renderable is not None:
                    frames.append((display.approval_bar.display, display.transcript_behind))
            app._display = drawn  # type: ignore[method-assign]  # (frames recorded)
            await pilot.press("y")
            await settle(pilot, lambda: not pending(pilot.app)
                         and not display.transcript_behind)
            closed = [behind for shown, behind in frames if not shown]
            assert closed and closed[0], frames  # the first frame without the bar: still behind
            assert not display.transcript_behind

    run(main())


def test_what_floats_over_the_run_comes_first_among_its_siblings():
    """Shown or hidden after the widgets it floats over, the approval bar renumbered their paint
    order and Textual repainted the whole screen (~25 ms an approval, bench_ui)."""
    async def main():
        app = make_app(turn(1, "Looking."), end=False)
        async with app.run_test(size=(80, 24)):
            display = app.query_one(RunDisplay)
            assert isinstance(display.children[0], ApprovalBar)
            assert display.query_one("#run-body").children[0].id == "new-below"

    run(main())


def test_rows_left_behind_by_a_key_are_drawn_when_the_key_times_out():
    """A key that answers nothing (no frame of its own calls the catch-up): the transcript
    waits at most `KEY_WAIT`, even when nothing else is delivered after it."""
    async def main():
        first, display, loop = _setup()
        first.key_pressed()
        first.deliver(object(), _changes(ITEMS, 1, 2, 3))
        assert display.drawn == [(ITEMS, {1, 2, 3}, True)]
        for _ in range(50):
            await asyncio.sleep(0.01)
            loop.drain()
            if len(display.drawn) == 2:
                break
        assert display.drawn[-1] == (0, set(), False)
        first.deliver(object(), _changes(RUN))  # and the run's status never waits for a key
        first.key_pressed()
        first.deliver(object(), _changes(RUN | ITEMS, 2))
        assert display.drawn[-1] == (RUN | ITEMS, {2}, False)

    run(main())


def test_keys_move_over_the_rows_laid_out_while_newer_ones_wait():
    """While the transcript waits behind an answer, the view already holds rows it has not laid
    out: selecting moves over those it has (no row beyond them)."""
    async def main():
        app = _read_then_ask()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(pilot.app) == ["e1"])
            transcript = app.query_one(RunDisplay).transcript
            laid_out = transcript.item_count
            app.view.items.append(app.view.items[-1])  # a row the fold added, not laid out yet
            transcript.action_cursor_up()
            assert transcript.cursor == laid_out - 1
            transcript.select(laid_out + 5)
            assert transcript.cursor == laid_out - 1 and transcript.selected is not None
            app.view.items.pop()

    run(main())
