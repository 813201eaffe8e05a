"""Indexing clean stretches of a journal at C speed, in this process or in a helper process.

A "clean" stretch is whole lines that are each an event of a known type as pydantic writes it
(`{"type":"...` first). For those, one `split` and a few `map`s (a line's type from its first
bytes, remembered) give every line's offset and type code without a Python step per line.
Anything else (a blank, corrupt or unknown line) makes `index_clean` return None and
`JournalIndex` takes the line-by-line path.

This module imports only the standard library, so it can run as a script: `JournalIndex` starts
it as a helper process on a big journal, and it indexes on another core while the viewer folds
what is already indexed (`python journal_scan.py FD START SPEC [CHUNK]`, see `main`).
"""

from __future__ import annotations

import json
import operator
import os
import re
import struct
import sys
from array import array
from itertools import accumulate, islice

__all__ = ["FRAME", "CleanScanner"]

FRAME = struct.Struct("<QQ")  # a helper's frame header: lines in the frame, file offset after
_CHANNEL = re.compile(rb'","channel":"(?:message|thought)"\}$')
_PLUS_ONE = (1).__add__
_CHUNK = 8 << 20
_NOT_CLEAN = 0xFF
_TYPE_AT = len(b'{"type":"')


class _HeadCodes(dict[bytes, int]):
    """A line's type code by its head, `{"type":"` and as many bytes as the longest type name
    and its quote (`_NOT_CLEAN` when the line does not start with a known type), remembered: a
    journal has few distinct heads."""

    def __init__(self, byte_codes: dict[bytes, int]) -> None:
        super().__init__()
        self.byte_codes = byte_codes
        self.head = operator.itemgetter(slice(0, _TYPE_AT + max(map(len, byte_codes)) + 1))

    def __missing__(self, head: bytes) -> int:
        code = _NOT_CLEAN
        if head.startswith(b'{"type":"'):
            end = head.find(b'"', _TYPE_AT)
            if end > 0:
                code = self.byte_codes.get(head[_TYPE_AT:end], _NOT_CLEAN)
        if len(self) < 4096:
            self[head] = code
        return code


class CleanScanner:
    """Offsets and codes of clean stretches. `byte_codes` maps a type name (bytes) to its code;
    `bad_marks` maps a code to the bytes that say the event went badly, flagged with `bad`.
    A line of type code `stream` (model_update) that continues the stream of the line before
    (one event on the same channel) is flagged with `more`."""

    def __init__(self, byte_codes: dict[bytes, int], bad_marks: dict[int, tuple[bytes, ...]],
                 bad: int, stream: int, more: int) -> None:
        self.byte_codes, self.bad_marks, self.bad = byte_codes, bad_marks, bad
        self.stream, self.more = stream, more
        self._may_go_badly = re.compile(b"[" + re.escape(bytes(sorted(bad_marks))) + b"]")
        self._streams = re.compile(re.escape(bytes([stream])) + b"{2,}")
        self._head_codes = _HeadCodes(byte_codes)

    def index_clean(self, body: bytes, offset: int) -> tuple[array, bytes] | None:
        """`(offsets, codes)` of the lines in `body` (whole lines, from file `offset`), or None
        when one of them is not a clean event line."""
        lines = body.split(b"\n")
        lines.pop()  # the empty string after the last newline
        heads = self._head_codes
        codes = bytes(map(heads.__getitem__, map(heads.head, lines)))
        if _NOT_CLEAN in codes:
            return None
        flagged = bytearray(codes)
        for match in self._may_go_badly.finditer(codes):
            i = match.start()
            if any(lines[i].find(mark) >= 0 for mark in self.bad_marks[codes[i]]):
                flagged[i] |= self.bad
        offsets = array("Q", islice(accumulate(map(_PLUS_ONE, map(len, lines)), initial=offset),
                                    len(lines)))
        for match in self._streams.finditer(codes):
            self._mark_stream(body, lines, (offsets, offset), flagged, match.start(),
                              match.end())
        return offsets, bytes(flagged)

    def _mark_stream(self, body: bytes, lines: list[bytes], where: tuple[array, int],
                     codes: bytearray, a: int, b: int) -> None:
        """Flag lines `a+1 .. b-1` (all model_update) as continuing the stream of the line
        before if byte counts say each is one event ending with the first line's channel, as
        pydantic writes it; else try each half. (Replay checks the turn itself.)"""
        count = b - a
        if count < 2:
            return
        head = lines[a]
        channel = _CHANNEL.search(head, max(0, len(head) - 22))
        if channel is not None:
            offsets, offset = where
            lo = offsets[a] - offset
            hi = offsets[b] - offset if b < len(offsets) else len(body)
            if (body.count(channel[0] + b"\n", lo, hi) == count
                    and body.count(b'{"type":', lo, hi) == count):
                codes[a + 1:b] = bytes([self.stream | self.more]) * (count - 1)
                return
        middle = (a + b) // 2
        self._mark_stream(body, lines, where, codes, a, middle)
        self._mark_stream(body, lines, where, codes, middle, b)

    def spec(self) -> str:
        """This scanner's tables as JSON, for a helper process (`main`)."""
        return json.dumps({"codes": {k.decode(): v for k, v in self.byte_codes.items()},
                           "bad": {str(k): [m.decode() for m in v]
                                   for k, v in self.bad_marks.items()},
                           "flag": self.bad, "stream": self.stream, "more": self.more})

    @classmethod
    def from_spec(cls, spec: str) -> CleanScanner:
        """The scanner `spec()` describes."""
        data = json.loads(spec)
        return cls({k.encode(): v for k, v in data["codes"].items()},
                   {int(k): tuple(m.encode() for m in v) for k, v in data["bad"].items()},
                   data["flag"], data["stream"], data["more"])


def main(argv: list[str]) -> int:
    """Helper process: index the journal open as file descriptor `FD` from offset `START`,
    `CHUNK` bytes at a time, writing one frame per clean chunk to stdout (`FRAME` header, then
    the offsets as native `Q`s, then the codes). It stops at the end of the file or at the
    first chunk that is not clean; the parent indexes the rest itself."""
    fd, start, scanner = int(argv[1]), int(argv[2]), CleanScanner.from_spec(argv[3])
    chunk = int(argv[4]) if len(argv) > 4 else _CHUNK
    out = sys.stdout.buffer
    end = start
    while True:
        data = os.pread(fd, chunk, end)
        last = data.rfind(b"\n") + 1
        if not last:
            break
        found = scanner.index_clean(data[:last] if last < len(data) else data, end)
        if found is None:
            break
        offsets, codes = found
        end += last
        out.write(FRAME.pack(len(codes), end))
        out.write(offsets.tobytes())
        out.write(codes)
        out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (BrokenPipeError, KeyboardInterrupt):  # the viewer went away: nothing to finish
        sys.exit(0)
