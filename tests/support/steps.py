"""A tiny scripted engine driven by the test itself: `StepRunner` runs the test's steps."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from engine_adapter import AgentEnd, AgentStart, TaskState

Step = Callable[["StepRunner"], Awaitable[None]]
"""One step of a scripted run: an async function given the runner."""


class StepRunner:
    """An `AgentRunner` that emits `agent_start`, runs the test's steps, then `agent_end`.

    Each step is an async function given the runner (so it can emit, ask for approval, and look
    at the cancel token). Records each approval answer in `answers`.
    """

    def __init__(self, *steps: Step, end: bool = True, cwd: str | None = None) -> None:
        self.steps = steps
        self.end = end
        self.cwd = cwd
        self.event_sink: Any = None
        self.approval_controller: Any = None
        self.cancel_token: Any = None
        self.answers: list[bool] = []

    def emit(self, event: Any) -> None:
        self.event_sink.emit(event)

    async def ask(self, approval_id: str, tool: str, tool_input: dict[str, Any], *,
                  tier: int = 3, reason: str | None = None) -> bool:
        allowed = await self.approval_controller.request_approval(
            approval_id, tool, reason or f"{tool} needs approval", tool_input, tier=tier)
        self.answers.append(allowed)
        return allowed

    async def run(self, state: TaskState) -> TaskState:
        self.emit(AgentStart(task=state.task, engine="steps", cwd=self.cwd))
        for step in self.steps:
            if self.cancel_token.cancelled:
                break
            await step(self)
        if self.end:
            if self.cancel_token.cancelled:
                return state  # the Session ends it (cancellation_observed + agent_end)
            self.emit(AgentEnd(status="completed", result="done"))
        return state

