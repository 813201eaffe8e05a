"""Asks an attached client what `ctrl+q` means: detach (the run goes on in the host) or cancel
the run, or stay.

Like the quit dialog (`cockpit.screens.quit`), it never answers to a key an approval uses
(`y`, `a`, `n`, and the scope keys after `a`): a key meant for the approval bar must not
detach, cancel or stay. `d` (or enter, or `ctrl+q` again) detaches, `c` cancels the run, `esc`
stays; any other key answers nothing, reaches nothing behind the dialog, and says what to
press.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

__all__ = ["DetachChoice", "DetachScreen"]

DetachChoice = Literal["detach", "cancel"]

_ANSWERS = frozenset({"d", "enter", "ctrl+q", "c", "escape"})


class DetachScreen(ModalScreen[DetachChoice | None]):
    """Dismisses with `detach`, `cancel` (cancel the run, then leave) or None (stay)."""

    DEFAULT_CSS = """
    DetachScreen { align: center middle; }
    DetachScreen > Vertical {
        width: 64;
        max-width: 100%;
        height: auto;
        background: $panel;
        border: thick $warning;
        padding: 1 2;
    }
    DetachScreen #detach-note { height: auto; color: $warning; }
    """

    # Screen-local answers; not remappable run keys. Detaching is the default: it loses nothing.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d,enter,ctrl+q", "answer('detach')", "detach (the run goes on)"),
        Binding("c", "answer('cancel')", "cancel the run"),
        Binding("escape", "answer(None)", "stay", key_display="esc"),
    ]

    def __init__(self, *, live: bool = True) -> None:
        super().__init__()
        self.live = live

    def compose(self) -> ComposeResult:
        if self.live:
            text = ("Leave this run? It goes on in the host: `cockpit attach` comes back to it."
                    "\n\n[d] detach   [c] cancel the run   [esc] stay")
        else:
            text = "Leave this run?\n\n[d] leave   [esc] stay"
        with Vertical():
            yield Static(text, markup=False)
            yield Static("", id="detach-note")
        yield Footer()

    def action_answer(self, choice: DetachChoice | None) -> None:
        """Answer the question."""
        if choice == "cancel" and not self.live:
            return
        self.dismiss(choice)

    def on_key(self, event: events.Key) -> None:
        """A key that is not an answer does nothing here, nor behind the dialog (an
        approval's `y` must not reach the bar): say what to press."""
        if event.key in _ANSWERS:
            return
        event.stop()
        event.prevent_default()
        name = event.character if event.is_printable and event.character else event.key
        cancel = ", c cancels the run" if self.live else ""
        self.query_one("#detach-note", Static).update(
            Text(f"\n{name} does nothing here: d detaches{cancel}, esc stays", no_wrap=False))
        self.app.bell()
