"""The focus stays in the message box: when a task ends it goes there (typing the next task just
works, even a task made of hotkey letters), after a task is sent from the box it stays there,
and from an empty box the approval keys still answer; with text in the box every key is text.
Hotkeys work as before when the box is not focused. Pilot tests on the live cockpit."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import finish, gated, make_app, pending, settle, turn

from cockpit.screens import HelpScreen

SIZE = (120, 36)

# Every single-key hotkey of the live cockpit, and the ones Textual binds, in one task.
HOTKEY_TASK = "give it a try? yes: run /tests, then v and g and i, n u p s t"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _asks(text):
    return [turn(1, f"on it: {text}"), gated("c2", "run_command", {"command": "ls"})]


async def _asking(app, pilot):
    """Once the first task ended, send one from the box; its call waits for approval."""
    await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
    await pilot.press(*"go", "enter")
    await settle(pilot, lambda: pending(app) == ["c2"])


def _replies(text):
    return [turn(1, f"on it: {text}")]


ENDINGS = {
    "completed": (turn(1, "done"),),
    "failed": (turn(1), finish("failed", "the model gave up")),
    "cancelled": (turn(1), finish("cancelled", "stopped")),
}


@pytest.mark.parametrize("steps", ENDINGS.values(), ids=ENDINGS.keys())
def test_when_a_task_ends_the_next_one_is_typed_in_the_box_whole(steps):
    async def main():
        app = make_app(*steps, next_steps=_replies)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*HOTKEY_TASK)
            assert app.composer.box.value == HOTKEY_TASK
            assert len(app.screen_stack) == 1  # no key opened a screen
            await pilot.press("enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == HOTKEY_TASK
    run(main())


def test_a_screen_open_when_the_task_ends_keeps_its_focus():
    async def main():
        app = make_app(turn(1), gated("c1", "run_command", {"command": "ls"}),
                       next_steps=_replies)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")  # (back, then answer: the run ends behind nothing)
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
    run(main())


def test_after_sending_a_task_the_focus_stays_and_the_approval_keys_answer_from_an_empty_box():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*"list the files", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2 and pending(app) == ["c2"])
            assert app.focused is app.composer.box and app.composer.box.value == ""
            await pilot.press("y")  # the empty box: `y` is the approval key
            await settle(pilot, lambda: app.session.done)
            assert app.composer.box.value == ""
            resolved = [e for e in app.session.history if e.type == "approval_resolved"]
            assert [(e.allowed, e.via) for e in resolved] == [(True, "human")]
    run(main())


def test_with_text_in_the_box_the_approval_keys_are_text():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await _asking(app, pilot)
            # `p` (a scope key) applies only after `a`: here it is text, and so is the rest
            await pilot.press(*"please try", "space", *"yna")
            assert app.composer.box.value == "please try yna"
            assert pending(app) == ["c2"]  # nothing answered
            # emptied by hand, the box is still the human's: `n` is text (see
            # test_box_answer_keys.py); escape leaves it, and there `n` asks for the reason
            await pilot.press(*["backspace"] * len("please try yna"), "n")
            assert app.composer.box.value == "n" and app.composer.reason_for is None
            await pilot.press("backspace", "escape", "n")
            assert app.composer.reason_for == "c2"
    run(main())


def test_away_from_the_box_the_hotkeys_work_as_before():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press("escape")  # leave the box
            assert app.focused is not app.composer.box
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
    run(main())


def test_escape_twice_from_the_empty_box_cancels_and_after_a_it_goes_back():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await _asking(app, pilot)
            await pilot.press("a")  # the scope step: escape goes back from it, not cancels
            assert app._choosing == "c2"
            await pilot.press("escape")
            assert app._choosing is None and app.focused is app.composer.box
            assert not app.session.done
            await pilot.press("escape", "escape")
            await settle(pilot, lambda: app.session.done)
            assert app.session.state.status == "cancelled"
    run(main())


def test_escape_with_text_in_the_box_leaves_it_and_keeps_the_text():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await _asking(app, pilot)
            await pilot.press(*"draft")
            await pilot.press("escape")
            assert app.focused is not app.composer.box
            assert app.composer.box.value == "draft" and not app.session.done
            await pilot.press("escape")  # away from the box escape arms the cancel, as ever
            assert not app.session.done
    run(main())


@pytest.mark.parametrize("reason", ["yes no always", "n", "y", "a", "use s p u", "\\"])
def test_a_denials_reason_is_text_whatever_its_letters(reason):
    async def main():
        app = make_app(turn(1, "first"), next_steps=_asks)
        async with app.run_test(size=SIZE) as pilot:
            await _asking(app, pilot)
            await pilot.press("n")
            assert app.composer.reason_for == "c2"
            await pilot.press(*["space" if c == " " else c for c in reason])
            assert app.composer.box.value == reason
    run(main())


def test_shift_down_in_the_box_selects_text_when_no_panel_scrolls():
    async def main():
        app = make_app(turn(1, "first"), next_steps=_replies)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            assert app.check_action("scroll_panel", (1,)) is False
            app.composer.box.value = "one\ntwo"
            app.composer.box.cursor_position = 0
            await pilot.press("shift+down")
            assert app.composer.box.selected_text == "one\n"
    run(main())
