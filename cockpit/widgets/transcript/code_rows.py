"""How diffs and file contents look in the transcript: a diff's preview starting at its changes,
a whole diff and a file's text with line numbers and syntax colours (lexer by the file's
extension).

Everything here is untrusted (a file, an agent's diff): each unsafe character is shown as its
marker in the warning style (`engine_adapter.text`'s policy) before any colouring, lines are cut
to `LINE_LIMIT` characters and blocks to the rows asked for, and the caller is told how many
lines were left out so it can say so. The engine made the diff (views never compute one);
`engine_adapter.view.diff_summary` says what each of its lines is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NamedTuple

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound
from rich.style import Style
from rich.text import Text

from cockpit.styles import Palette
from engine_adapter.text import marker, split_unsafe
from engine_adapter.view import LineKind, line_kinds, preview_start

__all__ = ["Rows", "code_rows", "diff_preview", "diff_rows", "diff_style", "lexer_for"]

LINE_LIMIT = 1_000  # characters of one line coloured and shown (the pager has the rest)
HIGHLIGHT_LIMIT = 200_000  # characters coloured at once; more are shown plain
_HUNK_RE = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class Rows(NamedTuple):
    """Styled rows (one line each) and how many lines of the source they leave out."""

    rows: list[Text]
    hidden: int


def diff_style(kind: LineKind, palette: Palette) -> Style:
    """The colour of one kind of diff line (the approval bar and the transcript share it)."""
    return {"file": palette.primary, "add": palette.diff_add, "remove": palette.diff_remove,
            "hunk": palette.diff_hunk, "note": palette.dim}.get(kind, palette.text)


@lru_cache(maxsize=64)
def lexer_for(path: str) -> Lexer | None:
    """The lexer for a file name (by its extension), or None when none fits."""
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return None
    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False, stripall=False)
    except (ClassNotFound, ValueError):
        return None


@lru_cache(maxsize=4)
def _token_styles(dark: bool) -> dict[Any, Style]:
    """Rich styles of a pygments style's tokens, without its background (the theme's shows)."""
    style = get_style_by_name("monokai" if dark else "friendly")
    styles: dict[Any, Style] = {}
    for token, spec in style:
        styles[token] = Style(color=f"#{spec['color']}" if spec["color"] else None,
                              bold=spec["bold"] or None, italic=spec["italic"] or None)
    return styles


def _style_of(token: Any, styles: dict[Any, Style]) -> Style | None:
    while token is not None:
        style = styles.get(token)
        if style is not None and style.color is not None:
            return style
        token = token.parent
    return None


def _marked(line: str, warn: Style) -> tuple[str, list[tuple[int, int]]]:
    """`line` with each unsafe character as its marker, and where the markers are."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for run, unsafe in split_unsafe(line):
        if unsafe:
            run = marker(run)
            spans.append((at, at + len(run)))
        out.append(run)
        at += len(run)
    return "".join(out), spans


def _coloured(lines: list[str], path: str | None, base: Style, warn: Style,
              dark: bool) -> list[Text]:
    """`lines` (code) as Text, syntax-coloured by `path`'s lexer, unsafe characters marked."""
    marked = [_marked(line[:LINE_LIMIT], warn) for line in lines]
    code = "\n".join(text for text, _ in marked)
    lexer = lexer_for(path) if path else None
    if lexer is None or len(code) > HIGHLIGHT_LIMIT:
        texts = [Text(text, base) for text, _ in marked]
    else:
        styles = _token_styles(dark)
        whole = Text(style=base)
        for token, value in lexer.get_tokens(code):
            whole.append(value, _style_of(token, styles) or base)
        texts = list(whole.split("\n", allow_blank=True))
        if len(texts) < len(marked):  # a lexer that ate a line break: fall back to plain
            texts = [Text(text, base) for text, _ in marked]
    for text, (_, spans) in zip(texts, marked, strict=False):
        for start, end in spans:
            text.stylize(warn, start, end)
        if "\t" in text.plain:
            text.expand_tabs(4)
    return texts[: len(lines)]


def _gutter(number: int | None, width: int, style: Style) -> Text:
    return Text(f"{number:>{width}} " if number is not None else " " * (width + 1), style)


def code_rows(text: str, path: str | None, *, limit: int, palette: Palette,
              warn: Style) -> Rows:
    """A file's text, numbered and coloured, at most `limit` lines."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    shown = lines[:limit]
    width = len(str(len(shown)))
    coloured = _coloured(shown, path, palette.text, warn, palette.dark)
    rows = [_gutter(n, width, palette.dim).append("│ ", palette.dim).append_text(code)
            for n, code in enumerate(coloured, 1)]
    return Rows(rows, len(lines) - len(shown))


def _split(diff: str) -> list[str]:
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def diff_preview(diff: str, *, limit: int, palette: Palette, warn: Style) -> Rows:
    """A collapsed edit's rows: from its first added or removed line (no file or hunk
    headers, no context before the change), each coloured whole, at most `limit`; `hidden`
    counts the other lines of the diff (context before the change included, headers not)."""
    lines = _split(diff)
    kinds = line_kinds(lines)
    first = preview_start(kinds)
    rows: list[Text] = []
    body = 0  # lines of the diff a reader would count (headers are not)
    for index, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if kind in ("file", "hunk"):
            continue
        body += 1
        if index >= first and len(rows) < limit:
            rows.append(_plain_line(line, kind, palette, warn))
    return Rows(rows, body - len(rows))


def _plain_line(line: str, kind: LineKind, palette: Palette, warn: Style) -> Text:
    text, spans = _marked(line[:LINE_LIMIT], warn)
    out = Text(text, diff_style(kind, palette))
    for start, end in spans:
        out.stylize(warn, start, end)
    if "\t" in text:
        out.expand_tabs(4)
    return out


def diff_rows(diff: str, path: str | None, *, limit: int, palette: Palette,
              warn: Style) -> Rows:
    """A whole diff (at most `limit` lines): each changed or context line numbered (the new
    file's number; a removed line the old one's), its `+`/`-` coloured, its code coloured by
    `path`'s lexer; file and hunk headers and notes as they are, coloured."""
    every = _split(diff)
    lines = every[:limit]
    kinds = line_kinds(lines)
    body = [i for i, kind in enumerate(kinds) if kind in ("add", "remove", "context")]
    code = _coloured([lines[i][1:] for i in body], path, palette.text, warn, palette.dark)
    coloured = dict(zip(body, code, strict=True))
    numbers: dict[int, int] = {}
    old = new = 0
    for index, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if kind == "hunk":
            match = _HUNK_RE.match(line)
            if match:
                old, new = int(match.group(1)), int(match.group(2))
        elif kind == "remove":
            numbers[index], old = old, old + 1
        elif kind in ("add", "context"):
            numbers[index], new = new, new + 1
            old += kind == "context"
    width = len(str(max(numbers.values(), default=1)))
    rows: list[Text] = []
    for index, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if index not in coloured:
            rows.append(_plain_line(line, kind, palette, warn))
            continue
        sign_style = diff_style(kind, palette)
        row = _gutter(numbers.get(index), width, sign_style if kind != "context" else palette.dim)
        row.append(line[:1] or " ", sign_style)
        row.append(" ")
        row.append_text(coloured[index])
        rows.append(row)
    return Rows(rows, len(every) - len(lines))
