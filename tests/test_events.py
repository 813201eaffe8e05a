"""Event models: the union, parsing, dumping, forward compatibility, clear errors."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine_adapter
from engine_adapter import parse_event
from engine_adapter.events import EVENT_TYPES, EventParseError, dump_event

CONTRACT_TYPES = [
    "agent_start", "agent_end", "turn_start", "turn_end", "phase_changed", "declaration_required",
    "model_decision", "model_update", "tool_start", "tool_end", "approval_requested",
    "approval_resolved", "decision_error", "model_usage", "verification_plan_frozen",
    "verification_start", "verification_end", "cancellation_observed", "task_escalated",
]
ADDED_TYPES = ["model_retry"]  # beyond the contract's table: a model call retried (issue 11)

MINIMAL = {
    "agent_start": {"task": "t", "engine": "e"},
    "agent_end": {"status": "completed"},
    "turn_start": {"turn": 1},
    "turn_end": {"turn": 1},
    "phase_changed": {"phase": "edit"},
    "declaration_required": {"reason": "declare first"},
    "model_decision": {"action": "finish"},
    "model_update": {"text": "hi"},
    "tool_start": {"call_id": "c", "tool": "shell"},
    "tool_end": {"call_id": "c", "tool": "shell", "ok": True},
    "approval_requested": {"approval_id": "a", "tool": "shell", "reason": "r"},
    "approval_resolved": {"approval_id": "a", "tool": "shell", "allowed": True, "via": "human"},
    "decision_error": {"error": "bad"},
    "model_usage": {"input_tokens": 1, "output_tokens": 2},
    "verification_plan_frozen": {"checks": [{"id": "1", "name": "tests", "command": "pytest"}]},
    "verification_start": {"check_id": "1", "name": "tests"},
    "verification_end": {"check_id": "1", "name": "tests", "passed": True},
    "cancellation_observed": {"reason": "user"},
    "task_escalated": {"reason": "needs edits", "target": "edit"},
    "model_retry": {"attempt": 1, "max_attempts": 4, "delay_s": 1.0, "error": "429"},
}


def test_there_are_exactly_the_nineteen_contract_types_then_the_added_ones() -> None:
    assert list(EVENT_TYPES) == CONTRACT_TYPES + ADDED_TYPES


def test_every_event_class_is_exported_from_the_package_root() -> None:
    for cls in EVENT_TYPES.values():
        assert getattr(engine_adapter, cls.__name__) is cls


@pytest.mark.parametrize("event_type", CONTRACT_TYPES + ADDED_TYPES)
def test_each_type_parses_from_dict_str_and_bytes_and_round_trips(event_type: str) -> None:
    data = {"type": event_type, **MINIMAL[event_type]}
    event = parse_event(data)
    assert type(event) is EVENT_TYPES[event_type]
    assert (event.seq, event.ts, event.session_id) == (-1, 0.0, "")
    text = event.model_dump_json()
    assert parse_event(text) == event
    assert parse_event(text.encode()) == event
    assert parse_event(dump_event(event)) == event


def test_events_are_frozen() -> None:
    event = parse_event({"type": "turn_start", "turn": 1})
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        event.turn = 2  # type: ignore[misc]


def test_unknown_extra_fields_are_preserved() -> None:
    event = parse_event({"type": "turn_start", "turn": 1, "new_field": {"x": 1}})
    assert json.loads(event.model_dump_json())["new_field"] == {"x": 1}


@pytest.mark.parametrize(
    ("junk", "named"),
    [
        ({"type": "tool_end", "call_id": "c", "tool": "t", "ok": "maybe"}, "tool_end.ok"),
        ({"type": "agent_end"}, "agent_end.status"),
        ({"type": "agent_end", "status": "exploded"}, "agent_end.status"),
        ({"type": "teleport"}, "unknown event type 'teleport'"),
        ({"turn": 1}, "type"),
        ('{"type": "turn_start", "turn": "one"}', "turn_start.turn"),
        ("not json at all", "Invalid JSON"),
        (b"\xff\xfe", "Invalid JSON"),
        ("[1, 2]", "object"),
    ],
)
def test_parse_event_on_junk_names_the_bad_field(junk, named: str) -> None:
    with pytest.raises(EventParseError) as info:
        parse_event(junk)
    assert named in str(info.value)
    assert isinstance(info.value, ValueError)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary(), st.dictionaries(st.text(), st.integers() | st.text())))
def test_parse_event_never_raises_anything_but_event_parse_error(junk) -> None:
    with contextlib.suppress(EventParseError):
        parse_event(junk)
