"""The write-ahead journal and what reads its lines.

- `jsonl`: `JsonlEventJournal` (one event a line, flushed per event, fsync at boundaries) and
  `read_journal` (a torn last line skipped, a bad line anywhere else a `JournalError`).
- `chain`: tamper evidence, a hash chain in the lines (`mark_line` as written, `check_lines`).
- `index`: a compact, growing index of a journal file: where each line starts, what kind it is.
- `line_kinds`: the kind of one line (its event type and flags); `scan`: the lines of a chunk.
- `foreign`: another tool's session file (Claude Code, Codex, Gemini CLI, inspect_ai)
  recognised from its head, with how to view it.
"""

from engine_adapter.journal.chain import (
    CHAIN_KEY,
    SEED,
    ChainVerdict,
    chain_of,
    check_file,
    check_lines,
    mark_line,
    unmarked,
)
from engine_adapter.journal.foreign import ForeignSession, detect_foreign, detect_foreign_bytes
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
    "CHAIN_KEY",
    "CODE_NAMES",
    "CORRUPT",
    "FLAGS",
    "SEED",
    "STREAM_HEAD",
    "TYPE_CODES",
    "TYPE_MASK",
    "ChainVerdict",
    "Chunk",
    "ForeignSession",
    "JournalError",
    "JournalIndex",
    "JsonlEventJournal",
    "chain_of",
    "check_file",
    "check_lines",
    "code_of",
    "decode_json",
    "detect_foreign",
    "detect_foreign_bytes",
    "is_blank",
    "mark_line",
    "parse_line",
    "parse_other",
    "read_journal",
    "segments",
    "unmarked",
    "writer_alive",
]
