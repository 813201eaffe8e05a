"""A compact, lazily built index of a journal file: where each line starts and what kind it is.

A million-event journal is a few hundred MB; holding its events as pydantic models would cost
gigabytes and seconds of garbage collection. The index keeps two flat arrays instead: the byte
offset of every line (`array('Q')`, 8 bytes a line) and a one-byte code per line (the event type
plus a "went badly" flag, for timeline markers and the type filter). Events are parsed only when
someone folds or inspects them, straight from the file with `os.pread`.

The index grows: `scan()` reads whatever the file gained since the last call, so the same object
tails a journal another process is still writing (follow mode). Only whole lines are indexed;
unterminated bytes at the end wait for their newline, and if they never get one they are a torn
tail (a crash mid-write), reported, never fatal.

Whole chunks of clean lines (each an event as pydantic writes it) are indexed at C speed by
`journal_scan.CleanScanner`; on a big file, in a helper process (`scan_with_helper`) so that
another thread can fold what is indexed meanwhile. Other chunks go line by line.

Classification while scanning looks only at bytes (pydantic writes `type` first); a line that
does not look like an event is decoded to decide between an unknown (newer) event type and a
corrupt line. A line that looks right but fails full validation is found, and re-marked as
corrupt, when it is parsed (`mark_corrupt`).
"""

from __future__ import annotations

import bisect
import json
import os
import re
import subprocess
import sys
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import ValidationError

from . import journal_scan
from .events import EVENT_ADAPTER, EVENT_TYPES, BaseEvent, HarnessEvent
from .journal import BOM, JournalError, decode_json, is_blank
from .journal_scan import FRAME, CleanScanner

__all__ = [
    "BAD_OUTCOME",
    "CODE_NAMES",
    "CORRUPT",
    "FLAGS",
    "STREAM",
    "TYPE_CODES",
    "TYPE_MASK",
    "UNKNOWN",
    "VALIDATORS",
    "JournalIndex",
    "parse_line",
]

TYPE_CODES: dict[str, int] = {name: code for code, name in enumerate(EVENT_TYPES)}
"""Each known event type and its code (its position in `EVENT_TYPES`)."""
UNKNOWN = 0x3E  # an event whose `type` this version does not know (a newer writer)
CORRUPT = 0x3F  # a line that is not an event at all
TYPE_MASK = 0x3F  # `code & TYPE_MASK` is the type code
BAD_OUTCOME = 0x40  # set on a failed tool call, a denial, a failed check, a failed run
STREAM = 0x80  # a hint the C-speed scan sets: this model_update line is one event on the same
# channel as the model_update line before, so replay may fold the run in one step (it checks
# the turn). Absent means "not known" (the line-by-line path never sets it).
FLAGS = (0, BAD_OUTCOME, STREAM, BAD_OUTCOME | STREAM)
"""Every combination of the flags a type code may carry."""
CODE_NAMES: dict[int, str] = {**{c: n for n, c in TYPE_CODES.items()},
                              UNKNOWN: "unknown", CORRUPT: "corrupt"}
"""Type code to a display name."""

_PREFIX = b'{"type":"'
_BYTE_CODES = {name.encode(): code for name, code in TYPE_CODES.items()}
# The few event types whose outcome matters to the timeline, and the bytes that say it went badly.
# Inside a JSON string every quote is escaped, so an unescaped `"ok":false` is always the field.
_BAD_MARKS: dict[int, tuple[bytes, ...]] = {
    TYPE_CODES["tool_end"]: (b'"ok":false',),
    TYPE_CODES["approval_resolved"]: (b'"allowed":false',),
    TYPE_CODES["verification_end"]: (b'"passed":false',),
    TYPE_CODES["agent_end"]: (b'"status":"failed"', b'"status":"cancelled"'),
}
_BAD_FIELDS: dict[str, tuple[str, object]] = {
    "tool_end": ("ok", False), "approval_resolved": ("allowed", False),
    "verification_end": ("passed", False),
}
_SCANNER = CleanScanner(_BYTE_CODES, _BAD_MARKS, BAD_OUTCOME, TYPE_CODES["model_update"],
                        STREAM)
