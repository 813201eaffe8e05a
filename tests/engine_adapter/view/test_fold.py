"""The pure fold: events in, view state out."""

from __future__ import annotations

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ApprovalGrant,
    ApprovalRequested,
    ApprovalResolved,
    CancellationObserved,
    DecisionError,
    DeclarationRequired,
    ModelDecisionEvent,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    TaskEscalated,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationCheck,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
)
from engine_adapter.events import HistoryMessage, HistoryTool
from engine_adapter.view import (
    APPROVALS,
    GRANTS,
    ITEMS,
    RUN,
    USAGE,
    VERIFICATION,
    GrantView,
    HistoryItem,
    RunFold,
    fold_events,
)


def stamp(events: list) -> list:
    return [e.model_copy(update={"seq": i, "ts": 100.0 + i, "session_id": "s"})
            for i, e in enumerate(events)]


START = AgentStart(task="fix the test", engine="builtin", model="scripted", cwd="/w")


def test_status_line_fields() -> None:
    view = fold_events(stamp([
        START, TurnStart(turn=1), PhaseChanged(phase="edit", previous="investigate"),
        ModelUsage(model="scripted", input_tokens=10, output_tokens=5, cost_usd=0.01),
        ModelUsage(input_tokens=1, output_tokens=2, cost_usd=0.02),
    ]))
    assert (view.task, view.engine, view.model, view.cwd) == ("fix the test", "builtin",
                                                              "scripted", "/w")
    assert (view.status, view.phase, view.turn) == ("running", "edit", 1)
    assert (view.input_tokens, view.output_tokens, view.model_calls) == (11, 7, 2)
    assert abs(view.cost_usd - 0.03) < 1e-9
    assert view.started_ts == 100.0 and view.events == 5


def test_streamed_text_joins_into_one_item_per_channel_and_turn() -> None:
    view = fold_events(stamp([
        START, TurnStart(turn=1),
        ModelUpdate(text="Let me ", turn=1), ModelUpdate(text="look.", turn=1),
        ModelUpdate(text="hmm", turn=1, channel="thought"),
        ModelUpdate(text="Found it.", turn=1),
        TurnStart(turn=2), ModelUpdate(text="Next.", turn=2),
    ]))
    messages = [i for i in view.items if i.kind == "message"]
    assert [(m.channel, m.text, m.turn) for m in messages] == [
        ("message", "Let me look.", 1), ("thought", "hmm", 1), ("message", "Found it.", 1),
        ("message", "Next.", 2)]
    assert messages[0].complete and messages[0].seqs == [2, 3]
    assert not messages[-1].complete
    assert [t.first_item for t in view.turns] == [1, 4]


def test_tool_call_with_approval_is_one_row() -> None:
    fold = RunFold()
    changes = [fold.apply(e) for e in stamp([
        START, TurnStart(turn=1),
        ModelDecisionEvent(turn=1, action="tool", tool="shell", tool_input={"command": "ls"}),
        ApprovalRequested(approval_id="c1", tool="shell", reason="runs a command",
                          tool_input={"command": "ls"}, tier=3, prefix="ls"),
    ])]
    view = fold.view
    row = view.tool_calls["c1"]
    assert row.status == "awaiting" and list(view.pending) == ["c1"]
    assert changes[-1].parts & APPROVALS and changes[-1].parts & ITEMS
    assert changes[-1].item == row.index

    fold.apply(ApprovalResolved(approval_id="c1", tool="shell", allowed=True, via="human",
                                remember=True, seq=4))
    assert not view.pending and view.grants == [GrantView("shell", "ls", 3)]
    fold.apply(ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=3, seq=5))
    assert row.status == "running"
    fold.apply(ToolEnd(call_id="c1", tool="shell", ok=True, output="a\nb", duration_ms=3, seq=6))
    assert (row.status, row.output, row.duration_ms) == ("ok", "a\nb", 3)
    assert row.approval.state == "allowed" and row.approval.via == "human"
    assert row.seqs == [3, 4, 5, 6]
    assert sum(1 for i in view.items if i.kind == "tool") == 1


