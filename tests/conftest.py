"""Shared test helpers: a tiny scripted engine driven by the test itself."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engine_adapter import AgentEnd, AgentStart, TaskState
from engine_adapter.sandbox import ENV_VARIABLE, Sandbox, SandboxSettings

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

# Commands run in the sandbox where this machine has one. Where it has none, no command would be
# auto-approved (never a silent downgrade), so the tests that are not about the sandbox say
# "off" for it, once, here — as a user on such a machine would; the sandbox tests (which pass
# their settings explicitly) check the fallback itself, and the ones that need a sandbox skip.
os.environ.pop(ENV_VARIABLE, None)
SANDBOX_HERE = Sandbox(SandboxSettings(), workspace="/").check()
if not SANDBOX_HERE.active:
    os.environ[ENV_VARIABLE] = "off"

Step = Callable[["StepRunner"], Awaitable[None]]


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
                  tier: int = 3) -> bool:
        allowed = await self.approval_controller.request_approval(
            approval_id, tool, f"{tool} needs approval", tool_input, tier=tier)
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


class _SteadyTime:
    """Stands in for the `time` module where the Session stamps events: each stamp is 1 ms after
    the last, from a fixed start, so a picture of the run never depends on how busy the machine
    was (an elapsed time, "waited 1.0 s for you")."""

    def __init__(self, start: float = 1_764_547_200.0) -> None:
        self.now = start

    def time(self) -> float:
        self.now += 0.001
        return self.now


@pytest.fixture
def steady_stamps(monkeypatch: pytest.MonkeyPatch) -> _SteadyTime:
    """Events stamped on a steady fake clock (for snapshot tests)."""
    import engine_adapter.session.session as session_module

    clock = _SteadyTime()
    monkeypatch.setattr(session_module, "time", clock)
    return clock


def run(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion on a fresh event loop (tests need no async plugin)."""
    return asyncio.run(coro)  # type: ignore[arg-type]


async def until(predicate: Callable[[], bool], *, limit: int = 10_000) -> None:
    """Yield to the event loop until `predicate()` holds (a condition, not a clock)."""
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


@pytest.fixture(autouse=True)
def _own_cockpit_home(monkeypatch, tmp_path_factory):
    """No test reads or writes the developer's own settings, themes or saved grants (a test
    that needs a particular home sets COCKPIT_HOME itself)."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path_factory.mktemp("cockpit-home")))


@pytest.fixture
def journal_path(tmp_path):
    return tmp_path / "run.jsonl"
