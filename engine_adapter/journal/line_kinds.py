"""What kind each journal line is: one code a line (the event type, and a flag when it went badly),
and parsing a line into an event (`parse_line`), as the index and the fold both need them."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from engine_adapter.events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    FAILED_OUTCOMES,
    BaseEvent,
    HarnessEvent,
    went_badly,
)
from engine_adapter.journal.chain import unmarked
from engine_adapter.journal.jsonl import BOM

__all__ = ["BAD_OUTCOME", "CODE_NAMES", "CORRUPT", "FLAGS", "TYPE_CODES", "TYPE_MASK", "UNKNOWN",
           "code_of", "parse_line", "parse_other"]

TYPE_CODES: dict[str, int] = {name: code for code, name in enumerate(EVENT_TYPES)}
"""Each known event type and its code (its position in `EVENT_TYPES`)."""
UNKNOWN = 0x3E  # an event whose `type` this version does not know (a newer writer)
CORRUPT = 0x3F  # a line that is not an event at all
TYPE_MASK = 0x3F  # `code & TYPE_MASK` is the type code
BAD_OUTCOME = 0x40  # the event reports a failed outcome (see `events.went_badly`)
FLAGS = (0, BAD_OUTCOME)
"""Every combination of the flags a type code may carry."""
CODE_NAMES: dict[int, str] = {**{c: n for n, c in TYPE_CODES.items()},
                              UNKNOWN: "unknown", CORRUPT: "corrupt"}
"""Type code to a display name."""

# The union's own validator, without the adapter's wrapper (pydantic-core types it as `Any`).
_VALIDATE: Callable[[bytes], HarnessEvent] = EVENT_ADAPTER.validator.validate_json
_OUTCOME_CODES = frozenset(TYPE_CODES[name] for name in FAILED_OUTCOMES)
_CLASS_CODES: dict[type, int] = {EVENT_TYPES[name]: code for name, code in TYPE_CODES.items()}
_CLASS_CODES[type(None)] = CORRUPT


def code_of(event: BaseEvent | None) -> int:
    """The code of a parsed line: its type and whether it went badly (`None`: corrupt)."""
    code = _CLASS_CODES.get(type(event), UNKNOWN)  # (a newer type parses as a `BaseEvent`)
    bad = code in _OUTCOME_CODES and event is not None and went_badly(event)
    return code | BAD_OUTCOME if bad else code


def parse_line(raw: bytes) -> BaseEvent | None:
    """One journal line as an event; an event of an unknown type as a plain `BaseEvent` (the
    fold ignores it, the inspector shows it); `None` for a line that is not an event."""
    raw = unmarked(raw)  # (the chain mark is the file's, not the event's)
    try:
        return _VALIDATE(raw)
    except ValidationError:
        return parse_other(raw)


def parse_other(raw: bytes) -> BaseEvent | None:
    """`parse_line` for a line that is not an event of a known type: a `BaseEvent` if it is
    an event of an unknown (newer) type, else `None`."""
    if raw.startswith(BOM):  # an editor's byte order mark: not part of the event
        return parse_line(raw[3:])
    raw = unmarked(raw)
    try:
        event = BaseEvent.model_validate_json(raw)
    except ValidationError:
        return None
    return event if event.type not in TYPE_CODES else None
