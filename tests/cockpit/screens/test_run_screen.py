"""`RunScreen`: a focus move draws the same screen as Textual's own `Screen` (every widget whose
look follows the focus repaints itself), without repainting the whole screen."""

from __future__ import annotations

import pytest
from support.event_loop import run
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static, TextArea

from cockpit.screens import RunScreen


class FocusApp(App[None]):
    """Widgets whose look depends on the focus: inputs, a text area, a `:focus-within` box."""

    CSS = """
    Input:focus { background: red; }
    #box:focus-within { border: heavy green; }
    TextArea:focus { background: blue; }
    """

    def __init__(self, screen: type[Screen[None]]) -> None:
        super().__init__()
        self.screen_type = screen

    def get_default_screen(self) -> Screen[None]:
        return self.screen_type(id="_default")

    def compose(self) -> ComposeResult:
        # No blinking cursors: a blink between two screenshots made the frames differ by when
        # they were taken (the test failed now and then on a loaded machine).
        yield Static("a label")
        yield Input("one", id="one")
        with Vertical(id="box"):
            yield Input("two", id="two")
        yield TextArea("three", id="three")

    def on_mount(self) -> None:
        for widget in self.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]


MOVES = [["tab"], ["tab", "tab"], ["tab", "tab", "tab"], ["tab", "shift+tab"],
         ["tab", "tab", "tab", "tab"]]


@pytest.mark.parametrize("keys", MOVES, ids=["-".join(k) for k in MOVES])
def test_a_focus_move_draws_what_textuals_screen_draws(keys):
    async def shot(screen: type[Screen[None]]) -> list[str]:
        app = FocusApp(screen)
        frames = []
        async with app.run_test(size=(40, 14)) as pilot:
            for key in keys:
                await pilot.press(key)
                await pilot.pause()  # (the focus move's repaint done, not a clock)
                frames.append(app.export_screenshot())
        return frames

    async def main():
        assert await shot(RunScreen) == await shot(Screen)
    run(main())


def test_the_live_cockpit_runs_on_it():
    from support.live_app import hold, make_app, turn

    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(80, 24)):
            assert isinstance(app.screen, RunScreen)
            app.session.cancel("test over")
    run(main())


def test_a_partial_frame_draws_what_textuals_compositor_draws():
    """`RowsCompositor` renders each widget only where it meets a frame's rows: for any rows
    and columns repainted, every cut of the screen those columns show holds what Textual's own
    compositor puts there (the live cockpit's screen: a transcript, a side panel, bars)."""
    from support.live_app import hold, make_app, turn
    from textual._compositor import Compositor
    from textual.geometry import Region

    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            compositor = app.screen._compositor
            cuts = compositor.cuts
            checked = 0
            for top, rows in ((0, 1), (0, 30), (3, 5), (12, 9), (29, 1), (20, 10)):
                for left, columns in ((0, 100), (0, 40), (55, 45), (70, 3), (99, 1)):
                    crop = Region(left, top, columns, rows)
                    mine = compositor._render_chops(crop, lambda y: True)
                    textuals = Compositor._render_chops(compositor, crop, lambda y: True)
                    for y in crop.line_range:
                        ends = cuts[y][1:]
                        for (x, strip), end in zip(textuals[y].items(), ends, strict=True):
                            if x < crop.right and end > crop.x:  # (a cut the frame shows)
                                assert mine[y][x] == strip, (crop, y, x)
                                checked += 1
            assert checked > 100
            app.session.cancel("test over")
    run(main())


def test_a_frame_renders_only_the_widgets_its_rows_meet(monkeypatch):
    """A frame that repaints a row of the transcript renders none of the status line, the
    composer or the key hints (Textual's compositor rendered every widget of the screen whole:
    half of each frame of a streaming reply at 160x48)."""
    from support.live_app import hold, make_app, turn
    from textual.widget import Widget

    from cockpit.widgets.transcript import Transcript

    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            rendered: list[str] = []

            def counted(owner):
                original = owner.render_lines

                def render_lines(self, crop):
                    rendered.append(type(self).__name__)
                    return original(self, crop)
                monkeypatch.setattr(owner, "render_lines", render_lines)
            counted(Widget)
            counted(Transcript)  # (its own: rows kept as finished skip Widget's)
            for _ in range(3):  # (nothing else left to draw: only the row below is)
                rendered.clear()
                await pilot.pause()
            transcript = app.display_widget.transcript
            assert rendered == []
            transcript.refresh_lines(round(transcript.scroll_y) + 1, 1)
            await pilot.pause()
            assert "Transcript" in rendered
            assert not {"StatusLine", "Composer", "KeyHints"} & set(rendered), rendered
            app.session.cancel("test over")
    run(main())
