"""The protocols an engine meets, and the ones the Session hands it while it runs.

An engine is an `AgentRunner`. For the duration of `run()` the Session sets three attributes on
it: `event_sink` (emit events; never blocks), `approval_controller` (ask a human, or a grant, or
the unattended rules, whether a gated call may go ahead) and `cancel_token` (checked by the
engine at every turn boundary and before starting a tool).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .events import BaseEvent
from .state import TaskState

__all__ = ["AgentRunner", "ApprovalController", "CancelToken", "EventSink"]


@runtime_checkable
class EventSink(Protocol):
    """Where an engine sends its events. `emit` never blocks and never awaits."""

    def emit(self, event: BaseEvent) -> None: ...


@runtime_checkable
class ApprovalController(Protocol):
    """Decides whether a gated call may go ahead. `sandboxed=False`: the call's commands would
    have run in a sandbox but will not, so no grant or auto-approval may cover them."""

    async def request_approval(
        self,
        approval_id: str,
        tool: str,
        reason: str,
        tool_input: dict[str, Any],
        *,
        tier: int = 3,
        sandboxed: bool | None = None,
    ) -> bool: ...


@runtime_checkable
class CancelToken(Protocol):
    """Tripped by `Session.cancel()`; the engine stops at its next boundary when it sees it."""

    @property
    def cancelled(self) -> bool: ...

    @property
    def reason(self) -> str | None: ...


@runtime_checkable
class AgentRunner(Protocol):
    """An engine: drives one task to its end, emitting events as it goes."""

    event_sink: EventSink | None
    approval_controller: ApprovalController | None
    cancel_token: CancelToken | None

    async def run(self, state: TaskState) -> TaskState: ...
