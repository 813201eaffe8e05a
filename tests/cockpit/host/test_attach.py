"""`cockpit attach`: the live cockpit over a host's run (a `RemoteSession` on the real socket of
a real host process): its keys answer in the host, another client sees the answer, `ctrl+q`
detaches without stopping the run, a re-attach shows the whole run, and a client whose host is
killed and started again picks up from its cursor."""

from __future__ import annotations

import asyncio

from support.event_loop import run as run_loop
from support.host import detach_demo
from support.live_app import answerable, pending
from support.pilot import until_shown

from cockpit.cli.attach import attached_app
from cockpit.host import HostClient
from cockpit.host.remote import RemoteSession


def _describe(home, run: str) -> dict:
    with HostClient.connect(home.socket) as client:
        return client.request("describe", run=run)


def _status(home, run: str) -> str:
    with HostClient.connect(home.socket) as client:
        [row] = [r for r in client.request("ps")["runs"] if r["id"] == run]
    return row["status"]


async def _test_an_attached_cockpit_answers_in_the_host_and_another_client_sees_it(
        host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    other = RemoteSession(run, _describe(host_home, run), path=host_home.socket)
    watching = asyncio.ensure_future(other.run())
    app = attached_app(run[:6], arm_seconds=0)  # a prefix names the run as ps shows it
    async with app.run_test() as pilot:
        await until_shown(pilot, lambda: answerable(app))
        [asked] = pending(app)
        await pilot.press("y")

        def answered() -> bool:
            return any(e.type == "approval_resolved" and e.approval_id == asked
                       for e in other.history)

        await until_shown(pilot, answered)
        resolved = next(e for e in other.history if e.type == "approval_resolved")
        assert (resolved.allowed, resolved.via) == (True, "human")
        await until_shown(pilot, lambda: asked not in pending(app))
        # ctrl+q offers to detach; detaching leaves the run going in the host.
        await pilot.press("ctrl+q")
        await until_shown(pilot, lambda: type(app.screen).__name__ == "DetachScreen")
        await pilot.press("d")
    assert not app.session.done
    assert _status(host_home, run) == "running"
    seen = len(app.session.history)
    # Attached again: the whole run from its first event, none twice, none missing.
    again = attached_app(run, arm_seconds=0)
    async with again.run_test() as pilot:
        await until_shown(pilot, lambda: len(again.session.history) >= seen)
        assert [e.seq for e in again.session.history] == list(range(len(again.session.history)))
        assert [e.model_dump() for e in again.session.history[:seen]] == \
            [e.model_dump() for e in app.session.history[:seen]]
        # escape escape still cancels the run; every client sees it end.
        await pilot.press("escape")
        await pilot.press("escape")
        await until_shown(pilot, lambda: again.session.done)
    state = await asyncio.wait_for(watching, 60)
    assert state.status == "cancelled" and other.history[-1].type == "agent_end"
    assert [e.seq for e in other.history] == list(range(len(other.history)))
    assert _status(host_home, run) == "cancelled"


async def _test_ctrl_q_can_cancel_the_run_instead(host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    app = attached_app(run, arm_seconds=0)
    async with app.run_test() as pilot:
        await until_shown(pilot, lambda: answerable(app))
        await pilot.press("ctrl+q")
        await until_shown(pilot, lambda: type(app.screen).__name__ == "DetachScreen")
        await pilot.press("c")
        await until_shown(pilot, lambda: app.session.done)
    assert app.session.state.status == "cancelled"
    assert _status(host_home, run) == "cancelled"


async def _test_a_client_whose_host_is_killed_picks_up_from_its_cursor_when_it_is_back(
        host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    client = RemoteSession(run, _describe(host_home, run), path=host_home.socket)
    following = asyncio.ensure_future(client.run())
    stream = client.events()
    async for event in stream:
        if event.type == "approval_requested":
            break
    before = len(client.history)
    await asyncio.to_thread(host_home.kill9)
    await asyncio.to_thread(host_home.start)  # the next host ends the journal: the host died
    state = await asyncio.wait_for(following, 60)
    history = client.history
    assert [e.seq for e in history] == list(range(len(history)))  # nothing lost or doubled
    assert len(history) >= before + 1
    assert history[-1].type == "agent_end" and history[-1].error == "the host died"
    assert state.status == "failed"


def test_an_attached_cockpit_answers_in_the_host_and_another_client_sees_it(host_home) -> None:
    run_loop(_test_an_attached_cockpit_answers_in_the_host_and_another_client_sees_it(host_home))


def test_ctrl_q_can_cancel_the_run_instead(host_home) -> None:
    run_loop(_test_ctrl_q_can_cancel_the_run_instead(host_home))


def test_a_client_whose_host_is_killed_picks_up_from_its_cursor_when_it_is_back(host_home) -> None:
    run_loop(_test_a_client_whose_host_is_killed_picks_up_from_its_cursor_when_it_is_back(host_home))
