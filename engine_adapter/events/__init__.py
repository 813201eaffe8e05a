"""The events of a run: one frozen pydantic model per event type, joined in `HarnessEvent`.

- `schema`: the union, `parse_event` / `dump_event` and `stamped` (every class is importable
  from here); the classes live by family in `base` (the fields every event carries), `run` (the
  run's course, model and verification), `tools` (tool calls and approvals) and `agent` (an
  external agent's session).
- `caps`: the caps on one event's journal line; `timestamps`: the range of `ts` and its display;
  `failures`: which outcomes count as failed; `questions`: an answer checked against its question.
"""

from engine_adapter.events import schema as _schema
from engine_adapter.events.caps import MAX_DEPTH, MAX_LINE_BYTES, bounded_line, line_depth
from engine_adapter.events.failures import FAILED_OUTCOMES, FailureRule, went_badly
from engine_adapter.events.questions import (
    TEXT_LIMIT,
    Answer,
    AnswerAction,
    AnswerError,
    answer_text,
    check_answer,
    field_kind_text,
    field_label,
    fields_text,
)
from engine_adapter.events.run import RunStatus
from engine_adapter.events.schema import *  # noqa: F403 - every event class (`schema.__all__`)
from engine_adapter.events.timestamps import BAD_TIME, MAX_TS, Timestamp, format_ts, is_valid_ts

__all__ = [
    *_schema.__all__,
    "BAD_TIME",
    "FAILED_OUTCOMES",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "MAX_TS",
    "TEXT_LIMIT",
    "Answer",
    "AnswerAction",
    "AnswerError",
    "FailureRule",
    "RunStatus",
    "Timestamp",
    "answer_text",
    "bounded_line",
    "check_answer",
    "field_kind_text",
    "field_label",
    "fields_text",
    "format_ts",
    "is_valid_ts",
    "line_depth",
    "went_badly",
]
