"""Every ask of the demo, as the demo's own engine words it: the built-in engine and its scripted
model play the demo for real (in a throw-away copy of the sample project), every request is
answered (allowed, tier 4 denied), and the `approval_requested` events are kept — their paths
made the same on every machine (the workspace, the interpreter), so snapshots of them compare."""

from __future__ import annotations

import asyncio
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin import BuiltinRunner, ScriptedModel, make_workspace
from engine_adapter.engines.builtin.demo import DEMO_SCENARIO
from engine_adapter.engines.builtin.models.scripted import load_scenario

WORKSPACE = "/home/dev/projects/stats"  # where the snapshots say the demo ran
PYTHON = "python3"  # the interpreter the demo's commands name (the scenario's `{python}`)


@dataclass(frozen=True)
class DemoAsk:
    """One request of the demo: what the engine asked, and how it worded the reason."""

    call_id: str
    tool: str
    tool_input: dict[str, Any]
    tier: int
    reason: str

    @property
    def name(self) -> str:
        """A test id: the tool, and the command for a shell call (`shell-ls -l stats`)."""
        command = self.tool_input.get("command")
        if isinstance(command, str) and command.split():
            words = "_".join(command.split()[:3])
            return f"{self.tool}-{re.sub(r'[^A-Za-z0-9_.-]', '', words)}"  # (a test id)
        return self.tool


def _same_everywhere(value: Any, workspace: str) -> Any:
    if isinstance(value, str):
        return value.replace(workspace, WORKSPACE)
    if isinstance(value, list):
        return [_same_everywhere(v, workspace) for v in value]
    if isinstance(value, dict):
        return {k: _same_everywhere(v, workspace) for k, v in value.items()}
    return value


async def _play(workspace: Path) -> list[DemoAsk]:
    model = ScriptedModel(load_scenario(DEMO_SCENARIO, variables={"python": PYTHON}), speed=0)
    session = Session(BuiltinRunner(model, cwd=workspace), TaskState(task="demo"))
    asks: list[DemoAsk] = []
    stream = session.events()

    async def answer() -> None:
        async for event in stream:
            if event.type == "approval_requested":
                root = str(workspace)
                asks.append(DemoAsk(event.approval_id, event.tool,
                                    _same_everywhere(dict(event.tool_input), root), event.tier,
                                    _same_everywhere(event.reason, root)))
                session.resolve_approval(event.approval_id, allow=event.tier < 4)

    answering = asyncio.create_task(answer())
    await asyncio.wait_for(session.run(), 60)
    await answering
    return asks


_ASKS: list[DemoAsk] = []


def demo_asks() -> list[DemoAsk]:
    """The demo's requests in order (played once per test process)."""
    if not _ASKS:
        with tempfile.TemporaryDirectory(prefix="cockpit-demo-asks-") as parent:
            _ASKS.extend(asyncio.run(_play(make_workspace(parent))))
    return list(_ASKS)
