"""A compact, growing index of a journal file: where each line starts and what kind of event it is.

A million-event journal is a few hundred MB; holding its events as pydantic models would cost
gigabytes and seconds of garbage collection. The index keeps two flat arrays instead: the byte
offset of every line (`array('Q')`, 8 bytes a line) and a one-byte code per line (the event type
plus a "went badly" flag, for timeline markers and the type filter). Events are parsed only when
someone folds or inspects them, straight from the file with `os.pread`.

`scan()` reads whatever the file gained since the last call, so the same object tails a journal
another process is still writing (follow mode). It finds the lines of each chunk at C speed (one
`split`); what kind each line is comes from parsing it, so the index does not depend on how the
writer laid the JSON out (key order, spaces). The parsing is the caller's to do: replay passes its
fold as `classify`, which parses each line once for both. Only whole lines are indexed;
unterminated bytes at the end wait for their newline, and if they never get one they are a torn
tail (a crash mid-write), reported, never fatal.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterator
from itertools import accumulate, islice
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from .events import EVENT_ADAPTER, EVENT_TYPES, BaseEvent, HarnessEvent
from .journal import JournalError
from .outcomes import FAILED_OUTCOMES, went_badly

__all__ = [
    "BAD_OUTCOME",
    "CODE_NAMES",
    "CORRUPT",
    "FLAGS",
    "TYPE_CODES",
    "TYPE_MASK",
    "UNKNOWN",
    "VALIDATORS",
    "Classify",
    "JournalIndex",
    "Lines",
    "classify_lines",
    "code_of",
    "parse_line",
    "parse_other",
]

TYPE_CODES: dict[str, int] = {name: code for code, name in enumerate(EVENT_TYPES)}
"""Each known event type and its code (its position in `EVENT_TYPES`)."""
UNKNOWN = 0x3E  # an event whose `type` this version does not know (a newer writer)
CORRUPT = 0x3F  # a line that is not an event at all
TYPE_MASK = 0x3F  # `code & TYPE_MASK` is the type code
BAD_OUTCOME = 0x40  # the event reports a failed outcome (see `outcomes.went_badly`)
FLAGS = (0, BAD_OUTCOME)
"""Every combination of the flags a type code may carry."""
CODE_NAMES: dict[int, str] = {**{c: n for n, c in TYPE_CODES.items()},
                              UNKNOWN: "unknown", CORRUPT: "corrupt"}
"""Type code to a display name."""
VALIDATORS = {code: EVENT_TYPES[name].__pydantic_validator__.validate_json
              for name, code in TYPE_CODES.items()}
"""Each type code's own validator (JSON bytes to event): a third faster than the union's."""



class Lines(NamedTuple):
    """Whole lines of a journal in memory: `lines[i]` (without its newline) is position
    `first + i` and starts at file offset `offsets[i]`; `data` holds them all (and any blank
    lines between them) from file offset `base`."""

    first: int
    lines: list[bytes]
    data: bytes
    base: int
    offsets: array


Classify = Callable[[Lines], bytes]
"""`classify(lines)`: the codes of new lines (their offsets are in the index already)."""

_VALIDATE = EVENT_ADAPTER.validator.validate_json  # (the union's own, without a wrapper)
_OUTCOME_CODES = frozenset(TYPE_CODES[name] for name in FAILED_OUTCOMES)
_CLASS_CODES: dict[type, int] = {EVENT_TYPES[name]: code for name, code in TYPE_CODES.items()}
_CLASS_CODES[type(None)] = CORRUPT
_CHUNK = 8 << 20  # read the file 8 MiB at a time while scanning
_READ_BLOCK = 1 << 20  # lines are read back for folding about 1 MiB at a time (less held)
_PLUS_ONE = (1).__add__


def code_of(event: BaseEvent | None) -> int:
    """The code of a parsed line: its type and whether it went badly (`None`: corrupt)."""
    code = _CLASS_CODES.get(type(event), UNKNOWN)  # (a newer type parses as a `BaseEvent`)
    return code | BAD_OUTCOME if code in _OUTCOME_CODES and went_badly(event) else code


def parse_line(raw: bytes) -> BaseEvent | None:
    """One journal line as an event; an event of an unknown type as a plain `BaseEvent` (the
    fold ignores it, the inspector shows it); `None` for a line that is not an event."""
    try:
        return _VALIDATE(raw)
    except ValidationError:
        return parse_other(raw)


def parse_other(raw: bytes) -> BaseEvent | None:
    """`parse_line` for a line that is not an event of a known type: a `BaseEvent` if it is
    an event of an unknown (newer) type, else `None`."""
    try:
        event = BaseEvent.model_validate_json(raw)
    except ValidationError:
        return None
    return event if event.type not in TYPE_CODES else None


def classify_lines(new: Lines) -> bytes:
    """The codes of `new` lines, each parsed (a `Classify` for an index nobody folds)."""
    return bytes(code_of(parse_line(raw)) for raw in new.lines)


class JournalIndex:
    """Line offsets and codes of one journal file, grown by `scan()`.

    Positions are 0-based over the file's non-blank lines (a blank line is harmless and not a
    position). `offsets[i]` is where line `i` starts; it ends where the next starts (or at
    `end`). One thread scans; any thread may read lines and codes below `len(index)`: the
    arrays only grow, and the length is published last.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise JournalError(f"{str(self.path)!r} is a directory, not a journal file; "
                               "give the path of a .jsonl journal", path=str(self.path))
        try:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise JournalError(f"no journal at {str(self.path)!r}; check the path, or run "
                               "`cockpit journals` to list recent ones",
                               path=str(self.path)) from None
        except OSError as exc:
            raise JournalError(f"cannot read journal {str(self.path)!r}: {exc.strerror or exc}",
                               path=str(self.path)) from None
        self.offsets = array("Q")
        self.codes = array("B")
        self.end = 0  # bytes indexed so far (always the end of a whole line)
        self.lines = 0  # physical lines seen, blank ones included (for line numbers)
        self.pending = 0  # bytes after `end` that have no newline yet
        self.torn_tail = False  # set by `settle()` when the unterminated tail is not an event
        self.corrupt: dict[int, int] = {}  # position -> 1-based line number
        self.unknown = 0
        self._count = 0  # positions published (`len`)
        self._line_numbers: dict[int, int] = {}  # position -> line, where blank lines shift
        self._shift = 0
        self._open_line = False  # the last indexed line had no newline yet (see `settle`)
        self.caught_up = False  # the last scan reached the end of the file's whole lines
        self._lock = threading.Lock()  # one scan at a time

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        """Close the file. Idempotent."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    @property
    def size(self) -> int:
        """The file's current size in bytes."""
        return os.fstat(self._fd).st_size

    # growing ---------------------------------------------------------------------------------
    def scan(self, *, max_bytes: int | None = None, classify: Classify = classify_lines) -> int:
        """Index the whole lines the file gained since the last scan (at most about `max_bytes`
        of them); `classify` gives their codes. Returns how many positions were added, and
        sets `caught_up` when it stopped for want of whole lines rather than of budget."""
        with self._lock:
            before = self._count
            budget = max_bytes if max_bytes is not None else 1 << 62
            self.caught_up = False
            while True:
                want = min(_CHUNK, budget)
                data = os.pread(self._fd, want, self.end)
                used = self._index_chunk(data, classify) if data else 0
                if used == 0 and data and len(data) == want:
                    # No newline in a whole read: a huge line, read on to its end.
                    used = self._index_long_line(classify)
                    if used == 0:
                        self.caught_up = True
                        break
                elif len(data) < want:  # the end of the file
                    self.pending = len(data) - used
                    self.caught_up = True
                    break
                budget -= len(data)
                if budget <= 0:
                    break
            return self._count - before

    def _index_chunk(self, data: bytes, classify: Classify) -> int:
        """Index the whole lines at the start of `data` (file bytes from `self.end`)."""
        pos = 0
        if self._open_line:  # `settle()` took an unterminated last event: this ends its line
            if data == b"\r":
                return 0  # half of a CRLF: wait for the rest
            self._open_line = False
            pos = 2 if data.startswith(b"\r\n") else 1 if data.startswith(b"\n") else 0
        last = data.rfind(b"\n") + 1
        if last <= pos:
            self.end += pos
            return pos
        body = data[pos:last] if pos or last < len(data) else data
        lines = body.split(b"\n")
        lines.pop()  # the empty string after the last newline
        offsets = array("Q", islice(accumulate(map(_PLUS_ONE, map(len, lines)),
                                               initial=self.end + pos), len(lines)))
        if b"" in lines or any(map(bytes.isspace, lines)):
            offsets, lines = self._drop_blank(offsets, lines)
        else:
            self._note_lines(len(self.offsets), len(lines))
        self._add(Lines(len(self.offsets), lines, body, self.end + pos, offsets), classify)
        self.end += last
        return last

    def _note_lines(self, position: int, count: int) -> None:
        """`count` non-blank lines, the first at `position`, follow the physical lines seen:
        remember where line numbers stop being positions + 1 (blank lines came before)."""
        if self.lines - position != self._shift:
            self._shift = self.lines - position
            self._line_numbers[position] = self.lines + 1
        self.lines += count

    def _drop_blank(self, offsets: array, lines: list[bytes]) -> tuple[array, list[bytes]]:
        """The non-blank `lines` and their offsets, counting every line for line numbers."""
        kept_offsets, kept = array("Q"), []
        position = len(self.offsets)
        for offset, raw in zip(offsets, lines, strict=True):
            if raw and not raw.isspace():
                self._note_lines(position + len(kept), 1)
                kept_offsets.append(offset)
                kept.append(raw)
            else:
                self.lines += 1
        return kept_offsets, kept

    def _add(self, new: Lines, classify: Classify) -> None:
        """Add lines (their offsets first, so `classify` may refer to their positions)."""
        first = new.first
        self.offsets.extend(new.offsets)
        codes = classify(new)
        self.codes.frombytes(codes)
        if CORRUPT in codes or UNKNOWN in codes:
            for i, code in enumerate(codes):
                if code == CORRUPT:
                    self.corrupt[first + i] = self.line_number(first + i)
                elif code == UNKNOWN:
                    self.unknown += 1
        self._count = len(self.offsets)

    def _index_long_line(self, classify: Classify) -> int:
        """A line longer than a chunk: find its end and index it."""
        start = probe = self.end
        while True:
            data = os.pread(self._fd, _CHUNK, probe)
            if not data:
                self.pending = probe - start
                return 0
            nl = data.find(b"\n")
            if nl >= 0:
                break
            probe += len(data)
        end = probe + nl
        raw = os.pread(self._fd, end - start, start)
        if raw.isspace():  # a long run of blanks is still a blank line
            self.lines += 1
        else:
            self._note_lines(len(self.offsets), 1)
            self._add(Lines(len(self.offsets), [raw], raw, start, array("Q", [start])), classify)
        self.end = end + 1
        return end + 1 - start

    def settle(self, classify: Classify = classify_lines) -> bool:
        """Decide about unterminated bytes at the end, once the writer has stopped: a complete
        event that only lacks its newline is indexed; anything else is a torn tail (skipped).
        Returns whether a position was added."""
        with self._lock:
            size = self.size
            if size <= self.end:
                self.torn_tail = False
                return False
            raw = os.pread(self._fd, size - self.end, self.end)
            if raw.isspace():
                return False
            if parse_line(raw) is None:
                self.torn_tail = True
                return False
            self._note_lines(len(self.offsets), 1)
            self._add(Lines(len(self.offsets), [raw], raw, self.end, array("Q", [self.end])),
                      classify)
            self.end = size
            self.pending = 0
            self._open_line = True
            self.torn_tail = False
            return True

    # reading ---------------------------------------------------------------------------------
    def line_number(self, position: int) -> int:
        """The 1-based line number of a position."""
        base, line = 0, 1
        for start, number in self._line_numbers.items():  # few: only where blank lines were
            if start > position:
                break
            base, line = start, number
        return line + (position - base)

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """Byte range of positions `start` up to (not including) `stop`."""
        begin = self.offsets[start]
        finish = self.offsets[stop] if stop < len(self.offsets) else self.end
        return begin, finish

    def raw(self, position: int) -> bytes:
        """The bytes of one line (without its newline)."""
        begin, finish = self.span(position, position + 1)
        return os.pread(self._fd, finish - begin, begin).rstrip(b"\r\n\t ")

    def blocks(self, start: int, stop: int) -> Iterator[tuple[int, int, bytes, int]]:
        """The lines `[start, stop)` about 1 MiB at a time: `(first, end, data, offset)` where
        `data` holds lines `[first, end)` and starts at file `offset`."""
        stop = min(stop, len(self))
        offsets = self.offsets
        position = start
        while position < stop:
            begin = offsets[position]
            block_end = bisect.bisect_left(offsets, begin + _READ_BLOCK, position + 1, stop)
            first, last = self.span(position, block_end)
            yield position, block_end, os.pread(self._fd, last - first, first), first
            position = block_end

    def lines_of(self, start: int, stop: int) -> Iterator[Lines]:
        """The lines `[start, stop)`, read back about 1 MiB at a time."""
        offsets = self.offsets
        for first, end, data, base in self.blocks(start, stop):
            lines = data.split(b"\n")
            if len(lines) == end - first + 1 and not lines[-1]:  # no blank line in between
                lines.pop()
            else:
                lines = [data[offsets[p] - base:offsets[p + 1] - base].rstrip(b"\r\n\t ")
                         for p in range(first, end - 1)]
                lines.append(data[offsets[end - 1] - base:].rstrip(b"\r\n\t "))
            yield Lines(first, lines, data, base, offsets[first:end])

    def event(self, position: int) -> BaseEvent | None:
        """The event at a position (`None` for a corrupt line)."""
        return self.parse(position, self.raw(position))

    def parse(self, position: int, raw: bytes) -> BaseEvent | None:
        """Parse a line read from this index, re-marking it corrupt if it is not an event."""
        if position < len(self):
            validator = VALIDATORS.get(self.codes[position] & TYPE_MASK)
            if validator is not None:  # the type is known: its own model validates faster
                try:
                    return validator(raw)
                except ValidationError:
                    pass
        event = parse_line(raw)
        if event is None and position < len(self):
            self.mark_corrupt(position)
        return event

    def mark_corrupt(self, position: int) -> None:
        """Record that the line at `position` turned out not to be an event."""
        if self.codes[position] != CORRUPT:
            if self.codes[position] == UNKNOWN:
                self.unknown -= 1
            self.codes[position] = CORRUPT
            self.corrupt[position] = self.line_number(position)

    def search(self, term: str, *, limit: int = 1_000_000) -> list[int]:
        """Positions of the lines that contain `term` (case-insensitive for ASCII letters),
        matched against the JSON text as written, so a word inside a message or an output is
        found. A C-speed regex over the file, a block at a time."""
        encoded = json.dumps(term, ensure_ascii=False)[1:-1].encode("utf-8")
        if not encoded:
            return []
        pattern = re.compile(re.escape(encoded), re.IGNORECASE)
        stop = len(self)
        found: list[int] = []
        offsets = self.offsets
        block = max(_CHUNK, len(encoded) * 4)
        start = 0
        while start < stop and len(found) < limit:
            first = offsets[start]
            end = bisect.bisect_right(offsets, first + block, start + 1, stop)
            end = max(end, start + 1)
            _, last = self.span(start, end)
            data = os.pread(self._fd, last - first, first)
            position = start
            for match in pattern.finditer(data):
                at = first + match.start()
                while position + 1 < end and offsets[position + 1] <= at:
                    position += 1
                if not found or found[-1] != position:
                    found.append(position)
            start = end
        return found[:limit]

    def events(self) -> Iterator[HarnessEvent | BaseEvent]:
        """Every event in order, skipping corrupt lines (parsed lazily, block by block)."""
        for first, lines, *_ in self.lines_of(0, len(self)):
            for position, raw in enumerate(lines, first):
                event = self.parse(position, raw)
                if event is not None:
                    yield event

    def __enter__(self) -> JournalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
