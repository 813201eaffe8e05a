"""The frame pump folds as events come and delivers at most once a frame; the transcript stays
one widget however long the run."""

from __future__ import annotations

import asyncio

from support.event_loop import run
from support.live_app import hold, make_app, settle, turn

from cockpit.live.pump import FramePump
from cockpit.widgets import Transcript
from engine_adapter import ModelUpdate, ToolEnd, ToolStart, TurnStart
from engine_adapter.view import ITEMS, RUN, ChangeSet, RunFold


def _events(n: int) -> list:
    events = [TurnStart(turn=1)]
    events += [ModelUpdate(turn=1, text=f"t{i} ") for i in range(n)]
    for event_seq, event in enumerate(events):
        object.__setattr__(event, "seq", event_seq)
    return events


def test_change_set_collects_parts_and_items():
    changes = ChangeSet()
    assert not changes
    changes.add(ITEMS, 3)
    changes.add(RUN, -1)
    assert changes.parts == ITEMS | RUN and changes.items == {3}


def test_many_events_between_frames_are_one_delivery():
    async def main():
        history: list = []
        deliveries: list[ChangeSet] = []
        pump = FramePump(RunFold(), lambda view, changes: deliveries.append(changes),
                         interval=0.01, freeze_every=None)
        pump.attach(history)
        done = asyncio.Event()

        async def stream():
            for event in _events(500):
                history.append(event)
                yield event
            done.set()

        await pump.follow(stream())
        assert done.is_set()
        assert len(deliveries) == 1  # 501 events, one frame
        assert deliveries[0].items == {0}
        assert pump.fold.view.items[0].text.startswith("t0 t1 ")
    run(main())


def test_flush_delivers_at_once_and_nothing_twice():
    history = _events(3)
    deliveries: list[ChangeSet] = []
    pump = FramePump(RunFold(), lambda view, changes: deliveries.append(changes),
                     freeze_every=None)
    pump.attach(history)
    pump.flush()
    pump.flush()
    assert len(deliveries) == 1 and pump.fold.view.events == 4


def test_the_transcript_is_one_widget_however_many_items():
    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            before = len(list(app.query("*")))
            for i in range(2_000):
                app.session.emit(ToolStart(call_id=f"c{i}", tool="read_file",
                                           tool_input={"path": f"f{i}.py"}, tier=1))
                app.session.emit(ToolEnd(call_id=f"c{i}", tool="read_file", ok=True,
                                         output="x\ny\nz\nw", duration_ms=1.0))
            await settle(pilot, lambda: len(app.view.items) > 2_000)
            transcript = app.query_one(Transcript)
            await settle(pilot, lambda: transcript.item_count == len(app.view.items))
            assert len(list(app.query("*"))) == before  # rows are lines, not widgets
            # Off-screen rows may carry an estimated height until drawn; never less than one.
            assert transcript.virtual_size.height >= len(app.view.items)
            assert transcript.follow and transcript.scroll_y == transcript.max_scroll_y
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_a_flush_a_key_asks_for_never_waits_for_a_garbage_collection(monkeypatch):
    import cockpit.live.pump

    calls: list[str] = []

    class Recorder:
        def collect(self) -> int:
            calls.append("collect")
            return 0

        def freeze(self) -> None:
            calls.append("freeze")
            frozen.set()

    frozen = asyncio.Event()

    monkeypatch.setattr(cockpit.live.pump, "gc", Recorder())

    async def main():
        history: list = []
        pump = FramePump(RunFold(), lambda view, changes: None, interval=0.001, freeze_every=10)
        pump.attach(history)  # (freezes what exists)
        calls.clear()
        frozen.clear()
        history.extend(_events(30))
        pump.flush()  # what a key does: its answer is drawn first
        assert calls == []
        history.extend(_events(30)[1:])
        pump.request()  # the next frame's delivery collects and freezes
        await asyncio.wait_for(frozen.wait(), 30)
        assert calls == ["collect", "freeze"]
    run(main())
