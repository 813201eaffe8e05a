"""A small fixture run with every marker kind, written as a journal, and a view's summary that
two views compare by (everything a screen shows of it)."""

from __future__ import annotations

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ApprovalRequested,
    ApprovalResolved,
    DecisionError,
    ModelUpdate,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationEnd,
    VerificationPlanFrozen,
)
from engine_adapter.events import dump_event
from engine_adapter.view import RunView


def fixture_events(turns: int = 4) -> list:
    """A small run with every marker kind: approvals, a denial, a failed tool, an error."""
    events = [AgentStart(task="fix the bug", engine="test"),
              VerificationPlanFrozen(checks=[{"id": "t", "name": "tests", "command": "pytest"}])]
    for turn in range(1, turns + 1):
        call = f"c{turn}"
        events.append(TurnStart(turn=turn))
        events += [ModelUpdate(text=f"thinking {turn}.{k} ", turn=turn) for k in range(3)]
        if turn % 2 == 0:
            events.append(ApprovalRequested(approval_id=call, tool="shell", reason="runs",
                                            tool_input={"command": "make"}, prefix="make"))
            events.append(ApprovalResolved(approval_id=call, tool="shell", allowed=turn != 4,
                                           via="human"))
        events.append(ToolStart(call_id=call, tool="shell", tool_input={"command": f"ls {turn}"}))
        events.append(ToolEnd(call_id=call, tool="shell", ok=turn != 3, output=f"out {turn}"))
        if turn == 2:
            events.append(DecisionError(turn=turn, error="bad json"))
        events.append(TurnEnd(turn=turn))
    events.append(VerificationEnd(check_id="t", name="tests", passed=True, output="ok"))
    events.append(AgentEnd(status="completed", result="done"))
    return [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
            for i, e in enumerate(events)]


def write(path, events, extra: bytes = b"") -> None:
    path.write_bytes(b"".join(dump_event(e) + b"\n" for e in events) + extra)


def summary(view: RunView) -> tuple:
    """Everything a screen shows of a view, comparable with `==` (messages by their text)."""
    def item(i):
        slots = {}
        for cls in type(i).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if name in ("parts", "_text"):  # how text is held
                    continue
                value = getattr(i, name, None)
                # (a snapshot: a fold without copies goes on changing its rows' lists)
                slots[name] = (list(value) if name == "seqs" or type(value) is list
                               else dict(value) if type(value) is dict else value)
        if i.kind == "message":
            slots["text"] = i.text
        return tuple(sorted(slots.items(), key=lambda kv: kv[0]))

    scalars = {k: v for k, v in vars(view).items()
               if k not in ("items", "turns", "call_rows", "pending_rows", "question_rows",
                            "checks", "grants", "shared", "owned")}  # (the last two: who may
    # change which row)
    return (tuple(sorted(scalars.items())), tuple(item(i) for i in view.items),
            tuple(view.turns), tuple(view.call_rows.items()), tuple(view.pending_rows.items()),
            tuple(view.question_rows.items()), tuple(view.grants), tuple(view.checks.items()))

