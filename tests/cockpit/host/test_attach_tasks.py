"""`cockpit attach RUN` on a run of several tasks, and the next task from an attached client,
over a real host process's real socket: every task of the run is shown (the earlier ones'
transcripts first, as the embedded cockpit shows its conversation), and while the host is
asked for the next task the client's loop goes on answering keys (the host may be slow, or
behind ssh): the host is stopped (SIGSTOP) meanwhile, and the app answers anyway."""

from __future__ import annotations

import contextlib
import os
import signal

from support.event_loop import run as run_loop
from support.host import detach_demo, follow, until
from support.pilot import until_shown

from cockpit.cli.attach import attached_app
from cockpit.host import HostClient

NEXT = "now add a test for median()"


def _two_tasks(home) -> tuple[str, str]:
    """A detached demo whose first task was cancelled at its first ask and whose second task
    (`NEXT`, started over the wire) now waits on its own first ask; its id and first task."""
    run = detach_demo(home)
    with HostClient.connect(home.socket) as client:
        until(follow(client, run), lambda e: e["type"] == "approval_requested")
        client.request("cancel", run=run)
    with HostClient.connect(home.socket) as client:
        first = list(follow(client, run))  # to its end
        assert first[-1]["type"] == "agent_end" and first[-1]["status"] == "cancelled"
        assert client.request("turn", run=run, task=NEXT)["task"] == 2
        until(follow(client, run, task=2), lambda e: e["type"] == "approval_requested")
    return run, first[0]["task"]


async def _test_attach_shows_every_task_of_the_run(host_home) -> None:
    host_home.start()
    run, first_task = _two_tasks(host_home)
    app = attached_app(run, arm_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_shown(pilot, lambda: app.view.task_index == 2 and bool(app.view.pending))
        earlier, current = app.sessions
        assert [e.type for e in earlier.history][-1] == "agent_end"
        assert earlier.state.status == "cancelled" and not current.done
        # Both tasks' events are folded, the earlier one's first, each exactly once.
        assert app.view.events == len(earlier.history) + len(current.history)
        tasks = [item.task for item in app.view.items]
        assert tasks == sorted(tasks) and set(tasks) == {1, 2}
        # The earlier task's transcript is there, not only its heading: its cancelled ask
        # and its end, before the second task's items.
        first_kinds = {item.kind for item in app.view.items if item.task == 1}
        assert "task" in first_kinds and len(first_kinds) > 2, first_kinds
        assert app.view.task == NEXT and first_task != NEXT
        app.session.detach()


def test_attach_shows_every_task_of_the_run(host_home) -> None:
    run_loop(_test_attach_shows_every_task_of_the_run(host_home))


async def _test_keys_are_answered_while_the_host_is_asked_for_the_next_task(
        host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    pid = host_home.host_pid()
    assert pid is not None
    app = attached_app(run, arm_seconds=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_shown(pilot, lambda: bool(app.view.pending))
        await pilot.press("escape", "escape")  # the first task ends, cancelled
        await until_shown(pilot, lambda: app.session.done
                          and app.query_one("#next-task").display)
        box = app.query_one("#next-task")
        box.focus()
        box.value = NEXT
        os.kill(pid, signal.SIGSTOP)  # the host answers nothing from now on
        try:
            await pilot.press("enter")
            await until_shown(pilot, lambda: app._next_starting)
            # The host is being asked (and cannot answer): the app still takes keys.
            await pilot.press(*"and docs")
            assert box.value == "and docs"
            assert app._next_starting and len(app.sessions) == 1
            await pilot.press("enter")  # a second next task is refused, and said so
            await until_shown(pilot, lambda: any(
                "being started" in str(n.message) for n in app._notifications))
        finally:
            os.kill(pid, signal.SIGCONT)
        await until_shown(pilot, lambda: len(app.sessions) == 2
                          and any(e.type == "agent_start" for e in app.session.history))
        start = next(e for e in app.session.history if e.type == "agent_start")
        assert start.task == NEXT and app.session.session_id == run
        assert not app._next_starting
        app.session.detach()


def test_keys_are_answered_while_the_host_is_asked_for_the_next_task(host_home) -> None:
    try:
        run_loop(_test_keys_are_answered_while_the_host_is_asked_for_the_next_task(
            host_home))
    finally:  # (a stopped host would never stop: let it go on before the teardown asks)
        pid = host_home.host_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
