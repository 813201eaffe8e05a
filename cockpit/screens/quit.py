"""Asks before quitting while a run is live: quitting cancels it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

__all__ = ["QuitScreen"]


class QuitScreen(ModalScreen[bool]):
    """Dismisses with True to quit (and cancel the run), False to stay."""

    DEFAULT_CSS = """
    QuitScreen { align: center middle; }
    QuitScreen > Vertical {
        width: 60;
        height: auto;
        background: $panel;
        border: thick $error;
        padding: 1 2;
    }
    """

    # Screen-local answers to a yes/no question; not remappable run keys.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter,ctrl+q", "answer(True)", "quit and cancel the run"),
        Binding("n,escape", "answer(False)", "keep running"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("The run is still live. Quit and cancel it?\n\n"
                         "[y] quit (the run is cancelled, its journal closed)   [n] stay",
                         markup=False)
        yield Footer()

    def action_answer(self, quit_: bool) -> None:
        """Answer the question."""
        self.dismiss(quit_)
