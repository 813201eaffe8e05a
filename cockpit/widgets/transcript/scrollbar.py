"""`KeptRowsScrollBar`: the transcript's scrollbar, each row kept as Textual finished it (issue 29).

Textual finishes every row of a scrollbar anew whenever any part of it is refreshed: each row
through the styles pipeline (background, the app's line filters), ~2–4 ms for the 43 rows of a
160x48 transcript, on most keys (`y` and `a` change the room below the items, `pgdn` and `end`
move the thumb, `enter` grows an item). Yet a scrollbar's rows are one of a handful: the track
above the thumb, the thumb, the track below, a partial glyph at each end of the thumb. So the
row Textual finished is kept by what it was finished from (the row of the bar's own rendering,
`render_line`, which Textual renders once a refresh), for as long as the bar's look (`look_of`)
is unchanged; only a row not seen before goes through the pipeline. (Measured at 160x48: the
bar's paint on `end` and `y` from 2–4 ms to 1–1.6 ms, most of it the rendering itself.)
"""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from cockpit.widgets.transcript.finished_rows import look_of

__all__ = ["KeptRowsScrollBar"]

KEPT_ROWS = 64  # distinct rows kept (a bar shows about five; a new look starts afresh)


class KeptRowsScrollBar(ScrollBar):
    """A scrollbar drawing each row from the rows it finished before (see the module)."""

    def __init__(self, vertical: bool = True, name: str | None = None, *,
                 thickness: int = 1) -> None:
        super().__init__(vertical=vertical, name=name, thickness=thickness)
        self._kept: dict[tuple[Segment, ...], Strip] = {}
        self._look: tuple[object, ...] | None = None
        self.rows_finished = 0  # rows put through Textual's pipeline (tests count them)

    def forget(self) -> None:
        """Drop every row kept (each is finished again when next drawn)."""
        self._kept.clear()

    def render_lines(self, crop: Region) -> list[Strip]:
        look = look_of(self)
        width = self.size.width
        if look is None or crop.x != 0 or crop.width != width:
            return super().render_lines(crop)
        if look != self._look:
            self._kept.clear()
            self._look = look
        kept = self._kept
        lines: list[Strip] = []
        for y in crop.line_range:
            drawn = tuple(self.render_line(y))  # (the bar's rendering: made once a refresh)
            finished = kept.get(drawn)
            if finished is None:
                finished = super().render_lines(Region(0, y, width, 1))[0]
                self.rows_finished += 1
                if len(kept) >= KEPT_ROWS:
                    kept.clear()
                kept[drawn] = finished
            lines.append(finished)
        return lines
