"""The protocols an engine meets, and the ones the Session hands it while it runs.

An engine is an `AgentRunner`. For the duration of `run()` the Session sets three attributes on
it: `event_sink` (emit events; never blocks), `approval_controller` (ask a human, or a grant, or
the unattended rules, whether a gated call may go ahead) and `cancel_token` (checked by the
engine at every turn boundary and before starting a tool).

Those three protocols are the minimum (CONTRACT): an engine may rely on nothing more, and a
caller may hand an engine objects with nothing more. What the Session's own objects offer beyond
it is a richer protocol each, checked with `isinstance`: `GrantAwareController` (is a call
already granted?), `QuestionController` (ask the human a question), `ReasonAwareController` (the
human's words with a denial), `ModeAwareController` (the permission mode in force, and its
changes) and `WatchableCancelToken` (await the cancel, or be called back).
Engines do
not check themselves: `context.RunContext` does it once a run and falls back (no grant known;
polling the token) when the richer protocol is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from engine_adapter.events import BaseEvent
from engine_adapter.state import TaskState

__all__ = [
    "AgentRunner",
    "ApprovalController",
    "CancelToken",
    "EditReviewController",
    "EventSink",
    "GrantAwareController",
    "ModeAwareController",
    "QuestionController",
    "ReasonAwareController",
    "SandboxAwareController",
    "WatchableCancelToken",
]


@runtime_checkable
class EventSink(Protocol):
    """Where an engine sends its events. `emit` never blocks and never awaits."""

    def emit(self, event: BaseEvent) -> None: ...


@runtime_checkable
class ApprovalController(Protocol):
    """Decides whether a gated call may go ahead."""

    async def request_approval(
        self,
        approval_id: str,
        tool: str,
        reason: str,
        tool_input: dict[str, Any],
        *,
        tier: int = 3,
    ) -> bool: ...


@runtime_checkable
class SandboxAwareController(ApprovalController, Protocol):
    """An approval controller whose `request_approval` also takes `sandboxed` (the Session is
    one): False says the call runs commands that would have run in a sandbox but will not (none
    on this machine, or one approved run outside it), so no standing grant and no auto-approval
    may cover it. `auto_max_tier` caps what an unattended auto-approval may allow for this call
    (an ACP agent's own tool, run outside any sandbox: reads only). A protocol cannot check a
    keyword: `RunContext` reads the signature once and passes them only to a controller that
    takes them."""

    async def request_approval(
        self,
        approval_id: str,
        tool: str,
        reason: str,
        tool_input: dict[str, Any],
        *,
        tier: int = 3,
        sandboxed: bool | None = None,
        auto_max_tier: int | None = None,
    ) -> bool: ...


@runtime_checkable
class GrantAwareController(ApprovalController, Protocol):
    """An approval controller that can also say whether a standing grant already covers a call,
    without asking anyone or announcing anything (the Session is one).

    An ACP agent offers "allow always" as well as "allow once": the engine answers "always"
    only when the human's answer left a grant that covers the call, never more than was granted.
    """

    def is_granted(self, tool: str, tool_input: dict[str, Any], tier: int) -> bool: ...


@runtime_checkable
class QuestionController(Protocol):
    """An approval controller that can also put an agent's question to the human (the Session
    is one): it announces the question (`question_asked`), waits for the answer (or answers
    `decline` at once when no human is present) and journals it (`question_answered`).

    Returns the `questions.Answer`: `action` ("accept", "decline", "cancel") and, for accept,
    the values by field name, checked against the fields. `url`: a link the agent asks the
    human to open (a question without fields)."""

    async def ask_question(self, question_id: str, message: str, fields: list[Any], *,
                           call_id: str | None = None, url: str | None = None) -> Any: ...


@runtime_checkable
class ReasonAwareController(Protocol):
    """An approval controller that keeps the human's words given with an answer (the Session
    is one), so an engine can pass a denial's reason on to its agent."""

    def denial_reason(self, approval_id: str) -> str | None: ...


@runtime_checkable
class ModeAwareController(Protocol):
    """An approval controller that holds the cockpit's permission mode (the Session is one):
    `mode` ("ask", "accept-edits", "auto", "plan"; see `engine_adapter.events.modes`) and
    `on_mode_change(listener)`, called with the new mode, returning a function that stops it.

    The controller's gate enforces the mode on every call it is asked about; an engine that
    runs tier-2 edits without asking asks for them in ask and plan mode (so they reach the
    gate), and may map the mode to an agent's own modes."""

    @property
    def mode(self) -> str: ...

    def on_mode_change(self, listener: Callable[[Any], Any]) -> Callable[[], None]: ...


@runtime_checkable
class EditReviewController(Protocol):
    """An approval controller that lets the human edit a proposed edit before accepting it (the
    Session is one): the engine offers the edit's whole new text before asking
    (`offer_edit`), and once allowed reads what to write (`edited_content`: the human's own
    version, or None for the proposal as it was)."""

    def offer_edit(self, approval_id: str, path: str, proposed: str) -> None: ...

    def edited_content(self, approval_id: str) -> str | None: ...


@runtime_checkable
class CancelToken(Protocol):
    """Tripped by `Session.cancel()`; the engine stops at its next boundary when it sees it."""

    @property
    def cancelled(self) -> bool: ...

    @property
    def reason(self) -> str | None: ...


@runtime_checkable
class WatchableCancelToken(CancelToken, Protocol):
    """A cancel token that can be awaited or call back, so an engine stops work at once (kills a
    child process, abandons a wait on an agent) rather than at its next boundary. The Session's
    token is one."""

    async def wait(self) -> None:
        """Return once the token has tripped."""
        ...

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call `callback()` when the token trips (at once if it has); returns a function that
        unregisters it."""
        ...


@runtime_checkable
class AgentRunner(Protocol):
    """An engine: drives one task to its end, emitting events as it goes."""

    event_sink: EventSink | None
    approval_controller: ApprovalController | None
    cancel_token: CancelToken | None

    async def run(self, state: TaskState) -> TaskState: ...
