"""A key answers the approval that was on screen when it was pressed (Pilot, real Session).

Two approvals waiting and two `y` presses arriving together answer one request: the second
never approves a request that was not drawn. A newly shown request ignores its keys for
`ARM_SECONDS`, shows them dimmed meanwhile, and a key it ignored rings the bell and says why on
the keys line. Time is a fake clock the test moves: nothing here waits for the delay."""

from __future__ import annotations

import asyncio

import pytest
from fakes.clock import FakeClock
from support.event_loop import run
from support.live_app import answerable, gated, make_app, pending, settle, turn
from textual import events

from cockpit.live import CockpitApp
from cockpit.widgets import ARM_SECONDS
from engine_adapter import QuestionField
from engine_adapter.context import RunContext

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def two_at_once():
    """Two approvals asked together: both pending, the first shown."""
    async def step(r) -> None:
        await asyncio.gather(r.ask("c1", "shell", {"command": "git status"}),
                             r.ask("c2", "shell", {"command": "rm -rf ~/projects"}))
    return step


def armed_app(*steps, clock: FakeClock) -> tuple[CockpitApp, list[int]]:
    """The app, and its bells (an ignored key rings one; so does the alert for a new
    approval: the tests count from after it)."""
    app = make_app(turn(1), *steps, arm_seconds=ARM_SECONDS, arm_clock=clock)
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]  # count, do not ring
    return app, bells


def resolved(app: CockpitApp) -> list[tuple[str, bool]]:
    return [(e.approval_id, e.allowed) for e in app.session.history
            if e.type == "approval_resolved"]


def keys_line(app: CockpitApp) -> str:
    return app.query_one("#approval-keys").render().plain


def drawn(app: CockpitApp) -> str | None:
    return app.display_widget.approval_bar.arming.drawn_id


def test_two_presses_arriving_together_answer_only_the_request_on_screen():
    async def main():
        clock = FakeClock()
        app, bells = armed_app(two_at_once(), clock=clock)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: len(pending(app)) == 2 and drawn(app) == "c1")
            clock.advance(ARM_SECONDS)
            alerts = len(bells)
            # Two key presses straight into the app's queue, before any frame between them.
            app.post_message(events.Key("y", "y"))
            app.post_message(events.Key("y", "y"))
            await settle(pilot, lambda: pending(app) == ["c2"] and drawn(app) == "c2")
            assert resolved(app) == [("c1", True)]  # c2 was never on screen: not answered
            assert len(bells) == alerts + 1  # the second press rang
            assert "y ignored: its request was already answered" in keys_line(app)
            # c2 is new on screen: its keys wait, dimmed, then answer it.
            await pilot.press("y")
            assert pending(app) == ["c2"] and len(bells) == alerts + 2
            assert "y ignored: the request was just shown" in keys_line(app)
            clock.advance(ARM_SECONDS)
            await pilot.press("n", "enter")
            await settle(pilot, lambda: app.session.done)
            assert resolved(app) == [("c1", True), ("c2", False)]
    run(main())


@pytest.mark.parametrize("keys", [("y",), ("a",), ("n", "enter"), ("a", "s")])
def test_a_key_pressed_as_the_request_appears_answers_nothing_and_says_why(keys):
    async def main():
        clock = FakeClock()
        app, bells = armed_app(gated("c1", "shell", {"command": "git status"}), clock=clock)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: drawn(app) == "c1")
            alerts = len(bells)
            line = keys_line(app)
            assert "keys arm in a moment" in line  # dimmed, and saying why
            await pilot.press(*keys)
            assert pending(app) == ["c1"] and resolved(app) == []
            assert app.display_widget.approval_bar.scope_choice is None  # `a` did not start
            assert len(bells) > alerts
            assert "ignored: the request was just shown: read it first" in keys_line(app)
            clock.advance(ARM_SECONDS - 0.05)
            await pilot.press(keys[0])
            assert resolved(app) == []  # not yet
            clock.advance(0.05)
            assert answerable(app, "c1")
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert resolved(app) == [("c1", True)]
    run(main())


def test_once_armed_the_keys_are_not_dimmed_and_answer_at_once():
    async def main():
        clock = FakeClock()
        app, bells = armed_app(gated("c1", "shell", {"command": "git status"}), clock=clock)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: drawn(app) == "c1")
            clock.advance(ARM_SECONDS)
            alerts = len(bells)
            app.display_widget.approval_bar.redraw_keys()  # (what the arming timer does)
            assert "keys arm" not in keys_line(app) and "[y] allow once" in keys_line(app)
            await pilot.press("a", "s")
            await settle(pilot, lambda: app.session.done)
            assert resolved(app) == [("c1", True)] and len(bells) == alerts
            assert [g.prefix for g in app.view.grants] == ["git status"]
    run(main())


def approval_then_question(go: asyncio.Event):
    """An approval, and, once `go` is set, a question over it."""
    async def step(r) -> None:
        async def question() -> None:
            await go.wait()
            await RunContext.of(r).ask_question(
                "q-1", "Which database?", [QuestionField(name="db", kind="text", title="db")])
        await asyncio.gather(r.ask("c1", "shell", {"command": "git status"}), question())
    return step


def test_a_request_shown_again_from_behind_a_question_is_new_again():
    """Hidden (a question covered it) and shown again: its keys wait again."""
    async def main():
        clock = FakeClock()
        go = asyncio.Event()
        app, bells = armed_app(approval_then_question(go), clock=clock)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: drawn(app) == "c1")
            clock.advance(ARM_SECONDS)
            assert answerable(app, "c1")
            go.set()
            await settle(pilot, lambda: bool(app.view.questions) and drawn(app) is None)
            alerts = len(bells)
            app.session.answer_question("q-1", "decline")
            await settle(pilot, lambda: not app.view.questions and drawn(app) == "c1")
            await pilot.press("y")
            assert resolved(app) == [] and len(bells) == alerts + 1
            clock.advance(ARM_SECONDS)
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert resolved(app) == [("c1", True)]
    run(main())


def test_the_real_clock_arms_the_keys_by_itself():
    """Without a fake clock: the timer redraws the keys once they arm (waited for as an
    event, never timed)."""
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}),
                       arm_seconds=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: drawn(app) == "c1")
            await settle(pilot, lambda: "keys arm" not in keys_line(app), limit=2_000)
            assert answerable(app, "c1")
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert resolved(app) == [("c1", True)]
    run(main())
