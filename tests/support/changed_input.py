"""A journal of an ACP call whose input changed after it was approved (approve `ls`, an update
turns it into `rm -rf ~/work`), as the ACP client journals it: for the views' tests."""

from __future__ import annotations

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ApprovalRequested,
    ApprovalResolved,
    ToolEnd,
    ToolStart,
)

APPROVED = {"command": "ls"}
CHANGED = {"command": "rm -rf ~/work"}


def changed_input_events() -> list:
    """The run, stamped (seq, ts) as a Session would."""
    events = [
        AgentStart(task="tidy up", engine="acp", model=None, cwd="/ws"),
        ToolStart(call_id="c-1", tool="execute", tool_input=APPROVED, tier=3, title="Run ls"),
        ApprovalRequested(approval_id="c-1", tool="execute", reason="agent asks to execute: ls",
                          tool_input=APPROVED, tier=3, prefix="ls", grantable=True),
        ApprovalResolved(approval_id="c-1", tool="execute", allowed=True, via="human"),
        ToolStart(call_id="c-1", tool="execute", tool_input=CHANGED, tier=4, title="Run ls",
                  revision=1, approved_input=APPROVED),
        ToolEnd(call_id="c-1", tool="execute", ok=True, output="", duration_ms=5.0),
        AgentEnd(status="completed", result="done"),
    ]
    return [e.model_copy(update={"seq": n, "ts": 100.0 + n, "session_id": "s"})
            for n, e in enumerate(events)]
