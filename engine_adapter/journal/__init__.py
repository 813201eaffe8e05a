"""The write-ahead journal and what reads its lines.

- `jsonl`: `JsonlEventJournal` (one event a line, flushed per event, fsync at boundaries) and
  `read_journal` (a torn last line skipped, a bad line anywhere else a `JournalError`).
- `index`: a compact, growing index of a journal file: where each line starts, what kind it is.
- `line_kinds`: the kind of one line (its event type and flags); `scan`: the lines of a chunk.
"""

from engine_adapter.journal.index import Chunk, JournalIndex
from engine_adapter.journal.jsonl import (
    BOM,
    JournalError,
    JsonlEventJournal,
    decode_json,
    is_blank,
    read_journal,
    writer_alive,
)
from engine_adapter.journal.line_kinds import (
    BAD_OUTCOME,
    CODE_NAMES,
    CORRUPT,
    FLAGS,
    TYPE_CODES,
    TYPE_MASK,
    code_of,
    parse_line,
    parse_other,
)
from engine_adapter.journal.scan import STREAM_HEAD, segments

__all__ = [
    "BAD_OUTCOME",
    "BOM",
    "CODE_NAMES",
    "CORRUPT",
    "FLAGS",
    "STREAM_HEAD",
    "TYPE_CODES",
    "TYPE_MASK",
    "Chunk",
    "JournalError",
    "JournalIndex",
    "JsonlEventJournal",
    "code_of",
    "decode_json",
    "is_blank",
    "parse_line",
    "parse_other",
    "read_journal",
    "segments",
    "writer_alive",
]
