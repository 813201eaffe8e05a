"""`TextPager`: any amount of untrusted text, shown a screen at a time on the Line API.

A 10 MB output is split into lines once (a C-speed `splitlines`); each visible line is cleaned
and cut to a generous width only when drawn, so opening it costs milliseconds, not a render of
the whole text.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .text import styled_line

__all__ = ["TextPager"]

MAX_WIDTH = 2_000  # cells of one line shown (scroll sideways within them)


class TextPager(ScrollView, can_focus=True):
    """Scrollable plain text; arrow keys, page keys, home/end scroll it."""

    DEFAULT_CSS = """
    TextPager { height: 1fr; background: $surface; }
    """

    # Scrolling only: the same keys every Textual scrollable uses.
    BINDINGS: ClassVar[list[BindingType]] = [
        ("up", "scroll_up", "up"),
        ("down", "scroll_down", "down"),
        ("left", "scroll_left", "left"),
        ("right", "scroll_right", "right"),
        ("pageup", "page_up", "page up"),
        ("pagedown", "page_down", "page down"),
        ("home", "scroll_home", "top"),
        ("end", "scroll_end", "bottom"),
    ]

    def __init__(self, text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Lines break at `\n` (and `\r\n`) only: a U+2028 or a form feed is an unsafe
        # character, shown as a marker where it stands, not a line break.
        self.lines = (text.replace("\r\n", "\n") if "\r" in text else text).split("\n")
        if len(self.lines) > 1 and not self.lines[-1]:
            self.lines.pop()
        # Width from a sample: measuring a million lines would cost more than it shows.
        sample = self.lines[:2_000]
        self._width = min(MAX_WIDTH, max((len(line) for line in sample), default=0) + 1)

    def on_mount(self) -> None:
        self.virtual_size = Size(self._width, len(self.lines))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        style = self.rich_style
        if row >= len(self.lines):
            return Strip.blank(width, style)
        text = styled_line(self.lines[row], limit=MAX_WIDTH)
        text.no_wrap, text.overflow = True, "crop"
        strip = Strip(list(text.render(self.app.console)))
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_style(style)
