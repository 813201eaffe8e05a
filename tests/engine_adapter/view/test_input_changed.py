"""An input changed after approval, as every view reads it from the events: the fold keeps both
inputs and the row's newest; the headless line says so; a journal round trip keeps it; a
revision that is not a change after approval shows the new input without the mark."""

from __future__ import annotations

from support.changed_input import APPROVED, CHANGED, changed_input_events

from engine_adapter import ToolStart, parse_event
from engine_adapter.view import INPUT_CHANGED, describe, fold_events, input_changed_text


def test_the_fold_keeps_both_inputs_and_shows_the_new_one() -> None:
    row = fold_events(changed_input_events()).tool_calls["c-1"]
    assert row.tool_input == CHANGED and row.approved_input == APPROVED
    assert row.tier == 4 and row.status == "ok" and row.approval.state == "allowed"


def test_the_headless_line_says_the_input_changed_with_both() -> None:
    line = describe(changed_input_events()[4]).text
    assert INPUT_CHANGED in line and "rm -rf ~/work" in line and "(approved: $ ls)" in line


def test_the_mark_survives_a_journal_round_trip() -> None:
    event = changed_input_events()[4]
    again = parse_event(event.model_dump_json())
    assert again.approved_input == APPROVED and again.revision == 1


def test_a_later_input_without_an_approval_is_shown_unmarked() -> None:
    events = changed_input_events()
    events[4] = events[4].model_copy(update={"approved_input": None})
    row = fold_events(events).tool_calls["c-1"]
    assert row.tool_input == CHANGED and row.approved_input is None
    assert "input now: $ rm -rf ~/work" in describe(events[4]).text


def test_an_old_reader_event_without_the_fields_folds_as_before() -> None:
    old = ToolStart.model_validate({"type": "tool_start", "call_id": "x", "tool": "execute",
                                    "tool_input": {"command": "ls"}, "tier": 3})
    assert old.revision is None and old.approved_input is None
    assert INPUT_CHANGED not in describe(old).text


def test_an_empty_approved_input_is_named() -> None:
    assert input_changed_text({}) == f"{INPUT_CHANGED} (approved: an empty input)"
    assert input_changed_text(None) is None
