"""`Operations`: what every call the cockpit carries out for the agent shares — the run it belongs
to, ids unique within a turn, the approval gate, and the rows that journal it.

The agent chooses its own tool call ids and may reuse one (or pick one of ours, `fs-write-1`),
so an approval id already in use this turn gets a suffix (`t-1~2`): each request waits on its
own answer, and the human's answer goes to the request shown. Our own operations (`fs-read-1`,
`terminal-2`) get ids unlike any the agent used.

A call refused before it ran (outside the workspace, not a regular file, …) is journaled as a
failed row all the same (`refused`), like any other call (`ended`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from acp import RequestError

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.client.permissions import PERMISSION_DENIED, Permit
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import BaseEvent, ToolEnd, ToolStart

__all__ = ["Operations"]


class Operations:
    """The bookkeeping of one client's operations (see the module docstring).

    `run()` gives the live run's context, or None between tasks; `agent_ids(id)` says whether
    the agent uses `id` for one of its tool calls of this turn.
    """

    def __init__(self, run: Callable[[], RunContext | None], *,
                 agent_ids: Callable[[str], bool]) -> None:
        self._run = run
        self._agent_ids = agent_ids
        self._in_use: set[str] = set()  # approval ids given out this turn
        self._count = itertools.count(1)

    def start_turn(self) -> None:
        """A new prompt: this turn's ids are free again."""
        self._in_use.clear()

    def emit(self, event: BaseEvent) -> None:
        """Into the live run (dropped between tasks)."""
        run = self._run()
        if run is not None and run.live:
            run.sink.emit(event)

    def active(self) -> RunContext:
        """The live run, or the error that refuses a call arriving without one (or after a
        cancel)."""
        run = self._run()
        if run is None or not run.live:
            raise RequestError(PERMISSION_DENIED, "no cockpit task is running; the request was "
                               "refused")
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        return run

    # ids -------------------------------------------------------------------------------------
    def approval_id(self, wanted: str) -> str:
        """`wanted`, or `wanted~N` if that id is already in use this turn (by an earlier
        request, one of our own operations, or a tool call of the agent's)."""
        taken = self._in_use
        approval_id, n = wanted, 1
        while approval_id in taken or (approval_id != wanted and self._agent_ids(approval_id)):
            n += 1
            approval_id = f"{wanted}~{n}"
        taken.add(approval_id)
        return approval_id

    def op_id(self, kind: str) -> str:
        """A fresh id for one of our own operations, unlike any id the agent used."""
        while True:
            op_id = f"{kind}-{next(self._count)}"
            if op_id not in self._in_use and not self._agent_ids(op_id):
                return self.approval_id(op_id)

    # the gate and the rows -------------------------------------------------------------------
    async def gate(self, run: RunContext, op_id: str, tool: str, reason: str,
                   tool_input: dict[str, Any], tier: int, permit: Permit | None, *,
                   sandboxed: bool | None = None) -> None:
        """Ask unless a permit covers the operation (in plan mode none does: the permission may
        have been given before the switch); raise if the answer is no, or if the task was
        cancelled meanwhile (with a permit too: nothing acts after a cancel). `sandboxed`:
        see `Session.request_approval`."""
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        if permit is not None and run.mode != "plan":  # plan mode since: the gate refuses it
            return
        allowed = await run.request_approval(op_id, tool, reason, tool_input, tier=tier,
                                             sandboxed=sandboxed)
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        if not allowed:
            said = run.denial_reason(op_id)
            raise RequestError(PERMISSION_DENIED, f"the cockpit denied this: {reason}" + (
                f". The user's reason: {said}" if said else ""))

    def refused(self, op_id: str, tool: str, exc: Exception, tool_input: dict[str, Any],
                title: str, *, tier: int = 1, code: int = -32602) -> RequestError:
        """Journal a request refused before it ran (a failed row saying why) and return the
        error that answers the agent."""
        error = clean(str(exc), 500)
        self.emit(ToolStart(call_id=op_id, tool=tool, tool_input=tool_input, tier=tier,
                            title=clean(title, 1000), source="client"))
        self.emit(ToolEnd(call_id=op_id, tool=tool, ok=False, output="", error=error,
                          duration_ms=0.0))
        return RequestError(code, error)

    def ended(self, op_id: str, tool: str, started: float, *, error: str | None = None,
              output: str = "") -> None:
        """Journal the end of an operation that started at `started` (`time.monotonic()`)."""
        self.emit(ToolEnd(call_id=op_id, tool=tool, ok=error is None, output=output,
                          error=error, duration_ms=(time.monotonic() - started) * 1000))
