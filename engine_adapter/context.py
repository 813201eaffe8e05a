"""`RunContext`: what an engine holds for one run, and the helpers every engine needs on top of
the three minimal protocols (see `runner`).

An engine takes one at the start of `run()` (`RunContext.of(self)`) and uses it for everything
the run touches: `emit`, `request_approval`, `cancelled`, `is_granted`, `wait_cancelled`,
`on_cancel`, and the `sandbox` its commands run in. The richer protocols are checked once,
here; with a controller or token that offers only the minimum, the helpers degrade to the safe
answer (no standing grant is known), to asking without `sandboxed`, or to polling the token,
never to an error.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .events import BaseEvent
from .runner import (
    AgentRunner,
    ApprovalController,
    CancelToken,
    EventSink,
    GrantAwareController,
    WatchableCancelToken,
)

if TYPE_CHECKING:
    from .sandbox import Sandbox

__all__ = ["POLL_INTERVAL", "RunContext", "on_cancel", "wait_cancelled"]

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05
"""Seconds between looks at a cancel token that cannot be awaited (only `cancelled`)."""


def _nothing() -> None:
    return None


def _takes_sandboxed(controller: ApprovalController) -> bool:
    """Whether `controller.request_approval` takes `sandboxed` (a `SandboxAwareController`)."""
    method = getattr(controller, "request_approval", None)
    try:
        parameters = inspect.signature(method).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not a callable, or one without a signature
        return False
    return "sandboxed" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


async def wait_cancelled(token: CancelToken) -> None:
    """Return once `token` has tripped: awaited when it can be, else polled."""
    if isinstance(token, WatchableCancelToken):
        await token.wait()
        return
    while not token.cancelled:
        await asyncio.sleep(POLL_INTERVAL)


def on_cancel(token: CancelToken, callback: Callable[[], Any]) -> Callable[[], None]:
    """Call `callback()` once `token` trips (at once if it has); returns a function that stops
    watching. A token that cannot call back is polled by a task (so a loop must be running)."""
    if isinstance(token, WatchableCancelToken):
        remove = token.on_cancel(callback)
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

    __slots__ = ("_grants", "_sandboxed", "controller", "cwd", "live", "sandbox", "sink", "token")

    def __init__(self, sink: EventSink, controller: ApprovalController, token: CancelToken, *,
                 cwd: str | None = None, sandbox: Sandbox | None = None) -> None:
        self.sink = sink
        self.controller = controller
        self.token = token
        self.cwd = cwd
        self.sandbox = sandbox
        self.live = True
        self._grants = controller if isinstance(controller, GrantAwareController) else None
        self._sandboxed = _takes_sandboxed(controller)

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

    # approvals ------------------------------------------------------------------------------
    async def request_approval(self, approval_id: str, tool: str, reason: str,
                               tool_input: dict[str, Any], *, tier: int = 3,
                               sandboxed: bool | None = None) -> bool:
        """Ask whether a gated call may go ahead (a grant, a human, the unattended rules).
        `sandboxed`: see `SandboxAwareController`; a controller that does not take it is asked
        without it (the engine's reason then says there is no sandbox)."""
        if sandboxed is not None and self._sandboxed:
            allowed = await self.controller.request_approval(  # type: ignore[call-arg]
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

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call `callback()` once the run is cancelled; returns a function that stops watching."""
        return on_cancel(self.token, callback)
