"""A journal's last part folded on its own: a provisional view of its end while the pass reads on.

The exact view at the end of a long journal is the fold of the whole file, seconds of work. Until
the pass gets there, the end can be shown from the last `TAIL_BYTES` alone: those lines (from a
line boundary) folded from an empty state. That view is honest only with what it lacks said:
its first row is a notice that earlier rows are still being read, a tool row whose first event
in the part is its `tool_end` says its start lies before the part, a message cut by the part's
start begins with "⋯", and the totals it holds (tokens, cost, turns, counts) are of the part
alone, so the views that show it must not show them as the run's.
"""

from __future__ import annotations

from typing import NamedTuple

from engine_adapter.events import BaseEvent
from engine_adapter.journal import STREAM_HEAD, Chunk, JournalIndex, is_blank, parse_line, segments
from engine_adapter.replay.fold_lines import fold_chunk
from engine_adapter.text import byte_size
from engine_adapter.view import MessageItem, NoticeItem, RunFold, RunView, ToolCallItem

__all__ = ["CUT_TITLE", "TAIL_BYTES", "Tail", "fold_tail", "tail_label"]

TAIL_BYTES = 4 << 20  # the part folded for a provisional end (a bounded amount of work)
CUT_TITLE = "⋯ started before the part read so far: its start, input and approval follow"
"""The title of a tool row whose `tool_end` is in the part and its start is not."""


class Tail(NamedTuple):
    """The fold of a journal's last part: file bytes `[begin, end)`, `events` lines."""

    view: RunView
    begin: int
    end: int
    events: int
    last_type: str  # the type of the part's last event ("" when its last line is not one)

    @property
    def whole(self) -> bool:
        """Whether the part is the whole file (then the view is exact)."""
        return self.begin == 0


class _PartReader:
    """What a `JournalText` reads through: the file, without marking index positions (the
    part's positions are its own, not the index's)."""

    def __init__(self, index: JournalIndex) -> None:
        self._index = index

    def read(self, begin: int, end: int) -> bytes:
        return self._index.read(begin, end)

    @staticmethod
    def parse(_position: int, raw: bytes) -> BaseEvent | None:
        return parse_line(raw)


def fold_tail(index: JournalIndex, max_bytes: int = TAIL_BYTES) -> Tail | None:
    """Fold the whole lines in the file's last `max_bytes` (from the first line that starts
    there) into a fresh view, marked as above. None when the part holds no whole line."""
    size = index.size
    start = max(0, size - max_bytes)
    data = index.read(start, size)
    skip = 0 if start == 0 else data.find(b"\n") + 1
    last = data.rfind(b"\n") + 1
    if (skip <= 0 and start) or last <= skip:
        return None
    body = data[skip:last]
    parts, maybe_blank = segments(body)
    if maybe_blank:
        parts = [p for p in parts if p[2] or not is_blank(body[p[0]:p[1]])]
    if not parts:
        return None
    fold = RunFold()
    view = fold.view
    whole = start + skip == 0
    if not whole:
        notice = NoticeItem("notice", 0, None, -1,
                            "⋯ the journal's earlier rows are still being read: these are the "
                            "rows of its last part, and a row near the top may lack its start",
                            "warning")
        notice.seqs = []
        fold.add_row(notice)
    chunk = Chunk(0, body, start + skip, parts)
    fold_chunk(fold, chunk, _PartReader(index))
    if not whole:
        _mark_cut(view, fold.rows_from_end, body.startswith(STREAM_HEAD))
    end_part = parts[-1]
    last_line = body[body.rfind(b"\n", 0, end_part[1]) + 1:end_part[1]]
    event = parse_line(last_line)
    return Tail(view, start + skip, start + last, chunk.positions,
                event.type if event is not None else "")


def _mark_cut(view: RunView, cut: list[int], starts_in_stream: bool) -> None:
    """Say so on the rows the part's start cut: tool rows seen first at their end, and a
    message whose first words lie before the part."""
    for index in cut:
        row = view.items[index]
        if isinstance(row, ToolCallItem):
            row.title = CUT_TITLE
    if starts_in_stream and len(view.items) > 1 and isinstance(view.items[1], MessageItem):
        view.items[1].prepend("⋯ ")


def tail_label(tail: Tail, read: int, size: int) -> str:
    """What the status line says while `tail`'s view stands for the end: how far the pass
    has read (`read` of `size` bytes) and what is shown."""
    percent = min(99, read * 100 // max(1, size))
    shown = byte_size(tail.end - tail.begin)
    return (f"⋯ reading the whole journal: {percent}% — showing its last {shown}; "
            "totals, marks and earlier rows follow")

