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
