"""Folding a journal's lines: each event parsed and applied, and runs of streamed text in one step.

Most of a long journal is streamed text: runs of `model_update` lines. A run the cockpit itself
wrote (pydantic's compact layout, `{"type":"model_update",...` first) is folded in one step
(`RunFold.apply_stream`) when byte checks over its lines say it is one stream: one event a line,
one channel, one turn, and the outer two lines (parsed) say the seqs run on without a gap. Its text
stays in the file as a `JournalText`, read only when its row is drawn. Anything else (other
writers' layouts, a channel or turn that changes, a damaged line) is parsed line by line, so the
view never depends on the layout; only the speed does.

What the byte checks cannot see: the seqs between the outer two lines (taken to run on, as a
Session stamps them), and a middle line of the right shape that fails validation (counted as an
event; found, and marked corrupt, when the text is read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple

from .events import EVENT_ADAPTER, BaseEvent
from .fold import Change, DeferredText, RunFold
from .journal_index import TYPE_CODES, Lines, code_of, parse_other

if TYPE_CHECKING:
    from .journal_index import JournalIndex

__all__ = ["JournalText", "OnChange", "fold_lines"]

OnChange = Callable[[int, Change], None]
"""`on_change(position, change)`: what folding the line at `position` changed."""

_UPDATE = TYPE_CODES["model_update"]
_UPDATE_HEAD = b'{"type":"model_update",'
_STREAM_RUN = 4  # at least this many `model_update` lines are tried as one step
_RUNS = re.compile(b"\x01{%d,}" % _STREAM_RUN)
_CHANNEL_END = re.compile(rb',"channel":"(message|thought)"\}$')
_INT = rb"-?(?:0|[1-9]\d*)"
# A model_update line's head as pydantic writes it: its seq, ts and turn, up to the text.
_STREAM_HEAD = re.compile(rb'\{"type":"model_update","session_id":"[^"\\]*","seq":(%s),'
                          rb'"ts":(%s(?:\.\d+)?(?:[eE][-+]?\d+)?),"turn":(%s|null),"text":"'
                          % (_INT, _INT, _INT))
_VALIDATE = EVENT_ADAPTER.validator.validate_json  # (the union's own, without a wrapper)


def fold_lines(fold: RunFold, new: Lines, lo: int, hi: int, index: JournalIndex,
               codes: bytearray | None = None, on_change: OnChange | None = None) -> None:
    """Fold `new.lines[lo:hi]` into `fold`, writing each line's code into `codes[i]` when
    given. `index` is where the lines are (for the text of a stream folded in one step)."""
    heads = bytes(map(bytes.startswith, new.lines[lo:hi], repeat(_UPDATE_HEAD)))
    position = lo
    for run in _RUNS.finditer(heads):
        a, b = lo + run.start(), lo + run.end()
        _fold_each(fold, new, position, a, codes, on_change)
        _fold_streams(fold, new, a, b, index, codes, on_change)
        position = b
    _fold_each(fold, new, position, hi, codes, on_change)


def _fold_each(fold: RunFold, new: Lines, lo: int, hi: int, codes: bytearray | None,
               on_change: OnChange | None) -> None:
    """Parse and fold `new.lines[lo:hi]` one by one (the hottest loop of replay)."""
    apply, lines, first = fold.apply, new.lines, new.first
    for i in range(lo, hi):
        raw = lines[i]
        try:
            event: BaseEvent | None = _VALIDATE(raw)
        except ValueError:  # a newer event type, or not an event at all
            event = parse_other(raw)
        if codes is not None:
            codes[i] = code_of(event)
        if event is not None:
            change = apply(event)
            if on_change is not None:
                on_change(first + i, change)


def _fold_streams(fold: RunFold, new: Lines, a: int, b: int, index: JournalIndex,
                  codes: bytearray | None, on_change: OnChange | None) -> None:
    """Fold the `model_update` lines `new.lines[a:b]`: in one step, else (another turn or
    channel, a gap in the seqs, a damaged line) each half the same way."""
    if b - a < _STREAM_RUN:
        _fold_each(fold, new, a, b, codes, on_change)
    elif not _fold_stream(fold, new, a, b, index, codes, on_change):
        middle = (a + b) // 2
        _fold_streams(fold, new, a, middle, index, codes, on_change)
        _fold_streams(fold, new, middle, b, index, codes, on_change)


class _Update(NamedTuple):
    """What `RunFold.apply_stream` reads of the outer two lines of a stream."""

    seq: int
    ts: float
    turn: int | None
    channel: str


def _fold_stream(fold: RunFold, new: Lines, a: int, b: int, index: JournalIndex,
                 codes: bytearray | None, on_change: OnChange | None) -> bool:
    """Fold `new.lines[a:b]` (each starting as a compact `model_update`) in one step if they
    are one stream; returns False, having folded nothing, if the checks fail."""
    lines, data, base, offsets = new.lines, new.data, new.base, new.offsets
    count = b - a
    head, tail = lines[a], lines[b - 1]
    lo = offsets[a] - base
    hi = offsets[b] - base if b < len(lines) else len(data)
    channel = _CHANNEL_END.search(head, max(0, len(head) - 24))
    # One event a line (each holds one `{"type":`), each ending with the first line's
    # channel, and the outer two in the compact layout, one turn, seqs running on.
    if (channel is None or data.count(channel[0] + b"\n", lo, hi) != count
            or data.count(b'{"type":', lo, hi) != count):
        return False
    first, last = _STREAM_HEAD.match(head), _STREAM_HEAD.match(tail)
    if (first is None or last is None or first[3] != last[3]
            or int(last[1]) - int(first[1]) != count - 1
            or data.count(b',"turn":%s,"text":"' % first[3], lo, hi) != count):
        return False
    turn = None if first[3] == b"null" else int(first[3])
    name = channel[1].decode()
    start = _Update(int(first[1]), float(first[2]), turn, name)
    end = _Update(int(last[1]), float(last[2]), turn, name)
    # A size for layout until the text is read: the outer two lines stand for the rest.
    overhead = (first.end() + last.end()) / 2 + len(channel[0]) + 2  # (quote and newline)
    newlines = (head.count(b"\\n", first.end()) + tail.count(b"\\n", last.end())) * count // 2
    text = JournalText(index, new.first + a, new.first + b,
                       max(0, int(hi - lo - count * overhead)), newlines)
    change = fold.apply_stream(start, end, count, text)
    if codes is not None:
        codes[a:b] = bytes([_UPDATE]) * count
    if on_change is not None:
        on_change(new.first + b - 1, change)
    return True


class JournalText(DeferredText):
    """The joined text of the `model_update` lines `[start, stop)` of a journal, read from the
    file when first wanted (a long run's streamed text is most of its journal: replay keeps
    only where it is)."""

    __slots__ = ("index", "start", "stop")

    def __init__(self, index: JournalIndex, start: int, stop: int, chars: int,
                 newlines: int) -> None:
        super().__init__(chars, newlines)
        self.index, self.start, self.stop = index, start, stop

    def __str__(self) -> str:
        parse = self.index.parse
        texts: list[Any] = []
        for first, lines, *_ in self.index.lines_of(self.start, self.stop):
            for position, raw in enumerate(lines, first):
                event = parse(position, raw)
                if event is not None and event.type == "model_update":
                    texts.append(event.text)  # type: ignore[attr-defined]
        return "".join(texts)
