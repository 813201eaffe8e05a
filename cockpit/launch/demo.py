"""The demo's sessions: the built-in engine and its offline scripted model in a fresh copy of the
sample project, playing "fix the failing test" (real tool calls that ask for approval) and a
short follow-up for any later task."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cockpit.launch.factory import RunOptions, SessionFactory, SetupError, make_sandbox
from engine_adapter import Session
from engine_adapter.engines.builtin import (
    demo_runner,
    demo_task,
    make_workspace,
    release_workspace,
)
from engine_adapter.engines.builtin.demo import DEMO_SCENARIO, FOLLOWUP_SCENARIO

__all__ = ["demo_factory", "forget_demo_grants", "start_demo"]


def demo_factory(*, speed: float = 1.0, options: RunOptions = RunOptions(),
                 workspace: str | Path | None = None) -> SessionFactory:
    """The demo's sessions: the sample project copied into a fresh temporary directory (or
    `workspace`, used as it is), the built-in engine playing "fix the failing test" for the first
    task and a short follow-up script for any later one (of this conversation or a new one
    after `/clear`: the workspace is fixed by then). `speed` scales the pacing (0: none)."""
    if speed < 0:
        raise SetupError("--speed must be 0 (no pauses) or more")
    root = Path(workspace) if workspace is not None else make_workspace()
    sandbox = make_sandbox(options, root)

    made: list[int] = []  # the script plays once: a new conversation (`/clear`) follows up

    def make_runner(task: str, index: int) -> Any:
        runner = demo_runner(root, speed=speed, sandbox=sandbox,
                             scenario=FOLLOWUP_SCENARIO if made else DEMO_SCENARIO)
        made.append(index)
        return runner

    return SessionFactory(make_runner, cwd=root, options=options, sandbox=sandbox)


def start_demo(*, speed: float = 1.0,
               options: RunOptions = RunOptions()) -> tuple[SessionFactory, Session]:
    """The demo's factory (for later tasks) and its first Session, ready to run, in a fresh
    workspace (`session.state.cwd`) — removed again if the Session cannot be made."""
    factory = demo_factory(speed=speed, options=options)
    try:
        return factory, factory(demo_task())
    except BaseException:
        release_workspace(factory.cwd)
        raise


def forget_demo_grants(factory: SessionFactory) -> bool:
    """Remove the project grants saved for the demo's throw-away workspace, as it is removed:
    no later project can be that folder, so they would only pile up in `projects/`. True when
    a file was removed. The user's own grants (every project) are kept."""
    store = factory.grant_store
    path = store.path("project") if store is not None else None
    if path is None or store is None or store.project != os.path.realpath(factory.cwd):
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError:
        return False  # unreadable or read-only: it stays, as any other saved file
    return True
