"""Asks before rewinding the workspace to the start of a turn, showing what the rewind would do.

It opens at once, saying the rewind is being worked out; the preview (worked out off the event
loop: `cockpit.rewinds.preview`) arrives with `show`: the plan, one path a line (restored,
brought back, removed, left alone and why), then the diffs, in the pager's text widget (scroll
with the arrow and page keys). Like the quit dialog it
never answers to a key an approval uses (`y`, `n`, `a`): the rewind key again confirms and `esc`
changes nothing; any other letter answers nothing and says what to press.
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

from cockpit.keys import KEYS, bindings, effective_key
from cockpit.widgets import TextPager, clean_line

__all__ = ["RewindScreen"]

KEEP_KEY = "escape"


class RewindScreen(ModalScreen[bool]):
    """Dismisses with True to rewind, False to change nothing.

    Args:
        where: What is rewound to ("turn 2", "turn 2 of task 1").
        rewind_key: The rewind key as the user has it bound (`b`), which confirms.
    """

    DEFAULT_CSS = """
    RewindScreen { align: center middle; }
    RewindScreen > Vertical {
        width: 100%;
        max-width: 120;
        height: 100%;
        background: $panel;
        border: thick $warning;
        border-title-color: $warning;
        border-title-style: bold;
        padding: 0 1;
    }
    RewindScreen TextPager { height: 1fr; }
    RewindScreen #rewind-wait { height: 1fr; color: $text-muted; }
    RewindScreen #rewind-keys { height: auto; padding: 1 0 0 0; }
    RewindScreen #rewind-note { height: auto; color: $warning; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(KEEP_KEY, "answer(False)", "change nothing", key_display="esc"),
        *bindings("transcript", ids=["rewind"]),  # the rewind key again: rewind
    ]

    def __init__(self, where: str, *, rewind_key: str = "b") -> None:
        super().__init__()
        self.where, self.rewind_key = where, rewind_key
        self.text = self.diff = ""
        self.loaded = False
        self.empty = True

    def compose(self) -> ComposeResult:
        with Vertical() as dialog:
            dialog.border_title = clean_line(f"rewind to {self.where}?", 100)
            yield Static(f"working out what a rewind to {self.where} would do…",
                         id="rewind-wait")
            yield Static(self._keys(), id="rewind-keys")
            yield Static("", id="rewind-note")

    def _keys(self) -> Text:
        keys = Text()
        if self.loaded and not self.empty:
            keys.append(f"[{self.rewind_key}]", "bold")
            keys.append(" again: rewind the workspace   ")
        keys.append("[esc]", "bold")
        keys.append(" change nothing" if not self.loaded or not self.empty else " close")
        return keys

    def show(self, text: str, *, diff: str = "", empty: bool = False) -> None:
        """The preview arrived: `text` (the plan's lines, then the diffs; untrusted: file
        contents), `diff` (the diffs inside it, coloured as in the transcript), `empty` (the
        rewind would change nothing: only `esc` is offered)."""
        self.text, self.diff, self.empty, self.loaded = text, diff, empty, True
        pager = TextPager(text, id="rewind-text", diff=diff or None)
        self.query_one(Vertical).mount(pager, before=self.query_one("#rewind-keys"))
        self.query_one("#rewind-wait").remove()
        self.query_one("#rewind-keys", Static).update(self._keys())
        pager.focus()

    def action_rewind_turn(self) -> None:
        """The rewind key again: rewind (nothing to do, or not worked out yet: nothing)."""
        if self.loaded:
            self.dismiss(not self.empty)

    def action_answer(self, rewind: bool) -> None:
        """Answer the question."""
        self.dismiss(rewind)

    def _confirming(self, key: str) -> bool:
        keymap = getattr(getattr(self.app, "config", None), "keymap", None)
        spec = next(spec for spec in KEYS if spec.id == "rewind")
        return key in {k.strip() for k in effective_key(spec, keymap).split(",")}

    def on_key(self, event: events.Key) -> None:
        """A letter but the rewind key answers nothing, here or behind the dialog (an
        approval's `y` must not reach the bar): say what to press. Scrolling keys scroll."""
        if not event.is_printable or self._confirming(event.key):
            return
        event.stop()
        event.prevent_default()
        name = event.character or event.key
        what = "esc closes" if self.loaded and self.empty else \
            f"{self.rewind_key} again rewinds, esc changes nothing"
        self.query_one("#rewind-note", Static).update(Text(f"{name} does nothing here: {what}"))
        self.app.bell()
