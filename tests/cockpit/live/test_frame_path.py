"""The live frame path draws only what changed, and never less: a streaming reply repaints only
its changed rows yet always shows all of it; a selection move repaints two items; the key hints
are rebuilt only when the keys that apply change; the pump holds the stream back while a key is
answered, and drops nothing."""

from __future__ import annotations

import asyncio

from support.event_loop import run
from support.live_app import hold, make_app, settle, turn
from textual.geometry import Region
from textual.strip import Strip

from cockpit.live.pump import FramePump
from cockpit.widgets import KeyHints, Transcript, scroll_panel_target
from cockpit.widgets.transcript.rows import changed_rows
from engine_adapter import ModelUpdate, QuestionField, ToolEnd, ToolStart, TurnEnd, TurnStart
from engine_adapter.context import RunContext
from engine_adapter.view import ChangeSet, RunFold


def _drawn(transcript: Transcript) -> list[str]:
    """The transcript's rows as the screen would show them now: rows not repainted since the
    last frame come from its line cache, as they do on screen."""
    size = transcript.size
    return [strip.text for strip in transcript.render_lines(Region(0, 0, size.width,
                                                                   size.height))]


def _fresh(transcript: Transcript) -> list[str]:
    """The same rows drawn anew."""
    transcript.refresh()
    return _drawn(transcript)


