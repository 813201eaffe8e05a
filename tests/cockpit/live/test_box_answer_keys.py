"""The approval keys answer from the message box only while it is the cockpit's: empty and
untouched since a message was sent from it. Once the human types there (even if they empty it
again), moves the focus there, or pastes, every key is text until the next send — so a message
that starts with "yes", "no" or "add" never answers a call the human was not looking at, and a
call that arrives mid-word takes neither the focus nor a keystroke. Pilot tests on the live
cockpit; the calls arrive when a test opens a gate, not on a clock."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run
from support.live_app import answerable, gated, make_app, pending, settle, turn
from textual import events

from cockpit.widgets.composer import MESSAGE_LIMIT

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _gate(opened: asyncio.Event):
    """A step that waits until the test opens the gate."""
    async def step(r) -> None:
        await opened.wait()
    return step


def _app(opened: asyncio.Event):
    """A live run: a turn, then (once the gate opens) a call that waits for approval."""
    return make_app(turn(1, "thinking"), _gate(opened),
                    gated("c1", "run_command", {"command": "rm -rf build"}),
                    next_steps=lambda text: [turn(1, f"on it: {text}")])


async def _typed_then_asked(pilot, app, opened: asyncio.Event, *keys: str) -> None:
    """Press `keys`, then let the call arrive and wait until it waits for approval."""
    await pilot.press(*keys)
    opened.set()
    await settle(pilot, lambda: pending(app) == ["c1"])


def _resolved(app):
    return [e for e in app.session.history if e.type == "approval_resolved"]


def test_a_call_arriving_mid_word_takes_neither_the_focus_nor_a_key():
    async def main():
        opened = asyncio.Event()
        app = _app(opened)
        async with app.run_test(size=SIZE) as pilot:
            await _typed_then_asked(pilot, app, opened, "t", *"yes ad")
            await pilot.press(*"d a note", "space", *"yna")
            assert app.focused is app.composer.box
            assert app.composer.box.value == "yes add a note yna"
            assert pending(app) == ["c1"] and not _resolved(app)
    run(main())


# Every way the human makes the box theirs before the call arrives, then a message that starts
# with an answer key: each is text, nothing is answered.
TOUCHES = {
    "typed then emptied": ("x", "backspace"),
    "typed then deleted": ("x", "left", "delete"),
    "focused with t": (),
}


@pytest.mark.parametrize("first", ["y", "n", "a"])
@pytest.mark.parametrize("touch", TOUCHES.values(), ids=TOUCHES.keys())
def test_a_box_the_human_touched_takes_answer_keys_as_text(touch, first):
    async def main():
        opened = asyncio.Event()
        app = _app(opened)
        async with app.run_test(size=SIZE) as pilot:
            await _typed_then_asked(pilot, app, opened, "t", *touch)
            assert app.composer.box.value == ""
            await pilot.press(first, *"es")
            assert app.composer.box.value == f"{first}es"
            assert app.composer.reason_for is None and app._choosing is None
            assert pending(app) == ["c1"] and not _resolved(app)
    run(main())


def test_a_paste_makes_the_box_the_humans_even_one_refused():
    """Right after a send the answer keys work; a paste (here one over the message limit,
    refused: the box stays empty, no key was typed) makes the box the human's all the same."""
    async def main():
        ask = asyncio.Event()
        app = make_app(turn(1, "first"), next_steps=lambda text: [
            turn(1, f"on it: {text}"), _gate(ask),
            gated("c1", "run_command", {"command": "rm -rf build"})])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*"go", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.composer.box.answer_keys  # (sent: the keys would answer)
            app.post_message(events.Paste("x" * (MESSAGE_LIMIT + 1)))  # (as the driver does)
            await settle(pilot, lambda: not app.composer.box.answer_keys)
            assert app.composer.box.value == ""
            ask.set()
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("y")
            assert app.composer.box.value == "y" and pending(app) == ["c1"]
            assert not _resolved(app)
    run(main())


def test_the_label_says_how_to_answer_and_escape_leaves_the_box_then_y_answers():
    async def main():
        opened = asyncio.Event()
        app = _app(opened)
        async with app.run_test(size=SIZE) as pilot:
            await _typed_then_asked(pilot, app, opened, "t", *"hi")
            label = str(app.query_one("#composer-label").render())
            assert "a call waits for you" in label and "keys here are text" in label
            await pilot.press("escape")  # with text in the box: leaves it, never cancels
            assert app.focused is not app.composer.box and not app.session.done
            assert "a call waits" not in str(app.query_one("#composer-label").render())
            await settle(pilot, lambda: answerable(app, "c1"))
            await pilot.press("y")
            await settle(pilot, lambda: bool(_resolved(app)))
            assert [(e.allowed, e.via) for e in _resolved(app)] == [(True, "human")]
            assert app.composer.box.value == "hi"  # the draft kept
    run(main())


def test_after_a_send_the_untouched_box_answers_and_a_typed_key_ends_that():
    async def main():
        ask = asyncio.Event()
        app = make_app(turn(1, "first"), next_steps=lambda text: [
            turn(1, f"on it: {text}"), _gate(ask),
            gated("c2", "run_command", {"command": "ls"}),
            gated("c3", "run_command", {"command": "ls -a"})])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*"go", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            ask.set()
            await settle(pilot, lambda: pending(app) == ["c2"])
            await pilot.press("y")  # untouched since the send: the approval key
            await settle(pilot, lambda: pending(app) == ["c3"])
            assert app.composer.box.value == ""
            await pilot.press("o", "backspace", "y")  # touched: text from now on
            assert app.composer.box.value == "y" and pending(app) == ["c3"]
    run(main())


@pytest.mark.parametrize("back", ["click", "t"])
def test_coming_back_to_the_box_after_a_send_makes_it_the_humans(back):
    """Sent, then away (tab: escape there is the run's), then back by a click or `t`: the
    human chose to type there, so an answer key is text, though the box is still empty."""
    async def main():
        ask = asyncio.Event()
        app = make_app(turn(1, "first"), next_steps=lambda text: [
            turn(1, f"on it: {text}"), _gate(ask),
            gated("c1", "run_command", {"command": "rm -rf build"})])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*"go", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            await pilot.press("tab")
            await settle(pilot, lambda: app.focused is not app.composer.box)
            if back == "click":
                await pilot.click("#next-task")
            else:
                await pilot.press("t")
            await settle(pilot, lambda: app.focused is app.composer.box)
            ask.set()
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("y")
            assert app.composer.box.value == "y" and pending(app) == ["c1"]
            assert not _resolved(app)
    run(main())
