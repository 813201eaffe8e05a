"""Asks before quitting while a run is live (quitting cancels it) or messages are queued (they
would never be sent).

It never answers to a key an approval uses: `ctrl+q` then `y` once quit a run whose human meant
to allow a call (the bar's `[y]`), so the quit is confirmed only by the quit key again (as bound:
the live app's quit action confirms while this screen is up) and `esc` stays. Any other key
answers nothing and says what to press. It is a centred dialog with its own title and a red
frame: nothing like the approval bar at the bottom.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from engine_adapter.text import plural

__all__ = ["QuitScreen"]

STAY_KEY = "escape"


class QuitScreen(ModalScreen[bool]):
    """Dismisses with True to quit (and cancel the run), False to stay. `live`: the run is
    still going; `queued`: how many queued messages would not be sent; `quit_key`: the quit
    key as the user has it bound (`^q`), which confirms (see `confirm()`)."""

    DEFAULT_CSS = """
    QuitScreen { align: center middle; }
    QuitScreen > Vertical {
        width: 64;
        max-width: 100%;
        height: auto;
        background: $panel;
        border: thick $error;
        border-title-color: $error;
        border-title-style: bold;
        padding: 1 2;
    }
    QuitScreen #quit-note { height: auto; color: $warning; }
    """

    # Screen-local; `esc` only: the confirming key is the app's quit binding (it is a priority
    # one, so it reaches the app first whatever this screen binds).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(STAY_KEY, "answer(False)", "stay", key_display="esc"),
    ]

    def __init__(self, *, live: bool = True, queued: int = 0, quit_key: str = "^q") -> None:
        super().__init__()
        self.live, self.queued, self.quit_key = live, queued, quit_key

    def compose(self) -> ComposeResult:
        lines = ["The run is still live: quitting cancels it (its journal is closed)."] \
            if self.live else ["Quit the cockpit?"]
        if self.queued:
            lines.append(f"{plural(self.queued, 'queued message')} will not be sent.")
        keys = Text("\n".join(lines) + "\n\n")
        keys.append(f"[{self.quit_key}]", "bold")
        keys.append(" again: quit" + (" and cancel the run" if self.live else ""))
        keys.append("   ")
        keys.append("[esc]", "bold")
        keys.append(" stay")
        with Vertical() as dialog:
            dialog.border_title = "quit cockpit?"
            yield Static(keys, id="quit-text")
            yield Static("", id="quit-note")

    def confirm(self) -> None:
        """The quit key again: quit."""
        self.dismiss(True)

    def action_answer(self, quit_: bool) -> None:
        """Answer the question."""
        self.dismiss(quit_)

    def on_key(self, event: events.Key) -> None:
        """Any key but `esc` (and the quit key, which the app takes first) answers nothing
        here, and nothing behind the dialog either (an approval's `y` must not reach the bar):
        say what to press."""
        if event.key == STAY_KEY:
            return
        event.stop()
        event.prevent_default()
        name = event.character if event.is_printable and event.character else event.key
        self.query_one("#quit-note", Static).update(
            Text(f"\n{name} does nothing here: {self.quit_key} again quits, esc stays",
                 no_wrap=False))
        self.app.bell()
