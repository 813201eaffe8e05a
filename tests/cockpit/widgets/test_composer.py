"""The message box is multi-line: a paste keeps every line (a paste over the limit is refused,
and says so), `enter` sends, a new line comes from `shift+enter`/`alt+enter` where the terminal
tells them apart and from a backslash before `enter` everywhere, the box grows to a few rows and
then scrolls, and the composer's other keys (queue, send now, commands) still work. Pilot tests
on the live cockpit."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import hold, make_app, settle, turn
from textual import events

from cockpit.widgets.composer import MAX_ROWS, MESSAGE_LIMIT

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _next(text):
    return [turn(1, f"on it: {text}")]


def _live_app():
    return make_app(turn(1), hold(), next_steps=_next)


async def _paste(pilot, app, text: str) -> None:
    app.post_message(events.Paste(text))  # (as the driver does: the app hands it to the focus)
    await pilot.pause()


NEWLINE_KEYS = {
    "backslash-enter": ["backslash", "enter"],  # every terminal
    "shift+enter": ["shift+enter"],  # kitty keyboard protocol
    "alt+enter": ["alt+enter"],
}


@pytest.mark.parametrize("keys", NEWLINE_KEYS.values(), ids=NEWLINE_KEYS.keys())
def test_a_new_line_key_inserts_a_line_and_enter_sends_them_all(keys):
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"one", *keys, *"two", *keys, *"three")
            assert app.composer.box.value == "one\ntwo\nthree"
            assert app.steering.queue.items == ()  # nothing sent yet
            await pilot.press("enter")
            assert app.steering.queue.items == ("one\ntwo\nthree",)
            assert app.composer.box.value == ""
    run(main())


def test_a_backslash_elsewhere_is_text_and_enter_sends_it():
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"C:", "backslash", *"x", "enter")
            assert app.steering.queue.items == ("C:\\x",)
            # a backslash before the cursor but not at the end of the text: still a new line
            await pilot.press(*"ab", "left", "backslash", "enter")
            assert app.composer.box.value == "a\nb"
    run(main())


PASTES = {
    "lf": "first\nsecond\nthird",
    "crlf": "first\r\nsecond\r\nthird",
    "cr": "first\rsecond\rthird",
    "blank lines": "first\n\n\nlast",
    "indented code": "def f():\n    return 1\n\tx = 2",
    "unicode": "привет\n世界 🌍\nnaïve",
    "long lines": "x" * 500 + "\n" + "y" * 500,
    "many lines": "\n".join(f"line {n}" for n in range(1000)),
}


@pytest.mark.parametrize("text", PASTES.values(), ids=PASTES.keys())
def test_a_paste_keeps_every_line_and_is_sent_whole(text):
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t")
            await _paste(pilot, app, text)
            expected = text.replace("\r\n", "\n").replace("\r", "\n")
            assert app.composer.box.value == expected
            await pilot.press("enter")
            assert app.steering.queue.items == (expected.strip(),)
    run(main())


def test_a_paste_over_the_limit_is_refused_and_says_so():
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"keep me")
            await _paste(pilot, app, "z" * MESSAGE_LIMIT)  # with "keep me": over by 7
            assert app.composer.box.value == "keep me"
            said = [n.message for n in app._notifications]
            assert any("not pasted" in m and f"{MESSAGE_LIMIT:,}" in m for m in said), said
            # exactly up to the limit fits
            await _paste(pilot, app, "z" * (MESSAGE_LIMIT - len("keep me")))
            assert len(app.composer.box.value) == MESSAGE_LIMIT
            # and typing past it goes nowhere
            await pilot.press("q")
            assert len(app.composer.box.value) == MESSAGE_LIMIT
    run(main())


def test_the_box_grows_to_a_few_rows_then_scrolls():
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            box = app.composer.box
            await pilot.press("t")
            assert box.size.height == 1
            heights = []
            for n in range(MAX_ROWS + 4):
                await pilot.press(*f"l{n}", "shift+enter")
                heights.append(box.size.height)
            assert heights == sorted(heights)  # it only grows
            assert heights[-1] == MAX_ROWS  # and stops
            assert box.virtual_size.height > box.size.height  # the rest scrolls
            assert box.scroll_offset.y > 0  # and the cursor's line is in sight
    run(main())


def test_up_moves_between_lines_and_from_the_first_line_to_the_queue():
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"queued", "enter", *"top", "shift+enter", *"bottom")
            box = app.composer.box
            assert box.cursor_location == (1, 6)
            await pilot.press("up")
            assert app.focused is box and box.cursor_location[0] == 0
            await pilot.press("up")
            assert app.focused is not None and app.focused.id == "queued"
    run(main())


def test_a_multi_line_next_task_starts_with_every_line():
    async def main():
        app = make_app(turn(1), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            app.composer.box.focus()
            await _paste(pilot, app, "fix the bug\nthen run the tests")
            await pilot.press("enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == "fix the bug\nthen run the tests"
    run(main())


def test_send_now_and_the_queue_keys_still_work_on_a_multi_line_message():
    async def main():
        app = _live_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"stop", "shift+enter", *"and do this", "ctrl+j")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.sessions[1].state.task == "stop\nand do this"
    run(main())
