"""Asks why, before a denial from the fleet view's inbox: `n` there opens it, as `n` in a run's
view opens the reason box.

Everything typed goes into the reason: typed at the inbox, a reason's letters would answer the
next ask (`y` allows it, `a` grants its prefix). Enter denies with it (empty: no reason), `esc`
goes back and denies nothing.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from cockpit.widgets.safe_text import clean_line

__all__ = ["REASON_CHARS", "DenyReasonScreen"]

REASON_CHARS = 2_000
"""The most characters a reason takes (the agent reads it; a paste of a file is not one)."""


class DenyReasonScreen(ModalScreen[str | None]):
    """Dismisses with the reason ("" for none) to deny with, or None: nothing denied."""

    DEFAULT_CSS = """
    DenyReasonScreen { align: center middle; }
    DenyReasonScreen > Vertical {
        width: 80;
        max-width: 100%;
        height: auto;
        background: $panel;
        border: thick $error;
        padding: 1 2;
    }
    DenyReasonScreen #deny-what { height: auto; }
    DenyReasonScreen #deny-keys { height: 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back (nothing denied)", key_display="esc"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"deny {clean_line(self.what, 300)}", no_wrap=False),
                         id="deny-what")
            yield Input(placeholder="why (optional: the agent is told)", id="deny-reason",
                        max_length=REASON_CHARS)
            yield Static("enter denies · esc goes back, nothing denied", id="deny-keys")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#deny-reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: deny, with what was typed."""
        event.stop()
        self.dismiss(event.value.strip())

    def action_back(self) -> None:
        """Escape: back to the inbox, nothing denied."""
        self.dismiss(None)
