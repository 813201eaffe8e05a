"""A compact, growing index of a journal file: where each line starts and what kind of event it is.

A million-event journal is a few hundred MB; holding its events as pydantic models would cost
gigabytes and seconds of garbage collection. The index keeps flat arrays instead: a one-byte code
per line (the event type plus a "went badly" flag, for timeline markers and the type filter), and
where lines start. Events are parsed only when someone folds or inspects them, straight from the
file with `os.pread`.

Where lines start is kept for every line except those inside a run of streamed text: a run is one
entry (its first line), and a line inside it is found, when wanted, by counting newlines from
there. That is what lets a chunk be indexed without a Python step per streamed line (see
`scan`). What kind each line is comes from parsing it, so the index does not depend on
how the writer laid the JSON out; the parsing is the caller's (replay passes its fold as
`classify`, which parses each line once for both).

`scan()` reads whatever the file gained since the last call, so the same object tails a journal
another process is still writing (follow mode). Only whole lines are indexed; unterminated bytes
at the end wait for their newline, and if they never get one they are a torn tail (a crash
mid-write), reported, never fatal.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import NamedTuple

from engine_adapter.events import BaseEvent, HarnessEvent
from engine_adapter.journal.jsonl import JournalError, is_blank
from engine_adapter.journal.line_kinds import (
    CORRUPT,
    UNKNOWN,
    code_of,
    parse_line,
)
from engine_adapter.journal.scan import Part, segments

__all__ = ["Chunk", "Classify", "JournalIndex", "classify_lines"]

class Chunk(NamedTuple):
    """Whole lines of a journal in memory: `data` (from file offset `base`, ending with a
    newline) holds the positions from `first` on, as `parts` (see `scan.Part`; blank
    lines left out)."""

    first: int
    data: bytes
    base: int
    parts: list[Part]

    @property
    def positions(self) -> int:
        """How many positions the chunk holds (not `count`: a tuple's `count` is a method)."""
        return sum(count or 1 for _, _, count in self.parts)


Classify = Callable[[Chunk], bytes]
"""`classify(chunk)`: the codes of the chunk's positions, in order."""

_CHUNK = 8 << 20  # read the file 8 MiB at a time while scanning
_READ_BLOCK = 1 << 20  # lines are read back for folding about 1 MiB at a time (less held)
_SKIP_BLOCK = 64 << 10  # bytes read at a time to find a line inside a run (most are near)
_OPEN_BRACE = ord("{")


def chunk_lines(chunk: Chunk) -> Iterator[bytes]:
    """Each position's line of a chunk, in order."""
    data = chunk.data
    for start, end, count in chunk.parts:
        if count:
            yield from data[start:end].split(b"\n")
        else:
            yield data[start:end]


def classify_lines(chunk: Chunk) -> bytes:
    """The codes of a chunk's lines, each parsed (a `Classify` for an index nobody folds)."""
    return bytes(code_of(parse_line(raw)) for raw in chunk_lines(chunk))


def _blank(data: bytes, start: int, end: int) -> bool:
    return start == end or (data[start] != _OPEN_BRACE and is_blank(data[start:end]))


class JournalIndex:
    """Line starts and codes of one journal file, grown by `scan()`.

    Positions are 0-based over the file's non-blank lines (a blank line is harmless and not a
    position). `offset(p)` is where line `p` starts; it ends where the next starts (or at
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
        self.codes = array("B")
        # Where lines start, for some positions: every line but those inside a run of
        # streamed text; the lines between two of these follow one another, no blank between.
        self._anchors = array("Q")  # positions, ascending
        self._starts = array("Q")  # ... and where each starts
        self.end = 0  # bytes indexed so far (always the end of a whole line)
        self.lines = 0  # physical lines seen, blank ones included (for line numbers)
        self.pending = 0  # bytes after `end` that have no newline yet
        self.torn_tail = False  # set by `settle()` when the unterminated tail is not an event
        self.corrupt: dict[int, int] = {}  # position -> 1-based line number
        self.unknown = 0
        self._count = 0  # positions published (`len`)
        self._next = 0  # positions given out (ahead of `_count` while a chunk is added)
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
        self._add(body, self.end + pos, classify, self.end + last)
        return last

    def _add(self, body: bytes, base: int, classify: Classify, end: int) -> None:
        """Add the lines of `body` (whole lines, from file offset `base`); `end` is where the
        index then ends. The codes come last, and only then the new length."""
        first = self._next
        parts, maybe_blank = segments(body)
        if maybe_blank:
            parts = self._drop_blank(body, parts)  # (it notes the lines as it goes)
        # Each part's position and where it starts, in C loops (no blank line between them).
        positions = list(accumulate([count or 1 for _, _, count in parts], initial=first))
        position = positions.pop()
        if not maybe_blank:
            self._note_lines(first, position - first)
        self._anchors.extend(positions)
        self._starts.extend([base + start for start, _, _ in parts])
        self._next = position
        codes = classify(Chunk(first, body, base, parts))
        self.codes.frombytes(codes)
        if CORRUPT in codes or UNKNOWN in codes:
            for i, code in enumerate(codes):
                if code == CORRUPT:
                    self.corrupt[first + i] = self.line_number(first + i)
                elif code == UNKNOWN:
                    self.unknown += 1
        self.end = end
        self._count = position

    def _drop_blank(self, body: bytes, parts: list[Part]) -> list[Part]:
        """`parts` without blank lines, noting where line numbers stop being positions + 1."""
        kept: list[Part] = []
        position = self._next
        for part in parts:
            start, stop, count = part
            if not count and _blank(body, start, stop):
                self.lines += 1
                continue
            self._note_lines(position, count or 1)
            kept.append(part)
            position += count or 1
        return kept

    def _note_lines(self, position: int, count: int) -> None:
        """`count` non-blank lines, the first at `position`, follow the physical lines seen:
        remember where line numbers stop being positions + 1 (blank lines came before)."""
        if self.lines - position != self._shift:
            self._shift = self.lines - position
            self._line_numbers[position] = self.lines + 1
        self.lines += count

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
        self._add(os.pread(self._fd, end + 1 - start, start), start, classify, end + 1)
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
            if is_blank(raw):
                return False
            if parse_line(raw) is None:
                self.torn_tail = True
                return False
            self._add(raw + b"\n", self.end, classify, size)
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

    def offset(self, position: int) -> int:
        """Where line `position` starts in the file (`len(index)`: where the index ends)."""
        if position >= self._count:
            return self.end
        i = bisect.bisect_right(self._anchors, position) - 1
        anchor, start = self._anchors[i], self._starts[i]
        if anchor == position:
            return start
        skip = position - anchor  # lines to pass over: they follow one another from `start`
        while True:
            data = os.pread(self._fd, _SKIP_BLOCK, start)
            newlines = data.count(b"\n")
            if newlines >= skip:
                at = -1
                for _ in range(skip):
                    at = data.find(b"\n", at + 1)
                return start + at + 1
            if not data:  # (the file shrank under us): where the index ends
                return self.end
            skip -= newlines
            start += data.rfind(b"\n") + 1 if newlines else len(data)  # (a line longer than
            # a block passes whole)

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """Byte range of positions `start` up to (not including) `stop`."""
        return self.offset(start), self.offset(stop)

    def read(self, begin: int, end: int) -> bytes:
        """The file's bytes `[begin, end)`."""
        return os.pread(self._fd, end - begin, begin)

    def raw(self, position: int) -> bytes:
        """The bytes of one line (without its newline)."""
        begin, finish = self.span(position, position + 1)
        return os.pread(self._fd, finish - begin, begin).rstrip(b"\r\n\t ")

    def chunks(self, start: int, stop: int, block: int = _READ_BLOCK) -> Iterator[Chunk]:
        """The lines `[start, stop)`, read back about `block` bytes at a time."""
        begin, finish = self.span(start, min(stop, self._count))
        position = start
        while begin < finish:
            want = min(block, finish - begin)
            data = os.pread(self._fd, want, begin)
            while want < finish - begin and b"\n" not in data:  # a line longer than a block
                want = min(2 * want, finish - begin)
                data = os.pread(self._fd, want, begin)
            if begin + len(data) < finish:
                data = data[:data.rfind(b"\n") + 1]
            read = len(data)
            if not data.endswith(b"\n"):  # the last line, settled without its newline
                data += b"\n"
            parts, maybe_blank = segments(data)
            if maybe_blank:
                parts = [p for p in parts if p[2] or not _blank(data, p[0], p[1])]
            chunk = Chunk(position, data, begin, parts)
            yield chunk
            position += chunk.positions
            begin += read

    def event(self, position: int) -> BaseEvent | None:
        """The event at a position (`None` for a corrupt line)."""
        return self.parse(position, self.raw(position))

    def parse(self, position: int, raw: bytes) -> BaseEvent | None:
        """Parse a line read from this index, re-marking it corrupt if it is not an event."""
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
        found: list[int] = []
        for chunk in self.chunks(0, len(self), block=max(_CHUNK, len(encoded) * 4)):
            data, parts = chunk.data, chunk.parts
            starts = [start for start, _, _ in parts]
            positions = [chunk.first]
            for _, _, count in parts:
                positions.append(positions[-1] + (count or 1))
            here, at, position = -1, 0, 0  # lines counted so far in part `here`, up to `at`
            for match in pattern.finditer(data):
                # The part holding the match (a match in blank lines: the line before them).
                i = max(0, bisect.bisect_right(starts, match.start()) - 1)
                if i != here:
                    here, at, position = i, starts[i], positions[i]
                position += data.count(b"\n", at, match.start())
                at = match.start()
                line = min(position, positions[i + 1] - 1)
                if not found or found[-1] != line:
                    found.append(line)
            if len(found) >= limit:
                break
        return found[:limit]

    def events(self) -> Iterator[HarnessEvent | BaseEvent]:
        """Every event in order, skipping corrupt lines (parsed lazily, block by block)."""
        for chunk in self.chunks(0, len(self)):
            for position, raw in enumerate(chunk_lines(chunk), chunk.first):
                event = self.parse(position, raw)
                if event is not None:
                    yield event

    def __enter__(self) -> JournalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
