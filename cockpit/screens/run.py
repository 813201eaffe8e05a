"""`RunScreen`: the live cockpit's default screen, whose focus moves repaint only what they
change, and whose frames render only the rows that changed.

Textual's `Screen.focused` is a reactive that repaints the whole screen whenever the focus
moves, on top of the widgets that lose and gain it repainting themselves (and restyling, for
their `:focus` rules). On the live cockpit a focus move is a key's answer (`n` into the reason
box, escape back to the transcript), and at 160x48 the whole-screen repaint was a third of the
key's frame (issue 29). The widgets' own repaints stay; only the redundant one goes.

Textual's compositor, for a frame that repaints a few rows, renders every widget whose clip (its
container's region) meets the rows repainted, and each of them whole: the screen's, the run
display's and the body's backgrounds (45 rows each at 160x48), the status line, the composer and
the key hints, whatever changed. While a reply streams, every frame repaints the transcript's
last rows (or all of them, as it scrolls), and those renders were about half of the frame
(measured at 160x48: ~4 of ~8 ms). `RowsCompositor` renders each widget only where it meets the
rows repainted (the rows of their bounding box, as Textual; within them every column of the
widget, so its cells still line up with the cuts of the screen), and none that it does not meet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from textual._compositor import Compositor
from textual.geometry import Region
from textual.reactive import Reactive
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["RowsCompositor", "RunScreen"]


class RowsCompositor(Compositor):
    """Textual's compositor, rendering each widget only where it meets a frame's rows (see
    the module)."""

    def _render_chops(self, crop: Region,
                      is_rendered_line: Callable[[int], bool]) -> Sequence[Mapping[int, Strip]]:
        """Textual's `_render_chops` (8.2), but for the renders: each widget's visible part,
        cut to `crop`'s rows, and only if it meets `crop`."""
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        top, height = crop.y, crop.height
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            if not shown.overlaps(crop):
                continue
            rows = shown.intersection(Region(shown.x, top, shown.width, height))
            strips = widget.render_lines(Region(rows.x - region.x, rows.y - region.y,
                                                rows.width, rows.height))
            render_x = rows.x
            first_cut, last_cut = rows.column_span
            for y, strip in zip(rows.line_range, strips, strict=False):
                if not is_rendered_line(y):
                    continue
                chops_line = chops[y]
                final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                # Front to back: the first strip for a cut wins.
                for cut, piece in zip(final_cuts,
                                      strip.divide([cut - render_x for cut in final_cuts[1:]]),
                                      strict=False):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = piece
        # (as Textual's: a cut no widget drew stays None, and the update skips it)
        return cast("Sequence[Mapping[int, Strip]]", chops)


class RunScreen(Screen[None]):
    """The default screen of the live cockpit: a focus move is not a whole-screen repaint, and
    a frame renders only where the rows it repaints are (`RowsCompositor`)."""

    # The same reactive as Textual's (its watcher still refreshes the bindings), without
    # `repaint`: the widget blurred and the one focused repaint themselves (`on_blur`/`on_focus`
    # refresh them, and their `:focus` styles are applied to them alone).
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._compositor = RowsCompositor()
