"""`FinishedRows`: the transcript's rows as Textual finished them, kept per row drawn (issue 29).

Every row the transcript draws (`Transcript.render_line`) goes on through Textual's own pipeline
before it reaches the screen: the widget's styles (background, padding, tint, opacity), then the
app's line filters, each step a new `Strip`, and the compositor then cuts each row at every
widget edge (`Strip.divide`, cached on the strip). On a key that scrolls (`pgdn`, `end`) or moves
rows (`enter`), every visible row went through all of it again although the row itself was kept
as drawn: about half the frame at 160x48.

Kept here, per row drawn (the very `Strip` object `render_line` returned, kept as long as
nothing it is drawn from changed), is what Textual made of it. It is valid as long as the
widget's look is unchanged (`look_of`: its size, colours, filters, theme); any change of look
drops it all. Only rows Textual itself rendered from that row are kept (`keep`), so a row Textual
served from its own cache is never taken for a finished version of another.
"""

from __future__ import annotations

from textual.strip import Strip
from textual.widget import Widget

__all__ = ["FinishedRows", "look_of"]


def look_of(widget: Widget) -> tuple[object, ...] | None:
    """What Textual's finishing of a content row depends on beside the row itself, or None
    when it depends on more (a border, padding or outline: rows by their position; a hatch,
    tint, opacity or a link under the mouse: not kept at all, to stay simple)."""
    styles = widget.styles
    if styles.gutter or any(edge for edge, _ in styles.outline):
        return None
    if styles.has_rule("hatch") or styles.tint.a or styles.text_opacity != 1.0:
        return None
    if widget.auto_links and widget.hover_style.link_id:
        return None
    opacity = widget.opacity
    if opacity != 1.0:
        return None
    app = widget.app
    return (widget.region.size, widget.content_region.size, widget.background_colors,
            tuple(widget.get_line_filters()), app.ansi_theme, app.native_ansi_color)


class FinishedRows:
    """Rows drawn, each with what Textual finished it into, for one look at a time."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        # id of the row drawn: (that row, kept alive so its id is not reused; finished row)
        self._kept: dict[int, tuple[Strip, Strip]] = {}
        self._look: tuple[object, ...] | None = None

    def __len__(self) -> int:
        return len(self._kept)

    def use_look(self, look: tuple[object, ...]) -> None:
        """The look of the paint under way: a different one drops every row kept."""
        if look != self._look:
            self._kept.clear()
            self._look = look

    def get(self, row: Strip) -> Strip | None:
        """`row` as Textual finished it, if kept."""
        kept = self._kept.get(id(row))
        if kept is not None and kept[0] is row:
            return kept[1]
        return None

    def keep(self, row: Strip, finished: Strip) -> None:
        """Textual finished `row` (rendered from it, in the current look) into `finished`."""
        if len(self._kept) >= self._limit:
            self._kept.clear()
        self._kept[id(row)] = (row, finished)

    def clear(self) -> None:
        """Drop every row kept."""
        self._kept.clear()
