"""`EndPanel`: how a task ended (`end_text`: status and error first, where the reply is, the
files it changed, where its journal is), shown under the transcript once the run is over (the
next task is typed in the `Composer` below it).

It renders from a `RunView` and the journal's path, never from a Session; starting the next task
is the live app's business (the Composer's).

Layout: the outcome sits in a `ScrollBox` of limited height (the panel takes at most ~45% of the
screen), so a 4 KB reply never hides the transcript, the status line or the input; the keys line
below it names the keys as bound.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.styles import palette_for
from cockpit.widgets.end_text import end_text
from cockpit.widgets.scroll_box import ScrollBox
from engine_adapter.view import RunView

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
    EndPanel #end-keys { height: 1; }
    """

    _offer_next = False  # whether the keys line names the next-task key

    def compose(self) -> ComposeResult:
        yield ScrollBox(Static("", id="end-text"), id="end-body")
        yield Static("", id="end-keys")

    def body_rows(self, offer_next: bool) -> int:
        """Rows the outcome may take: the panel stays within ~45% of the screen with its
        border, the "more below" marker and the keys line, and a row left for the message box
        below it when the next task can be typed."""
        return max(1, self.app.size.height * 45 // 100 - 3 - int(offer_next))

    def on_resize(self, event: Resize) -> None:
        self._fit()
        self._show_keys()

    def _show_keys(self) -> None:
        """The keys line, named as bound; in the short wording when the long one would not fit
        (a cut line would hide the quit key without saying so)."""
        palette = palette_for(self.app)
        room = self.app.size.width - 4  # the panel's padding and the screen's edges
        for next_words, quit_words in ((" (or a click) to type the next task · ", " quits"),
                                       (" next task · ", " quits"), (" next · ", " quit")):
            keys = Text(no_wrap=True, overflow="ellipsis")
            if self._offer_next:
                keys.append(key_label(self.app, "compose"), palette.accent)
                keys.append(next_words, palette.dim)
            keys.append(key_label(self.app, "quit"), palette.accent)
            keys.append(quit_words, palette.dim)
            if keys.cell_len <= room:
                break
        self.query_one("#end-keys", Static).update(keys)

    def _fit(self) -> None:
        self.query_one("#end-body", ScrollBox).max_rows = self.body_rows(self._offer_next)

    def show(self, view: RunView, *, journal: str | None, offer_next: bool) -> None:
        """Show how `view`'s run ended (or hide while it is live); `offer_next` says where the
        next task is typed (the message box is shown, not focused: a `y` pressed a moment too
        late must not start typing a task)."""
        if view.live or view.status == "idle":
            self.hide()
            return
        palette = palette_for(self.app)
        # The keys are the panel's own line, below the box (always in sight), named as bound.
        text = end_text(view, palette, journal=journal, hint=None)
        self.query_one("#end-text", Static).update(text)
        self._offer_next = offer_next
        self._show_keys()
        self.set_class(view.status == "failed", "-failed")
        self.set_class(view.status == "cancelled", "-cancelled")
        self.add_class("-shown")
        self._fit()
        self.query_one("#end-body", ScrollBox).content_changed(to_top=True)

    def hide(self) -> None:
        """Hide the panel (the next task is starting)."""
        self.remove_class("-shown", "-failed", "-cancelled")
