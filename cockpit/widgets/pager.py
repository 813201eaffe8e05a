"""`TextPager`: any amount of untrusted text, shown a screen at a time on the Line API, long lines
wrapped (or scrolled sideways), with search.

A 10 MB output is split into lines once (a C-speed `splitlines`). Wrapping needs to know which
lines take more than one row: the lengths and the lines that are not plain printable ASCII are
found with C-speed `map`s, and only those lines (long, or with wide or unsafe characters, whose
width on screen is not their length) are measured one by one. A row is found from the few
multi-row lines with `bisect`. Past the first `EXACT_LINES` of those odd lines, a line's length
stands for its width until it is first drawn, when it is measured and the rows below move (the
transcript does the same); so a 10 MB output of escape sequences opens as fast as plain text.
Each line is cleaned and rendered only when drawn (a small cache keeps the last few).

Search (`search(term)`) is literal, smart-case (a lower-case term matches any case), runs over
the whole text at C speed (in a thread for a big text), and `next_match` moves through the
matches; matches on screen are highlighted.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from itertools import accumulate, compress, count
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from cockpit.styles import palette_for
from cockpit.widgets.safe_text import styled_line
from engine_adapter.view import line_kinds

__all__ = ["TextPager", "find_matches"]

MAX_WIDTH = 2_000  # cells of one line shown unwrapped (scroll sideways within them)
LINE_LIMIT = 200_000  # characters of one line shown wrapped (the rest is counted)
EXACT_LINES = 2_000  # odd lines measured when laid out; the rest when first drawn
MAX_MATCHES = 100_000  # matches a search keeps
THREAD_SEARCH = 1 << 20  # characters from which a search runs in a thread
CACHE_LINES = 64


def find_matches(text: str, line_starts: list[int], term: str) -> list[tuple[int, int]]:
    """(line, column) of each match of `term` in `text` (literal; smart case), at most
    `MAX_MATCHES`. `line_starts[i]` is the offset of line i in `text`."""
    if not term:
        return []
    flags = 0 if any(c.isupper() for c in term) else re.IGNORECASE
    pattern = re.compile(re.escape(term), flags)
    found: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        start = match.start()
        line = bisect_right(line_starts, start) - 1
        found.append((line, start - line_starts[line]))
        if len(found) >= MAX_MATCHES:
            break
    return found


class TextPager(ScrollView, can_focus=True):
    """Scrollable text; arrow keys, page keys, home/end scroll it. `wrap` folds long lines at
    the width (like `less`); without it, left and right scroll sideways."""

    DEFAULT_CSS = """
    TextPager { height: 1fr; background: $surface; scrollbar-gutter: stable; }
    """

    # Scrolling only: the same keys every Textual scrollable uses (not in the footer, which
    # names the pager's own keys).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_up", "up", show=False),
        Binding("down", "scroll_down", "down", show=False),
        Binding("left", "scroll_left", "left", show=False),
        Binding("right", "scroll_right", "right", show=False),
        Binding("pageup", "page_up", "page up", show=False),
        Binding("pagedown", "page_down", "page down", show=False),
        Binding("home", "scroll_home", "top", show=False),
        Binding("end", "scroll_end", "bottom", show=False),
    ]

    class Searched(Message):
        """A search finished (or the current match moved): `count` matches, `current` is the
        0-based index of the one shown (-1: none)."""

        def __init__(self, term: str, count: int, current: int) -> None:
            super().__init__()
            self.term = term
            self.count = count
            self.current = current

    def __init__(self, text: str, *, wrap: bool = True, id: str | None = None,
                 diff: str | None = None) -> None:
        super().__init__(id=id)
        # Lines break at `\n` (and `\r\n`) only: a U+2028 or a form feed is an unsafe
        # character, shown as a marker where it stands, not a line break.
        self.lines = (text.replace("\r\n", "\n") if "\r" in text else text).split("\n")
        if len(self.lines) > 1 and not self.lines[-1]:
            self.lines.pop()
        self.wrap = wrap
        # Width from a sample: measuring a million lines would cost more than it shows.
        sample = self.lines[:2_000]
        self._width = min(MAX_WIDTH, max((len(line) for line in sample), default=0) + 1)
        self._lens = list(map(len, self.lines))
        self._odd_lines: set[int] | None = None  # lines whose width on screen is not their length
        self._estimated: set[int] = set()  # odd lines whose rows are a guess until drawn
        self._corrections: dict[int, int] = {}  # line -> its measured rows, to lay out
        self._wrap_width = 0
        self._multi: list[int] = []  # lines taking more than one row, in order
        self._multi_rows: list[int] = []  # ... their rows
        self._multi_starts: list[int] = []  # ... their first row
        self._extra: list[int] = [0]  # rows beyond one a line, before the k-th multi-row line
        self._total = len(self.lines)
        self._strips: OrderedDict[int, Strip] = OrderedDict()
        self._joined: str | None = None
        self._line_starts: list[int] = []
        self.term = ""
        self.matches: list[tuple[int, int]] = []
        self.current = -1
        self._pattern: re.Pattern[str] | None = None
        self._diff_kinds = self._find_diff(text, diff)  # line -> its kind, in the diff shown

    def _find_diff(self, text: str, diff: str | None) -> dict[int, str]:
        """Where `diff` stands in `text`, each of its lines' kind (added, removed, hunk,
        file), so the pager colours it as the transcript does; {} when it is not there."""
        body = (diff or "").rstrip("\n")
        if not body:
            return {}
        at = text.find(body)
        if at < 0:
            return {}
        first = text.count("\n", 0, at)
        kinds = line_kinds(body.split("\n"))
        return {first + i: kind for i, kind in enumerate(kinds)
                if kind in ("add", "remove", "hunk", "file")}

    # Layout ------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._relayout()

    def on_resize(self, event: Resize) -> None:
        if self.wrap and self.scrollable_content_region.width != self._wrap_width:
            self._relayout()

    def toggle_wrap(self) -> None:
        """Wrap long lines, or scroll sideways."""
        self.wrap = not self.wrap
        top = self.line_at(round(self.scroll_y))[0]
        self._relayout()
        self.scroll_to(x=0, y=self.row_of(top), animate=False, immediate=True)

    def _relayout(self) -> None:
        self._strips.clear()
        if not self.wrap:
            self._wrap_width = 0
            self._multi, self._multi_rows, self._multi_starts, self._extra = [], [], [], [0]
            self._estimated, self._corrections = set(), {}
            self._total = len(self.lines)
            self.virtual_size = Size(self._width, self._total)
            return
        width = self._wrap_width = max(1, self.scrollable_content_region.width or 80)
        lines, lens = self.lines, self._lens
        if self._odd_lines is None:  # not printable ASCII: measured (C-speed scans find them)
            odd = set(compress(count(), map(operator.not_, map(str.isascii, lines))))
            odd.update(compress(count(), map(operator.not_, map(str.isprintable, lines))))
            self._odd_lines = odd
        # Measured: the first odd lines; the other odd ones are guessed from their length
        # (set operations, no per-line Python) until drawn. Only long lines can need more rows.
        exact_odd = set(sorted(self._odd_lines)[:EXACT_LINES])
        self._estimated, self._corrections = self._odd_lines - exact_odd, {}
        candidates = set(compress(count(), map(width.__lt__, lens)))
        candidates |= exact_odd
        estimated = self._estimated
        multi, rows_of = [], []
        for index in sorted(candidates):
            rows = self._rows(index, width, exact=index not in estimated)
            if rows > 1:
                multi.append(index)
                rows_of.append(rows)
        self._set_multi(multi, rows_of)

    def _set_multi(self, multi: list[int], rows_of: list[int]) -> None:
        """The lines taking more than one row and their rows: the row map and the height."""
        self._multi, self._multi_rows = multi, rows_of
        self._extra = list(accumulate((rows - 1 for rows in rows_of), initial=0))
        self._multi_starts = [index + extra for index, extra in zip(multi, self._extra,
                                                                   strict=False)]
        self._total = len(self.lines) + self._extra[-1]
        self.virtual_size = Size(self._wrap_width, self._total)

    def _rows_now(self, index: int) -> int:
        k = bisect_left(self._multi, index)
        return self._multi_rows[k] if k < len(self._multi) and self._multi[k] == index else 1

    def _measure_drawn(self, index: int) -> None:
        """A line whose rows were a guess is drawn: measure it; lay out again if it was off."""
        self._estimated.discard(index)
        rows = self._rows(index, self._wrap_width)
        if rows != self._rows_now(index):
            if not self._corrections:
                self.call_later(self._apply_corrections)  # once, after this frame's lines
            self._corrections[index] = rows

    def _apply_corrections(self) -> None:
        corrections, self._corrections = self._corrections, {}
        if not self.wrap or not corrections:
            return
        rows_by_line = dict(zip(self._multi, self._multi_rows, strict=True))
        rows_by_line.update(corrections)
        ordered = sorted(index for index, rows in rows_by_line.items() if rows > 1)
        self._set_multi(ordered, [rows_by_line[index] for index in ordered])
        self._strips.clear()
        self.refresh()

    def _cells(self, index: int) -> int:
        """Cells line `index` takes on screen (cleaned, tabs expanded, up to `LINE_LIMIT`)."""
        line = self.lines[index]
        if self._odd_lines is not None and index not in self._odd_lines:
            return min(len(line), LINE_LIMIT) + (len(self._cut_note(index)) if
                                                 len(line) > LINE_LIMIT else 0)
        return self._text(index).cell_len

    def _rows(self, index: int, width: int, *, exact: bool = True) -> int:
        cells = self._cells(index) if exact else min(self._lens[index], LINE_LIMIT)
        return max(1, -(-cells // width))

    def _cut_note(self, index: int) -> str:
        return f" … {self._lens[index] - LINE_LIMIT:,} more characters"

    def _text(self, index: int) -> Text:
        line = self.lines[index]
        text = styled_line(line, limit=LINE_LIMIT if self.wrap else MAX_WIDTH)
        kind = self._diff_kinds.get(index)
        if kind:  # a span under the markers' (a base style is not kept by `render`)
            text.stylize_before(self._diff_style(kind))
        if self.wrap and len(line) > LINE_LIMIT:
            text.append(self._cut_note(index), Style(italic=True))
        return text

    def row_of(self, index: int) -> int:
        """The first row of line `index`."""
        return index + self._extra[bisect_left(self._multi, index)]

    def line_at(self, row: int) -> tuple[int, int]:
        """The line shown on `row`, and which of its rows it is."""
        k = bisect_right(self._multi_starts, row) - 1
        if k < 0:
            return row, 0
        start, rows = self._multi_starts[k], self._multi_rows[k]
        if row < start + rows:
            return self._multi[k], row - start
        return self._multi[k] + 1 + (row - start - rows), 0

    @property
    def total_rows(self) -> int:
        """Rows the text takes (wrapped or not)."""
        return self._total

    # Drawing -----------------------------------------------------------------------------------
    def _line_strip(self, index: int) -> Strip:
        strip = self._strips.get(index)
        if strip is not None:
            self._strips.move_to_end(index)
            return strip
        text = self._text(index)
        text.no_wrap, text.overflow = True, "crop"
        if self._pattern is not None:
            text.highlight_regex(self._pattern, self._match_style(index))
        strip = Strip(list(text.render(self.app.console)), text.cell_len)
        self._strips[index] = strip
        if len(self._strips) > CACHE_LINES:
            self._strips.popitem(last=False)
        return strip

    def _diff_style(self, kind: str) -> Style:
        palette = palette_for(self.app)
        return {"add": palette.diff_add, "remove": palette.diff_remove,
                "hunk": palette.diff_hunk}.get(kind, Style(bold=True))

    def _match_style(self, index: int) -> Style:
        palette = palette_for(self.app)
        current = self.matches[self.current][0] if 0 <= self.current < len(self.matches) \
            else -1
        return palette.warning + Style(reverse=True, bold=index == current)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        style = self.rich_style
        if row >= self._total:
            return Strip.blank(width, style)
        index, part = self.line_at(row)
        if index >= len(self.lines):
            return Strip.blank(width, style)
        if self.wrap and index in self._estimated:
            self._measure_drawn(index)
        strip = self._line_strip(index)
        if self.wrap:
            start = part * self._wrap_width
            return strip.crop_extend(start, start + width, style).apply_style(style)
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_style(style)

    # Search ------------------------------------------------------------------------------------
    def search(self, term: str) -> None:
        """Find `term` everywhere; the first match at or after the top of the screen is shown
        (`Searched` says how many)."""
        self.term = term
        self.matches, self.current = [], -1
        self._pattern = None
        self._strips.clear()
        self.refresh()
        if not term:
            self.post_message(self.Searched(term, 0, -1))
            return
        if self._joined is None:
            self._joined = "\n".join(self.lines)
            self._line_starts = list(accumulate((n + 1 for n in self._lens[:-1]), initial=0))
        if len(self._joined) >= THREAD_SEARCH:
            self.run_worker(lambda: self._search_done(term, self._find(term)), thread=True,
                            group="pager-search", exclusive=True)
        else:
            self._found(term, self._find(term))

    def _find(self, term: str) -> list[tuple[int, int]]:
        assert self._joined is not None
        return find_matches(self._joined, self._line_starts, term)

    def _search_done(self, term: str, found: list[tuple[int, int]]) -> None:
        self.app.call_from_thread(self._found, term, found)

    def _found(self, term: str, found: list[tuple[int, int]]) -> None:
        if term != self.term:
            return  # a newer search has started
        self.matches = found
        flags = 0 if any(c.isupper() for c in term) else re.IGNORECASE
        self._pattern = re.compile(re.escape(term), flags) if found else None
        top = self.line_at(round(self.scroll_y))[0]
        self.current = next((i for i, (line, _) in enumerate(found) if line >= top), 0) \
            if found else -1
        self._show_current()

    def next_match(self, step: int) -> None:
        """Show the next (1) or previous (-1) match, wrapping around."""
        if not self.matches:
            self.post_message(self.Searched(self.term, 0, -1))
            return
        self.current = (self.current + step) % len(self.matches)
        self._show_current()

    def _show_current(self) -> None:
        self._strips.clear()  # the current match is drawn bolder
        if 0 <= self.current < len(self.matches):
            line, column = self.matches[self.current]
            row = self.row_of(line)
            if self.wrap and self._wrap_width:
                row += min(column // self._wrap_width, self._rows(line, self._wrap_width) - 1)
            height = self.scrollable_content_region.height
            if not round(self.scroll_y) <= row < round(self.scroll_y) + height:
                self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)
            if not self.wrap:
                width = self.scrollable_content_region.width
                if not round(self.scroll_x) <= column < round(self.scroll_x) + width:
                    self.scroll_to(x=max(0, column - width // 3), animate=False,
                                   immediate=True)
        self.refresh()
        self.post_message(self.Searched(self.term, len(self.matches), self.current))

    def describe_search(self) -> str:
        """`match 3 of 17 for "foo"`, `no match for "foo"`, or "" without a search."""
        if not self.term:
            return ""
        term = styled_line(self.term, limit=60).plain
        if not self.matches:
            return f'no match for "{term}"'
        more = "+" if len(self.matches) >= MAX_MATCHES else ""
        return f'match {self.current + 1:,} of {len(self.matches):,}{more} for "{term}"'