def test_a_streaming_reply_repaints_only_its_changed_rows_and_shows_all_of_it():
    words = [f"word{i}" for i in range(400)]  # one long line, wrapped over many rows

    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            transcript = app.query_one(Transcript)
            for start in range(0, len(words), 40):
                app.session.emit(ModelUpdate(turn=1, text=" ".join(words[start:start + 40])
                                             + " "))
                await settle(pilot, lambda: not app.pump._handle)
                assert _drawn(transcript) == _fresh(transcript)
            # Every word reached the screen, the last ones included, while it streams ...
            screen = " ".join(_drawn(transcript))
            assert "word399" in screen and "word360" in screen
            # ... and once the reply closes (drawn again as a finished reply).
            app.session.emit(TurnEnd(turn=1, stop_reason="end_turn"))
            await settle(pilot, lambda: app.view.items[-1].complete)
            assert _drawn(transcript) == _fresh(transcript)
            assert "word399" in " ".join(_drawn(transcript))
            message = next(i for i in app.view.items if i.kind == "message")
            assert message.text.split() == words  # the fold got every delta
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_the_rows_below_an_item_that_grew_are_repainted():
    async def main():
        app = make_app(turn(1, "first line"), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            transcript = app.query_one(Transcript)
            app.session.emit(ToolStart(call_id="c1", tool="shell",
                                       tool_input={"command": "ls"}, tier=1))
            await settle(pilot, lambda: "c1" in app.view.tool_calls)
            # The reply above the call is not the last item: a line more pushes the call down.
            app.session.emit(ModelUpdate(turn=1, text="\nsecond line\nthird line"))
            app.session.emit(ToolEnd(call_id="c1", tool="shell", ok=True, output="a\nb",
                                     duration_ms=1.0))
            await settle(pilot, lambda: app.view.tool_calls["c1"].status == "ok")
            await settle(pilot, lambda: not app.pump._handle)
            assert _drawn(transcript) == _fresh(transcript)
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_changed_rows_names_the_rows_that_differ():
    a, b, c = Strip.blank(3), Strip.blank(4), Strip.blank(5)
    assert changed_rows([a, b], [a, b], 2) == []
    assert changed_rows([a, b], [a, c], 2) == [(1, 2)]
    assert changed_rows([a, b], [a, b, c], 3) == [(2, 3)]  # grew by a row
    assert changed_rows([a, b, c], [a], 1) == [(1, 3)]  # shrank: the rows it left
    assert changed_rows(None, [a, b], 2) == [(0, 2)]  # not drawn before: all of it
    assert changed_rows([a, b, c], None, 2) == [(0, 3)]


async def _six_calls(app, pilot) -> None:
    """The first turn, then six shell calls in it (items to move the selection over)."""
    await settle(pilot, lambda: app.view.turn == 1)
    for i in range(6):
        app.session.emit(ToolStart(call_id=f"c{i}", tool="shell",
                                   tool_input={"command": f"ls {i}"}, tier=1))
    await settle(pilot, lambda: len(app.view.tool_calls) == 6)


def test_a_selection_move_is_drawn_right_and_the_hints_follow_the_selection():
    async def main():
        app = make_app(turn(1, "a reply"), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await _six_calls(app, pilot)
            transcript = app.query_one(Transcript)
            hints = app.query_one(KeyHints)
            assert "expand" not in hints._text.plain  # nothing selected: enter does nothing
            for key in ("up", "up", "down", "home", "down"):
                await pilot.press(key)
                assert _drawn(transcript) == _fresh(transcript)
                assert "expand" in hints._text.plain and "raw events" in hints._text.plain
            await pilot.press("end")  # following again: no selection, no enter
            await pilot.pause()
            assert transcript.selected is None and "expand" not in hints._text.plain
            assert _drawn(transcript) == _fresh(transcript)
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_a_key_s_frame_is_drawn_before_the_hints_which_are_built_once_a_key():
    """The key's answer (the selection moving) is in the first frame after it, without the
    hints' build and repaint; the hints follow, built once however many times the key
    refreshed the bindings (issue 29)."""
    async def main():
        app = make_app(turn(1, "a reply"), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await _six_calls(app, pilot)
            hints, transcript = app.query_one(KeyHints), app.query_one(Transcript)
            frames: list[tuple[int, int]] = []  # (builds so far, the selection) at each frame
            display = app._display

            def drawn(screen: object, renderable: object) -> None:
                display(screen, renderable)
                if renderable is not None:
                    frames.append((hints.builds, transcript.cursor))
            app._display = drawn  # type: ignore[method-assign]  # (frames counted)
            # (a selection appears, moves — the keys that apply are the same — and goes)
            for key, rebuilt in (("up", True), ("up", False), ("end", True)):
                builds, text, drawn_before = hints.builds, hints._text, len(frames)
                await pilot.press(key)
                await pilot.pause()
                after = frames[drawn_before:]
                assert after and after[0] == (builds, transcript.cursor)  # (no build yet)
                assert hints.builds <= builds + 1
                assert (hints._text is not text) == rebuilt
                assert ("expand" in hints._text.plain) == (transcript.selected is not None)
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_the_hints_are_rebuilt_only_when_the_keys_that_apply_change():
    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            hints = app.query_one(KeyHints)
            text = hints._text
            app.refresh_bindings()  # nothing that applies changed
            await pilot.pause()
            assert hints._text is text
            app.session.cancel()  # the run ends: cancel no longer applies
            await settle(pilot, lambda: app.session.done)
            assert hints._text is not text and "cancel" not in hints._text.plain
    run(main())


def test_the_approval_bar_shows_hides_and_waits_behind_a_question():
    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            runner = app.session.runner
            bar = app.display_widget.approval_bar
            assert not bar.display and not bar.has_class("-pending")
            app.run_worker(runner.ask("c1", "shell", {"command": "git push"}))
            await settle(pilot, lambda: bool(app.view.pending))
            assert bar.display and bar.has_class("-pending") and bar.region.height > 0
            field = QuestionField(name="name", kind="text", title="Your name", required=True)
            app.run_worker(RunContext.of(runner).ask_question("q-1", "who?", [field]))
            await settle(pilot, lambda: bool(app.view.questions))
            assert not bar.display and bar.has_class("-pending")  # behind the question
            assert app.display_widget.question_form.display
            app.session.cancel("done")  # answers both: the bar goes
            await settle(pilot, lambda: app.session.done)
            assert not bar.display and not bar.has_class("-pending")
    run(main())


def test_the_panel_keys_find_no_target_when_no_box_overflows():
    async def main():
        app = make_app(turn(1), hold())
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, lambda: app.view.turn == 1)
            assert scroll_panel_target(app.screen) is None
            app.session.cancel()
            await settle(pilot, lambda: app.session.done)
    run(main())


def _events(n: int) -> list:
    events = [TurnStart(turn=1)] + [ModelUpdate(turn=1, text=f"t{i} ") for i in range(n)]
    for seq, event in enumerate(events):
        object.__setattr__(event, "seq", seq)
    return events


def test_a_hold_keeps_deliveries_back_until_released_and_drops_nothing():
    async def main():
        history: list = []
        deliveries: list[ChangeSet] = []
        pump = FramePump(RunFold(), lambda view, changes: deliveries.append(changes),
                         interval=0.001, freeze_every=None)
        pump.attach(history)
        pump.hold(seconds=60)  # a key is being answered
        history.extend(_events(50))
        pump.request()
        await asyncio.sleep(0.02)  # many frame intervals: still held
        assert deliveries == [] and pump.fold.view.events == 0
        pump.release()  # its frame was drawn: what waited comes now
        for _ in range(100):
            if deliveries:
                break
            await asyncio.sleep(0)
        assert len(deliveries) == 1 and pump.fold.view.events == 51
        assert pump.fold.view.items[0].text == "".join(f"t{i} " for i in range(50))
        history.extend(_events(2)[1:])  # after the release, timed deliveries as before
        pump.request()
        for _ in range(1000):
            if len(deliveries) == 2:
                break
            await asyncio.sleep(0.001)
        assert pump.fold.view.events == 53
    run(main())


def test_a_hold_ends_by_itself():
    async def main():
        history: list = []
        done = asyncio.Event()
        pump = FramePump(RunFold(), lambda view, changes: done.set(), interval=0.001,
                         freeze_every=None)
        pump.attach(history)
        pump.hold(seconds=0.01)  # never released (a key that drew nothing, say)
        history.extend(_events(5))
        pump.request()
        await asyncio.wait_for(done.wait(), 10)
        assert pump.fold.view.events == 6
    run(main())


def test_a_flush_delivers_even_while_held():
    history = _events(3)
    deliveries: list[ChangeSet] = []

    async def main():
        pump = FramePump(RunFold(), lambda view, changes: deliveries.append(changes),
                         freeze_every=None)
        pump.attach(history)
        pump.hold(seconds=60)
        pump.flush()  # a key's own answer (an approval) is drawn at once
        assert len(deliveries) == 1 and pump.fold.view.events == 4
    run(main())