def test_grant_short_circuit_and_denials_show_on_the_row() -> None:
    view = fold_events(stamp([
        START,
        ApprovalResolved(approval_id="g", tool="shell", allowed=True, via="grant"),
        ToolStart(call_id="g", tool="shell", tool_input={"command": "git status"}, tier=3),
        ToolEnd(call_id="g", tool="shell", ok=True),
        ApprovalRequested(approval_id="d", tool="shell", reason="r", tool_input={}, tier=4),
        ApprovalResolved(approval_id="d", tool="shell", allowed=False, via="human"),
    ]))
    assert view.tool_calls["g"].approval.via == "grant"
    assert view.tool_calls["g"].status == "ok"
    assert view.tool_calls["d"].status == "denied"


def test_initial_grants_and_remember_without_prefix() -> None:
    fold = RunFold(grants=[ApprovalGrant(tool="shell", prefix="npm test", tier=3)])
    fold.apply_all(stamp([
        START,
        ApprovalRequested(approval_id="x", tool="shell", reason="r", tool_input={}, prefix=""),
        ApprovalResolved(approval_id="x", tool="shell", allowed=True, via="human", remember=True),
    ]))
    assert fold.view.grants == [GrantView("shell", "npm test", 3)]


def test_verification_plan_checks_and_amendments() -> None:
    fold = RunFold()
    fold.apply_all(stamp([
        START,
        VerificationPlanFrozen(checks=[VerificationCheck(id="t", name="tests", command="pytest"),
                                       VerificationCheck(id="l", name="lint", command="ruff")]),
    ]))
    view = fold.view
    assert [c.status for c in view.checks.values()] == ["pending", "pending"]
    change = fold.apply(VerificationPlanFrozen(
        checks=[VerificationCheck(id="t", name="tests", command="pytest -x")], seq=2))
    assert change.parts & VERIFICATION
    assert list(view.checks) == ["t"] and view.checks["t"].added_in == 2
    fold.apply(VerificationStart(check_id="t", name="tests", seq=3))
    assert view.checks["t"].status == "running"
    fold.apply(VerificationEnd(check_id="t", name="tests", passed=False, output="1 failed",
                               duration_ms=20, seq=4))
    assert (view.checks["t"].status, view.checks["t"].output) == ("failed", "1 failed")
    notices = [i for i in view.items if i.kind == "plan"]
    assert notices[-1].level == "warning" and "changed" in notices[-1].text


def test_errors_escalation_cancel_and_end() -> None:
    view = fold_events(stamp([
        START, TurnStart(turn=1),
        DecisionError(turn=1, error="no tool named 'rm'", raw="{...}"),
        DeclarationRequired(turn=1, reason="declare a verification plan first"),
        TaskEscalated(reason="needs an edit", target="edit"),
        ApprovalRequested(approval_id="p", tool="shell", reason="r", tool_input={}),
        CancellationObserved(reason="user", turn=1),
        TurnEnd(turn=1, stop_reason="cancelled"),
        AgentEnd(status="cancelled"),
    ]))
    kinds = [i.kind for i in view.items]
    assert kinds == ["task", "decision_error", "declaration", "escalation", "tool", "cancel", "end"]
    assert view.items[1].level == "error"
    assert view.status == "cancelled" and view.cancel_reason == "user"
    assert view.turns[0].stop_reason == "cancelled"
    assert not view.pending and view.tool_calls["p"].status == "denied"


def test_changes_name_what_they_touched() -> None:
    fold = RunFold()
    assert fold.apply(START.model_copy(update={"seq": 0})).parts & RUN
    assert fold.apply(ModelUpdate(text="x", turn=1)).parts == ITEMS
    assert fold.apply(ModelUsage(input_tokens=1, output_tokens=1)).parts == USAGE
    resolved = fold.apply(ApprovalResolved(approval_id="a", tool="t", allowed=True, via="grant"))
    assert resolved.parts & ITEMS and not resolved.parts & GRANTS


def test_a_second_task_resets_the_run_but_keeps_transcript_grants_and_usage() -> None:
    view = fold_events(stamp([
        START, ModelUsage(input_tokens=5, output_tokens=5),
        ApprovalRequested(approval_id="x", tool="shell", reason="r", tool_input={}, prefix="ls"),
        ApprovalResolved(approval_id="x", tool="shell", allowed=True, via="human", remember=True),
        VerificationPlanFrozen(checks=[VerificationCheck(id="t", name="tests")]),
        AgentEnd(status="completed", result="fixed"),
        AgentStart(task="second", engine="builtin"),
    ]))
    assert view.task == "second" and view.status == "running" and view.task_index == 2
    assert view.checks == {} and view.grants == [GrantView("shell", "ls", 3)]
    assert view.input_tokens == 5
    assert view.items[-1].kind == "task" and view.items[-1].task == 2


