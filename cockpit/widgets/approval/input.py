"""The approval bar's input: every key of a tool input, styled, cut to the rows the bar has.

An approval covers the whole input, so the bar shows every key (`engine_adapter.view`): the
command, a second command key, `env`, `cwd`, the diff. When it is taller than the bar, the long
parts (the command, a diff, a long value) are cut — each saying exactly how much is left and
which key shows all of it — while every short key stays in sight, so a long command cannot push
its `env` out of view.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.cells import cell_len, chop_cells
from rich.style import Style
from rich.text import Text

from cockpit.styles import Palette
from cockpit.widgets.safe_text import styled
from engine_adapter.text import Cut, cut, line_count
from engine_adapter.view import input_fields

__all__ = ["Block", "fit_input", "fit_rows", "hard_wrap", "input_blocks"]

VALUE_LIMIT = 200_000  # characters of one input value laid out (the bar shows a few rows)
SHORT_ROWS = 4  # a key whose value takes this many rows or fewer always stays in sight


class Block(NamedTuple):
    """One key of the input as styled rows; a `cuttable` one (the command, a diff) may be
    cut to fit, the others only when they are long."""

    text: Text
    cuttable: bool


def _diff_style(line: str, palette: Palette) -> Style:
    if line.startswith("+++") or line.startswith("---"):
        return palette.primary
    if line.startswith("+"):
        return palette.diff_add
    if line.startswith("-"):
        return palette.diff_remove
    if line.startswith("@@"):
        return palette.diff_hunk
    return palette.text


def input_blocks(tool_input: dict[str, Any] | None, palette: Palette) -> list[Block]:
    """Every key of `tool_input`, in `input_fields` order: the command as `$ …`, other keys as
    `key: value`, a diff coloured. Unsafe characters show as markers in the warning colour,
    reversed."""
    warn = palette.warning + Style(reverse=True, bold=True)
    blocks: list[Block] = []
    for field in input_fields(tool_input):
        value = field.value[:VALUE_LIMIT]
        if field.kind == "command":
            rows = []
            for i, line in enumerate(value.split("\n")):
                row = Text("$ " if i == 0 else "", palette.dim)
                row.append_text(styled(line, palette.text, marker_style=warn))
                rows.append(row)
            blocks.append(Block(Text("\n").join(rows), True))
            continue
        if field.kind == "diff":  # its `---`/`+++` header says what it is: no label
            blocks.append(Block(Text("\n").join(
                styled(line, _diff_style(line, palette), marker_style=warn)
                for line in value.rstrip("\n").split("\n")), True))
            continue
        label = styled(field.label, palette.dim, limit=200, marker_style=warn)
        label.append(":", palette.dim)
        if "\n" not in value:
            label.append(" ")
            label.append_text(styled(value, palette.text, marker_style=warn))
            blocks.append(Block(label, False))
            continue
        rows = [label] + [Text("  ").append_text(styled(part, palette.text, marker_style=warn))
                          for part in value.split("\n")]
        blocks.append(Block(Text("\n").join(rows), False))
    return blocks


def _rows(text: str, width: int) -> int:
    return sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))


def _fitting(line: str, cells: int) -> int:
    """How many characters of `line` fit in `cells` cells (wide characters take two)."""
    low, high = 0, min(len(line), max(0, cells))
    while low < high:
        mid = (low + high + 1) // 2
        if cell_len(line[:mid]) <= cells:
            low = mid
        else:
            high = mid - 1
    return low


def fit_rows(body: Text, *, rows: int, width: int, hint: str, palette: Palette) -> Text:
    """`body` cut to what `rows` rows of `width` cells show, its last rows saying exactly how
    much is left and how to see it (`… 3 more lines · press i to see the whole input`)."""
    width = max(1, width)
    plain = body.plain
    if _rows(plain, width) <= rows:
        return body
    longest = Cut("", len(plain), line_count(plain), whole_lines=False).note(gone=False,
                                                                               hint=hint)
    room = rows - _rows(longest, width)  # rows left once the note has its own (maybe none:
    used = shown = 0  # then the note alone says what there is); rows filled, characters shown
    for line in plain.split("\n") if room > 0 else ():
        need = max(1, -(-cell_len(line) // width))
        if used + need > room:
            shown += _fitting(line, (room - used) * width)
            break
        used += need
        shown += len(line) + 1
    piece = cut(plain, chars=shown)
    kept = body[: len(piece.kept)]
    kept.rstrip()
    if kept.plain:
        kept.append("\n")
    kept.append(piece.note(gone=False, hint=hint), palette.warning)
    return kept


def hard_wrap(body: Text, width: int) -> Text:
    """`body` broken into rows of at most `width` cells at any character, styles kept: an
    input is shown as it is, never reflowed at spaces (which would take more rows than the
    cut counted, and push the keys' neighbours out of the bar)."""
    width = max(1, width)
    rows: list[Text] = []
    for line in body.split("\n", allow_blank=True):
        plain = line.plain
        if cell_len(plain) <= width:
            rows.append(line)
            continue
        offsets, at = [], 0
        for piece in chop_cells(plain, width)[:-1]:
            at += len(piece)
            offsets.append(at)
        rows.extend(line.divide(offsets))
    return Text("\n").join(rows)


def fit_input(blocks: list[Block], *, rows: int, width: int, hint: str,
              palette: Palette) -> tuple[Text, bool]:
    """The blocks within `rows` rows of `width` cells, and whether anything was cut.

    Every short key keeps all its rows (an `env` or a `cwd` is never pushed out of sight by a
    long command); the long parts share the rest in order, each keeping at least a row and
    its note for the parts after it, each cut one saying exactly what it left out. When even
    that cannot fit, the whole is cut as one, saying so."""
    width = max(1, width)
    need = [_rows(block.text.plain, width) for block in blocks]
    joined = Text("\n").join(block.text for block in blocks)
    if sum(need) <= rows:
        return joined, False
    long = [block.cuttable or n > SHORT_ROWS for n, block in zip(need, blocks, strict=True)]
    # A long part keeps a row and its note (as long as the note for all of that part).
    least = 1 + max((_rows(Cut("", len(block.text.plain), line_count(block.text.plain))
                           .note(gone=False, hint=hint), width)
                     for block, cuttable in zip(blocks, long, strict=True) if cuttable),
                    default=1)
    left = rows - sum(n for n, cuttable in zip(need, long, strict=True) if not cuttable)
    after = sum(long)
    if left < least * after:
        # Too tight to keep every short key whole: every key of more than a row may be cut
        # (its first row and the note), so no key at the end — an `env` — drops out unsaid.
        long = [n > 1 or block.cuttable for n, block in zip(need, blocks, strict=True)]
        least = 1 + _rows(Cut("", 10**6, 10**4).note(gone=False, hint=hint), width)
        left = rows - sum(n for n, cuttable in zip(need, long, strict=True) if not cuttable)
        after = sum(long)
    if left < least * after:
        return fit_rows(joined, rows=rows, width=width, hint=hint, palette=palette), True
    shown: list[Text] = []
    for n, block, cuttable in zip(need, blocks, long, strict=True):
        if not cuttable:
            shown.append(block.text)
            continue
        after -= 1
        part = fit_rows(block.text, rows=min(n, left - least * after), width=width, hint=hint,
                        palette=palette)
        left -= _rows(part.plain, width)
        shown.append(part)
    return Text("\n").join(shown), True
