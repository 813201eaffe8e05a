"""How the TUI displays untrusted text: agent output, tool output, journal contents.

Which characters are unsafe is decided once, in `engine_adapter.text`; this module only chooses
how the TUI shows them: as a marker (`␛` for ESC, `⟨U+200B⟩` for a zero-width space), in a
warning style where the text is styled (`styled`). Everything returns plain `str` or Rich
`Text` built without markup, so `[bold]` in a tool's output stays the six characters it is.
Sizes are cut before any per-character work, so a 10 MB output costs a slice, not a scan.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from engine_adapter.text import cut, marked, marker, split_unsafe

__all__ = ["MARKER_STYLE", "clean", "clean_line", "first_line", "one_line",
           "styled", "styled_line", "styled_one_line"]

MARKER_STYLE = Style(reverse=True, bold=True)
"""How a marker stands out where no theme is at hand (the views with a palette pass its
warning colour, reversed)."""

TAB = 4


def clean(text: str, limit: int | None = None) -> str:
    """`text` cut to `limit` characters, every unsafe character shown as its marker, line
    breaks as `\\n` and tabs expanded (the caller says how much was cut, if it matters)."""
    if limit is not None and len(text) > limit:
        text = text[:limit]
    text = marked(text)
    if "\r" in text:  # only line breaks are left (`\r\n`): every other CR is marked
        text = text.replace("\r\n", "\n")
    return _expand_tabs(text) if "\t" in text else text


def _expand_tabs(text: str) -> str:
    """Tabs to spaces by cells, as `styled` expands them (a wide character takes two)."""
    expanded = Text(text)
    expanded.expand_tabs(TAB)
    return expanded.plain


def styled(text: str, style: Style | str = "", *, limit: int | None = None,
           marker_style: Style = MARKER_STYLE) -> Text:
    """`text` as Rich `Text` in `style`, cut to `limit` characters, each unsafe character
    shown as its marker in `marker_style` (so `git status\\u200b` reads `git status⟨U+200B⟩`,
    the marker highlighted)."""
    if limit is not None and len(text) > limit:
        text = text[:limit]
    out = Text(style=style)
    for run, unsafe in split_unsafe(text):
        if unsafe:
            out.append(marker(run), marker_style)
        else:
            out.append(run.replace("\r\n", "\n") if "\r" in run else run)
    if "\t" in out.plain:
        out.expand_tabs(TAB)
    return out


def clean_line(line: str, limit: int = 1000) -> str:
    """One line cleaned for a one-row display (line breaks shown as ⏎)."""
    return clean(line[:limit]).replace("\n", "⏎")


def styled_line(line: str, style: Style | str = "", *, limit: int = 1000,
                marker_style: Style = MARKER_STYLE) -> Text:
    """`styled` for a one-row display (line breaks shown as ⏎)."""
    text = styled(line, style, limit=limit, marker_style=marker_style)
    if "\n" in text.plain:
        plain = text.plain.replace("\n", "⏎")  # same length: the spans stay where they were
        copy = Text(plain, style=text.style)
        copy.spans = list(text.spans)
        return copy
    return text


def first_line(text: str | None, limit: int = 200) -> tuple[str, bool]:
    """The first line of `text` (raw, at most `limit` characters) and whether anything
    was left out."""
    if not text:
        return "", False
    first = text[: limit + 1].split("\n", 1)[0]
    return first[:limit], len(first) > limit or len(first) < len(text.rstrip("\n"))


def one_line(text: str | None, limit: int = 200) -> str:
    """The first line of `text`, cleaned, with `…` when something was left out."""
    first, more = first_line(text, limit)
    return clean_line(first) + (" …" if more else "")


def styled_one_line(text: str | None, style: Style | str = "", *, limit: int = 200,
                    marker_style: Style = MARKER_STYLE) -> Text:
    """The first line of `text` as styled `Text` (at most `limit` characters), the markers of
    unsafe characters highlighted, then what was left out in the policy's words (`… 3 more
    lines`, `… 56 more characters`)."""
    first, more = first_line(text, limit)
    out = styled_line(first, style, limit=limit, marker_style=marker_style)
    if more and text:
        piece = cut(text, lines=1, chars=len(first))
        out.append(" " + piece.note(gone=False), style)
    return out
