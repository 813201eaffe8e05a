"""The pager: long lines wrap (or scroll sideways), search with `/`, `n`, `N`."""

from __future__ import annotations

import pytest
from support.event_loop import run
from textual.app import App, ComposeResult

from cockpit.screens import PagerScreen
from cockpit.widgets.pager import LINE_LIMIT, TextPager, find_matches


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


class PagerApp(App[None]):
    def __init__(self, text: str, title: str = "output", diff: str | None = None) -> None:
        super().__init__()
        self.text, self.title_, self.diff = text, title, diff

    def compose(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.push_screen(PagerScreen(self.title_, self.text, diff=self.diff))


def rows(pager: TextPager, count: int | None = None) -> list[str]:
    height = pager.scrollable_content_region.height if count is None else count
    return ["".join(seg.text for seg in pager.render_line(y)).rstrip() for y in range(height)]


def title(app) -> str:
    return app.screen.query_one("#pager-title").render().plain


async def opened(pilot):
    while not isinstance(pilot.app.screen, PagerScreen):
        await pilot.pause()
    await pilot.pause()
    return pilot.app.screen.pager


def test_a_long_line_wraps_at_the_width_and_w_scrolls_sideways_instead():
    text = "short\n" + "".join(f"{i:04d}" for i in range(100)) + "\nlast"  # 400 characters

    async def main():
        app = PagerApp(text)
        async with app.run_test(size=(82, 20)) as pilot:
            pager = await opened(pilot)
            width = pager.scrollable_content_region.width
            long_rows = -(-400 // width)
            assert pager.total_rows == 2 + long_rows
            shown = rows(pager, 2 + long_rows)
            assert shown[0] == "short"
            assert "".join(shown[1:1 + long_rows]) == text.split("\n")[1]
            assert shown[-1] == "last"
            assert pager.line_at(1 + long_rows) == (2, 0) and pager.row_of(2) == 1 + long_rows
            await pilot.press("w")
            assert pager.total_rows == 3 and not pager.wrap
            assert rows(pager, 2)[1] == text.split("\n")[1][:width]
            await pilot.press("right")
            assert pager.scroll_x > 0
            await pilot.press("w")
            assert pager.total_rows == 2 + long_rows
    run(main())


def test_wide_tab_and_unsafe_characters_wrap_by_their_width_on_screen():
    wide = "界" * 50  # 100 cells
    unsafe = "\x1b[31m" * 20  # each ESC shown as a one-cell marker
    tabs = "\t" * 30  # four cells each

    async def main():
        app = PagerApp("\n".join([wide, unsafe, tabs]))
        async with app.run_test(size=(42, 20)) as pilot:
            pager = await opened(pilot)
            width = pager.scrollable_content_region.width
            assert pager.total_rows == -(-100 // width) + -(-100 // width) + -(-120 // width)
            drawn = "".join(rows(pager, pager.total_rows))
            assert "\x1b" not in drawn and "␛" in drawn
    run(main())


def test_resizing_rewraps():
    async def main():
        app = PagerApp("x" * 300)
        async with app.run_test(size=(102, 20)) as pilot:
            pager = await opened(pilot)
            before = pager.total_rows
            await pilot.resize_terminal(52, 20)
            await pilot.pause()
            assert pager.total_rows > before
            assert pager.total_rows == -(-300 // pager.scrollable_content_region.width)
    run(main())


def test_a_huge_line_is_cut_and_says_how_much():
    async def main():
        app = PagerApp("y" * (LINE_LIMIT + 5_000))
        async with app.run_test(size=(80, 20)) as pilot:
            pager = await opened(pilot)
            await pilot.press("end")
            await pilot.pause()
            assert "5,000 more characters" in "".join(rows(pager))
    run(main())


def test_search_n_and_shift_n_move_through_the_matches():
    lines = [f"line {i}" + (" needle" if i in (5, 40, 90) else "") for i in range(120)]

    async def main():
        app = PagerApp("\n".join(lines))
        async with app.run_test(size=(80, 20)) as pilot:
            pager = await opened(pilot)
            await pilot.press("slash")
            assert app.screen.query_one("#pager-search").has_focus
            await pilot.press(*"needle", "enter")
            await pilot.pause()
            assert [line for line, _ in pager.matches] == [5, 40, 90]
            assert "match 1 of 3" in title(app) and pager.has_focus
            assert any("needle" in row for row in rows(pager))
            await pilot.press("n")
            assert pager.current == 1 and "match 2 of 3" in title(app)
            top = round(pager.scroll_y)
            assert top <= 40 < top + pager.scrollable_content_region.height
            await pilot.press("n", "n")
            assert pager.current == 0  # wraps around
            await pilot.press("N")
            assert pager.current == 2
            await pilot.press("slash", *"haystack", "enter")
            await pilot.pause()
            assert "no match" in title(app) and pager.matches == []
            await pilot.press("escape")  # closes the pager
            await pilot.pause()
            assert not isinstance(app.screen, PagerScreen)
    run(main())


def test_escape_closes_the_search_box_before_the_pager():
    async def main():
        app = PagerApp("a\nb")
        async with app.run_test(size=(80, 20)) as pilot:
            await opened(pilot)
            await pilot.press("slash", "n")  # typed into the box, not "next match"
            box = app.screen.query_one("#pager-search")
            assert box.value == "n"
            await pilot.press("escape")
            assert isinstance(app.screen, PagerScreen) and not box.has_class("-shown")
    run(main())


def test_a_match_in_a_wrapped_line_scrolls_to_its_row():
    text = "\n".join(["top"] * 50 + ["z" * 1000 + "needle"] + ["bottom"] * 50)

    async def main():
        app = PagerApp(text)
        async with app.run_test(size=(80, 20)) as pilot:
            pager = await opened(pilot)
            await pilot.press("slash", *"needle", "enter")
            await pilot.pause()
            assert any("needle" in row for row in rows(pager))
    run(main())


@pytest.mark.parametrize("term, expected", [
    ("abc", [(0, 0), (1, 2), (2, 0)]),  # lower case: any case
    ("ABC", [(2, 0)]),  # an upper-case letter: exactly
    ("a.c", [(3, 0)]),  # literal, not a pattern
    ("", []),
])
def test_find_matches_is_literal_and_smart_case(term, expected):
    text = "abc\nxxabc\nABC\na.c"
    starts = [0, 4, 10, 14]
    assert find_matches(text, starts, term) == expected


def test_a_big_text_is_searched_in_a_thread():
    text = "\n".join(f"row {i}" for i in range(200_000)) + "\nneedle at the end"

    async def main():
        app = PagerApp(text)
        async with app.run_test(size=(80, 20)) as pilot:
            pager = await opened(pilot)
            await pilot.press("slash", *"needle", "enter")
            for _ in range(500):
                if pager.matches:
                    break
                await pilot.pause()
            assert pager.matches == [(200_000, 0)]
            assert "match 1 of 1" in title(app)
    run(main())


def test_odd_lines_past_the_measured_ones_are_measured_when_drawn(monkeypatch):
    import cockpit.widgets.pager as pager_module

    monkeypatch.setattr(pager_module, "EXACT_LINES", 2)
    # Every line has an escape (odd); each wide line takes 120 cells for 60 characters.
    lines = [f"\x1b{i}" for i in range(30)] + ["\x1b" + "界" * 60] * 3

    async def main():
        app = PagerApp("\n".join(lines))
        async with app.run_test(size=(82, 20)) as pilot:
            pager = await opened(pilot)
            width = pager.scrollable_content_region.width
            guessed = pager.total_rows
            assert guessed == 33  # 61 characters: one row each, as far as the guess goes
            measured = 30 + 3 * -(-(1 + 120) // width)
            for _ in range(50):  # each drawn line is measured; the rows below move
                await pilot.press("end")
                if pager.total_rows == measured:
                    break
            assert pager.total_rows == measured
            await pilot.pause()
            assert "界" in "".join(rows(pager))
    run(main())


def test_the_pagers_diff_is_coloured_and_nothing_else_is() -> None:
    """Issue 26 §4: the transcript colours a diff; its pager did not. Only the diff's lines take
    its colours: an output line that looks like one (`+ added?`) stays plain."""
    from engine_adapter.files import unified_diff
    from engine_adapter.view import ToolCallItem

    diff = unified_diff("a\nold\nc\n", "a\nnew\nc\n", "x.py")
    item = ToolCallItem(1, 1, 1, "c", "edit", {"path": "x.py"}, 2)
    item.diff, item.output, item.status = diff, "+ added?\n-x", "ok"
    from cockpit.widgets import item_text

    async def main():
        app = PagerApp(item_text(item), "edit", diff=item.diff)
        async with app.run_test(size=(100, 30)) as pilot:
            pager = await opened(pilot)
            from cockpit.styles import palette_for

            palette = palette_for(app)
            colours = {}
            for y in range(pager.total_rows):
                strip = pager.render_line(y)
                text = "".join(seg.text for seg in strip).rstrip()
                colours[text] = {seg.style.color for seg in strip
                                 if seg.text.strip() and seg.style and seg.style.color}
            assert colours["+new"] == {palette.diff_add.color}
            assert colours["-old"] == {palette.diff_remove.color}
            assert colours["@@ -1,3 +1,3 @@"] == {palette.diff_hunk.color}
            plain = colours["edit (ok)"]  # the pager's own text colour
            assert palette.diff_add.color not in plain
            assert colours[" a"] == plain  # context
            assert colours["+ added?"] == plain and colours["-x"] == plain  # the output

    run(main())
