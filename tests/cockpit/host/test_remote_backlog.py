"""Attaching to a long run (`RemoteSession`): the events the run had when the follow began (the
host says how many) wake the app at once for the first of them, so its first frame shows the
run, then at most every `CATCH_UP_SECONDS`, and at once for the last; every event reaches a
stream once, in order (nothing lost or doubled), and the history the app folds is the
whole run's; what comes after the backlog wakes the app event by event, as before."""

from __future__ import annotations

import asyncio

from support.event_loop import run as run_loop
from support.host import detach_demo, follow, until

from cockpit.host import HostClient, remote
from cockpit.host.remote import RemoteSession
from cockpit.host.wire import encode
from engine_adapter import AgentStart, ModelUpdate, TurnStart


def _events(count: int) -> list:
    made = [AgentStart(task="long", engine="bench", model=None, cwd=None), TurnStart(turn=1)]
    made += [ModelUpdate(turn=1, text=f"word {n} ", channel="message")
             for n in range(count - len(made))]
    return [event.model_copy(update={"seq": seq, "ts": 1_790_000_000.0 + seq})
            for seq, event in enumerate(made)]


def _line(event) -> bytes:
    return b'{"event":' + event.model_dump_json().encode() + b"}\n"


async def _test_a_backlog_wakes_the_app_for_its_first_and_last_events(monkeypatch) -> None:
    monkeypatch.setattr(remote, "CATCH_UP_SECONDS", 3600.0)  # (no clock: one read, one turn)
    session = RemoteSession("r1", {"run": {"id": "r1", "task": "long"}})
    events = _events(3_000)
    backlog, later = events[:2_500], events[2_500:]
    wakes: list[int] = []  # how many events had arrived at each wake-up
    wake = session._wake
    monkeypatch.setattr(session, "_wake", lambda: (wakes.append(len(session.history)), wake()))
    seen: list[int] = []

    async def follow() -> None:
        async for event in session.events():
            seen.append(event.seq)

    following = asyncio.ensure_future(follow())
    await asyncio.sleep(0)
    session._handle(encode({"id": "follow", "ok": True, "events": len(backlog)}))
    for event in backlog:
        session._handle(_line(event))
    assert wakes == [1, len(backlog)]  # its first event, and its last
    for event in later:  # (past the backlog: a wake-up an event, as a live run's)
        session._handle(_line(event))
    assert wakes[2:] == list(range(len(backlog) + 1, len(events) + 1))
    session._handle(_line(events[10]))  # a doubled line changes nothing
    session._closed = True
    session._wake()
    await following
    assert seen == list(range(len(events)))
    assert list(session.history) == events  # (what the app folds: the whole run, once)


def test_a_backlog_wakes_the_app_for_its_first_and_last_events(monkeypatch) -> None:
    run_loop(_test_a_backlog_wakes_the_app_for_its_first_and_last_events(monkeypatch))


async def _test_a_host_that_says_no_backlog_wakes_the_app_event_by_event(monkeypatch) -> None:
    monkeypatch.setattr(remote, "CATCH_UP_SECONDS", 3600.0)
    session = RemoteSession("r1", {"run": {"id": "r1", "task": "long"}})
    wakes: list[int] = []
    wake = session._wake
    monkeypatch.setattr(session, "_wake", lambda: (wakes.append(len(session.history)), wake()))
    session._handle(encode({"id": "follow", "ok": True}))  # (a host older than `events`)
    for event in _events(50):
        session._handle(_line(event))
    assert wakes == list(range(1, 51))


def test_a_host_that_says_no_backlog_wakes_the_app_event_by_event(monkeypatch) -> None:
    run_loop(_test_a_host_that_says_no_backlog_wakes_the_app_event_by_event(monkeypatch))


def test_the_host_says_how_many_events_a_follow_begins_behind(host_home) -> None:
    host_home.start()
    run = detach_demo(host_home)
    with HostClient.connect(host_home.socket) as client:  # (the demo waits at its ask)
        until(follow(client, run), lambda e: e["type"] == "approval_requested")
    with HostClient.connect(host_home.socket) as client:
        client.send({"op": "follow", "id": "f", "run": run, "cursor": 0})
        reply = client.read()
        assert reply["id"] == "f" and reply["ok"]
        backlog = reply["events"]
        seqs = [client.read()["event"]["seq"] for _ in range(backlog)]
    assert backlog > 0 and seqs == list(range(backlog))
