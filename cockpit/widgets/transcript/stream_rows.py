"""The last line of a reply still streaming, wrapped incrementally: only its last two rows anew.

A streaming reply is drawn again on every delivery, up to 60 times a second, and its last line
grows at the end. Wrapping is greedy (each row break is decided by the words before it and the
one word that starts the next row), so the rows before the second-to-last stay the same while
text is only appended: they are kept, and the wrap starts again where the second-to-last row
starts (one row back, because the cursor glued to the last word can move that word's break
once a space follows it). A 6,000-character line cost ~3 ms a delivery to wrap whole.

Only text that `styled` keeps character for character (no unsafe-character markers, no tabs)
takes this path, at a width of two cells or more; anything else, a narrower or wider view,
another style, or text that did not just grow is wrapped whole, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cockpit.widgets.safe_text import styled
from cockpit.widgets.transcript.rows import wrapped

__all__ = ["CURSOR", "streaming_line_rows"]

CURSOR = "▍"
_KEPT = 32  # lines remembered: one per reply streaming at a time is the common case


class _Wrapped(NamedTuple):
    line: str  # the line the rows were made for (the cursor not included)
    head: tuple[Strip, ...]  # its rows before `start`, final while the line only grows
    start: int  # where in `line` the rows still to wrap begin


_cache: OrderedDict[tuple[int, Style, Style, Style, int], _Wrapped] = OrderedDict()


def streaming_line_rows(line: str, width: int, style: Style, warn: Style, cursor: Style,
                        console: Console) -> list[Strip]:
    """`line` styled (markers for unsafe characters) with the cursor after it, wrapped to
    `width`: the same rows as `wrapped(console, styled(line) + cursor, width)`."""
    key = (width, style, warn, cursor, id(console))
    known = _cache.get(key)
    if known is not None and line.startswith(known.line):
        head, start = known.head, known.start
    else:
        head, start = (), 0
    rest = line[start:]
    body = _with_cursor(rest, style, warn, cursor)
    rows = wrapped(console, body, width)
    if body.plain != rest + CURSOR:  # markers or tabs: offsets do not map; never cache
        _cache.pop(key, None)
        return wrapped(console, _with_cursor(line, style, warn, cursor), width) if start \
            else rows
    shown = [*head, *rows]
    # (not at width 1: there Rich gives a leading space a row of its own and folds the rest
    # otherwise, ' 0 X' -> ' ', '0', ' ', 'X' but '0 X' -> '0', 'X'; hypothesis found it)
    if len(rows) > 2 and width > 1:
        kept = rows[:-2]
        following = "".join(segment.text for segment in rows[-2])
        # Not rows that end inside a word (a word longer than a row, folded): wrapped from
        # there, the rest of it is another word to Rich (its trailing space placed otherwise).
        # So the rows kept end where a word ends: a space, then the next row's first word.
        at = _consumed(rest, kept)
        if at and rest[at - 1].isspace() and rest.startswith(following, at) \
                and following[:1].strip():
            start += at
            head += tuple(kept)
    _cache[key] = _Wrapped(line, head, start)
    _cache.move_to_end(key)
    if len(_cache) > _KEPT:
        _cache.popitem(last=False)
    return shown


def _consumed(text: str, rows: list[Strip]) -> int:
    """How much of `text` `rows` (its first rows, wrapped by Rich) consumed: what they draw,
    plus the spaces Rich dropped where a word's trailing spaces ran past a row's end (each row
    after the first starts at a word); 0 if they do not draw `text` character for character.
    (Counting only what rows draw, a full row that lost its trailing space stopped the rows
    from being kept at all: every delivery then wrapped the whole line again, ~4 ms at 9,000
    characters.)"""
    at, end = 0, len(text)
    for row in rows:
        drawn = "".join(segment.text for segment in row)
        if not text.startswith(drawn, at):
            return 0
        at += len(drawn)
        while at < end and text[at].isspace():
            at += 1
    return at


def _with_cursor(text: str, style: Style, warn: Style, cursor: Style) -> Text:
    body = styled(text, style, marker_style=warn)
    body.append(CURSOR, cursor)
    return body
