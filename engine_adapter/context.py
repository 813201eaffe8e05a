"""`RunContext`: what an engine holds for one run, and the helpers every engine needs on top of
the three minimal protocols (see `runner`).

An engine takes one at the start of `run()` (`RunContext.of(self)`) and uses it for everything
the run touches: `emit`, `request_approval`, `cancelled`, `is_granted`, `ask_question`,
`denial_reason`, `wait_cancelled`, `on_cancel`, and the `sandbox` its commands run in. The
richer protocols are checked once, here; with a controller or token that offers only the
minimum, the helpers degrade to the safe answer (no standing grant is known; a question is
declined, and journaled as such; no reason), to asking without `sandboxed`, or to polling the
token, never to an error.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeGuard

from engine_adapter.events import (
    DEFAULT_MODE,
    Answer,
    BaseEvent,
    PermissionMode,
    QuestionAnswered,
    QuestionAsked,
    QuestionField,
    parse_mode,
)
from engine_adapter.runner import (
    AgentRunner,
    ApprovalController,
    CancelToken,
    EditReviewController,
    EventSink,
    GrantAwareController,
    ModeAwareController,
    QuestionController,
    ReasonAwareController,
    SandboxAwareController,
    WatchableCancelToken,
)

if TYPE_CHECKING:
    from engine_adapter.sandbox import Sandbox

__all__ = ["POLL_INTERVAL", "RunContext", "on_cancel", "wait_cancelled"]

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05
"""Seconds between looks at a cancel token that cannot be awaited (only `cancelled`)."""


def _nothing() -> None:
    return None


def _takes_sandboxed(controller: ApprovalController) -> TypeGuard[SandboxAwareController]:
    """Whether `controller.request_approval` takes `sandboxed` (a `SandboxAwareController`: a
    protocol cannot check a keyword, the signature can)."""
    return _takes(controller, "sandboxed")


def _takes(controller: ApprovalController, keyword: str) -> bool:
    """Whether `controller.request_approval` takes `keyword`."""
    method = getattr(controller, "request_approval", None)
    if method is None:
        return False
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):  # not a callable, or one without a signature
        return False
    return keyword in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


async def wait_cancelled(token: CancelToken) -> None:
    """Return once `token` has tripped: awaited when it can be, else polled."""
    if isinstance(token, WatchableCancelToken):
        await token.wait()
        return
    while not token.cancelled:
        await asyncio.sleep(POLL_INTERVAL)


def on_cancel(token: CancelToken, callback: Callable[[], Any]) -> Callable[[], object]:
    """Call `callback()` once `token` trips (at once if it has); returns a function that stops
    watching (what it returns means nothing). A token that cannot call back is polled by a task
    (so a loop must be running)."""
    if isinstance(token, WatchableCancelToken):
        remove: object = token.on_cancel(callback)  # a caller's token may return no remover
        return remove if callable(remove) else _nothing
    if token.cancelled:
        callback()
        return _nothing

    async def poll() -> None:
        await wait_cancelled(token)
        try:
            callback()
        except Exception:
            log.exception("cancel callback failed")

    return asyncio.ensure_future(poll()).cancel


class RunContext:
    """One run as an engine sees it: where events go (`sink`), who approves (`controller`), what
    cancels (`token`), where it works (`cwd`) and its commands run (`sandbox`, None: the engine
    runs none, or no sandbox was given), and whether it may still emit (`live`).

    `live` is cleared once the engine has ended the run (`end(agent_end)`, or `close()`):
    whatever still arrives afterwards (a late notification from an agent, say) is dropped, not
    emitted into an ended run.
    """

    __slots__ = ("_capped", "_edits", "_grants", "_modes", "_questions", "_reasons",
                 "_sandboxed", "controller", "cwd", "live", "sandbox", "sink", "token")

    def __init__(self, sink: EventSink, controller: ApprovalController, token: CancelToken, *,
                 cwd: str | None = None, sandbox: Sandbox | None = None) -> None:
        self.sink = sink
        self.controller = controller
        self.token = token
        self.cwd = cwd
        self.sandbox = sandbox
        self.live = True
        self._grants = controller if isinstance(controller, GrantAwareController) else None
        self._questions = controller if isinstance(controller, QuestionController) else None
        self._reasons = controller if isinstance(controller, ReasonAwareController) else None
        self._modes = controller if isinstance(controller, ModeAwareController) else None
        self._edits = controller if isinstance(controller, EditReviewController) else None
        self._sandboxed = controller if _takes_sandboxed(controller) else None
        self._capped = self._sandboxed is not None and _takes(controller, "auto_max_tier")

    @classmethod
    def of(cls, runner: AgentRunner, *, cwd: str | None = None,
           sandbox: Sandbox | None = None) -> RunContext:
        """The context of the run a Session is driving `runner` through (it set the three
        attributes); a `RuntimeError` saying so when they are not set."""
        sink, controller = runner.event_sink, runner.approval_controller
        token = runner.cancel_token
        if sink is None or controller is None or token is None:
            raise RuntimeError(
                f"{type(runner).__name__}.run is driven by a Session, which sets its event_sink, "
                "approval_controller and cancel_token: run it with Session(runner, state).run()")
        return cls(sink, controller, token, cwd=cwd, sandbox=sandbox)

    # events ---------------------------------------------------------------------------------
    def emit(self, event: BaseEvent) -> None:
        """Send `event` into the run (dropped once the context is closed)."""
        if self.live:
            self.sink.emit(event)

    def end(self, event: BaseEvent) -> None:
        """Emit the run's last event (`agent_end`) and close the context."""
        self.emit(event)
        self.live = False

    def close(self) -> None:
        """Nothing more may be emitted into this run."""
        self.live = False

    async def checkpoint_ready(self) -> None:
        """Wait for the workspace checkpoint the last `turn_start` began (a sink that takes
        none, or takes it at once: no wait). Await it after emitting `turn_start` and before
        the turn's first tool runs, so that waiting for a checkpoint never blocks the loop."""
        ready = getattr(self.sink, "checkpoint_ready", None)
        if ready is not None and inspect.iscoroutinefunction(ready):
            await ready()

    # approvals ------------------------------------------------------------------------------
    async def request_approval(self, approval_id: str, tool: str, reason: str,
                               tool_input: dict[str, Any], *, tier: int = 3,
                               sandboxed: bool | None = None,
                               auto_max_tier: int | None = None) -> bool:
        """Ask whether a gated call may go ahead (a grant, a human, the unattended rules).
        `sandboxed`, `auto_max_tier`: see `SandboxAwareController`; a controller that does not
        take them is asked without them (the engine's reason then says there is no sandbox;
        a controller that cannot cap an auto-approval is one that does not auto-approve)."""
        aware = self._sandboxed
        if auto_max_tier is not None and aware is not None and self._capped:
            allowed = await aware.request_approval(
                approval_id, tool, reason, tool_input, tier=tier, sandboxed=sandboxed,
                auto_max_tier=auto_max_tier)
        elif sandboxed is not None and aware is not None:
            allowed = await aware.request_approval(
                approval_id, tool, reason, tool_input, tier=tier, sandboxed=sandboxed)
        else:
            allowed = await self.controller.request_approval(approval_id, tool, reason,
                                                             tool_input, tier=tier)
        return bool(allowed)

    def is_granted(self, tool: str, tool_input: dict[str, Any], tier: int) -> bool:
        """Whether a standing grant covers this call. A controller that cannot tell (it offers
        only `request_approval`) gives "no": the engine then treats an approval as good for
        this call only, never for more than the human saw."""
        grants = self._grants
        return grants is not None and bool(grants.is_granted(tool, tool_input, tier))

    def denial_reason(self, approval_id: str) -> str | None:
        """The human's words given with the answer to `approval_id` (`None`: none given, or a
        controller that does not keep them)."""
        reasons = self._reasons
        return reasons.denial_reason(approval_id) if reasons is not None else None

    def offer_edit(self, approval_id: str, path: str, proposed: str) -> None:
        """Offer the edit asked next under `approval_id` for review (the human may accept a
        version of their own); nothing with a controller that cannot review edits."""
        if self._edits is not None:
            self._edits.offer_edit(approval_id, path, proposed)

    def edited_content(self, approval_id: str) -> str | None:
        """The human's own version of the edit allowed under `approval_id`, or None (write the
        proposal as it was)."""
        edits = self._edits
        found = edits.edited_content(approval_id) if edits is not None else None
        return found if isinstance(found, str) else None

    # the permission mode --------------------------------------------------------------------
    @property
    def mode(self) -> PermissionMode:
        """The cockpit's permission mode in force; `accept-edits` (today's behaviour) for a
        controller that holds none."""
        modes = self._modes
        return (parse_mode(modes.mode) or DEFAULT_MODE) if modes is not None else DEFAULT_MODE

    @property
    def edits_ask(self) -> bool:
        """Whether tier-2 edits must go through `request_approval` (ask and plan mode), rather
        than run unasked in the edit phase."""
        return self.mode in ("ask", "plan")

    def on_mode_change(self, listener: Callable[[PermissionMode], Any]) -> Callable[[], object]:
        """Call `listener(mode)` after each change of mode; returns a function that stops
        watching (a controller without modes never calls it)."""
        modes = self._modes
        if modes is None:
            return _nothing

        def told(mode: Any) -> None:
            found = parse_mode(str(mode))
            if found is not None:
                listener(found)
        remove: object = modes.on_mode_change(told)
        return remove if callable(remove) else _nothing

    # questions ------------------------------------------------------------------------------
    async def ask_question(self, question_id: str, message: str, fields: list[QuestionField],
                           *, call_id: str | None = None, url: str | None = None) -> Answer:
        """Put an agent's question to the human and wait for the answer (`url`: a link it asks
        the human to open). A controller that cannot ask gets the question declined at once —
        still journaled, asked and answered."""
        questions = self._questions
        if questions is not None:
            answer = await (questions.ask_question(question_id, message, fields,
                                                   call_id=call_id, url=url)
                            if url is not None else
                            questions.ask_question(question_id, message, fields,
                                                   call_id=call_id))
            return answer if isinstance(answer, Answer) else Answer(*answer)
        self.emit(QuestionAsked(question_id=question_id, message=message, fields=fields,
                                call_id=call_id, url=url))
        self.emit(QuestionAnswered(question_id=question_id, action="decline", via="auto",
                                   reason="nobody here can answer questions"))
        return Answer("decline")

    # cancel ---------------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        """Whether the run has been cancelled."""
        return bool(self.token.cancelled)

    @property
    def cancel_reason(self) -> str:
        """Why it was cancelled ("cancelled" when the token gives no reason)."""
        return self.token.reason or "cancelled"

    async def wait_cancelled(self) -> None:
        """Return once the run is cancelled."""
        await wait_cancelled(self.token)

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], object]:
        """Call `callback()` once the run is cancelled; returns a function that stops watching."""
        return on_cancel(self.token, callback)
