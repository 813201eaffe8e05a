"""The transcript repaints only what changed, and never shows a stale row (issue 29).

Each row is kept as last drawn and reused while nothing it is drawn from changed (the item, the
width, the view's column, the style, the selection, a search's term); a focus move neither
restyles nor repaints the transcript (it looks the same either way); a layout pass that leaves
the transcript as it was does not repaint its scrollbar. Every check compares the screen after
a change with the same screen drawn again from nothing (no row kept, every style applied
again), so a row kept too long, or a look that did follow the focus, shows as a difference."""

from __future__ import annotations

from typing import Any

import pytest
from support.event_loop import run
from textual.app import App, ComposeResult
from textual.scrollbar import ScrollBar
from textual.widgets import Input

from cockpit.screens import RunScreen
from cockpit.widgets.transcript import Transcript
from cockpit.widgets.transcript.finished_rows import FinishedRows
from cockpit.widgets.transcript.items import STREAM_STEP, STREAM_TAIL, stream_tail
from cockpit.widgets.transcript.scrollbar import KeptRowsScrollBar
from engine_adapter import parse_event
from engine_adapter.view import RunFold

LONG_OUTPUT = "\n".join(f"output line {i}" for i in range(12))


def events(calls: int) -> list[dict[str, Any]]:
    """A task with `calls` finished shell calls, each with a few lines of output."""
    out: list[dict[str, Any]] = [{"type": "agent_start", "task": "t", "engine": "e"},
                                 {"type": "turn_start", "turn": 1}]
    for i in range(calls):
        out += [{"type": "tool_start", "call_id": f"c{i}", "tool": "shell",
                 "tool_input": {"command": f"echo {i}"}, "tier": 1},
                {"type": "tool_end", "call_id": f"c{i}", "tool": "shell", "ok": True,
                 "output": LONG_OUTPUT if i % 3 == 0 else f"call {i} done"}]
    return out


class TranscriptApp(App[None]):
    """A transcript fed from a real fold, and an input to move the focus to."""

    CSS = "Input { height: 3; }"

    def __init__(self, calls: int = 30) -> None:
        super().__init__()
        self.fold = RunFold()
        for data in events(calls):
            self.add(data)

    def add(self, data: dict[str, Any]) -> None:
        """Fold one more event (seq and ts stamped in order)."""
        seq = self.fold.view.events
        self.fold.apply(parse_event({"session_id": "s", "seq": seq, "ts": 100.0 + seq,
                                     **data}))

    def get_default_screen(self) -> RunScreen:
        return RunScreen(id="_default")  # (the live cockpit's: a focus move is no full paint)

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield Input("", id="box")

    def on_mount(self) -> None:
        self.transcript.show(self.fold.view)
        self.transcript.focus()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)


def screen(app: App[Any]) -> list[list[tuple[str, Any]]]:
    """What the screen shows, cell by cell (character and style), from what each widget has
    drawn (its kept rows included)."""
    return [[(char, segment.style) for segment in strip for char in segment.text]
            for strip in app.screen._compositor.render_strips()]


async def drawn_again(app: TranscriptApp, pilot) -> list[list[tuple[str, Any]]]:
    """The screen drawn again from nothing: no row kept, every style applied again."""
    transcript = app.transcript
    getattr(transcript, "_rows", {}).clear()
    getattr(transcript, "_finished", {}).clear()
    transcript.vertical_scrollbar.forget()
    app.update_styles(transcript)
    transcript.refresh()
    transcript.vertical_scrollbar.refresh()
    await pilot.pause()
    return screen(app)


def differences(shown: list[list[tuple[str, Any]]],
                again: list[list[tuple[str, Any]]]) -> list[str]:
    """The rows that differ, as text (a style-only difference says so)."""
    out = []
    for y, (a, b) in enumerate(zip(shown, again, strict=True)):
        if a != b:
            text_a, text_b = "".join(c for c, _ in a), "".join(c for c, _ in b)
            out.append(f"row {y}: {text_a!r} != {text_b!r}" if text_a != text_b
                       else f"row {y} (style only): {text_a!r}")
    return out


async def same_as_drawn_again(app: TranscriptApp, pilot) -> None:
    await pilot.pause()
    shown = screen(app)
    assert not differences(shown, await drawn_again(app, pilot))


def _select(app: TranscriptApp) -> None:
    app.transcript.select(app.transcript.item_count - 3)