def test_folding_is_deterministic_and_copy_is_independent() -> None:
    events = stamp([START, TurnStart(turn=1), ModelUpdate(text="a", turn=1),
                    ToolStart(call_id="c", tool="read_file", tool_input={"path": "x"}),
                    ToolEnd(call_id="c", tool="read_file", ok=True, output="data")])
    fold = RunFold()
    fold.apply_all(events[:3])
    checkpoint = fold.view.copy()
    fold.apply_all(events[3:])
    resumed = RunFold(view=checkpoint)
    resumed.apply_all(events[3:])
    a, b = fold.view, resumed.view
    assert [(i.kind, i.seqs) for i in a.items] == [(i.kind, i.seqs) for i in b.items]
    assert a.tool_calls["c"].output == b.tool_calls["c"].output == "data"
    assert a.tool_calls["c"] is not b.tool_calls["c"]


def test_unknown_event_types_change_nothing() -> None:
    class Future:
        type = "from_the_future"
        ts = 1.0
        seq = 0

    fold = RunFold()
    assert fold.apply(Future()).parts == 0  # type: ignore[arg-type]
    assert fold.view.events == 1


def test_the_end_of_a_run_cancels_open_questions_and_names_their_rows() -> None:
    from engine_adapter.events import QuestionAsked

    fold = RunFold()
    fold.apply(START)
    asked = fold.apply(QuestionAsked(question_id="q1", message="which branch?", seq=2))
    row = asked.item
    copy = fold.view.copy()  # a checkpoint shares the row until the fold changes it
    end = fold.apply(AgentEnd(status="completed", seq=3))
    assert row in end.more  # redrawn: the row's state changed without being the event's row
    assert fold.view.items[row].state == "cancel"  # type: ignore[attr-defined]
    assert fold.view.items[row].reason == "the run ended"  # type: ignore[attr-defined]
    assert not fold.view.questions
    assert copy.items[row].state == "pending"  # type: ignore[attr-defined]
    assert list(copy.questions) == ["q1"]


def test_every_handler_and_describer_takes_the_event_class_it_is_listed_with() -> None:
    """The fold's and the describers' tables are keyed by event type; each function's event
    parameter is annotated with that type's class, so the type checker reads every field a
    handler touches against its event (a misspelt field fails `.ci/run`)."""
    import inspect
    import typing

    from engine_adapter.events import EVENT_TYPES
    from engine_adapter.view import DESCRIBERS, RunFold

    for table in (RunFold.HANDLERS, DESCRIBERS):
        assert set(table) == set(EVENT_TYPES)
        for event_type, function in table.items():
            event_param = list(inspect.signature(function).parameters)[-1]
            hint = typing.get_type_hints(function)[event_param]
            assert hint is EVENT_TYPES[event_type], (event_type, function.__name__, hint)


def test_history_folds_into_one_item_that_a_checkpoint_keeps_apart():
    fold = RunFold()
    fold.apply(AgentStart(task="", engine="acp:x", resumed="session/load"))
    fold.apply(HistoryMessage(role="user", text="fix "))
    fold.apply(HistoryMessage(role="user", text="it"))
    fold.apply(HistoryTool(call_id="t1", tool="execute", title="Run make", status="pending"))
    checkpoint = fold.view.copy()
    fold.apply(HistoryTool(call_id="t1", tool="execute", title="Run make", status="completed"))
    fold.apply(HistoryMessage(role="agent", text="done"))
    [item] = [i for i in fold.view.items if isinstance(i, HistoryItem)]
    assert item.text == "you: fix it\ntool: Run make (completed)\nagent: done"
    assert item.messages == 2 and not fold.view.tool_calls
    [before] = [i for i in checkpoint.items if isinstance(i, HistoryItem)]
    assert before.text == "you: fix it\ntool: Run make (pending)"  # copy on write
