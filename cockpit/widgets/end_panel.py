"""`EndPanel`: how a task ended (status, outcome, where its journal is), shown under the
transcript once the run is over (the next task is typed in the `Composer` below it).

It renders from a `RunView` and the journal's path, never from a Session.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from engine_adapter.fold import RunView

from .. import steer_keys  # noqa: F401 - registers the `compose` key named below
from ..keys import key_label
from ..styles import palette_for
from .text import clean, clean_line

__all__ = ["EndPanel"]


class EndPanel(Vertical):
    """Hidden while the run is live; `show(view, ...)` fills it in once the run has ended."""

    DEFAULT_CSS = """
    EndPanel {
        display: none;
        height: auto;
        background: $panel;
        border-top: thick $primary;
        padding: 0 1;
    }
    EndPanel.-shown { display: block; }
    EndPanel.-failed { border-top: thick $error; }
    EndPanel.-cancelled { border-top: thick $warning; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="end-text")

    def show(self, view: RunView, *, journal: str | None, offer_next: bool) -> None:
        """Show how `view`'s run ended (or hide while it is live); `offer_next` says where the
        next task is typed (the message box is shown, not focused: a `y` pressed a moment too
        late must not start typing a task)."""
        if view.live or view.status == "idle":
            self.hide()
            return
        palette = palette_for(self.app)
        text = Text()
        text.append(f"{view.status}", palette.status_style(view.status))
        outcome = view.result or view.error or view.cancel_reason or ""
        if outcome:
            text.append(": " + clean(outcome[:4_000]), palette.text)
        text.append("\njournal: ", palette.dim)
        text.append(clean_line(journal, 1_000) if journal else "(none: run without a journal)",
                    palette.accent if journal else palette.dim)
        if offer_next:
            text.append(f"\n{key_label(self.app, 'compose')} (or a click) to type the next task "
                        "below · ctrl+q quits", palette.dim)
        else:
            text.append("\nctrl+q quits", palette.dim)
        self.query_one("#end-text", Static).update(text)
        self.set_class(view.status == "failed", "-failed")
        self.set_class(view.status == "cancelled", "-cancelled")
        self.add_class("-shown")

    def hide(self) -> None:
        """Hide the panel (the next task is starting)."""
        self.remove_class("-shown", "-failed", "-cancelled")
