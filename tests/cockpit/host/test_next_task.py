"""The next task from an attached client (`turn`): the live cockpit over a host's run sends
it once the task has ended, the host starts it as the embedded cockpit does (the
conversation's next Session: same run id, its own journal), every client can follow it; the
host refuses one while a task runs, or an empty one, with a line that says why. And a run that
ended is let go of after `--keep-ended` seconds: still listed, still followed, from its
journal."""

from __future__ import annotations

import pytest
from support.event_loop import run as run_loop
from support.host import detach_demo, follow, until
from support.live_app import next_task
from support.pilot import until_shown

from cockpit.cli.attach import attached_app
from cockpit.host import HostClient, HostError
from engine_adapter import read_journal


def _cancel(home, run: str) -> None:
    with HostClient.connect(home.socket) as client:
        until(follow(client, run), lambda e: e["type"] == "approval_requested")
        client.request("cancel", run=run)
    with HostClient.connect(home.socket) as client:
        list(follow(client, run))  # to its end


async def _test_the_attached_cockpit_sends_the_next_task_to_the_host(host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    app = attached_app(run, arm_seconds=0)
    assert app.next_session is not None  # the next-task box is offered
    async with app.run_test(size=(120, 40)) as pilot:
        await until_shown(pilot, lambda: app.session.history
                          and app.session.history[-1].type == "approval_requested")
        with pytest.raises(HostError, match="still on its task"):  # not while it runs
            await app.session.next_task("too soon")
        await pilot.press("escape", "escape")  # cancel the first task
        second = await next_task(app, pilot, "now add a test for median()")
        await until_shown(pilot, lambda: any(e.type == "agent_start" for e in second.history))
        start = next(e for e in second.history if e.type == "agent_start")
        assert start.task == "now add a test for median()"
        assert second.session_id == run
    with HostClient.connect(host_home.socket) as client:
        described = client.request("describe", run=run)
        assert described["tasks"] == 2 and described["run"]["status"] == "running"
        # Another client follows either task by its number.
        first = list(follow(client, run, task=1))
        assert first[-1]["type"] == "agent_end" and first[-1]["status"] == "cancelled"
    journal = described["run"]["journal"]
    assert journal.endswith(f"{run}-2.jsonl")
    assert next(read_journal(journal)).task == "now add a test for median()"


def test_the_attached_cockpit_sends_the_next_task_to_the_host(host_home) -> None:
    run_loop(_test_the_attached_cockpit_sends_the_next_task_to_the_host(host_home))


def test_an_empty_next_task_is_refused(host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    _cancel(host_home, run)
    with HostClient.connect(host_home.socket) as client:
        for text in ("", "   ", "\n\t"):
            with pytest.raises(HostError, match="empty"):
                client.request("turn", run=run, task=text)
        with pytest.raises(HostError, match="no run"):
            client.request("turn", run="nosuchrun", task="x")


def _let_go(home, run: str) -> dict:
    """The run's fleet row once the host has let go of its events (as `watch` pushes it)."""
    with HostClient.connect(home.socket) as client:
        client.send({"op": "watch", "id": "w"})
        while True:
            message = client.read()
            rows = [row for row in message.get("fleet", []) if row["id"] == run]
            if rows and not rows[0]["held"]:
                return rows[0]


def test_an_ended_run_is_let_go_and_followed_from_its_journal(host_home) -> None:
    host_home.start("--keep-ended", "0")
    run = detach_demo(host_home)
    live = []
    with HostClient.connect(host_home.socket) as watcher, \
            HostClient.connect(host_home.socket) as control:
        for event in follow(watcher, run):
            live.append(event)
            if event["type"] == "approval_requested":
                control.request("cancel", run=run)
    row = _let_go(host_home, run)
    assert row["status"] == "cancelled" and row["tokens"] > 0 and row["asks"] == []
    with HostClient.connect(host_home.socket) as client:
        [listed] = client.request("ps")["runs"]
        assert listed["id"] == run and listed["status"] == "cancelled"
        replayed = list(follow(client, run))  # from the journal now
        with pytest.raises(HostError, match="the host let it go"):
            client.request("turn", run=run, task="more")
    assert replayed == live  # the same events, none lost, none doubled
