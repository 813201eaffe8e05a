"""Folding a journal's lines: each event parsed and applied, and runs of streamed text in one step.

Most of a long journal is streamed text: runs of `model_update` lines (`journal.scan` finds them
in bulk). A run the cockpit itself wrote is folded in one step (`RunFold.apply_stream`) when byte
checks over it say it is one stream: one event a line, one channel, one turn, and the outer two
lines, read by a regex for pydantic's compact layout, say the seqs run on without a gap. Its text
stays in the file as a `JournalText`, read only when its row is drawn. Anything else (other
writers' layouts, a channel or turn that changes, a damaged line) is parsed line by line, so the
view never depends on the layout; only the speed does.

What the byte checks cannot see: the seqs between the outer two lines (taken to run on, as a
Session stamps them), and a line of the right shape that fails validation (counted as an event;
found, and marked corrupt, when the text is read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple, Protocol

from engine_adapter.events import EVENT_ADAPTER, BaseEvent, HarnessEvent, ModelUpdate
from engine_adapter.journal import CHAIN_KEY, TYPE_CODES, Chunk, code_of, parse_other
from engine_adapter.view import Change, DeferredText, RunFold

__all__ = ["JournalText", "LineSource", "OnChange", "fold_chunk"]


class LineSource(Protocol):
    """Where folded lines are read back from (a `JournalIndex`, or the reader of a part)."""

    def read(self, begin: int, end: int) -> bytes:
        """The file's bytes `[begin, end)`."""
        ...

    def parse(self, position: int, raw: bytes) -> BaseEvent | None:
        """The line at `position`, `raw`, as an event (`None`: not one)."""
        ...


OnChange = Callable[[int, Change], None]
"""`on_change(position, change)`: what folding the line at `position` changed."""

_UPDATE = TYPE_CODES["model_update"]
_STREAM_RUN = 4  # at least this many `model_update` lines are tried as one step
# How a streamed-text line ends, by its channel (the last bytes of a line, and with its newline).
_CHANNEL_ENDS = {name: b'","channel":"%s"}\n' % name.encode() for name in ("message", "thought")}
_CHANNELS = {end[:-1]: name for name, end in _CHANNEL_ENDS.items()}  # (same lengths)
_CHANNEL_TAIL = len(b'","channel":"message"}')
# The same lines as a chained journal writes them: `,"chain":"<16 hex>"}` after the channel.
_CHAINED_ENDS = {name: b'","channel":"%s","%s":"' % (name.encode(), CHAIN_KEY.encode())
                 for name in ("message", "thought")}
_MARK_TAIL = len(b',"%s":"0123456789abcdef"' % CHAIN_KEY.encode())
_UPDATE_CODE = bytes([_UPDATE])
_INT = rb"-?(?:0|[1-9]\d*)"
# A model_update line's head as pydantic writes it: its seq, ts and turn, up to the text.
_STREAM_HEAD = re.compile(rb'\{"type":"model_update","session_id":"[^"\\]*","seq":(%s),'
                          rb'"ts":(%s(?:\.\d+)?(?:[eE][-+]?\d+)?),"turn":(%s|null),"text":"'
                          % (_INT, _INT, _INT))
# The union's own validator, without the adapter's wrapper (pydantic-core types it as `Any`).
_VALIDATE: Callable[[bytes], HarnessEvent] = EVENT_ADAPTER.validator.validate_json


class _Fold(NamedTuple):
    """Where a chunk's lines go: the fold, the index they are in, and who hears of changes."""

    fold: RunFold
    chunk: Chunk
    source: LineSource
    codes: bytearray | None  # each position's code, from `chunk.first` on (when wanted)
    on_change: OnChange | None


def fold_chunk(fold: RunFold, chunk: Chunk, index: LineSource, *,
               codes: bytearray | None = None, on_change: OnChange | None = None,
               at: tuple[int, int] | None = None, stop: int | None = None) -> tuple[int, int]:
    """Fold the chunk's parts into `fold` (from `at`, a part and its position, as this
    returned it), whole parts, until the position reaches `stop` (without one: all of them).
    Each position's code goes to `codes[position - chunk.first]` when given. Returns the next
    part and its position."""
    to = _Fold(fold, chunk, index, codes, on_change)
    parts, data = chunk.parts, chunk.data
    part, position = at if at is not None else (0, chunk.first)
    stop = stop if stop is not None else 1 << 62
    apply, first = fold.apply, chunk.first
    while part < len(parts) and position < stop:
        start, end, count = parts[part]
        part += 1
        if count:
            _fold_run(to, start, end, count, position)
            position += count
            continue
        # `_fold_line`, inlined: most lines that are not streamed text come this way.
        raw = data[start:end]
        try:
            event: BaseEvent | None = _VALIDATE(raw)
        except ValueError:  # a newer event type, or not an event at all
            event = parse_other(raw)
        if codes is not None:
            codes[position - first] = code_of(event)
        if event is not None:
            change = apply(event)
            if on_change is not None:
                on_change(position, change)
        position += 1
    return part, position


