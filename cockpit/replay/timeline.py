"""The replay timeline bar: where you are in the journal and where the interesting events are.

Row one is the whole journal squeezed into the bar's width, one cell for a bucket of events,
marked with the most important thing in that bucket (error, failure, denial, approval,
verification result) and the cursor. While the journal is still being read, the bar spans the
events the whole file is estimated to hold, and the part not read yet is drawn `┈`, so marks
found early are not stretched over the whole bar. Row two says which event is shown, its wall
time and type, the play state, filter, search and what reading the journal ran into.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widget import Widget

from cockpit.styles import palette_for
from engine_adapter.events import FAILED_OUTCOMES
from engine_adapter.journal import BAD_OUTCOME, CORRUPT, TYPE_CODES, JournalIndex
from engine_adapter.replay import code_class

__all__ = ["MARKER_KINDS", "Markers", "Timeline", "TimelineState"]


def _went_badly(kind: str) -> tuple[int, ...]:
    """The codes of the events that went badly and mark `kind` (see `FAILED_OUTCOMES`)."""
    return tuple(TYPE_CODES[name] | BAD_OUTCOME for name, outcome in FAILED_OUTCOMES.items()
                 if outcome.marker == kind)


_T = TYPE_CODES
# Marker kinds, most important first; each with its glyph and the codes that make one.
MARKER_KINDS: dict[str, tuple[str, tuple[int, ...]]] = {
    "error": ("✗", (_T["decision_error"], CORRUPT, *_went_badly("error"))),
    "failure": ("!", _went_badly("failure")),
    "denial": ("⊘", _went_badly("denial")),
    "approval": ("?", (_T["approval_requested"],)),
    "verified": ("✓", (_T["verification_end"],)),
}

_MARKER_RES = {kind: code_class(codes) for kind, (_, codes) in MARKER_KINDS.items()}


@dataclass
class Markers:
    """Positions of each marker kind, grown as the index grows."""

    positions: dict[str, array] = field(
        default_factory=lambda: {kind: array("I") for kind in MARKER_KINDS})
    seen: int = 0

    def update(self, index: JournalIndex) -> None:
        """Add the markers of positions indexed since the last call (C-speed regex scans)."""
        end = len(index)
        if end <= self.seen:
            return
        chunk = index.codes[self.seen:end].tobytes()
        for kind, pattern in _MARKER_RES.items():
            self.positions[kind].extend(self.seen + m.start() for m in pattern.finditer(chunk))
        self.seen = end

    def recount(self, index: JournalIndex) -> None:
        """Start over (after lines were re-marked corrupt by parsing)."""
        self.positions = {kind: array("I") for kind in MARKER_KINDS}
        self.seen = 0
        self.update(index)


@dataclass
class TimelineState:
    """What the bar shows; the replay screen fills it in."""

    cursor: int = -1
    total: int = 0
    indexing: bool = True
    when: str = ""
    kind: str = ""
    playing: bool = False
    speed: float = 1.0
    following: bool = False
    filter_text: str = ""
    search_text: str = ""
    problems: str = ""
    busy: str = ""
    provisional: bool = False  # the view is of the journal's last part only: no position yet
    span: int = 0  # events the whole file is estimated to hold while it is read (0: `total`)


class Timeline(Widget):
    """Two rows: the marker strip with the cursor, and the position line."""

    DEFAULT_CSS = """
    Timeline {
        height: 2;
        background: $panel;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = TimelineState()
        self.markers = Markers()
        self._cells: tuple[tuple[int, ...], list[str], list[Any]] | None = None

    def update_state(self, **changes: object) -> None:
        """Change what the bar says and redraw it."""
        for name, value in changes.items():
            setattr(self.state, name, value)
        self.refresh()

    def render(self) -> Text:
        palette = palette_for(self.app)
        state = self.state
        width = max(10, self.size.width - 2)
        strip = self._strip(width, palette)
        info = Text(no_wrap=True, overflow="ellipsis")
        if state.provisional:
            info.append(f"the journal's last event (of ~{max(state.total, state.span):,})",
                        palette.warning)
        elif state.total == 0:
            info.append("reading the journal…" if state.indexing else "no events", palette.dim)
        else:
            shown = state.cursor + 1
            info.append(f"event {shown:,}/{state.total:,}{'+' if state.indexing else ''}",
                        palette.primary)
        if state.provisional or state.total:  # the event shown: its time and type
            if state.when:
                info.append(f"  {state.when}", palette.text)
            if state.kind:
                info.append(f"  {state.kind}", palette.accent)
        info.append("  ▶ playing" if state.playing else "  ❚❚", palette.dim)
        info.append(f" {state.speed:g}x", palette.dim)
        if state.following:
            info.append("  ● following", palette.success)
        for extra, style in ((state.busy, palette.warning), (state.filter_text, palette.accent),
                             (state.search_text, palette.accent),
                             (state.problems, palette.warning)):
            if extra:
                info.append(f"  {extra}", style)
        return Text("\n").join([strip, info])

    def _strip(self, width: int, palette: Any) -> Text:
        state = self.state
        total = state.total
        span = max(total, state.span)
        key = (width, span, id(palette), *(len(a) for a in self.markers.positions.values()))
        if self._cells is not None and self._cells[0] == key:  # same markers: reuse the cells
            cells, styles = self._cells[1], self._cells[2]
        else:
            cells, styles = self._marker_cells(width, span, palette)
            self._cells = (key, cells, styles)
        text = Text(no_wrap=True)
        read = -(-total * width // span) if span else 0  # cells holding events read so far
        if state.provisional:
            cursor_cell = width - 1  # the view is of the file's end
        else:
            cursor_cell = (min(width - 1, state.cursor * width // span)
                           if total and state.cursor >= 0 else -1)
        for i, (glyph, style) in enumerate(zip(cells, styles, strict=True)):
            if i == cursor_cell:
                text.append("┃" if glyph == " " else glyph, palette.primary + palette.selected)
            elif i >= read:
                text.append("┈", palette.dim)
            else:
                text.append("─" if glyph == " " else glyph, style or palette.dim)
        return text

    def _marker_cells(self, width: int, total: int,
                      palette: Any) -> tuple[list[str], list[Any]]:
        """One glyph a cell: the most important marker among the events the cell covers. A
        kind found in most cells (a run that fails all along) is drawn dim except where it is
        densest, and gives way to a less important kind that is not everywhere, so the bar
        still says where things went worst."""
        cells = [" "] * width
        styles: list[Any] = [None] * width
        if not total:
            return cells, styles
        colours = {"error": palette.error, "failure": palette.error, "denial": palette.warning,
                   "approval": palette.accent, "verified": palette.success}
        for kind in reversed(list(MARKER_KINDS)):  # least important first: overwritten
            counts = [0] * width
            for position in self.markers.positions[kind]:
                counts[min(width - 1, position * width // total)] += 1
            marked = sorted(c for c in counts if c)
            bright = 0  # everywhere: only cells at least twice as dense as the median are bright
            if len(marked) > width // 2:
                bright = 2 * marked[len(marked) // 2]
            glyph = MARKER_KINDS[kind][0]
            for cell, count in enumerate(counts):
                # A more important kind wins the cell, unless it is dim and the other bright.
                if count and (count >= bright or styles[cell] in (None, palette.dim)):
                    cells[cell] = glyph
                    styles[cell] = colours[kind] if count >= bright else palette.dim
        return cells, styles