VALIDATORS = {code: EVENT_TYPES[name].__pydantic_validator__.validate_json
              for name, code in TYPE_CODES.items()}
"""Each type code's own validator (JSON bytes to event): a third faster than the union's."""
_CHUNK = 8 << 20  # read the file 8 MiB at a time while scanning
_READ_BLOCK = 1 << 20  # lines are read back for folding about 1 MiB at a time (less held)


def classify(raw: bytes) -> int:
    """The code of one line, from its bytes (decoding it only when it does not look like an
    event written by pydantic)."""
    if raw.startswith(_PREFIX):
        end = raw.find(b'"', 9, 48)
        code = _BYTE_CODES.get(raw[9:end]) if end > 0 else None
        if code is not None:
            marks = _BAD_MARKS.get(code)
            if marks and any(raw.find(mark) >= 0 for mark in marks):
                code |= BAD_OUTCOME
            return code
    return _classify_decoded(raw)


def _classify_decoded(raw: bytes) -> int:
    try:
        data = decode_json(raw)
    except ValueError:  # not JSON, not UTF-8, or nested too deep to decode safely
        return CORRUPT
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return CORRUPT
    return code_of(data["type"], data)


def code_of(type_: str, fields: object) -> int:
    """The code of an event of type `type_` whose fields are `fields` (an event or a dict)."""
    code = TYPE_CODES.get(type_)
    if code is None:
        return UNKNOWN
    get = fields.get if isinstance(fields, dict) else (
        lambda name, default=None: getattr(fields, name, default))
    bad = _BAD_FIELDS.get(type_)
    failed_run = type_ == "agent_end" and get("status", None) in ("failed", "cancelled")
    if failed_run or (bad is not None and get(bad[0], None) is bad[1]):
        code |= BAD_OUTCOME
    return code


def parse_line(raw: bytes) -> BaseEvent | None:
    """One journal line as an event; an event of an unknown type as a plain `BaseEvent` (the
    fold ignores it, the inspector shows it); `None` for a line that is not an event."""
    if raw.startswith(BOM):  # an editor's byte order mark: not part of the event
        raw = raw[3:]
    try:
        return EVENT_ADAPTER.validate_json(raw)
    except ValidationError:
        pass
    try:
        event = BaseEvent.model_validate_json(raw)
    except ValidationError:
        return None
    return event if event.type not in TYPE_CODES else None


