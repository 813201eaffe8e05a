"""`TextLines`: a Rich `Text` drawn by Rich's own renderer into rows kept until it changes.

Textual draws a `Static`'s text through its `Content`, which gives every segment of every row a
style of its own carrying the cell's offset (for mouse selection): measured on the key hints
(issue 29), about a tenth of a millisecond a segment, so a one-line footer of twenty coloured
words cost 3–4 ms of a key's frame at 160x48. Rich renders the text once per width and look, the
rows are kept, and the height is the number of rows it wraps to.

The price is Textual's mouse selection: without offsets a drag selects the whole widget, and
nothing is highlighted. So only what nobody selects is drawn this way (the footer's key hints);
the approval bar's parts stay `Static`, since a user copies the command shown there.

`update(text)` replaces the text (and, unless `layout=False`, lays the widget out again: its
height may change); `render()` gives the text back, as a `Static`'s would. The rows of the last
few texts shown are kept too (`RECENT_TEXTS`): the key hints go back and forth between a few
lines (an approval waiting or not, an item selected or not), and drawing one again cost
0.5–1 ms of each such key's frame at 160x48 (issue 29).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["RECENT_TEXTS", "TextLines"]

RECENT_TEXTS = 8  # texts whose rows are kept besides the one shown


def _shape(text: Text) -> tuple[object, ...]:
    """What a text's rows are drawn from (two texts of one shape draw the same rows)."""
    return (text.plain, tuple(text.spans), text.style, text.no_wrap, text.overflow,
            text.justify, text.end, text.tab_size)


class TextLines(Widget):
    """Rows of one Rich `Text`, wrapped (or cut, as the text says) to the content width."""

    DEFAULT_CSS = """
    TextLines { height: auto; }
    """

    def __init__(self, text: Text | str = "", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text if isinstance(text, Text) else Text(text)
        # The shown text's rows by width, in one look (a layout may measure two widths: with
        # and without a scrollbar); emptied when the look changes.
        self._rows: dict[int, list[Strip]] = {}
        self._rows_style: Style | None = None
        # The rows by width of recent texts (the one shown among them), by their shape.
        self._recent: dict[tuple[object, ...], dict[int, list[Strip]]] = {}
        self.rows_drawn = 0  # texts drawn into rows by Rich (tests count them)

    @property
    def text(self) -> Text:
        """The text shown."""
        return self._text

    def render(self) -> Text:
        """The text shown (what a test reads, as from a `Static`)."""
        return self._text

    def update(self, text: Text | str, *, layout: bool = True) -> None:
        """Show `text`; `layout=False` when its height cannot change (a one-row part)."""
        self._text = text if isinstance(text, Text) else Text(text)
        shape = _shape(self._text)
        rows = self._recent.pop(shape, None)
        if rows is None:
            rows = {}
            if len(self._recent) >= RECENT_TEXTS:
                self._recent.pop(next(iter(self._recent)))  # (the least recently shown)
        self._recent[shape] = self._rows = rows
        self.refresh(layout=layout)

    def rows(self, width: int) -> list[Strip]:
        """The text's rows at `width` cells, each exactly that wide, in the widget's style."""
        base = self.rich_style
        if base != self._rows_style:  # a new look: no row kept is drawn in it
            self._recent.clear()
            self._rows, self._rows_style = {}, base
            self._recent[_shape(self._text)] = self._rows
        kept = self._rows.get(width)
        if kept is not None:
            return kept
        console = self.app.console
        options = console.options.update(width=width, height=None, highlight=False)
        lines = console.render_lines(self._text, options, style=base, pad=True, new_lines=False)
        rows = [Strip(line, width) for line in lines]
        self.rows_drawn += 1
        if len(self._rows) >= 4:
            self._rows.clear()
        self._rows[width] = rows
        return rows

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """The longest line (for `width: auto`)."""
        return max((cell_len(line) for line in self._text.plain.split("\n")), default=0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The rows the text takes at `width`."""
        return len(self.rows(max(1, width)))

    def render_line(self, y: int) -> Strip:
        """Row `y` of the text (blank below its end)."""
        width = self.content_size.width
        rows = self.rows(width) if width > 0 else []
        if y < len(rows):
            return rows[y]
        return Strip.blank(width, self.rich_style)
