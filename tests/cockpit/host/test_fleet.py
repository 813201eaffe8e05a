"""The fleet view (`cockpit attach` with no run) over a real host process on its real socket:
every run with its host, the `needs you` inbox of their asks oldest first, answers from the
inbox that close the ask in the host (so in every client), enter choosing the run to open, and
a host that cannot be reached shown as such, not hidden."""

from __future__ import annotations

import asyncio

from support.event_loop import run as run_loop
from support.fleet import screen_text, select_ask
from support.host import detach_demo, follow, until
from support.pilot import until_shown

from cockpit.host import HostClient
from cockpit.host.fleet.fleet_app import INBOX_TITLE, FleetApp, FleetChoice
from cockpit.host.fleet.watch import NO_HOST, HostWatch


def _resolved(home, run: str, approval_id: str) -> dict:
    """The run's `approval_resolved` for `approval_id`, as another client of the host sees it."""
    with HostClient.connect(home.socket) as client:
        return until(follow(client, run), lambda e: e["type"] == "approval_resolved"
                     and e["approval_id"] == approval_id)


async def _test_the_inbox_answers_in_the_host_and_enter_chooses_the_run(host_home) -> None:
    host_home.start()
    first = detach_demo(host_home)
    second = detach_demo(host_home)
    app = FleetApp([HostWatch("local", path=host_home.socket),
                    HostWatch("far", via="false")], arm_seconds=0, remember_theme=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until_shown(pilot, lambda: len(app.board.inbox) == 2 and app.board.unreachable)
        inbox = app.board.inbox
        assert [ask.asked for ask in inbox] == sorted(ask.asked for ask in inbox)
        assert {ask.run for ask in inbox} == {first, second}
        assert {run.id for run in app.board.runs} == {first, second}
        assert all(run.host == "local" and run.status == "running" for run in app.board.runs)
        [(far, why)] = app.board.unreachable
        assert far == "far" and why.startswith("unreachable: ")
        await until_shown(pilot, lambda: f"local:{inbox[0].run}" in screen_text(app))
        text = screen_text(app)
        assert f"{INBOX_TITLE} (2)" in text and "far unreachable since " in text
        assert "retrying in " in text or "trying again" in text
        assert "-m unittest" in text
        # y allows the oldest ask in its host; the inbox drops it when the host says so.
        oldest = inbox[0]
        await pilot.press("y")
        await until_shown(pilot, lambda: oldest.key not in {a.key for a in app.board.inbox})
        resolved = await asyncio.to_thread(_resolved, host_home, oldest.run, oldest.id)
        assert (resolved["allowed"], resolved["via"]) == (True, "human")
        # n asks why (escape goes back: nothing denied), then denies the other run's ask with
        # what was typed; its letters never reach the inbox (`a`, `y` answer there).
        other = next(a for a in app.board.inbox if a.run != oldest.run)
        await select_ask(pilot, app, other.key)
        await pilot.press("n")
        await until_shown(pilot, lambda: type(app.screen).__name__ == "DenyReasonScreen")
        await pilot.press("escape")
        await until_shown(pilot, lambda: type(app.screen).__name__ != "DenyReasonScreen")
        assert other.key in {a.key for a in app.board.inbox}
        await pilot.press("n")
        await until_shown(pilot, lambda: type(app.screen).__name__ == "DenyReasonScreen")
        assert f"deny local:{other.run} · shell: " in screen_text(app)  # which run's ask
        await pilot.press(*"say yes, and ask again", "enter")
        resolved = await asyncio.to_thread(_resolved, host_home, other.run, other.id)
        assert (resolved["allowed"], resolved["via"]) == (False, "human")
        assert resolved["reason"] == "say yes, and ask again"
        await until_shown(pilot, lambda: other.key not in {a.key for a in app.board.inbox})
        # enter opens the selected run: the app leaves with it (the command line opens it).
        app.query_one("#runs").focus()
        await pilot.press("enter")
        await until_shown(pilot, lambda: app.return_value is not None)
    assert isinstance(app.return_value, FleetChoice)
    assert app.return_value.host == "local" and app.return_value.run in {first, second}


def test_the_inbox_answers_in_the_host_and_enter_chooses_the_run(host_home) -> None:
    run_loop(_test_the_inbox_answers_in_the_host_and_enter_chooses_the_run(host_home))


async def _test_an_answer_in_another_client_closes_the_ask_in_the_fleet(host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    app = FleetApp([HostWatch("local", path=host_home.socket)], arm_seconds=0,
                   remember_theme=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until_shown(pilot, lambda: len(app.board.inbox) == 1)
        [ask] = app.board.inbox
        [watch] = app.watches
        sent: list[str] = []
        send = watch.send
        watch.send = lambda kind, **fields: sent.append(kind) or send(kind, **fields)  # type: ignore[method-assign]
        # n: a reason is being typed here while another client answers.
        await pilot.press("n")
        await until_shown(pilot, lambda: type(app.screen).__name__ == "DenyReasonScreen")
        await pilot.press(*"too late")
        with HostClient.connect(host_home.socket) as client:  # another client answers
            client.request("resolve_approval", run=run, approval_id=ask.id, allow=True)
        await until_shown(pilot, lambda: ask.key not in {a.key for a in app.board.inbox})
        await pilot.press("enter")  # the denial is not sent: the call was answered
        await until_shown(pilot, lambda: type(app.screen).__name__ != "DenyReasonScreen")
        assert "resolve_approval" not in sent
        # The key meant for it answers nothing else: the next ask is armed anew when drawn.
        assert app.arming.target().approval_id != ask.key


def test_an_answer_in_another_client_closes_the_ask_in_the_fleet(host_home) -> None:
    run_loop(_test_an_answer_in_another_client_closes_the_ask_in_the_fleet(host_home))


async def _test_no_host_is_said_and_runs_appear_when_one_starts(host_home) -> None:
    app = FleetApp([HostWatch("local", path=host_home.socket)], arm_seconds=0,
                   remember_theme=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until_shown(pilot, lambda: app.board.unreachable == [("local", NO_HOST)])
        await until_shown(pilot, lambda: "no host running" in screen_text(app))
        assert "nothing waiting" in screen_text(app)
        await asyncio.to_thread(host_home.start)
        run = await asyncio.to_thread(detach_demo, host_home)
        await until_shown(pilot, lambda: [r.id for r in app.board.runs] == [run])
        assert not app.board.unreachable


def test_no_host_is_said_and_runs_appear_when_one_starts(host_home) -> None:
    run_loop(_test_no_host_is_said_and_runs_appear_when_one_starts(host_home))
