"""Asks before quitting while a run is live (quitting cancels it) or messages are queued (they
would never be sent)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from engine_adapter.text import plural

__all__ = ["QuitScreen"]


class QuitScreen(ModalScreen[bool]):
    """Dismisses with True to quit (and cancel the run), False to stay. `live`: the run is
    still going; `queued`: how many queued messages would not be sent."""

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

    def __init__(self, *, live: bool = True, queued: int = 0) -> None:
        super().__init__()
        self.live, self.queued = live, queued

    def compose(self) -> ComposeResult:
        lines = ["The run is still live. Quit and cancel it?"] if self.live else ["Quit?"]
        if self.queued:
            lines.append(f"{plural(self.queued, 'queued message')} will not be sent.")
        quit_ = "quit (the run is cancelled, its journal closed)" if self.live else "quit"
        with Vertical():
            yield Static("\n".join(lines) + f"\n\n[y] {quit_}   [n] stay", markup=False)
        yield Footer()

    def action_answer(self, quit_: bool) -> None:
        """Answer the question."""
        self.dismiss(quit_)
