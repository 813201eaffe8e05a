"""`EndPanel`: how a task ended (`end_text`: status and error first, where the reply is, the
files it changed, where its journal is), shown under the transcript once the run is over (the
next task is typed in the `Composer` below it).

It renders from a `RunView` and the journal's path, never from a Session; starting the next task
is the live app's business (it listens for the input's `Input.Submitted`).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from engine_adapter.fold import RunView

from .. import steer_keys  # noqa: F401 - registers the `compose` key named below
from ..keys import key_label
from ..styles import palette_for
from .end_text import end_text

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
        hint = (f"{key_label(self.app, 'compose')} (or a click) to type the next task below · "
                "ctrl+q quits" if offer_next else "ctrl+q quits")
        text = end_text(view, palette_for(self.app), journal=journal, hint=hint)
        self.query_one("#end-text", Static).update(text)
        self.set_class(view.status == "failed", "-failed")
        self.set_class(view.status == "cancelled", "-cancelled")
        self.add_class("-shown")

    def hide(self) -> None:
        """Hide the panel (the next task is starting)."""
        self.remove_class("-shown", "-failed", "-cancelled")
