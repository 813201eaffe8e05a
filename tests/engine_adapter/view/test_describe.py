"""One description per event type (`engine_adapter.view.describe`), read alike by the transcript,
headless output and the export; the wording helpers every view shares; grammar."""

from __future__ import annotations

import io

import pytest
from support.event_samples import MINIMAL

from cockpit.headless import LinePrinter, format_event
from engine_adapter import parse_event
from engine_adapter.events import EVENT_TYPES
from engine_adapter.text import a_or_an, plural
from engine_adapter.view import (
    DESCRIBERS,
    ApprovalView,
    NoticeItem,
    RunFold,
    ToolCallItem,
    call_timing,
    describe,
    duration_text,
    end_lines,
    timing_text,
    verdict_text,
)


def test_every_event_type_has_one_describer() -> None:
    assert set(DESCRIBERS) == set(EVENT_TYPES)
    for event_type in EVENT_TYPES:
        said = describe(parse_event({"type": event_type, **MINIMAL[event_type]}))
        assert said.label and said.label != event_type
        assert said.line.startswith(said.icon)


def test_a_newer_writers_event_type_still_reads() -> None:
    class Warp:  # what the fold and headless get for a type they do not know
        type = "warp_drive"
        model_extra: dict | None = None

        def model_dump(self, exclude: set) -> dict:
            return {"speed": 9}

    said = describe(Warp())
    assert (said.label, said.text) == ("warp_drive", '{"speed": 9}')


NOTICES = [
    ({"type": "phase_changed", "phase": "edit", "previous": "investigate"},
     "◆ phase investigate → edit"),
    ({"type": "declaration_required", "reason": "declare the plan first"},
     "! declare the plan first"),
    ({"type": "decision_error", "error": "not JSON"}, "✗ malformed decision: not JSON"),
    ({"type": "cancellation_observed", "reason": "cancelled by the user"},
     "⊘ stopping: cancelled by the user"),
    ({"type": "task_escalated", "reason": "fix it", "target": "edit"},
     "⇧ escalated to edit: fix it"),
    ({"type": "verification_plan_frozen", "checks": [
        {"id": "t", "name": "tests", "command": "pytest -q"}, {"id": "l", "name": "lint"}]},
     "≡ verification plan: tests (pytest -q); lint"),
]


@pytest.mark.parametrize(("data", "line"), NOTICES)
def test_the_transcript_headless_and_export_read_a_notice_alike(data, line) -> None:
    event = parse_event({"session_id": "s", "seq": 1, "ts": 1.0, **data})
    fold = RunFold()
    fold.apply(parse_event({"type": "agent_start", "task": "t", "engine": "e", "seq": 0}))
    fold.apply(event)
    (notice,) = [i for i in fold.view.items if isinstance(i, NoticeItem) and i.kind != "task"]
    assert notice.text == line  # the transcript's row and the export's line
    label, text, _ = format_event(event)  # the headless line
    assert line.endswith(text)
    assert label == describe(event).label


def test_the_end_says_the_error_first_never_the_reply_in_its_place() -> None:
    end = parse_event({"type": "agent_end", "status": "failed", "result": "partial words",
                       "error": "the agent exited with code 3\nlast lines the agent wrote to "
                                "stderr:\n  boom", "stderr": ["boom"]})
    said = describe(end)
    assert said.text == "failed: the agent exited with code 3"
    assert said.details == ("last lines the agent wrote to stderr:", "  boom")  # once
    assert "partial words" not in said.text
    lines = end_lines("failed", "it broke", ["oops", "", "gave up"])
    assert lines == ["failed: it broke", "last lines the agent wrote to stderr:", "  oops",
                     "  gave up"]
    assert end_lines("completed", None) == ["completed"]
    assert end_lines("failed", "journal write failed: [Errno 28] No space left on device") \
        == ["failed: journal write failed: [Errno 28] No space left on device"]


@pytest.mark.parametrize(("ms", "text"), [(0.4, "0 ms"), (12, "12 ms"), (999, "999 ms"),
                                          (1_400, "1.4 s"), (59_940, "59.9 s"),
                                          (60_000, "1 min"), (185_000, "3 min 5 s")])
def test_durations(ms, text) -> None:
    assert duration_text(ms) == text


def test_a_tool_duration_leaves_out_the_wait_for_the_human() -> None:
    call = ToolCallItem(1, 1, 0, "c1", "execute", {}, 3)
    call.started_ts, call.duration_ms = 100.0, 12_400.0  # an ACP call: it asked while it ran
    call.approval = ApprovalView("c1", "execute", "r", {}, 3, "", asked_ts=100.1,
                                 answered_ts=112.1, via="human", state="allowed")
    assert call.work_ms == pytest.approx(400.0)
    assert call_timing(call) == "400 ms · waited 12.0 s for you"
    # Asked before it started (the built-in engine): its clock never saw the wait.
    # (An approval is immutable: the fold replaces it.)
    call.approval = call.approval._replace(asked_ts=90.0, answered_ts=99.0)
    assert call.work_ms == 12_400.0
    assert call_timing(call, "a human") == "12.4 s · waited 9.0 s for a human"
    # A rule that answered at once: nobody waited, so nothing is said about it.
    call.approval = call.approval._replace(via="auto", answered_ts=90.005)
    assert call_timing(call) == "12.4 s"
    assert timing_text(None, 30_000) == "waited 30.0 s for you"  # denied after a timeout


def test_verdicts_read_the_same_everywhere() -> None:
    assert verdict_text("allowed", "human") == "allowed by you"
    assert verdict_text("allowed", "human", True) == "always allowed by you"
    assert verdict_text("allowed", "grant") == "allowed by a standing grant"
    assert verdict_text("denied", "auto") == "denied automatically"
    assert verdict_text("denied", "human", human="a human") == "denied by a human"
    assert verdict_text("pending", None) == "awaiting approval"
    assert verdict_text("allowed", "oracle") == "allowed (oracle)"  # a newer writer's `via`
    assert verdict_text("allowed", "policy") == "allowed by the policy"


@pytest.mark.parametrize(("noun", "phrase"), [
    ("int", "an int"), ("integer", "an integer"), ("object", "an object"),
    ("list", "a list"), ("string", "a string"), ("uint8", "a uint8"), ("hour", "an hour"),
    ("MD5", "an MD5"), ("NoneType", "a NoneType"), ("edit", "an edit"), ("user", "a user"),
    ("one-liner", "a one-liner")])
def test_a_or_an(noun, phrase) -> None:
    assert a_or_an(noun) == phrase


def test_one_is_singular_everywhere_a_count_is_shown() -> None:
    assert plural(1, "more line") == "1 more line"
    assert plural(2, "more line") == "2 more lines"
    out = io.StringIO()
    printer = LinePrinter(out)
    printer.handle(parse_event({"type": "tool_end", "call_id": "c", "tool": "search", "ok": True,
                                "output": "a\nb\n", "duration_ms": 1}))
    assert out.getvalue().endswith("c search 1 ms: 2 lines\n")
    from engine_adapter.engines.builtin.models import DecisionParseError, parse_decision
    from engine_adapter.engines.builtin.tools import TOOLS
    with pytest.raises(DecisionParseError, match="'path' must be a string"):
        parse_decision('{"action": "tool", "tool": "read_file", "input": {"path": 3}}', TOOLS)
    with pytest.raises(DecisionParseError, match="'timeout' must be an integer or number"):
        parse_decision('{"action": "tool", "tool": "shell", "input": {"command": "ls", '
                       '"timeout": "x"}}', TOOLS)