def _fold_line(to: _Fold, raw: bytes, position: int) -> None:
    """Parse and fold one line (the hottest path of replay)."""
    try:
        event: BaseEvent | None = _VALIDATE(raw)
    except ValueError:  # a newer event type, or not an event at all
        event = parse_other(raw)
    if to.codes is not None:
        to.codes[position - to.chunk.first] = code_of(event)
    if event is not None:
        change = to.fold.apply(event)
        if to.on_change is not None:
            to.on_change(position, change)


def _fold_run(to: _Fold, start: int, end: int, count: int, position: int) -> None:
    """Fold `count` lines that start as compact `model_update` lines, `data[start:end]`: in
    one step, else (another turn or channel, a gap in the seqs, a damaged line) each half the
    same way, down to single lines."""
    if count >= _STREAM_RUN and _fold_stream(to, start, end, count, position):
        return
    data = to.chunk.data
    lines = data[start:end].split(b"\n")
    if count < _STREAM_RUN:
        for i, raw in enumerate(lines):
            _fold_line(to, raw, position + i)
        return
    middle = count // 2
    cut = start + sum(map(len, lines[:middle])) + middle  # where the second half starts
    _fold_run(to, start, cut - 1, middle, position)
    _fold_run(to, cut, end, count - middle, position + middle)


class _Update(NamedTuple):
    """What `RunFold.apply_stream` reads of the outer two lines of a stream."""

    seq: int
    ts: float
    turn: int | None
    channel: str


def _fold_stream(to: _Fold, start: int, end: int, count: int, position: int) -> bool:
    """Fold `data[start:end]` (`count` lines) in one step if the lines are one stream;
    returns False, having folded nothing, if the checks fail."""
    data = to.chunk.data
    newline = data.find(b"\n", start, end)
    if newline < 0:
        newline = end
    tail_start = data.rfind(b"\n", start, end) + 1
    name = _CHANNELS.get(data[newline - _CHANNEL_TAIL:newline])
    ends = _CHANNEL_ENDS
    if name is None:  # a chained line: its channel comes before the chain mark
        name = _CHANNELS.get(data[newline - _CHANNEL_TAIL - _MARK_TAIL:newline - _MARK_TAIL - 1]
                             + b"}")
        ends = _CHAINED_ENDS
    # One event a line (each holds one `{"type":`: a torn line glued to the next has two),
    # each ending with the first line's channel, and the outer two in the compact layout,
    # one turn, seqs running on.
    stop = end + 1  # (with the last line's newline)
    if (name is None or data.count(ends[name], start, stop) != count
            or data.count(b'{"type":', start, stop) != count):
        return False
    first = _STREAM_HEAD.match(data, start, newline)
    last = _STREAM_HEAD.match(data, tail_start, end)
    if (first is None or last is None or first[3] != last[3]
            or int(last[1]) - int(first[1]) != count - 1
            or data.count(b',"turn":%s,"text":"' % first[3], start, stop) != count):
        return False
    turn = None if first[3] == b"null" else int(first[3])
    # A size for layout until the text is read: the outer two lines stand for the rest.
    overhead = (first.end() - start + last.end() - tail_start) / 2 + len(_CHANNEL_ENDS[name]) + (
        _MARK_TAIL if ends is _CHAINED_ENDS else 0)
    newlines = (data.count(b"\\n", first.end(), newline)
                + data.count(b"\\n", last.end(), end)) * count // 2
    base = to.chunk.base
    text = JournalText(to.source, position, position + count, base + start, base + end,
                       max(0, int(stop - start - count * overhead)), newlines)
    change = to.fold.apply_stream(_Update(int(first[1]), float(first[2]), turn, name),
                                  _Update(int(last[1]), float(last[2]), turn, name),
                                  count, text)
    if to.codes is not None:
        at = position - to.chunk.first
        to.codes[at:at + count] = _UPDATE_CODE * count
    if to.on_change is not None:
        to.on_change(position + count - 1, change)
    return True


class JournalText(DeferredText):
    """The joined text of the `model_update` lines `[start, stop)` of a journal (file bytes
    `[begin, end)`), read from the file when first wanted (a long run's streamed text is most
    of its journal: replay keeps only where it is)."""

    __slots__ = ("begin", "end", "index", "start", "stop")

    def __init__(self, index: LineSource, start: int, stop: int, begin: int, end: int,
                 chars: int, newlines: int) -> None:
        super().__init__(chars, newlines)
        self.index, self.start, self.stop, self.begin, self.end = index, start, stop, begin, end

    def __str__(self) -> str:
        texts: list[str] = []
        data = self.index.read(self.begin, self.end)
        for position, raw in enumerate(data.split(b"\n"), self.start):
            event = self.index.parse(position, raw)
            if isinstance(event, ModelUpdate):
                texts.append(event.text)
        return "".join(texts)
