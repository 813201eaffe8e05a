"""`TextLines`: a Rich text drawn by Rich into kept rows, its height the rows it wraps to."""

from __future__ import annotations

from rich.text import Text
from support.event_loop import run
from textual.app import App, ComposeResult

from cockpit.widgets.text_lines import TextLines


class _Host(App[None]):
    CSS = "TextLines { width: 20; }"

    def compose(self) -> ComposeResult:
        yield TextLines(Text("one two three four five six seven"), id="wrapped")
        yield TextLines(Text("a line far too long for twenty cells", no_wrap=True,
                             overflow="ellipsis"), id="cut")


def _rows(widget: TextLines) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


def test_height_is_the_rows_the_text_wraps_to_and_an_update_lays_it_out_again():
    async def body() -> None:
        app = _Host()
        async with app.run_test(size=(40, 10)) as pilot:
            wrapped = app.query_one("#wrapped", TextLines)
            assert wrapped.size.height == 2
            assert [row.rstrip() for row in _rows(wrapped)] == ["one two three four",
                                                               "five six seven"]
            assert all(len(row) == 20 for row in _rows(wrapped))  # (each row the full width)
            wrapped.update(Text("one"))
            await pilot.pause()
            assert wrapped.size.height == 1
            assert _rows(wrapped)[0].rstrip() == "one"
            assert wrapped.render().plain == "one"  # (what a test reads, as from a Static)
    run(body())


def test_a_text_that_is_cut_says_so_and_its_rows_are_kept_until_it_changes():
    async def body() -> None:
        app = _Host()
        async with app.run_test(size=(40, 10)):
            cut = app.query_one("#cut", TextLines)
            assert cut.size.height == 1
            row = cut.render_line(0)
            assert row.text == "a line far too long…"
            assert cut.render_line(0) is row  # kept: drawn once per text, width and look
            cut.update(Text("short"))
            assert cut.render_line(0) is not row
            assert cut.render_line(0).text.rstrip() == "short"
    run(body())


def test_the_rows_of_a_text_shown_again_are_not_drawn_again():
    """The key hints go back and forth between a few lines: each is drawn by Rich once (in one
    look), however often it comes back; a new look draws it again."""
    async def body() -> None:
        app = _Host()
        async with app.run_test(size=(40, 10)) as pilot:
            cut = app.query_one("#cut", TextLines)
            first = Text("[y] once  [n] deny", no_wrap=True)
            second = Text("enter expand", no_wrap=True)
            cut.update(first)
            row = cut.render_line(0)
            cut.update(second)
            assert cut.render_line(0).text.rstrip() == "enter expand"
            drawn = cut.rows_drawn
            for _ in range(3):
                cut.update(Text("[y] once  [n] deny", no_wrap=True))  # (an equal text)
                assert cut.render_line(0) is row
                cut.update(second)
                assert cut.render_line(0).text.rstrip() == "enter expand"
            assert cut.rows_drawn == drawn
            cut.styles.color = "red"  # a new look: drawn again, in it
            await pilot.pause()
            drawn = cut.rows_drawn
            cut.update(first)
            assert cut.render_line(0) is not row
            assert cut.rows_drawn == drawn + 1
    run(body())
