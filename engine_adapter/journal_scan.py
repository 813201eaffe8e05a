"""Finding the lines of a chunk of journal bytes: streamed-text lines in bulk, others one by one.

Most lines of a long journal are streamed text, `model_update` events, and the cockpit writes each
one starting `{"type":"model_update",`. One `bytes.replace` turns every newline that starts such a
line into a single marker byte; then only the other newlines are left to visit one by one (a C
`find` each), and the lines between two of them are counted with a C `count`. A million-line
journal is read with a Python step per *other* line and per run of streamed text, not per line.

A journal in any other layout has no such runs: every line is then visited one by one, which is
slower but finds the same lines.
"""

from __future__ import annotations

__all__ = ["STREAM_HEAD", "Part", "segments"]

STREAM_HEAD = b'{"type":"model_update",'
"""How a streamed-text line the cockpit wrote starts."""
_START = b"\n" + STREAM_HEAD
_MARK = b"\x01"  # (never in a valid line: JSON has no raw control characters)
_SHRINK = len(_START) - 1  # bytes the replace removes for each streamed line

Part = tuple[int, int, int]
"""`(start, end, count)`: a piece of a chunk, `body[start:end]` (without its last newline). With
`count` 0 it is one line that does not start as a streamed-text line (maybe blank); else it is
`count` consecutive lines that do."""


def segments(body: bytes) -> list[Part]:
    """The lines of `body` (whole lines: it ends with a newline), in order, as `Part`s."""
    if _MARK in body:  # (a control byte in a damaged line): every line one by one
        return _one_by_one(body)
    marked = (b"\n" + body).replace(_START, _MARK)
    find, count = marked.find, marked.count
    parts: list[Part] = []
    append = parts.append
    ones = 0  # markers before the newline at `j` (each stood for `_SHRINK` more bytes)
    j = find(b"\n")
    if j:  # the chunk starts with streamed lines
        ones = count(_MARK, 0, j)
        append((0, j + ones * _SHRINK - 1, ones))
    last = len(marked) - 1  # (the final newline ends the last line; no line starts there)
    while j < last:
        start = j + ones * _SHRINK  # where the line after this newline starts, in `body`
        following = find(b"\n", j + 1)
        mark = find(_MARK, j + 1, following)
        if mark < 0:
            append((start, following + ones * _SHRINK - 1, 0))
        else:
            append((start, mark + ones * _SHRINK - 1, 0))
            run = count(_MARK, mark, following)
            first = mark + ones * _SHRINK  # (the marker stood for this line's newline too)
            ones += run
            append((first, following + ones * _SHRINK - 1, run))
        j = following
    return parts


def _one_by_one(body: bytes) -> list[Part]:
    parts: list[Part] = []
    start = 0
    for line in body.split(b"\n")[:-1]:
        parts.append((start, start + len(line), 0))
        start += len(line) + 1
    return parts