def _select_then_move(app: TranscriptApp) -> None:
    app.transcript.select(app.transcript.item_count - 3)
    app.transcript.action_cursor_up()


def _select_then_follow(app: TranscriptApp) -> None:
    app.transcript.select(app.transcript.item_count - 2)
    app.transcript.action_cursor_last()


def _expand(app: TranscriptApp) -> None:
    transcript = app.transcript
    index = next(i for i, item in enumerate(app.fold.view.items)
                 if "output line 11" in str(getattr(item, "output", "")))
    transcript.select(index)
    transcript.action_expand()


def _item_changed(app: TranscriptApp) -> None:
    # A call on screen ends: its row changes in place (same height first, then more rows).
    app.add({"type": "tool_start", "call_id": "late", "tool": "shell",
             "tool_input": {"command": "echo late"}, "tier": 1})
    app.transcript.update_items(app.fold.view, [])
    app.add({"type": "tool_end", "call_id": "late", "tool": "shell", "ok": False,
             "output": "first\nsecond\nthird", "error": "exit 1"})
    view = app.fold.view
    app.transcript.update_items(view, [len(view.items) - 1])


def _highlight(app: TranscriptApp) -> None:
    app.transcript.highlight("done")


def _highlight_then_clear(app: TranscriptApp) -> None:
    app.transcript.highlight("done")
    app.transcript.highlight("")


def _theme(app: TranscriptApp) -> None:
    app.theme = "textual-light" if app.theme != "textual-light" else "nord"
    app.transcript.refresh_all()  # (as the cockpit's display does on a theme change)


def _page_up(app: TranscriptApp) -> None:
    app.transcript.action_page_up()


def _reserve(app: TranscriptApp) -> None:
    app.transcript.reserve_rows(7)


CHANGES = {"select": _select, "select-then-move": _select_then_move,
           "select-then-follow": _select_then_follow, "expand": _expand,
           "item-changed": _item_changed, "highlight": _highlight,
           "highlight-then-clear": _highlight_then_clear, "theme": _theme,
           "page-up": _page_up, "reserve": _reserve}
BACK_AS_IT_WAS = {"select-then-follow", "highlight-then-clear"}  # (the screen it started with)


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_a_change_shows_what_a_fresh_paint_shows(change, size):
    async def main():
        app = TranscriptApp()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            before = screen(app)
            CHANGES[change](app)
            await pilot.pause()
            after = screen(app)
            if change in BACK_AS_IT_WAS:
                assert after == before
            else:
                assert after != before  # (the change is on screen at all)
            assert not differences(after, await drawn_again(app, pilot))
            # And again after a second change on top of the first (rows kept from both).
            _select_then_move(app)
            await same_as_drawn_again(app, pilot)
    run(main())


def test_a_resize_shows_what_a_fresh_paint_shows():
    async def main():
        app = TranscriptApp()
        async with app.run_test(size=(120, 40)) as pilot:
            _select(app)
            await pilot.pause()
            await pilot.resize_terminal(90, 30)
            await pilot.pause()
            await same_as_drawn_again(app, pilot)
    run(main())


