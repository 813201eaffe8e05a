"""Keys first: once a key's action has run, what the stream brought meanwhile is delivered onto
the key's own frame, and the stream's next deliveries wait for the next key (at most
`KEY_SECONDS`), so no key's frame waits behind a frame drawn for the stream."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run
from support.live_app import hold, make_app, settle, turn

import cockpit.live.pump
from cockpit.live.pump import FramePump
from engine_adapter import ModelUpdate, TurnEnd, TurnStart
from engine_adapter.view import ChangeSet, RunFold


def _events(first: int, n: int) -> list:
    events = [ModelUpdate(turn=1, text=f"t{i} ") for i in range(first, first + n)]
    for offset, event in enumerate(events):
        object.__setattr__(event, "seq", first + offset)
    return events


def _pump(history: list, delivered, interval: float = 0.0) -> FramePump:
    """A pump over `history` that calls `delivered(changes)` on each delivery."""
    pump = FramePump(RunFold(), lambda view, changes: delivered(changes), interval=interval,
                     freeze_every=None)
    pump.attach(history)
    return pump


async def _turns(n: int = 50) -> None:
    """Let the loop run `n` times (timed deliveries at `interval=0` would all have come)."""
    for _ in range(n):
        await asyncio.sleep(0)


def test_an_answered_key_delivers_what_waited_and_the_stream_waits_for_the_next_key(
        monkeypatch):
    monkeypatch.setattr(cockpit.live.pump, "KEY_SECONDS", 60.0)

    async def main():
        start = TurnStart(turn=1)
        object.__setattr__(start, "seq", 0)
        history: list = [start]
        deliveries: list[ChangeSet] = []
        pump = _pump(history, deliveries.append)
        pump.hold()  # a key arrives
        history.extend(_events(1, 10))
        pump.request()
        await _turns()
        assert deliveries == []  # its action has not run yet
        pump.answered()  # it has: what waited joins its frame
        assert len(deliveries) == 1 and pump.fold.view.events == 11
        history.extend(_events(11, 10))
        pump.request()
        await _turns()
        assert len(deliveries) == 1  # the stream waits for the next key's frame
        pump.answered()
        assert len(deliveries) == 2 and pump.fold.view.events == 21
        pump.release()  # the end of a key's own hold does not end the wait for the next key
        history.extend(_events(21, 5))
        pump.request()
        await _turns()
        assert len(deliveries) == 2
        pump.answered()
        assert len(deliveries) == 3 and pump.fold.view.events == 26
    run(main())


def test_only_streamed_text_waits_for_the_next_key(monkeypatch):
    monkeypatch.setattr(cockpit.live.pump, "KEY_SECONDS", 60.0)

    async def main():
        history: list = _events(0, 3)
        deliveries: list[ChangeSet] = []
        pump = _pump(history, deliveries.append)
        pump.answered()
        history.extend(_events(3, 2))
        pump.request()
        await _turns()
        assert len(deliveries) == 1  # text waits for the next key
        end = TurnEnd(turn=1, stop_reason="tool_use")  # anything else: on the next frame
        object.__setattr__(end, "seq", 5)
        history.append(end)
        await _turns()
        assert len(deliveries) == 2 and pump.fold.view.events == 6
    run(main())


def test_the_wait_after_a_key_ends_by_itself(monkeypatch):
    monkeypatch.setattr(cockpit.live.pump, "KEY_SECONDS", 0.01)

    async def main():
        history: list = _events(0, 3)
        done = asyncio.Event()
        pump = _pump(history, lambda changes: done.set(), interval=0.001)
        pump.answered()  # no key follows
        assert done.is_set() and pump.fold.view.events == 3
        done.clear()
        history.extend(_events(3, 3))
        pump.request()
        await asyncio.wait_for(done.wait(), 10)
        assert pump.fold.view.events == 6
    run(main())


@pytest.mark.parametrize("key", ["up", "down"])
def test_a_key_through_the_app_draws_the_streams_changes_on_its_frame(monkeypatch, key):
    """The real key path: the key goes to the transcript, comes back to the app for its binding,
    and only then are the stream's changes delivered; between keys they wait."""
    monkeypatch.setattr(cockpit.live.pump, "KEY_SECONDS", 60.0)

    async def main():
        app = make_app(turn(1, "first words"), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            app.pump.interval = 0.0  # timed deliveries as soon as asked: only a hold stops them
            runner = app.session.runner
            await pilot.press(key)  # answered: the stream now waits for the next key
            before = app.view.events
            runner.emit(ModelUpdate(turn=1, text=" and more"))
            await _turns()
            await pilot.pause()
            assert app.view.events == before  # not delivered between keys
            await pilot.press(key)
            assert app.view.events == len(app.session.history)  # on this key's frame
            assert "and more" in app.view.items[-1].text
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())
