"""Helpers for the built-in engine's tests: run a few scripted steps through a real Session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin import BuiltinRunner, ScriptedModel, load_scenario


def scenario(steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A scenario dict from steps, with no pacing."""
    return {"name": "test", "model": "scripted-test", "task": "t",
            "pacing": {"think": 0, "chunk_delay": 0}, "step": steps, **extra}


def runner(workspace: Path, steps: list[dict[str, Any]], **engine: Any) -> BuiltinRunner:
    return BuiltinRunner(ScriptedModel(load_scenario(scenario(steps)), speed=0),
                         cwd=workspace, **engine)


def run_steps(workspace: Path, steps: list[dict[str, Any]], *, engine: dict | None = None,
              **session: Any) -> Session:
    """Run the steps unattended (asks denied, unless `auto_approve=True`); returns the Session."""
    session.setdefault("unattended", True)
    built = Session(runner(workspace, steps, **(engine or {})), TaskState(task="t"), **session)
    asyncio.run(asyncio.wait_for(built.run(), 30))
    return built


def of_type(session: Session, kind: str) -> list[Any]:
    return [e for e in session.history if e.type == kind]


def tool_ends(session: Session) -> list[Any]:
    return of_type(session, "tool_end")


def end(session: Session) -> Any:
    last = session.history[-1]
    assert last.type == "agent_end"
    return last
