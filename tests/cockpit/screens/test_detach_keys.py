"""The detach dialog (`ctrl+q` in an attached client) answers to no key an approval uses: `y`,
`a`, `n` and the scope keys do nothing there and reach nothing behind it (the approval stays
pending), `esc` stays, `ctrl+q` again detaches."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from support.event_loop import run
from support.pilot import until_shown
from textual.app import App, ComposeResult
from textual.widgets import Static

from cockpit.screens import DetachScreen


class _Behind(App[None]):
    """An app whose own `y`/`n`/`a` would answer (as the live app's do)."""

    BINDINGS: ClassVar[list[Any]] = [("y", "press('y')"), ("n", "press('n')"), ("a", "press('a')"),
                ("s", "press('s')")]

    def __init__(self) -> None:
        super().__init__()
        self.pressed: list[str] = []
        self.choice: object = "unanswered"

    def compose(self) -> ComposeResult:
        yield Static("run")

    def action_press(self, key: str) -> None:
        self.pressed.append(key)

    def ask(self) -> None:
        def answered(choice: object) -> None:
            self.choice = choice
        self.push_screen(DetachScreen(), answered)


@pytest.mark.parametrize("keys", [("y",), ("n",), ("a", "s"), ("a", "p", "u"), ("Y", "N")])
def test_approval_keys_answer_nothing_in_the_detach_dialog(keys) -> None:
    async def body() -> None:
        app = _Behind()
        async with app.run_test() as pilot:
            app.ask()
            await until_shown(pilot, lambda: isinstance(app.screen, DetachScreen))
            await pilot.press(*keys)
            await pilot.pause()
            assert isinstance(app.screen, DetachScreen) and app.choice == "unanswered"
            assert app.pressed == []
            assert "does nothing here" in str(app.screen.query_one("#detach-note").render())
            await pilot.press("escape")
            await until_shown(pilot, lambda: app.choice is None)
    run(body())


@pytest.mark.parametrize(("key", "choice"), [("d", "detach"), ("enter", "detach"),
                                             ("c", "cancel"), ("escape", None)])
def test_its_own_keys_answer(key, choice) -> None:
    async def body() -> None:
        app = _Behind()
        async with app.run_test() as pilot:
            app.ask()
            await until_shown(pilot, lambda: isinstance(app.screen, DetachScreen))
            await pilot.press(key)
            await until_shown(pilot, lambda: app.choice != "unanswered")
            assert app.choice == choice
    run(body())
