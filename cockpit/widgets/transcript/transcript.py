"""The transcript: every item of a run, as ONE virtualised widget on Textual's Line API.

Rows are never widgets. Each item renders to a list of `Strip`s (see `items.render_item`), kept
in a small LRU cache; the widget keeps only each item's height and first row, and `render_line`
finds the item behind a screen row with `bisect`. A change re-renders only the items it touched,
so a 100k-event run costs what the visible rows cost.

It renders a `RunView` (never a Session): `show(view)` redraws from any view (a replay seek),
`update_items(view, indices)` is the incremental path. Selecting, expanding, and the keys (move,
page, `enter`, `i`) live here; what a pager or the raw-event inspector shows is the app's
business, asked for with the `OpenPager` and `Inspect` messages.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import suppress
from itertools import accumulate
from math import ceil
from typing import NamedTuple, Self

from rich.segment import Segment
from rich.style import Style
from textual.dom import NoScreen
from textual.events import (
    Blur,
    Click,
    DescendantBlur,
    DescendantFocus,
    Focus,
    MouseScrollUp,
    Resize,
)
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from cockpit.keys import bindings
from cockpit.styles import palette_for
from cockpit.widgets.transcript.copying import copy_of
from cockpit.widgets.transcript.finished_rows import FinishedRows, look_of
from cockpit.widgets.transcript.items import (
    GUTTER,
    estimate_rows,
    needs_pager,
    render_item,
    row_count,
    starts_turn,
)
from cockpit.widgets.transcript.rows import (
    changed_rows,
    highlighted,
    keep_equal_rows,
    search_pattern,
)
from cockpit.widgets.transcript.scrollbar import KeptRowsScrollBar
from engine_adapter.view import Item, RunView

__all__ = ["Transcript"]

# Rendered items kept; everything else is re-rendered when scrolled to. Each cached row is a
# Textual Strip carrying seven small caches of its own: at 1,500 items a 100k-event flood held
# ~120k of them, which made full GC passes slow and cost ~25 MiB (bench_ui). 300 items is still
# several screens of scrollback.
CACHE_ITEMS = 300
# `show()` of a huge view (a replay jump into a million-event run) renders only the last items
# (two screens of them, at most this many) to measure them; earlier ones get an estimated height,
# corrected when first drawn.
EXACT_MEASURE = 64
# How far back a selected row looks for an earlier row of its turn (turn-less rows between
# turns are a few notices: a phase change, a checkpoint that failed).
_TURNLESS_SCAN = 64
# Rows kept as last drawn (see `render_line`): a few screens; past that the lot is dropped.
ROWS_KEPT = 512


class _Paint(NamedTuple):
    """What every row of one paint shares."""

    base: Style
    width: int
    scroll_x: int
    scroll_y: int


def _same_key(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether a row's key is unchanged: its rendered row is the same `Strip` (not only an
    equal one), the rest equal."""
    return a[0] is b[0] and a[1:] == b[1:]


def _thumb(bar: ScrollBar, virtual: float, window: float, position: float) -> list[Segment]:
    """The cells `bar` draws with these sizes and position (by its own renderer)."""
    return list(bar.renderer.render_bar(
        size=bar.size.height, virtual_size=ceil(virtual),
        window_size=ceil(window if window < virtual else 0), position=position,
        thickness=bar.thickness).segments)


