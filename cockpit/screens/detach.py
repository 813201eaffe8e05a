"""Asks an attached client what `ctrl+q` means: detach (the run goes on in the host) or cancel
the run, or stay."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

__all__ = ["DetachChoice", "DetachScreen"]

DetachChoice = Literal["detach", "cancel"]


class DetachScreen(ModalScreen[DetachChoice | None]):
    """Dismisses with `detach`, `cancel` (cancel the run, then leave) or None (stay)."""

    DEFAULT_CSS = """
    DetachScreen { align: center middle; }
    DetachScreen > Vertical {
        width: 64;
        height: auto;
        background: $panel;
        border: thick $warning;
        padding: 1 2;
    }
    """

    # Screen-local answers; not remappable run keys. Detaching is the default: it loses nothing.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d,enter,ctrl+q", "answer('detach')", "detach (the run goes on)"),
        Binding("c", "answer('cancel')", "cancel the run"),
        Binding("n,escape", "answer(None)", "stay"),
    ]

    def __init__(self, *, live: bool = True) -> None:
        super().__init__()
        self.live = live

    def compose(self) -> ComposeResult:
        if self.live:
            text = ("Leave this run? It goes on in the host: `cockpit attach` comes back to it."
                    "\n\n[d] detach   [c] cancel the run   [n] stay")
        else:
            text = "Leave this run?\n\n[d] leave   [n] stay"
        with Vertical():
            yield Static(text, markup=False)
        yield Footer()

    def action_answer(self, choice: DetachChoice | None) -> None:
        """Answer the question."""
        self.dismiss(choice)
