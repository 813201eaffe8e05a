"""Finding the lines of a chunk of journal bytes: streamed-text lines in bulk, others one by one.

Most lines of a long journal are streamed text, `model_update` events, and the cockpit writes each
one starting `{"type":"model_update",`. One C-level regex search over the chunk finds every
newline that is *not* followed by such a start: those begin the other lines, which are visited one
by one (a C `find` for each one's end). The streamed-text lines between two of them are a run,
counted with a C `count`. A million-line journal is read with a Python step per *other* line and
per run of streamed text, not per line.

A journal in any other layout has no such runs: every line is then an "other" line, which is
slower but finds the same lines.
"""

from __future__ import annotations

import re

__all__ = ["STREAM_HEAD", "Part", "segments"]

STREAM_HEAD = b'{"type":"model_update",'
"""How a streamed-text line the cockpit wrote starts."""
_START = b"\n" + STREAM_HEAD
# A newline that does not start a streamed-text line: the next line (if any) is an "other" one.
_OTHER = re.compile(rb"\n(?!" + re.escape(STREAM_HEAD) + rb")")
_OPEN_BRACE = ord("{")

Part = tuple[int, int, int]
"""`(start, end, count)`: a piece of a chunk, `body[start:end]` (without its last newline). With
`count` 0 it is one line that does not start as a streamed-text line (maybe blank); else it is
`count` consecutive lines that do."""


def segments(body: bytes) -> tuple[list[Part], bool]:
    """The lines of `body` (whole lines: it ends with a newline), in order, as `Part`s; and
    whether one of the other lines may be blank (one that does not start with `{`)."""
    last = len(body)
    # Where each other line starts (just after a newline; the final newline's end is no line).
    starts = [m.end() for m in _OTHER.finditer(body, 0, last - 1)]
    find, count = body.find, body.count
    parts: list[Part] = []
    append = parts.append
    if body.startswith(STREAM_HEAD):  # the chunk starts with a run
        following = starts[0] if starts else last
        # (each newline in a run but its last starts the next line of the run)
        append((0, following - 1, 1 + count(_START, 0, following - 1)))
    else:
        starts.insert(0, 0)
    maybe_blank = False
    n = len(starts)
    for i, start in enumerate(starts):
        end = find(b"\n", start)
        append((start, end, 0))
        if end == start or body[start] != _OPEN_BRACE:
            maybe_blank = True
        following = starts[i + 1] if i + 1 < n else last
        if end + 1 < following:  # a run of streamed-text lines up to the next other line
            append((end + 1, following - 1, 1 + count(_START, end + 1, following - 1)))
    return parts, maybe_blank
