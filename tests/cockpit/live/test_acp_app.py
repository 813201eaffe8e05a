"""The live cockpit over the SDK test agent, headless: it shows streamed text and tool calls, a
permission prompt is answered by key, a grant is honoured by the next task in the same ACP
session, and escape twice cancels, leaving no process behind (what the ACP issue's "done when"
asked for)."""

from __future__ import annotations

import asyncio
import shlex

from fakes.acp_agent.helpers import agent_argv, agent_log, group_gone, wait_exited
from support.live_app import answerable, next_task, until_event
from support.pilot import until_shown
from textual import events

from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp

ASK = "permission allow_once,allow_always,reject_once,reject_always git status"


def test_live_cockpit_drives_the_acp_agent_by_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"  # the agent runs in the sandbox: it writes only here
    factory = agent_factory(shlex.join(agent_argv("--log", log)), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    first = factory(ASK)
    runner = first.runner

    async def main() -> int:
        app = CockpitApp(first, theme="cockpit-dark", next_session=factory,
                         remember_theme=False, clock=None, arm_seconds=0.0)
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(first, "approval_requested")
            await until_shown(pilot, lambda: answerable(app))
            await pilot.press("a", "s")  # allow, and grant `git status` for the session
            await until_event(first, "agent_end")
            assert first.state.status == "completed"
            assert app.view.grants[0].prefix == "git status"
            # The next task goes to the same agent and ACP session; the grant answers it.
            second = await next_task(app, pilot, ASK)
            await until_event(second, "agent_end")
            assert [e.via for e in second.history if e.type == "approval_resolved"] == ["grant"]
            assert second.state.result == "selected allow_once"
            # Streamed text, then escape twice cancels.
            third = await next_task(app, pilot, "slow 100000 0.01")
            stream = third.events()
            await until_event(third, "model_update", stream)
            await until_shown(pilot, lambda: app.view.live)
            # Two escapes straight into the app's queue: `pilot.press` waits for the app to be
            # idle between keys, which a streaming run may not be for the two-second window.
            app.post_message(events.Key("escape", None))
            app.post_message(events.Key("escape", None))
            await until_event(third, "agent_end", stream)
            assert third.state.status == "cancelled"
            assert any(item.kind == "message" for item in app.view.items)
            pid = runner.connection.process.pid
            await pilot.press("ctrl+q")  # quitting closes the agent (the factory's aclose)
            assert runner.connection.process is None
        return pid

    pid = asyncio.run(main())
    assert wait_exited(pid) and group_gone(pid)
    assert agent_log(log)[-1]["event"] == "stdin closed"  # it exited on its own, not killed
    prompts = [e for e in agent_log(log) if e["event"] == "prompt"]
    assert [p["count"] for p in prompts] == [1, 2, 3]  # one agent, one ACP session
    assert "cancel" in [e["event"] for e in agent_log(log)]


def test_an_agent_slow_to_start_shows_the_task_and_starting_at_once(tmp_path, monkeypatch):
    """Issue 26 §4: an agent slow to answer `initialize` showed nothing for up to a minute.
    The agent here waits for a file before it even starts (so nothing of the run has arrived):
    the status line says `starting agent …` with the time waited, and the task, at once."""
    import os
    import sys
    import time

    from cockpit.widgets.panels import StatusLine
    from engine_adapter import Session, TaskState
    from engine_adapter.engines.acp import AcpRunner

    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    go = tmp_path / "go"
    wait_then_start = ("import os, sys, time\n"
                       f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
                       "os.execv(sys.argv[1], sys.argv[1:])\n")
    argv = [sys.executable, "-c", wait_then_start, *agent_argv("--log", tmp_path / "a.jsonl")]
    runner = AcpRunner(argv, cwd=tmp_path)
    session = Session(runner, TaskState(task="fix the parser", cwd=str(tmp_path)))

    def status(app) -> str:
        return str(app.query_one(StatusLine).render())

    async def main() -> None:
        app = CockpitApp(session, theme="cockpit-dark", remember_theme=False,
                         clock=time.time, arm_seconds=0.0)
        async with app.run_test(size=(120, 30), headless=True) as pilot:
            await until_shown(pilot, lambda: "starting agent …" in status(app))
            line = status(app)
            assert "fix the parser" in line and "00:0" in line  # the task, the time waited
            # The agent has not started: only the run's start has arrived (and is journaled),
            # and once it is folded the status line still says the agent is starting.
            assert [e.type for e in session.history] == ["agent_start"]
            await until_shown(pilot, lambda: app.view.task_index == 1)
            assert app.view.starting and "starting agent …" in status(app)
            go.touch()
            await until_event(session, "agent_end")
            await until_shown(pilot, lambda: "starting agent" not in status(app))
            assert session.state.status == "completed", session.state.error
            assert "fix the parser" in status(app)
            await runner.close()
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert os.path.exists(go)
