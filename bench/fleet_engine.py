"""The engine bench/bench_fleet.py runs in the host (`cockpit run TASK --engine
fleet_engine:make --detach`): it streams reply deltas at a rate, then asks an approval and
waits for it (so its run stays live, with an ask in the inbox), and ends when answered or
cancelled. The task says what to do: `events=N rate=R` (R deltas a second; 0: as fast as the
loop goes), e.g. "events=100000 rate=0"."""

from __future__ import annotations

import asyncio
from typing import Any

from engine_adapter import AgentEnd, AgentStart, ModelUpdate, TaskState, TurnStart

BATCH_SECONDS = 0.01  # deltas go out in a batch each 10 ms (a rate of 1,000/s: 10 a batch)


class FleetStreamer:
    """Streams `events` deltas at `rate` a second, then asks, then ends."""

    def __init__(self, events: int, rate: float) -> None:
        self.events, self.rate = events, rate
        self.event_sink: Any = None
        self.approval_controller: Any = None
        self.cancel_token: Any = None

    async def run(self, state: TaskState) -> TaskState:
        emit = self.event_sink.emit
        emit(AgentStart(task=state.task, engine="fleet-bench", model=None, cwd=None))
        emit(TurnStart(turn=1))
        sent = 0
        loop = asyncio.get_running_loop()
        start = loop.time()
        while sent < self.events and not self.cancel_token.cancelled:
            if self.rate > 0:
                due = min(self.events, int((loop.time() - start) * self.rate) + 1)
            else:
                due = min(self.events, sent + 1000)
            while sent < due:
                emit(ModelUpdate(turn=1, text=f"word {sent} ", channel="message"))
                sent += 1
            await asyncio.sleep(BATCH_SECONDS if self.rate > 0 else 0)
        if not self.cancel_token.cancelled:
            await self.approval_controller.request_approval(
                "ask-1", "shell", "the bench asks", {"command": "git status"}, tier=3)
        status = "cancelled" if self.cancel_token.cancelled else "completed"
        state.status = status
        emit(AgentEnd(status=status, result=None, error=None))
        return state


def make(*, cwd: str, task: str) -> FleetStreamer:
    """The factory `--engine fleet_engine:make` names."""
    words = dict(part.split("=", 1) for part in task.split() if "=" in part)
    return FleetStreamer(int(words.get("events", "1000")), float(words.get("rate", "1000")))