class JournalIndex:
    """Line offsets and codes of one journal file, grown by `scan()`.

    Positions are 0-based over the file's non-blank lines (a blank line is harmless and not a
    position). `offsets[i]` is where line `i` starts; it ends where the next starts (or at
    `end`). One thread scans; any thread may read lines and codes: arrays only grow, and readers
    use a length they took first.
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
        self._line_numbers: dict[int, int] = {}  # position -> line, where blank lines shift
        self._shift = 0
        self._open_line = False  # the last indexed line had no newline yet (see `settle`)
        self._lock = threading.Lock()  # one scan at a time
        self._helper: subprocess.Popen[bytes] | None = None
        self._helper_stopped = False
        # Positions other threads may read: a line's offset, code and end (`self.end`, for the
        # last one) are all in place before it counts (a reader folding alongside a scan once
        # read a position whose end was not set yet, and called a good event corrupt).
        self._published = 0

    def __len__(self) -> int:
        return self._published

    def _publish(self) -> None:
        self._published = len(self.offsets)

    def stop_helper(self) -> None:
        """Stop a `scan_with_helper` under way (it returns soon, having indexed less) and any
        later one from using a helper. Any thread may call it."""
        self._helper_stopped = True
        helper = self._helper
        if helper is not None:
            helper.kill()

    def close(self) -> None:
        """Close the file (and stop a helper). Idempotent."""
        self.stop_helper()
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    @property
    def size(self) -> int:
        """The file's current size in bytes."""
        return os.fstat(self._fd).st_size

    def scan(self, *, max_bytes: int | None = None) -> int:
        """Index the whole lines the file gained since the last scan (at most about `max_bytes`
        of them). Returns how many positions were added."""
        with self._lock:
            before = len(self.offsets)
            budget = max_bytes if max_bytes is not None else 1 << 62
            while budget > 0:
                data = os.pread(self._fd, min(_CHUNK, budget), self.end)
                if not data:
                    self.pending = 0
                    break
                used = self._index_chunk(data)
                if used == 0:  # no newline in a whole chunk: a huge line, read more of it
                    if len(data) < _CHUNK:
                        self.pending = len(data)
                        break
                    used = self._index_long_line()
                    if used == 0:
                        break
                self._publish()
                budget -= used
                if used < len(data):
                    self.pending = len(data) - used
                    if len(data) < _CHUNK:
                        break
            self._publish()
            return len(self.offsets) - before

    def _index_chunk(self, data: bytes) -> int:
        """Index the whole lines at the start of `data` (file bytes from `self.end`)."""
        find, base, append = data.find, self.end, self._append
        pos = 0
        if self._open_line:  # `settle()` took an unterminated last event: this ends its line
            if data == b"\r":
                return 0  # half of a CRLF: wait for the rest
            self._open_line = False
            pos = 2 if data.startswith(b"\r\n") else 1 if data.startswith(b"\n") else 0
        last = data.rfind(b"\n") + 1
        if last > pos and self._index_clean(data[pos:last] if pos or last < len(data) else data,
                                            base + pos):
            self.end = base + last
            return last
        while True:
            nl = find(b"\n", pos)
            if nl < 0:
                break
            self.lines += 1
            if nl > pos:
                raw = data[pos:nl]
                if not is_blank(raw):
                    append(base + pos, classify(raw))
            pos = nl + 1
        self.end = base + pos
        return pos

    def _index_clean(self, body: bytes, offset: int) -> bool:
        """Index `body` (whole lines, from file `offset`) at C speed, if every line in it is an
        event of a known type written by pydantic (no blank, corrupt or unknown line: those
        need the line-by-line path, and this returns False having changed nothing)."""
        found = _SCANNER.index_clean(body, offset)
        if found is None:
            return False
        self._add_clean(*found)
        return True

    def _add_clean(self, offsets: array, codes: bytes) -> None:
        position = len(self.offsets)
        if self.lines - position != self._shift:  # blank lines ended the previous chunk
            self._shift = self.lines - position
            self._line_numbers[position] = self.lines + 1
        self.offsets.extend(offsets)
        self.codes.frombytes(codes)
        self.lines += len(codes)

    def scan_with_helper(self, *, min_bytes: int = 32 << 20,
                         progress: Callable[[], None] | None = None) -> int:
        """Like `scan()`, but when at least `min_bytes` wait to be indexed, a helper process
        indexes the clean bulk of them on another core, so that another thread can fold what is
        indexed meanwhile (`progress()` is called as lines land). Whatever the helper cannot
        do (a corrupt line, a newer event type, the growing end) this process does."""
        before = len(self.offsets)
        with self._lock:
            if self.size - self.end >= min_bytes and not self._open_line:
                self._scan_in_helper(progress)
        if not self._helper_stopped:
            self.scan()
        return len(self.offsets) - before

    def _scan_in_helper(self, progress: Callable[[], None] | None) -> None:
        try:
            helper = subprocess.Popen(
                [sys.executable, "-I", journal_scan.__file__, str(self._fd), str(self.end),
                 _SCANNER.spec(), str(_CHUNK)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                pass_fds=(self._fd,))
        except OSError:
            return  # no helper: this process indexes it all
        self._helper = helper
        assert helper.stdout is not None
        read = helper.stdout.read
        try:
            while not self._helper_stopped:
                header = read(FRAME.size)
                if len(header) != FRAME.size:
                    break
                count, end = FRAME.unpack(header)
                offsets = array("Q")
                offsets.frombytes(read(count * 8))
                codes = read(count)
                # Only a whole frame that starts where this index ends is taken.
                if len(codes) != count or len(offsets) != count or not count or \
                        offsets[0] != self.end:
                    break
                self._add_clean(offsets, codes)
                self.end = end
                self._publish()
                if progress is not None:
                    progress()
        except (OSError, ValueError):
            pass
        finally:
            helper.kill()
            helper.wait()
            helper.stdout.close()
            self._helper = None

    def _append(self, offset: int, code: int) -> None:
        """Add the line that starts at `offset` (the `self.lines`-th physical line)."""
        position = len(self.offsets)
        line = self.lines
        if line - position - 1 != self._shift:  # blank lines in between: remember the shift
            self._shift = line - position - 1
            self._line_numbers[position] = line
        if code == CORRUPT:
            self.corrupt[position] = line
        elif code == UNKNOWN:
            self.unknown += 1
        self.offsets.append(offset)
        self.codes.append(code)

    def _index_long_line(self) -> int:
        """A line longer than a chunk: find its end, classify it from its head and tail."""
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
        self.lines += 1
        if not is_blank(raw):  # a long run of blanks is still a blank line
            self._append(start, classify(raw))
        self.end = end + 1
        return end + 1 - start

    def settle(self) -> bool:
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
            self.lines += 1
            self._append(self.end, classify(raw))
            self.end = size
            self._publish()
            self.pending = 0
            self._open_line = True
            self.torn_tail = False
            return True

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
        stop = min(stop, len(self.offsets))
        offsets = self.offsets
        position = start
        while position < stop:
            begin = offsets[position]
            block_end = bisect.bisect_left(offsets, begin + _READ_BLOCK, position + 1, stop)
            first, last = self.span(position, block_end)
            yield position, block_end, os.pread(self._fd, last - first, first), first
            position = block_end

    def raw_lines(self, start: int, stop: int) -> Iterator[tuple[int, bytes]]:
        """(position, bytes) of each line in `[start, stop)`, read in large blocks."""
        offsets = self.offsets
        for position, block_end, data, first in self.blocks(start, stop):
            for p in range(position, block_end - 1):
                yield p, data[offsets[p] - first:offsets[p + 1] - first]
            yield block_end - 1, data[offsets[block_end - 1] - first:]

    def event(self, position: int) -> BaseEvent | None:
        """The event at a position (`None` for a corrupt line)."""
        return self.parse(position, self.raw(position))

    def parse(self, position: int, raw: bytes) -> BaseEvent | None:
        """Parse a line read from this index, re-marking it corrupt if it is not an event."""
        validator = VALIDATORS.get(self.codes[position] & TYPE_MASK)
        if validator is not None:
            # The type is known from the scan: its own model validates a third faster than the
            # union (which first looks for the discriminator).
            try:
                return validator(raw)
            except ValidationError:
                pass
        event = parse_line(raw)
        if event is None:
            self.mark_corrupt(position)
        return event

    def mark_corrupt(self, position: int) -> None:
        """Record that the line at `position` turned out not to be an event."""
        if self.codes[position] != CORRUPT:
            if self.codes[position] == UNKNOWN:
                self.unknown -= 1
            self.codes[position] = CORRUPT
            self.corrupt[position] = self.line_number(position)

    def positions(self, mask: set[int] | None = None) -> Iterator[int]:
        """Positions whose type code is in `mask` (all, without one)."""
        codes = self.codes
        if mask is None:
            yield from range(len(codes))
            return
        for i, code in enumerate(codes):
            if code & TYPE_MASK in mask:
                yield i

    def search(self, term: str, *, limit: int = 1_000_000) -> list[int]:
        """Positions of the lines that contain `term` (case-insensitive for ASCII letters),
        matched against the JSON text as written, so a word inside a message or an output is
        found. A C-speed regex over the file, a block at a time."""
        encoded = json.dumps(term, ensure_ascii=False)[1:-1].encode("utf-8")
        if not encoded:
            return []
        pattern = re.compile(re.escape(encoded), re.IGNORECASE)
        stop = len(self.offsets)
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
        for position, raw in self.raw_lines(0, len(self.offsets)):
            event = self.parse(position, raw)
            if event is not None:
                yield event

    def __enter__(self) -> JournalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