class Counted:
    """Counts calls of `owner.name` (the real method still runs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> None:
        self.calls = 0
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return original(*args, **kwargs)
        monkeypatch.setattr(owner, name, counted)


def test_a_focus_move_neither_repaints_nor_restyles_the_transcript(monkeypatch):
    async def main():
        app = TranscriptApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            # (rows drawn anew, or finished anew by Textual's pipeline)
            rows = Counted(monkeypatch, Transcript, "_final_row")
            finished = Counted(monkeypatch, FinishedRows, "keep")
            bar = Counted(monkeypatch, ScrollBar, "render")
            for _ in range(2):
                app.query_one(Input).focus()
                await pilot.pause()
                assert not app.transcript.has_focus
                app.transcript.focus()
                await pilot.pause()
                assert app.transcript.has_focus
            assert (rows.calls, finished.calls, bar.calls) == (0, 0, 0)
            # ... and it looks as restyled and repainted from nothing, focused or not: no
            # `:focus` rule applies to it.
            await same_as_drawn_again(app, pilot)
            app.query_one(Input).focus()
            await same_as_drawn_again(app, pilot)
    run(main())


def test_the_transcript_and_its_scrollbar_take_no_focus_style():
    """What lets a focus move skip the restyle: the styles the transcript and its scrollbar
    get focused are those they get blurred (for every shipped theme's colours)."""
    async def main():
        app = TranscriptApp()
        async with app.run_test(size=(100, 30)) as pilot:
            for theme in ("textual-dark", "textual-light"):
                app.theme = theme
                looks = []
                for focused in (app.transcript, app.query_one(Input)):
                    focused.focus()
                    await pilot.pause()
                    app.transcript.has_focus = focused is app.transcript
                    app.stylesheet.update_nodes([app.transcript,
                                                 app.transcript.vertical_scrollbar])
                    looks.append((app.transcript.rich_style,
                                  app.transcript.vertical_scrollbar.render()))
                (style_on, bar_on), (style_off, bar_off) = looks
                assert style_on == style_off
                assert bar_on.style == bar_off.style
    run(main())


def test_a_layout_pass_that_leaves_the_transcript_as_it_was_does_not_repaint_its_scrollbar(
        monkeypatch):
    async def main():
        app = TranscriptApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            bar = Counted(monkeypatch, ScrollBar, "render")
            box = app.query_one(Input)
            for height in (4, 3, 5, 3):  # the input's height changes: a layout pass, and the
                box.styles.height = height  # transcript's height with it ...
                await pilot.pause()
            resized = bar.calls
            assert resized > 0  # (... so its scrollbar is drawn again)
            for _ in range(3):  # now a layout pass that changes nothing of the transcript's
                box.styles.width = "50%" if box.styles.width != "50%" else "100%"
                await pilot.pause()
            assert bar.calls == resized
            # A longer transcript moves the thumb: the scrollbar shows it.
            for i in range(40):
                app.add({"type": "tool_start", "call_id": f"more{i}", "tool": "shell",
                         "tool_input": {"command": f"ls {i}"}, "tier": 1})
            app.transcript.update_items(app.fold.view, [])
            await pilot.pause()
            assert bar.calls > resized
            await same_as_drawn_again(app, pilot)
    run(main())


def test_rows_shown_before_are_not_finished_again(monkeypatch):
    """Paging back to rows drawn before takes each from what Textual finished it into then
    (no row drawn anew, none put through Textual's styles again), and shows what a fresh paint
    shows; an expanded item moves the rows below it without drawing them anew."""
    async def main():
        app = TranscriptApp(calls=60)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.transcript.action_page_up()
            await pilot.pause()
            rows = Counted(monkeypatch, Transcript, "_final_row")
            finished = Counted(monkeypatch, FinishedRows, "keep")
            app.transcript.action_page_down()
            await pilot.pause()
            app.transcript.action_page_up()
            await pilot.pause()
            assert (rows.calls, finished.calls) == (0, 0)
            await same_as_drawn_again(app, pilot)
            # Expanding an item near the top redraws its own rows only; the rows below it
            # were drawn before and only moved.
            transcript = app.transcript
            top = round(transcript.scroll_y)
            index = next(i for i in range(transcript.item_count)
                         if transcript._starts[i] >= top + 1 and i % 3 == 1)
            transcript.select(index)
            await pilot.pause()
            rows.calls = 0
            transcript.action_expand()
            await pilot.pause()
            assert 0 < rows.calls <= transcript._heights[index] < transcript.size.height - 4
            await same_as_drawn_again(app, pilot)
    run(main())


def test_a_moving_thumb_repaints_only_the_scrollbar_rows_that_change(monkeypatch):
    async def main():
        app = TranscriptApp(calls=60)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            bar = app.transcript.vertical_scrollbar
            repainted: list[tuple[object, ...]] = []
            original = ScrollBar.refresh

            def refresh(self: ScrollBar, *regions: Any, **kwargs: Any) -> Any:
                repainted.append(regions)
                return original(self, *regions, **kwargs)
            monkeypatch.setattr(ScrollBar, "refresh", refresh)
            app.transcript.action_page_up()
            await pilot.pause()
            assert repainted, "the thumb moved: the bar is repainted"
            assert all(regions and sum(r.height for r in regions) < bar.size.height
                       for regions in repainted)
            await same_as_drawn_again(app, pilot)
    run(main())


def test_scrollbar_rows_shown_before_are_not_rendered_again():
    """The scrollbar's rows are kept as Textual finished them, by what each shows: a thumb that
    moves and comes back, or the room below the items that comes and goes (the approval bar),
    puts no row through Textual again, and the bar shows what a fresh paint shows."""
    async def main():
        app = TranscriptApp(calls=60)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            bar = app.transcript.vertical_scrollbar
            assert isinstance(bar, KeptRowsScrollBar)
            for rows in (7, 0):  # (every row the bar shows in either state, drawn once)
                app.transcript.reserve_rows(rows)
                await pilot.pause()
            app.transcript.action_page_up()
            await pilot.pause()
            app.transcript.action_cursor_last()
            await pilot.pause()
            rendered = bar.rows_finished
            assert 0 < rendered < 3 * bar.size.height  # (a few distinct rows, not 43 a paint)
            for _ in range(2):
                for rows in (7, 0):
                    app.transcript.reserve_rows(rows)
                    await pilot.pause()
                    await same_as_drawn_again(app, pilot)
                    rendered = bar.rows_finished
                app.transcript.action_page_up()
                await pilot.pause()
                app.transcript.action_cursor_last()
                await pilot.pause()
            rendered_after = bar.rows_finished
            bar.forget()
            app.transcript.reserve_rows(7)
            await pilot.pause()
            assert bar.rows_finished > rendered_after  # (the count does count)
    run(main())


def test_a_growing_reply_finishes_again_only_the_rows_that_changed(monkeypatch):
    """A reply streaming, taller than the view and followed: each delivery renders it again,
    and the view scrolls as it grows. Only its rows that changed (its last ones) are drawn
    anew and put through Textual's styles; the others keep what they were finished into
    (before, every row on screen was, every frame), and the screen is what a fresh paint
    shows."""
    async def main():
        app = TranscriptApp(calls=3)
        app.add({"type": "model_update", "turn": 1, "text": "first words ", "channel": "message"})
        async with app.run_test(size=(80, 24)) as pilot:
            transcript = app.transcript
            index = len(app.fold.view.items) - 1
            for i in range(300):  # taller than the view: every row shown is the reply's
                app.add({"type": "model_update", "turn": 1, "text": f"word{i} ",
                         "channel": "message"})
            transcript.update_items(app.fold.view, [index])
            await pilot.pause()
            assert transcript._starts[index] < round(transcript.scroll_y)
            rows = Counted(monkeypatch, Transcript, "_final_row")
            finished = Counted(monkeypatch, FinishedRows, "keep")
            scrolled = 0
            for delivery in range(12):
                before = round(transcript.scroll_y)
                for i in range(4):
                    app.add({"type": "model_update", "turn": 1,
                             "text": f"more{delivery}x{i} ", "channel": "message"})
                rows.calls = finished.calls = 0
                transcript.update_items(app.fold.view, [index])
                await pilot.pause()
                scrolled += round(transcript.scroll_y) != before
                assert rows.calls <= 3, delivery
                assert finished.calls <= 3, delivery
            assert scrolled  # (the view did move: every row on screen was repainted)
            await same_as_drawn_again(app, pilot)
    run(main())


def test_a_reply_whose_cut_moves_keeps_the_rows_that_only_moved(monkeypatch):
    """A long reply of many lines, streaming: when the cut above its tail moves a step, its
    rows move up; the complete lines' rows are the same as drawn (cached), only at another
    place, and are not drawn anew (kept by the row drawn from, not by its place)."""
    async def main():
        app = TranscriptApp(calls=3)
        app.add({"type": "model_update", "turn": 1, "text": "start\n", "channel": "message"})
        async with app.run_test(size=(80, 24)) as pilot:
            transcript = app.transcript
            index = len(app.fold.view.items) - 1
            line = 0

            def grow(chars: int) -> None:
                nonlocal line
                added = 0
                while added < chars:
                    text = f"line {line} of the reply, a few words long\n"
                    app.add({"type": "model_update", "turn": 1, "text": text,
                             "channel": "message"})
                    added += len(text)
                    line += 1
                transcript.update_items(app.fold.view, [index])

            grow(STREAM_TAIL + STREAM_STEP // 2)
            await pilot.pause()
            cut = stream_tail(app.fold.view.items[index].text).dropped_chars
            rows = Counted(monkeypatch, Transcript, "_final_row")
            while stream_tail(app.fold.view.items[index].text).dropped_chars == cut:
                rows.calls = 0
                grow(200)
                await pilot.pause()
            assert rows.calls <= 8  # (the note, the cut first line, the lines added)
            await same_as_drawn_again(app, pilot)
    run(main())
