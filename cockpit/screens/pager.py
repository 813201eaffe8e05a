"""A full-screen pager over untrusted text: long tool output, a long message, raw events."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine_adapter.text import plural

from ..keys import bindings
from ..widgets.pager import TextPager
from ..widgets.text import clean_line

__all__ = ["PagerScreen"]


class PagerScreen(Screen[None]):
    """`title` on top, `text` below; escape or q closes."""

    DEFAULT_CSS = """
    PagerScreen #pager-title { height: 1; background: $panel; padding: 0 1; }
    """

    BINDINGS = bindings("pager")

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self._title = title
        self._text = text

    def compose(self) -> ComposeResult:
        lines = self._text.count("\n") + 1
        yield Static(Text(f"{clean_line(self._title, 200)}  ({plural(lines, 'line')})",
                          style="bold"),
                     id="pager-title")
        yield TextPager(self._text, id="pager")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TextPager).focus()

    def action_close(self) -> None:
        """Close the pager."""
        self.dismiss(None)
