"""The small pieces every transcript row is built with: one cut row, wrapped rows, the marker
style of unsafe characters, the note for lines left out, Markdown that keeps line breaks,
which rows of an item changed between two renderings, and a search term marked in a row."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.widgets.safe_text import clean
from engine_adapter.text import Cut

if TYPE_CHECKING:
    from rich.markdown import Markdown

__all__ = [
    "changed_rows",
    "highlighted",
    "keep_equal_rows",
    "lines_note",
    "markdown",
    "one",
    "search_pattern",
    "warn_style",
    "wrapped",
]


def warn_style(palette: Palette) -> Style:
    """How an unsafe character's marker stands out (the theme's warning colour, reversed)."""
    return palette.warning + Style(reverse=True, bold=True)


def _plain_row(text: Text, *, rendered: bool) -> Strip | None:
    """`text` as the one segment Rich would draw for it, when it is one line of printable
    characters of a cell each, in one style; None otherwise. A flood draws a dozen
    new items a frame, and Rich's own way costs ~10x this. `rendered`: as `Text.render` draws
    it (a text without spans in no style of its own), else as the console does (in its
    style)."""
    plain, style = text.plain, text.style
    if not (plain.isprintable() and isinstance(style, Style) and cell_len(plain) == len(plain)) \
            or any(span.style != style for span in text.spans):
        return None
    if not plain:
        return Strip([])
    drawn_style = None if rendered and not text.spans else style
    return Strip([Segment(plain, drawn_style)], len(plain))


ELLIPSIS = "…"


def one(console: Console, text: Text, width: int) -> Strip:
    """One row: `text` cut to `width` cells (never wrapped), ending in `…` when it was cut, so
    a cut row never reads as the whole of it."""
    strip = _plain_row(text, rendered=True)
    if strip is None:
        text.no_wrap = True
        text.overflow = "ellipsis"
        strip = Strip(list(text.render(console)))
    if strip.cell_length <= width:
        return strip
    if width < 1:
        return Strip([])
    if not "".join(seg.text for seg in strip.crop(width, strip.cell_length)).strip():
        return strip.crop(0, width)  # only blank cells go: nothing of the text is cut
    kept = strip.crop(0, width - 1)
    segments = list(kept)
    # The ellipsis in the style of the text it ends (a trailing pad's style would hide it).
    style = next((seg.style for seg in reversed(segments) if seg.text.strip()), None)
    if kept.cell_length < width - 1:  # a wide character did not fit: pad before the mark
        segments.append(Segment(" " * (width - 1 - kept.cell_length), style))
    return Strip([*segments, Segment(ELLIPSIS, style)], width)


def wrapped(console: Console, renderable: RenderableType, width: int) -> list[Strip]:
    """`renderable` wrapped to `width` cells, one strip a row."""
    if isinstance(renderable, Text) and 0 < len(renderable.plain) <= width:
        strip = _plain_row(renderable, rendered=False)  # one line that fits: nothing to wrap
        if strip is not None:
            return [strip]
    options = console.options.update(width=width, min_width=width, max_width=width,
                                     highlight=False, markup=False)
    return [Strip(line) for line in console.render_lines(renderable, options, pad=False)]


def lines_note(hidden: int, hint: str = "") -> str:
    """What a collapsed block leaves out, in the policy's words: `… 1 more line · enter to
    expand` (empty when nothing is)."""
    return Cut("", hidden, hidden).note(gone=False, hint=hint) if hidden > 0 else ""


def markdown(text: str, palette: Palette | None = None) -> RenderableType:
    """`text` (cleaned: unsafe characters as markers) as Markdown whose single line breaks stay
    line breaks: a model writes lines, and CommonMark would join them into one paragraph. With
    `palette`, code is drawn in the theme's colours (`Palette.code`, `Palette.code_theme`)."""
    from rich.markdown import Markdown  # (markdown-it, ~25 ms: loaded at the first reply drawn)

    rendered = Markdown(clean(text), hyperlinks=False,
                        code_theme=palette.code_theme if palette is not None else "monokai")
    for token in rendered.parsed:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
    return rendered if palette is None or palette.code is None else _Themed(rendered,
                                                                           palette.code)


class _Themed:
    """Markdown drawn with `code` in place of Rich's `markdown.code` style (bold cyan on black),
    only while it renders."""

    def __init__(self, renderable: Markdown, code: Style) -> None:
        from rich.theme import Theme

        self.renderable = renderable
        self.theme = Theme({"markdown.code": code}, inherit=True)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        with console.use_theme(self.theme):
            yield from console.render(self.renderable, options)


def changed_rows(before: list[Strip] | None, after: list[Strip] | None,
                 height: int) -> list[tuple[int, int]]:
    """The rows (first, end excluded) that differ between two renderings of one item, `height`
    rows tall now: none, or one span; all of them when either rendering is missing."""
    if before is None or after is None:
        return [(0, max(height, len(before or ())))]
    rows = [row for row, (a, b) in enumerate(zip(before, after, strict=False))
            if a is not b and a != b]
    if len(before) != len(after):
        rows += [min(len(before), len(after)), max(len(before), len(after)) - 1]
    return [(rows[0], rows[-1] + 1)] if rows else []


def keep_equal_rows(before: list[Strip], after: list[Strip]) -> None:
    """Put in `after` (an item's rows, rendered again) the very `Strip` of `before` (its rows
    as drawn) wherever the two are equal at one place. What is kept per row drawn (the
    transcript's finished rows) then still applies to it: a streaming reply is rendered again
    on every delivery, all its rows new objects although only the last ones changed, and each
    of them went through Textual's finishing again (a whole screen of rows, a frame, once the
    reply filled the view)."""
    for row, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new and old == new:
            after[row] = old


def search_pattern(term: str) -> re.Pattern[str]:
    """`term` as a literal pattern, smart-case: a term in lower case matches any case."""
    return re.compile(re.escape(term), 0 if term != term.lower() else re.IGNORECASE)


def highlighted(strip: Strip, pattern: re.Pattern[str], style: Style) -> Strip:
    """`strip` with each match of `pattern` in its text drawn in `style` (over its own)."""
    text = strip.text
    spans = [(m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start()]
    if not spans:
        return strip
    cells = [(cell_len(text[:a]), cell_len(text[:b])) for a, b in spans]
    cuts = sorted({edge for span in cells for edge in span} | {strip.cell_length})
    pieces, start = [], 0
    for piece, end in zip(strip.divide(cuts), cuts, strict=False):
        inside = any(a <= start and end <= b for a, b in cells)
        pieces.append(Strip(Segment.apply_style(list(piece), post_style=style),
                            piece.cell_length) if inside else piece)
        start = end
    return Strip.join(pieces)
