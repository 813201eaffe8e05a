"""Indexing clean stretches of a journal at C speed, in this process or in a helper process.

A "clean" stretch is whole lines that are each an event of a known type as pydantic writes it
(`{"type":"...` first). For those, one `split`, one regex and a few `map`s give every line's
offset and type code without a Python step per line. Anything else (a blank, corrupt or unknown
line) makes `index_clean` return None and `JournalIndex` takes the line-by-line path.

This module imports only the standard library, so it can run as a script: `JournalIndex` starts
it as a helper process on a big journal, and it indexes on another core while the viewer folds
what is already indexed (`python journal_scan.py FD START SPEC [CHUNK]`, see `main`).
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
from array import array
from itertools import accumulate, islice

__all__ = ["FRAME", "CleanScanner"]

FRAME = struct.Struct("<QQ")  # a helper's frame header: lines in the frame, file offset after
_FIRST_HEAD = re.compile(rb'\{"type":"([a-z_]+)"')
_LINE_HEADS = re.compile(rb'\n\{"type":"([a-z_]+)"')
_PLUS_ONE = (1).__add__
_CHUNK = 8 << 20


class CleanScanner:
    """Offsets and codes of clean stretches. `byte_codes` maps a type name (bytes) to its code;
    `bad_marks` maps a code to the bytes that say the event went badly, flagged with `bad`."""

    def __init__(self, byte_codes: dict[bytes, int], bad_marks: dict[int, tuple[bytes, ...]],
                 bad: int) -> None:
        self.byte_codes, self.bad_marks, self.bad = byte_codes, bad_marks, bad
        self._may_go_badly = re.compile(b"[" + re.escape(bytes(sorted(bad_marks))) + b"]")

    def index_clean(self, body: bytes, offset: int) -> tuple[array, bytes] | None:
        """`(offsets, codes)` of the lines in `body` (whole lines, from file `offset`), or None
        when one of them is not a clean event line."""
        first = _FIRST_HEAD.match(body)
        if first is None:
            return None
        lines = body.split(b"\n")
        lines.pop()  # the empty string after the last newline
        heads = _LINE_HEADS.findall(body)
        if len(heads) + 1 != len(lines):
            return None
        heads.insert(0, first[1])
        try:
            codes = bytes(map(self.byte_codes.__getitem__, heads))
        except KeyError:  # a type this version does not know
            return None
        if self._may_go_badly.search(codes):
            flagged = bytearray(codes)
            for match in self._may_go_badly.finditer(codes):
                i = match.start()
                if any(lines[i].find(mark) >= 0 for mark in self.bad_marks[codes[i]]):
                    flagged[i] |= self.bad
            codes = bytes(flagged)
        offsets = array("Q", islice(accumulate(map(_PLUS_ONE, map(len, lines)), initial=offset),
                                    len(lines)))
        return offsets, codes

    def spec(self) -> str:
        """This scanner's tables as JSON, for a helper process (`main`)."""
        return json.dumps({"codes": {k.decode(): v for k, v in self.byte_codes.items()},
                           "bad": {str(k): [m.decode() for m in v]
                                   for k, v in self.bad_marks.items()},
                           "flag": self.bad})

    @classmethod
    def from_spec(cls, spec: str) -> CleanScanner:
        """The scanner `spec()` describes."""
        data = json.loads(spec)
        return cls({k.encode(): v for k, v in data["codes"].items()},
                   {int(k): tuple(m.encode() for m in v) for k, v in data["bad"].items()},
                   data["flag"])


def main(argv: list[str]) -> int:
    """Helper process: index the journal open as file descriptor `FD` from offset `START`
    (`[CHUNK]` bytes at a time),
    writing one frame per clean chunk to stdout (`FRAME` header, then the offsets as native
    `Q`s, then the codes). It stops at the end of the file or at the first chunk that is not
    clean; the parent indexes the rest itself."""
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