def _move_thumb(bar: ScrollBar, virtual: int, window: int, position: float) -> None:
    """Give `bar` these sizes and position, repainting only its rows whose cells change.

    Textual repaints all of a scrollbar's rows whenever any of the three changes (~5 ms for
    43 rows at 160x48, on every `pgdn`); a thumb that moves changes a few rows at its ends.
    A bar not laid out yet (no cells to tell) is repainted whole, as Textual would."""
    before = _thumb(bar, bar.window_virtual_size, bar.window_size, bar.position) \
        if bar.size.height else None
    bar.set_reactive(ScrollBar.window_virtual_size, virtual)
    bar.set_reactive(ScrollBar.window_size, window)
    bar.set_reactive(ScrollBar.position, position)
    if before is None:
        bar.refresh()
        return
    after = _thumb(bar, virtual, window, position)
    if len(after) != len(before):  # (a thumb past the end: Textual's cells overrun the bar)
        bar.refresh()
        return
    changed = [y for y, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    if changed:
        bar.refresh(Region(0, changed[0], bar.size.width, changed[-1] - changed[0] + 1))


class Transcript(ScrollView, can_focus=True):
    """The run's items, grouped by turn; arrow keys select, `enter` expands, `i` inspects."""

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    """

    BINDINGS = bindings("transcript")

    class OpenPager(Message):
        """The user wants the whole of `item` in a pager."""

        def __init__(self, item: Item) -> None:
            super().__init__()
            self.item = item

    class Inspect(Message):
        """The user wants the raw events behind `item`."""

        def __init__(self, item: Item) -> None:
            super().__init__()
            self.item = item

    class Rewind(Message):
        """The user wants the workspace rewound to the start of `item`'s turn (`item` opens
        it: the turn's header is selected)."""

        def __init__(self, item: Item) -> None:
            super().__init__()
            self.item = item

    class FollowChanged(Message):
        """The transcript started or stopped following the run (`follow`)."""

        def __init__(self, follow: bool) -> None:
            super().__init__()
            self.follow = follow

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._items: list[Item] = []
        self._pending: Mapping[str, Item] = {}  # calls awaiting approval, oldest first
        self._heights: list[int] = []
        self._starts: list[int] = []  # first row of each item
        self._total = 0
        self._cache: OrderedDict[int, list[Strip]] = OrderedDict()
        self._expanded: set[int] = set()
        self._open: set[int] = set()  # messages drawn while still streaming
        self._reserve = 0  # blank rows below the last item (room for the approval bar)
        self._estimated: set[int] = set()  # items whose height is a guess until drawn
        self._highlight: re.Pattern[str] | None = None  # a search's term, marked where shown
        self._relayout_pending = False
        self._width = 0
        self._paint: _Paint | None = None  # what the rows of a paint under way share
        # The row drawn from (its id; a place, item and row within it, for a row past its
        # item's end): its key, the row as drawn
        self._rows: dict[object, tuple[tuple[object, ...], Strip]] = {}
        self._blank: tuple[int, Style, Strip] | None = None  # a row below the last item
        self._finished = FinishedRows(ROWS_KEPT)  # rows drawn, as Textual finished them
        self._fresh: dict[int, Strip] | None = None  # (see `_finished_lines`)
        self._bar_drawn: tuple[Size, list[Segment]] | None = None  # (see `_scroll_update`)
        self.cursor = -1  # selected item; -1 = none (following the run)
        self._follow = True

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The vertical scrollbar (made when first asked for, as Textual's): one that keeps
        its rows as finished (`KeptRowsScrollBar`: Textual's re-rendered all 43 of them, 2–4 ms
        at 160x48, on most keys)."""
        if self._vertical_scrollbar is None:
            bar = KeptRowsScrollBar(vertical=True, name="vertical",
                                    thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    @property
    def follow(self) -> bool:
        """Whether new rows scroll into sight (False once the user moved up; `end` resumes)."""
        return self._follow

    @follow.setter
    def follow(self, follow: bool) -> None:
        if follow != self._follow:
            self._follow = follow
            self.post_message(self.FollowChanged(follow))

    @property
    def total_rows(self) -> int:
        """Rows of all items laid out (without the reserved blank rows)."""
        return self._total

    # Feeding ---------------------------------------------------------------------------------
    def show(self, view: RunView) -> None:
        """Redraw everything from `view` (any view: a replay may jump anywhere)."""
        self._items, self._pending = view.items, view.pending
        self._cache.clear()
        self._open.clear()
        self._estimated.clear()
        self._heights = []
        self._starts = []
        self._total = 0
        self._expanded = {i for i in self._expanded if i < len(view.items)}
        if self.cursor >= len(view.items):
            self.cursor = len(view.items) - 1
        self._measure_from(0)
        self._after_change()

    def update_items(self, view: RunView, indices: Iterable[int]) -> None:
        """Re-render the items at `indices` and add any new ones (the incremental path)."""
        self._items, self._pending = view.items, view.pending
        known = len(self._heights)
        first = len(view.items)
        was = self._total
        if self._open:
            # A later event can close a streaming message (now shown as Markdown) without a
            # change naming it: re-render the ones that have closed.
            closed = {i for i in self._open if getattr(view.items[i], "complete", True)}
            if closed:
                self._open -= closed
                indices = {*indices, *closed}
        drawn: dict[int, list[Strip] | None] = {}  # the rows drawn before, where cached
        for index in indices:
            if index < known:
                drawn[index] = self._cache.pop(index, None)
                first = min(first, index)
        heights = [self._heights[i] for i in drawn]
        if first < known:
            self._remeasure(sorted(drawn))
            for index, rows in drawn.items():
                again = self._cache.get(index)
                if rows is not None and again is not None:
                    keep_equal_rows(rows, again)
        moved = len(view.items) > known or heights != [self._heights[i] for i in drawn]
        added = self._total  # the first row of the items added
        if len(view.items) > known:
            self._measure_from(known)
            added = self._starts[known]
        # Only rows from the first touched item down can differ (more, if the view scrolls);
        # within a re-rendered item (a streaming reply growing on its last line), only the
        # rows that differ from those drawn before; below it too if its height changed.
        top = self._starts[first] if first < len(self._starts) else was
        bottom = max(was, self._total)
        found = [(self._starts[i] + a, self._starts[i] + b) for i, rows in drawn.items()
                 for a, b in changed_rows(rows, self._cache.get(i), self._heights[i])]
        top = max(top, min([added, *(a for a, _ in found)]))
        if not moved:
            bottom = min(bottom, max([top, *(b for _, b in found)]))
        self._after_change((top, bottom))

    def refresh_all(self) -> None:
        """Re-render every item (after a theme or width change)."""
        self._cache.clear()
        self._heights, self._starts, self._total = [], [], 0
        self._measure_from(0)
        self._after_change()

    # Measuring -------------------------------------------------------------------------------
    def _render_width(self) -> int:
        width = self.scrollable_content_region.width
        return width if width > GUTTER else 80

    def _strips(self, index: int) -> list[Strip]:
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        items = self._items
        strips = render_item(items[index], items[index - 1] if index else None,
                             width=self._width, expanded=index in self._expanded,
                             palette=palette_for(self.app), console=self.app.console,
                             items=items)
        self._cache[index] = strips
        if getattr(items[index], "complete", True) is False:
            self._open.add(index)
        if len(self._cache) > CACHE_ITEMS:
            self._cache.popitem(last=False)
        return strips

    def _height(self, index: int) -> int:
        """Item `index`'s exact height: counted when that needs no rendering (a flood lays out
        many more rows a frame than reach the screen; those drawn are rendered by
        `render_line`), else rendered."""
        if index not in self._cache:
            items = self._items
            rows = row_count(items[index], items[index - 1] if index else None,
                             width=self._width, expanded=index in self._expanded)
            if rows is not None:
                return rows
        return len(self._strips(index))

    def _measure_from(self, start: int) -> None:
        if not self._width:
            self._width = self._render_width()
        heights, starts = self._heights, self._starts
        total = starts[start - 1] + heights[start - 1] if start else 0
        del heights[start:], starts[start:]
        items = self._items
        # Measure the items at the bottom that fill two screens (at most EXACT_MEASURE) exactly
        # (counted where that needs no rendering: a flood adds many more rows a frame than
        # reach the screen); guess the others' (each is drawn, and measured, when scrolled to).
        exact_from, rows, enough = len(items), 0, 2 * max(self.size.height, 24)
        while exact_from > start and len(items) - exact_from < EXACT_MEASURE and rows < enough:
            exact_from -= 1
            rows += self._height(exact_from)
        if exact_from > start:  # a long way from the end: guess, in C-speed steps
            width = self._width
            guessed = [estimate_rows(item, width) for item in items[start:exact_from]]
            starts.extend(accumulate(guessed[:-1], initial=total))
            heights.extend(guessed)
            total += sum(guessed)
            self._estimated.update(range(start, exact_from))
        for index in range(exact_from, len(items)):
            height = self._height(index)
            starts.append(total)
            heights.append(height)
            total += height
        self._total = total

    def _remeasure(self, indices: list[int]) -> None:
        heights, starts = self._heights, self._starts
        moved = -1
        for index in indices:
            height = self._height(index)
            if height != heights[index]:
                heights[index] = height
                moved = index if moved < 0 else min(moved, index)
        if moved >= 0:  # rows below the first taller/shorter item shift
            total = starts[moved]
            for index in range(moved, len(heights)):
                starts[index] = total
                total += heights[index]
            self._total = total

    def _set_virtual_height(self, total: int, scroll_to: float | None = None) -> None:
        """Grow or shrink the scrollable height without a layout pass when possible:
        `virtual_size` is a layout reactive (setting it re-lays out and repaints the whole
        screen, every frame of a flood); unless the scrollbar appears or goes, the new height
        is set quietly and the scrollbar told directly (quietly too when its thumb, at the
        position the view is about to `scroll_to`, is drawn where it is)."""
        size = Size(self._width, total)
        if size == self.virtual_size:
            return
        window = self.scrollable_content_region.height
        if not self.is_mounted or (self.virtual_size.height > window) != (total > window) \
                or size.width != self.virtual_size.width:
            self.virtual_size = size
            return
        self.set_reactive(Transcript.virtual_size, size)
        if self.show_vertical_scrollbar:
            bar = self.vertical_scrollbar
            position = bar.position if scroll_to is None else scroll_to
            _move_thumb(bar, total, window, position)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Following a flood scrolls every frame, but the thumb of a long transcript moves a
        cell only every few thousand rows: the scrollbar is repainted (all its rows, ~3 ms)
        only when its thumb is drawn elsewhere."""
        if self.show_vertical_scrollbar:
            bar = self.vertical_scrollbar
            _move_thumb(bar, bar.window_virtual_size, bar.window_size, new_value)
        # (the rest of Textual's `ScrollView.watch_scroll_y`, which repaints the whole bar)
        if round(old_value) != round(new_value):
            self.refresh(self.size.region)

    def _scroll_update(self, virtual_size: Size) -> None:
        """Textual's, without repainting the scrollbar when it would draw what it drew.

        Textual calls this after every layout pass in which the compositor's idea of the
        widget's virtual size differs from the widget's own — for a ScrollView that is every
        pass, as the compositor hands it the size of its region — and repaints the scrollbar
        each time (all its rows: ~3–6 ms at 160x48, on keys that scroll nothing: `y`, `a`).
        Here it is repainted when its size or its thumb's cells differ from those of its
        last repaint here: a change made while it could not repaint (before it was laid
        out) still shows at the next layout, as with Textual's."""
        self._refresh_scrollbars()
        if self.show_vertical_scrollbar and self.styles.scrollbar_size_vertical:
            bar = self.vertical_scrollbar
            bar.set_reactive(ScrollBar.window_virtual_size, virtual_size.height)
            bar.set_reactive(ScrollBar.window_size,
                             self.container_size.height - self.scrollbar_size_horizontal)
            drawn = (bar.size, _thumb(bar, bar.window_virtual_size, bar.window_size,
                                      bar.position))
            if drawn != self._bar_drawn:
                self._bar_drawn = drawn
                bar.refresh()
        self.scroll_x = self.validate_scroll_x(self.scroll_x)
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    # The transcript looks the same focused or not (no `:focus` rule applies to it: a test
    # checks), so a focus move (`n` into the reason box, escape back) neither restyles nor
    # repaints it. Textual does both by default: the restyle sets every scrollbar colour
    # again, and each set repaints the scrollbar; `focus()`, `on_focus` and `on_blur` each
    # repaint every row (together about half of `n`'s frame at 160x48, issue 29).
    def watch_has_focus(self, has_focus: bool) -> None:
        """Nothing to restyle (see above)."""

    def focus(self, scroll_visible: bool = True) -> Self:
        """Take the focus (as Textual's `focus`, without repainting every row first)."""
        def set_focus(widget: Widget) -> None:
            with suppress(NoScreen):  # (gone by then)
                widget.screen.set_focus(self, scroll_visible=scroll_visible)

        self.app.call_later(set_focus, self)
        return self

    def on_focus(self, event: Focus) -> None:
        """Focused: nothing to repaint (see above)."""
        event.prevent_default()  # (Textual's own handler would repaint every row)
        self.has_focus = True
        if self.parent is not None:
            self.parent.post_message(DescendantFocus(self))

    def on_blur(self, event: Blur) -> None:
        """Blurred: nothing to repaint (see above)."""
        event.prevent_default()
        self.has_focus = False
        if self.parent is not None:
            self.parent.post_message(DescendantBlur(self))

    def reserve_rows(self, rows: int) -> None:
        """Keep `rows` blank rows below the last item (something floats over the bottom)."""
        if rows != self._reserve:
            self._reserve = rows
            self._after_change()

    def _relayout(self) -> None:
        self._relayout_pending = False
        self._after_change()

    def _after_change(self, rows: tuple[int, int] | None = None) -> None:
        """Size, follow and repaint after a change; `rows` (content rows, end excluded) limits
        the repaint to what changed (a scroll repaints the whole view by itself)."""
        total = self._total + self._reserve
        bottom = max(0, total - self.scrollable_content_region.height)
        self._set_virtual_height(total, bottom if self.follow else None)
        if self.follow:
            self.scroll_to(y=bottom, animate=False, immediate=True)
            if round(self.scroll_y) != bottom and not self._relayout_pending:
                # The scrollbar this height needs comes with the next layout (no scrolling
                # before it): follow once it is there.
                self._relayout_pending = True
                self.call_after_refresh(self._relayout)
        if rows is None:
            self.refresh()
            return
        view_top = round(self.scroll_y)
        top = max(rows[0], view_top)
        bottom = min(rows[1] + self._reserve, view_top + self.scrollable_content_region.height)
        if top < bottom:  # a change below or above the view repaints nothing
            self.refresh_lines(top, bottom - top)

    def on_resize(self, event: Resize) -> None:
        width = self._render_width()
        if width != self._width:
            self._width = width
            self.refresh_all()
        elif self.follow:  # shorter or taller: keep the last row in sight
            self._after_change()

    # Drawing ---------------------------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        # What every row of a paint shares, looked up once a paint, not once a row:
        # `rich_style` walks every ancestor's styles (~0.1 ms), `scrollable_content_region`
        # works out the gutter and scrollbars (~40 µs).
        x, y = self.scroll_offset
        self._paint = _Paint(self.rich_style, self.scrollable_content_region.width, x, y)
        try:
            look = look_of(self)
            if look is None:
                return super().render_lines(crop)
            self._finished.use_look(look)
            return self._finished_lines(crop)
        finally:
            self._paint = None

    def _finished_lines(self, crop: Region) -> list[Strip]:
        """The rows of `crop` as Textual finishes them, each taken from `_finished` where this
        row was finished before, the others (in runs) from Textual's own `render_lines`."""
        width = self.region.width
        lines: list[Strip | None] = []
        missing: list[tuple[int, Strip]] = []
        for y in crop.line_range:
            row = self.render_line(y)
            finished = self._finished.get(row)
            lines.append(finished)
            if finished is None:
                missing.append((y, row))
        runs: list[list[tuple[int, Strip]]] = []  # rows missing, in runs of adjacent ones
        for y, row in missing:
            if runs and runs[-1][-1][0] == y - 1:
                runs[-1].append((y, row))
            else:
                runs.append([(y, row)])
        for run in runs:
            self._fresh = {}  # (the rows Textual asks for now: rendered, not from its cache)
            try:
                done = super().render_lines(Region(0, run[0][0], width, len(run)))
            finally:
                fresh, self._fresh = self._fresh, None
            for (y, row), finished in zip(run, done, strict=True):
                lines[y - crop.y] = finished
                if fresh.get(y) is row:
                    self._finished.keep(row, finished)
        strips = [line for line in lines if line is not None]  # (all of them, by now)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def render_line(self, y: int) -> Strip:
        strip = self._row(y)
        if self._fresh is not None:
            self._fresh[y] = strip
        return strip

    def _row(self, y: int) -> Strip:
        """Row `y` of the view, the same `Strip` as last drawn while nothing it is drawn from
        changed (`_finished` knows it by that)."""
        paint = self._paint or _Paint(self.rich_style, self.scrollable_content_region.width,
                                      *self.scroll_offset)
        base, width, scroll_x = paint.base, paint.width, paint.scroll_x
        row = paint.scroll_y + y
        if row >= self._total or not self._starts:
            if self._blank is None or self._blank[:2] != (width, base):
                self._blank = (width, base, Strip.blank(width, base))
            return self._blank[2]
        index = bisect_right(self._starts, row) - 1
        strips = self._strips(index)
        if index in self._estimated:
            self._estimated.discard(index)
            if len(strips) != self._heights[index]:  # the guess was off: lay out again
                self._remeasure([index])
                if not self._relayout_pending:  # once per frame, after it (scroll, follow)
                    self._relayout_pending = True
                    self.call_later(self._relayout)
        offset = row - self._starts[index]
        # The row as last drawn, if nothing it is drawn from changed: the item's rendered row
        # (a new `Strip` whenever the item, the width or the theme changed it: rows rendered
        # again but equal keep theirs, `keep_equal_rows`), the style, the selection (and, when
        # selected, whether it is the item's first row: the marker) and a search's term. Kept
        # by the row drawn from, not by its place: rows that only moved (below an item that
        # expanded, or up within a streaming reply whose first rows were cut) are kept too.
        drawn_from = strips[offset] if offset < len(strips) else None
        selected = index == self.cursor
        key = (drawn_from, width, scroll_x, base, selected, selected and offset == 0,
               self._highlight)
        place: object = id(drawn_from) if drawn_from is not None else (index, offset)
        drawn = self._rows.get(place)
        if drawn is not None and _same_key(drawn[0], key):
            return drawn[1]
        strip = self._final_row(strips, offset, index, width, scroll_x, base)
        if len(self._rows) >= ROWS_KEPT:
            self._rows.clear()
        self._rows[place] = (key, strip)
        return strip

    def _final_row(self, strips: list[Strip], offset: int, index: int, width: int,
                   scroll_x: int, base: Style) -> Strip:
        """Row `offset` of item `index` as the screen shows it: cut to the view, in the
        transcript's style, marked when selected or matching a search."""
        strip = strips[offset] if offset < len(strips) else Strip([])
        if index == self.cursor:
            palette = palette_for(self.app)
            marker = Segment("▌", Style(color=palette.primary.color)) if offset == 0 \
                else Segment(" ")
            strip = Strip([marker, *list(strip)[1:]], strip.cell_length)
            strip = strip.crop_extend(0, width, base).apply_style(palette.selected)
        if self._highlight is not None:
            strip = highlighted(strip, self._highlight, palette_for(self.app).warning
                                + Style(reverse=True, bold=True))
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_style(base)

    def highlight(self, term: str) -> None:
        """Mark every place `term` shows (literal; a lower-case term matches any case), as
        replay's search does; an empty term marks nothing."""
        self._highlight = search_pattern(term) if term else None
        self.refresh()

    @property
    def item_count(self) -> int:
        """How many items are laid out."""
        return len(self._heights)

    # Selection -------------------------------------------------------------------------------
    @property
    def selected(self) -> Item | None:
        """The selected item, if any."""
        if 0 <= self.cursor < self.item_count:
            return self._items[self.cursor]
        return None

    def select(self, index: int) -> None:
        """Select item `index` (clamped) and scroll it into view; stops following the run."""
        # The items laid out (the view's list may be ahead of them while the transcript waits
        # behind an answer: see `cockpit.live.answer_first`).
        if not self.item_count:
            return
        index = max(0, min(index, self.item_count - 1))
        before, had_selection = self.cursor, self.selected is not None
        had_header = had_selection and self.selected_turn_header is not None
        self.cursor = index
        self.follow = False
        top, height = self._starts[index], self._heights[index]
        view_top = round(self.scroll_y)
        view_height = self.scrollable_content_region.height
        if top < view_top or height > view_height:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + height > view_top + view_height:
            self.scroll_to(y=top + height - view_height, animate=False, immediate=True)
        if round(self.scroll_y) != view_top:
            self.refresh()  # scrolled: every row moved
        else:  # only the rows of the item left and of the item selected change
            for i in {before, index}:
                if 0 <= i < len(self._starts):
                    self.refresh_lines(self._starts[i], self._heights[i])
        if not had_selection or had_header != (self.selected_turn_header is not None):
            # the keys that need a selection (or a turn's header: `b`) apply now, or no more
            self.refresh_bindings()

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        """Scrolling up with the mouse stops following the run (`end` follows again)."""
        if self.max_scroll_y > 0:
            self.follow = False

    def on_click(self, event: Click) -> None:
        """Select the item under the mouse."""
        row = round(self.scroll_y) + event.y
        if self._starts and 0 <= row < self._total:
            self.select(bisect_right(self._starts, row) - 1)

    # Keys ------------------------------------------------------------------------------------
    def action_cursor_up(self) -> None:
        """Select the previous item (from following: the last one)."""
        self.select(self.item_count - 1 if self.cursor < 0 else self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Select the next item."""
        if self.cursor < 0:
            self.select(self.item_count - 1)
        else:
            self.select(self.cursor + 1)

    def action_cursor_first(self) -> None:
        """Select the first item."""
        self.select(0)

    def action_cursor_last(self) -> None:
        """Clear the selection and follow the run again."""
        self.cursor = -1
        self.follow = True
        self._after_change()
        self.refresh_bindings()

    def action_page_up(self) -> None:
        """Scroll up a page."""
        self.follow = False
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        """Scroll down a page."""
        self.scroll_page_down(animate=False)

    def action_expand(self) -> None:
        """Expand or collapse the selected item; ask for a pager when expanding cannot show it
        all."""
        item = self.selected
        if item is None:
            return
        if item.index in self._expanded and needs_pager(item):
            self.post_message(self.OpenPager(item))
            return
        if item.index in self._expanded:
            self._expanded.discard(item.index)
        else:
            self._expanded.add(item.index)
            if needs_pager(item):
                self.post_message(self.OpenPager(item))
        self._cache.pop(item.index, None)
        self._remeasure([item.index])
        self._set_virtual_height(self._total + self._reserve)
        self.select(item.index)
        self.refresh()  # the rows below it moved

    def _inspected(self) -> Item | None:
        """The selected item; with none selected, the call awaiting approval (the bar says
        `i` shows its whole input)."""
        if self.selected is not None:
            return self.selected
        return next(iter(self._pending.values()), None)

    def action_inspect(self) -> None:
        """Ask for the raw events behind the selected item (or the call awaiting approval)."""
        item = self._inspected()
        if item is not None:
            self.post_message(self.Inspect(item))

    def action_copy_item(self) -> None:
        """Copy the selected item (a reply, a command, a diff) to the clipboard, and say so."""
        item = self.selected
        if item is None:
            return
        copied = copy_of(item)
        self.app.copy_to_clipboard(copied.text)
        self.notify(copied.notice(), markup=False, timeout=4)

    @property
    def selected_turn_header(self) -> Item | None:
        """The selected item when it opens its turn: the turn's header is drawn on it, or (a
        task's first turn, after the task's turn-less rows) no earlier row of the task has a
        turn."""
        item = self.selected
        if item is None or item.turn is None or item.kind in ("task", "end"):
            return None
        previous = self._items[self.cursor - 1] if self.cursor > 0 else None
        if starts_turn(item, previous):
            return item
        for index in range(self.cursor - 1, max(-1, self.cursor - 1 - _TURNLESS_SCAN), -1):
            earlier = self._items[index]
            if earlier.task != item.task or earlier.kind == "task":
                return item
            if earlier.turn:  # 0: a row of the task before its first turn (`agent ready`)
                return None
        return None

    def action_rewind_turn(self) -> None:
        """Ask for a rewind to the start of the selected turn (its header selected)."""
        item = self.selected_turn_header
        if item is not None:
            self.post_message(self.Rewind(item))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`enter` and `c` apply only with an item selected; `i` also to a pending approval;
        `b` (rewind) only on a turn's header."""
        if action in ("expand", "copy_item"):
            return self.selected is not None
        if action == "rewind_turn":
            return self.selected_turn_header is not None
        if action == "inspect":
            return self._inspected() is not None
        return True

