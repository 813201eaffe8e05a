"""`ScrollBox`: a region with a height limit that scrolls, under a one-line marker saying how
much is hidden below and which key scrolls it.

The approval bar and the end panel keep their long content in one, so a 4 KB reply or a long
reason never pushes the transcript, the status line or the keys off the screen. The keys that
scroll it (`panel-down`, `panel-up`) are app bindings: `scroll_panel` finds the box to scroll.
"""

from __future__ import annotations

from weakref import WeakSet

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.styles import palette_for
from engine_adapter.text import plural

__all__ = ["ScrollBox", "scroll_panel_target"]


class ScrollBox(Vertical):
    """`children` in a `VerticalScroll` of at most `max_rows` rows, and the marker below it
    (shown only while something is hidden)."""

    DEFAULT_CSS = """
    ScrollBox { height: auto; }
    ScrollBox > VerticalScroll {
        height: auto;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;  /* the text keeps its width whether or not it scrolls */
    }
    ScrollBox > .scroll-more { height: 1; display: none; }
    """

    def __init__(self, *children: Widget, max_rows: int = 10, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._children = children
        self._max_rows = max(1, max_rows)
        self._marker = ""

    def compose(self) -> ComposeResult:
        body = VerticalScroll(*self._children, can_focus=False)
        body.styles.max_height = self._max_rows
        yield body
        yield Static("", classes="scroll-more")

    @property
    def body(self) -> VerticalScroll:
        """The scrolling region."""
        return self.query_one(VerticalScroll)

    def on_mount(self) -> None:
        _mounted.add(self)
        body = self.body
        self.watch(body, "scroll_y", self._scrolled, init=False)
        self.watch(body, "virtual_size", self._scrolled, init=False)

    def on_unmount(self) -> None:
        _mounted.discard(self)

    @property
    def max_rows(self) -> int:
        """The most rows the content takes before it scrolls."""
        return self._max_rows

    @max_rows.setter
    def max_rows(self, rows: int) -> None:
        rows = max(1, rows)
        if rows != self._max_rows:
            self._max_rows = rows
            if self.is_mounted:
                self.body.styles.max_height = rows

    @property
    def hidden_below(self) -> int:
        """Rows of content below the visible part."""
        body = self.body
        return max(0, round(body.max_scroll_y - body.scroll_y))

    @property
    def overflows(self) -> bool:
        """Whether the content is taller than the box (the marker is shown). A box whose screen
        is being taken down (its children gone first) overflows nothing."""
        if not self.is_mounted:
            return False
        try:  # (`query_one` is cached by Textual: this is asked on every bindings refresh)
            body = self.body
        except NoMatches:
            return False
        return body.max_scroll_y > 0

    def content_changed(self, *, to_top: bool = False) -> None:
        """The content was replaced: start at its top (when asked) and update the marker once
        it is laid out."""
        if to_top:
            self.body.scroll_home(animate=False, immediate=True)
        self.call_after_refresh(self._scrolled)

    def scroll_page(self, direction: int) -> None:
        """Scroll a box-full (less a row, to keep the context) down (1) or up (-1)."""
        body = self.body
        step = max(1, body.size.height - 1)
        body.scroll_to(y=body.scroll_y + direction * step, animate=False, immediate=True)
        self._scrolled()

    def _scrolled(self, *_: object) -> None:
        if not self.is_mounted:
            return
        overflow = self.overflows
        marker = ""
        if overflow:
            below = self.hidden_below
            if below:
                marker = (f"▼ {plural(below, 'more line')} below · "
                          f"{key_label(self.app, 'panel-down')} scrolls")
            else:
                marker = f"▲ the end · {key_label(self.app, 'panel-up')} scrolls back up"
        if overflow != self.has_class("-overflow"):
            # The class marks it (for queries) without a restyle: a class change restyles the
            # box and all it holds (measured: several ms of the `a` key's frame, when the scope
            # step makes the approval bar overflow); the marker is shown by `display` alone.
            self.set_class(overflow, "-overflow", update=False)
            self.query_one(".scroll-more", Static).display = overflow
            self.app.refresh_bindings()  # the scroll keys apply now (or no longer)
        if marker != self._marker:
            self._marker = marker
            style = palette_for(self.app).warning
            self.query_one(".scroll-more", Static).update(Text(marker, style=style,
                                                               no_wrap=True,
                                                               overflow="ellipsis"))


# Every mounted box. The panel keys' `check_action` asks for the target each time bindings are
# refreshed (every selection move, every approval): with no box overflowing anywhere — nearly
# always — the answer comes from these few boxes without walking the DOM (~1 ms a call).
_mounted: WeakSet[ScrollBox] = WeakSet()


def scroll_panel_target(root: Widget) -> ScrollBox | None:
    """The box the panel keys scroll under `root`: the last shown one that overflows."""
    if not any(box.overflows for box in list(_mounted)):
        return None
    boxes = [box for box in root.query(ScrollBox) if box.overflows and box.display
             and all(node.display for node in box.ancestors_with_self
                     if isinstance(node, Widget))]
    return boxes[-1] if boxes else None
