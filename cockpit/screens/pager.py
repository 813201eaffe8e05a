"""A full-screen pager over untrusted text: long tool output, a long message, raw events.

Long lines wrap (`w` scrolls sideways instead); `/` searches, `n`/`N` move through the matches;
the title line says where the current match is. Every key comes from `cockpit.keys` (scopes
`pager` and `pager-text`), so a remapped key is shown and listed as remapped.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from cockpit.keys import bindings
from cockpit.widgets import TextPager, clean_line
from engine_adapter.text import plural

__all__ = ["PagerScreen"]


class PagerScreen(Screen[None]):
    """`title` on top, `text` below; escape or q closes."""

    DEFAULT_CSS = """
    PagerScreen #pager-title { height: 1; background: $panel; padding: 0 1; }
    PagerScreen #pager-search {
        dock: bottom;
        display: none;
        height: 1;
        border: none;
        padding: 0 1;
        background: $boost;
    }
    PagerScreen #pager-search.-shown { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("pager"), *bindings("pager-text")]

    def __init__(self, title: str, text: str, *, diff: str | None = None) -> None:
        super().__init__()
        self._title = title
        self._text = text
        self._diff = diff  # the diff inside `text`, coloured as in the transcript
        self._lines = 0

    def compose(self) -> ComposeResult:
        pager = TextPager(self._text, id="pager", diff=self._diff)
        self._lines = len(pager.lines)
        yield Static("", id="pager-title")
        yield pager
        yield Input(placeholder="search (enter finds, escape closes; lower case matches any "
                    "case)", id="pager-search", max_length=500)
        yield Footer()

    @property
    def pager(self) -> TextPager:
        """The text."""
        return self.query_one(TextPager)

    def on_mount(self) -> None:
        self._show_title()
        self.pager.focus()

    def _show_title(self) -> None:
        title = Text(f"{clean_line(self._title, 200)}  ({plural(self._lines, 'line')})",
                     style="bold", no_wrap=True, overflow="ellipsis")
        found = self.pager.describe_search()
        if found:
            title.append(f"  · {found}", style="not bold")
        self.query_one("#pager-title", Static).update(title)

    # Search ------------------------------------------------------------------------------------
    def _search_box(self) -> Input:
        return self.query_one("#pager-search", Input)

    def action_search(self) -> None:
        """Open the search box."""
        box = self._search_box()
        box.add_class("-shown")
        box.value = self.pager.term
        self.set_focus(box)  # at once: the keys typed right after `/` go into the box

    @on(Input.Submitted, "#pager-search")
    def _search(self, message: Input.Submitted) -> None:
        self._close_search()
        self.pager.search(message.value)

    def _close_search(self) -> None:
        self._search_box().remove_class("-shown")
        self.set_focus(self.pager)

    @on(TextPager.Searched)
    def _searched(self, message: TextPager.Searched) -> None:
        self._show_title()
        if message.term and not message.count:
            self.notify(self.pager.describe_search(), severity="warning", markup=False,
                        timeout=3)

    def action_next_match(self, step: int) -> None:
        """The next (1) or previous (-1) match."""
        self.pager.next_match(step)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or scroll sideways."""
        self.pager.toggle_wrap()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the search box has focus, its keys type; `n`/`N` only after a search."""
        if self._search_box().has_focus:
            return action == "close"
        if action == "next_match":
            return bool(self.pager.term)
        return True

    def action_close(self) -> None:
        """Close the search box if it is open, else the pager."""
        if self._search_box().has_class("-shown"):
            self._close_search()
            return
        self.dismiss(None)
