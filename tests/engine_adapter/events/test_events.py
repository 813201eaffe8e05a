"""Event models: the union, parsing, dumping, forward compatibility, clear errors."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.event_samples import MINIMAL

import engine_adapter
from engine_adapter import parse_event
from engine_adapter.events import EVENT_TYPES, EventParseError, dump_event

CONTRACT_TYPES = [
    "agent_start", "agent_end", "turn_start", "turn_end", "phase_changed", "declaration_required",
    "model_decision", "model_update", "tool_start", "tool_end", "approval_requested",
    "approval_resolved", "decision_error", "model_usage", "verification_plan_frozen",
    "verification_start", "verification_end", "cancellation_observed", "task_escalated",
]
ADDED_TYPES = [
    "model_retry",  # beyond the contract's table: a model call retried (issue 11)
    # issue 12: an agent's questions and their answers, its commands, a note passed on to it
    "question_asked", "question_answered", "commands_available", "prompt_note",
    # an external agent's session (issue 12): settings, title, notices, replayed history
    "agent_config", "session_info", "agent_notice", "history_message", "history_tool",
    # the workspace's checkpoints and rewinds (issue 27)
    "checkpoint_taken", "workspace_rewound",
    "agent_plan",  # an external agent's plan (issue 25)
    "files_mentioned",  # the files a task mentions (`@path`, issue 26)
    "mode_changed",  # the cockpit's permission mode changed (issue 27 §3)
    "agent_ready",  # an external agent answered: what only `initialize` tells (issue 26)
]


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


# -- one list of event types -----------------------------------------------------------------

def test_event_types_and_exports_are_derived_from_the_union() -> None:
    from typing import get_args

    import engine_adapter.events as events

    union = get_args(get_args(events.HarnessEvent)[0])
    assert tuple(EVENT_TYPES.values()) == union == events.EVENT_CLASSES
    for cls in union:  # the face, and the root face, export every class of the union
        assert cls.__name__ in events.__all__ and getattr(events, cls.__name__) is cls
        assert cls.__name__ in engine_adapter.__all__
    assert len(set(engine_adapter.__all__)) == len(engine_adapter.__all__)
    for name in engine_adapter.__all__:
        assert hasattr(engine_adapter, name), name


# -- stamping --------------------------------------------------------------------------------

@pytest.mark.parametrize("event_type", CONTRACT_TYPES)
def test_stamped_is_model_copy_with_the_stamp_and_leaves_the_original(event_type: str) -> None:
    from engine_adapter.events import stamped

    event = parse_event({"type": event_type, **MINIMAL[event_type], "newer_field": [1]})
    before = event.model_dump()
    copy = stamped(event, "s1", 7, 1234.5)
    assert copy == event.model_copy(update={"session_id": "s1", "seq": 7, "ts": 1234.5})
    assert type(copy) is type(event) and copy is not event
    assert (copy.session_id, copy.seq, copy.ts) == ("s1", 7, 1234.5)
    assert copy.model_extra == {"newer_field": [1]}
    assert {"session_id", "seq", "ts"} <= copy.model_fields_set
    assert event.model_dump() == before  # the engine's object is untouched
    assert parse_event(dump_event(copy)) == copy
    with pytest.raises(Exception):  # noqa: B017 - still frozen
        copy.seq = 8  # type: ignore[misc]


# -- fields engines add are declared ---------------------------------------------------------

def test_engine_fields_are_typed_and_old_journal_shapes_still_parse() -> None:
    """What the ACP engine wrote before these fields were declared (through `extra="allow"`)
    still parses, now into typed fields rather than extras."""
    start = parse_event({"type": "agent_start", "task": "t", "engine": "acp:x", "agent": {},
                         "command": "x --acp", "modes": [{"id": "ask", "name": "Ask"}],
                         "acp_session_id": "s", "new_session": True})
    assert start.agent is not None and start.agent.name == ""
    assert start.modes is not None and start.modes[0].id == "ask"
    assert start.model_extra == {}
    tool = parse_event({"type": "tool_start", "call_id": "c", "tool": "read", "kind": "read",
                        "source": "client", "terminal_id": "t1", "permitted_by": "agent"})
    assert (tool.source, tool.terminal_id, tool.permitted_by) == ("client", "t1", "agent")
    assert tool.model_extra == {"kind": "read"}  # retired (it repeated `tool`), still kept
    end = parse_event({"type": "tool_end", "call_id": "c", "tool": "execute", "ok": False,
                       "exit_code": 2, "title": "run x"})
    assert (end.exit_code, end.title) == (2, "run x")
    usage = parse_event({"type": "model_usage", "thought_tokens": 3, "cached_read_tokens": 4,
                         "cached_write_tokens": 5, "cost": 0.5, "currency": "EUR",
                         "context_used": 10, "context_size": 100})
    assert usage.model_extra == {}
    assert (usage.cached_read_tokens, usage.currency, usage.context_size) == (4, "EUR", 100)
    failed = parse_event({"type": "agent_end", "status": "failed", "stderr": ["boom"]})
    assert failed.stderr == ["boom"]
