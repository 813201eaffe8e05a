"""Pilot tests of talking to the agent while it works: the message box (queue, take back, send
now, the agent's commands completed), an agent's question answered by keys, and a denial's reason;
snapshots of the question form."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run
from support.live_app import (
    FORM_FIELDS,
    answerable,
    asks,
    gated,
    hold,
    make_app,
    pending,
    settle,
    turn,
)
from support.steps import StepRunner
from textual.color import Color
from textual.widgets import Input

from cockpit.live.slash import BUILTIN_COMMANDS
from cockpit.live.steering import PromptQueue
from cockpit.widgets.composer import command_token, matching_commands
from engine_adapter import AgentCommand, CommandsAvailable, QuestionField
from engine_adapter.context import RunContext
from engine_adapter.view import CommandView

SIZE = (120, 36)

COMMANDS = [AgentCommand(name="review", description="Review the changes", hint="focus"),
            AgentCommand(name="compact", description="Summarize the conversation"),
            AgentCommand(name="$imagegen", description="Make a picture")]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


class Gate:
    """A step that keeps the turn going until the test opens the gate (then it completes)."""

    def __init__(self) -> None:
        self.event: asyncio.Event | None = None

    def step(self):
        async def wait(r: StepRunner) -> None:
            self.event = asyncio.Event()
            await self.event.wait()
        return wait

    def open(self) -> None:
        assert self.event is not None
        self.event.set()


def offers(commands=COMMANDS):
    async def step(r: StepRunner) -> None:
        r.emit(CommandsAvailable(commands=commands))
    return step


# -- the queue, alone ---------------------------------------------------------------------------

def test_the_queue_sends_after_a_completed_task_and_holds_after_a_failed_one():
    queue = PromptQueue()
    assert queue.after_task("completed") is None
    queue.add("first")
    queue.add("second")
    assert queue.after_task("failed") is None and queue.held
    assert queue.release() == "first" and not queue.held
    assert queue.after_task("completed") == "second"
    queue.add("later")
    queue.send_now("now")
    assert queue.items == ("now", "later")
    assert queue.after_task("cancelled") == "now"  # sent "now": however the task ended
    assert queue.after_task("cancelled") is None and queue.held
    assert queue.remove(5) is None and queue.remove(0) == "later" and len(queue) == 0


def test_commands_match_by_prefix_and_a_typed_command_keeps_its_line():
    commands = [CommandView(c.name, c.description, c.hint) for c in COMMANDS]
    assert [c.name for c in matching_commands(commands, "/")] == ["review", "compact"]
    assert [c.name for c in matching_commands(commands, "/RE")] == ["review"]
    assert [c.name for c in matching_commands(commands, "/review the tests")] == ["review"]
    assert [c.name for c in matching_commands(commands, "$")] == ["$imagegen"]
    assert matching_commands(commands, "review") == [] == matching_commands(commands, "/x")
    assert command_token(commands[2]) == "$imagegen"


# -- the message box ----------------------------------------------------------------------------

def _next(text):
    return [turn(1, f"on it: {text}")]


def test_a_message_typed_while_the_agent_works_is_queued_then_sent():
    gate = Gate()

    async def main():
        app = make_app(turn(1), gate.step(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live and gate.event is not None)
            await pilot.press("t")
            assert app.focused is app.composer.box
            await pilot.press(*"first", "enter", *"second", "enter")
            assert app.steering.queue.items == ("first", "second")
            shown = [str(o.prompt) for o in app.query_one("#queued").options]
            assert shown == ["queued 1 first", "queued 2 second"]
            # up from the box to the queue, escape takes the highlighted one back
            await pilot.press("up")
            assert app.focused.id == "queued"
            await pilot.press("escape")
            assert app.steering.queue.items == ("first",)
            # the turn ends (completed): the queued message is the next task
            gate.open()
            await settle(pilot, lambda: len(app.sessions) == 2 and app.session.done)
            assert app.sessions[1].state.task == "first"
            assert app.steering.queue.items == ()
    run(main())


def test_send_now_stops_the_turn_and_sends_at_once():
    async def main():
        app = make_app(turn(1), hold(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"stop and do this", "ctrl+j")
            await settle(pilot, lambda: len(app.sessions) == 2 and app.session.done)
            first = app.sessions[0]
            assert first.state.status == "cancelled"
            ended = next(e for e in first.history if e.type == "cancellation_observed")
            assert ended.reason == "stopped by the user to send a new message"
            assert app.sessions[1].state.task == "stop and do this"
    run(main())


def test_ctrl_enter_sends_now_too():
    async def main():
        app = make_app(turn(1), hold(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"now", "ctrl+enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.sessions[1].state.task == "now"
    run(main())


def test_a_user_cancel_holds_the_queue_until_an_empty_enter():
    async def main():
        app = make_app(turn(1), hold(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"later", "enter")
            app.session.cancel("cancelled by the user")
            await settle(pilot, lambda: app.session.done)
            await pilot.pause()
            assert len(app.sessions) == 1 and app.steering.queue.held
            label = str(app.query_one("#composer-label").render())
            assert "1 queued message held" in label
            await pilot.press("enter")  # the box still has the focus: an empty enter
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == "later"
    run(main())


def test_send_now_is_offered_only_while_the_agent_works():
    async def main():
        app = make_app(turn(1), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.press("t")
            hints = app.query_one("#keys").render().plain
            assert "send now" not in hints
            assert app.composer.key_applies("send_now", ()) is False
    run(main())


def test_commands_complete_with_their_descriptions():
    async def main():
        app = make_app(turn(1), offers(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            assert app.view.commands[0].name == "review"
            await pilot.press("slash")
            assert app.composer.box.value == "/"
            listing = app.query_one("#commands")
            rows = [str(o.prompt) for o in listing.options]
            # the cockpit's own commands first (/help, /model, …), then the agent's
            own = len(BUILTIN_COMMANDS)
            assert [row.split()[0] for row in rows[:own]] == \
                [f"/{c.name}" for c in BUILTIN_COMMANDS]
            assert rows[own:] == ["/review focus  Review the changes",
                                  "/compact  Summarize the conversation"]
            await pilot.press(*["down"] * (own + 1), "tab")
            assert app.composer.box.value == "/compact"
            await pilot.press("escape")  # closes nothing (already completed): leaves the box
            await pilot.press("slash", *"rev", "enter")  # enter on a prefix completes first
            assert app.composer.box.value == "/review "
            await pilot.press(*"the tests", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == "/review the tests"
    run(main())


def test_escape_closes_the_completion_list_first():
    async def main():
        app = make_app(turn(1), offers(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.press("slash")
            assert app.composer.completing
            await pilot.press("escape")
            assert not app.composer.completing and app.focused is app.composer.box
            await pilot.press("escape")
            assert app.focused is not app.composer.box
    run(main())


# -- a denial's reason --------------------------------------------------------------------------

def test_n_then_a_line_denies_with_the_reason():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("n")
            assert app.composer.reason_for == "c1" and app.focused is app.composer.box
            assert app.composer.has_class("-shown")  # shown for the reason, no next task
            await pilot.press(*"not on main", "enter")
            await settle(pilot, lambda: app.session.done)
            resolved = next(e for e in app.session.history if e.type == "approval_resolved")
            assert (resolved.allowed, resolved.reason) == (False, "not on main")
            row = app.view.tool_calls["c1"]
            assert row.approval.answer_reason == "not on main"
            text = "".join(s.text for s in app.query_one("#transcript")._strips(row.index))
            assert "denied by you: not on main" in text
    run(main())


# `n` answers in one small repaint (issue 29): the reason box opens in rows the message box
# already holds, so the transcript keeps its size and only the box changes.
@pytest.mark.parametrize("offered", [False, True], ids=["no-next-task", "conversation"])
@pytest.mark.parametrize("size", [(160, 48), (120, 36), (80, 24), (60, 16)])
def test_n_opens_the_reason_box_without_resizing_the_transcript(offered, size):
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}),
                       gated("c2", "shell", {"command": "rm -rf build"}), hold(),
                       next_steps=_next if offered else None)
        async with app.run_test(size=size) as pilot:
            transcript = app.query_one("#transcript")
            await settle(pilot, lambda: pending(app) == ["c1"] and answerable(app, "c1"))
            before = transcript.region
            assert app.composer.display and app.composer.box.value == ""
            box, unasked = app.composer.box, app.composer.box.styles.background
            await pilot.press("n")
            assert app.composer.reason_for == "c1" and app.focused is app.composer.box
            assert transcript.region == before
            # The reason's colour, while focused: the theme's `$error 15%`.
            assert box.styles.background == Color.parse(
                app.get_css_variables()["error"]).with_alpha(0.15)
            await pilot.press(*"no", "enter")  # denied: the next call waits, the rows stay
            await settle(pilot, lambda: pending(app) == ["c2"] and answerable(app, "c2"))
            assert transcript.region == before and app.focused is transcript
            await pilot.press("n")
            assert app.composer.reason_for == "c2" and transcript.region == before
            await pilot.press("escape")  # back without denying: still the same rows
            assert pending(app) == ["c2"] and app.focused is transcript
            assert transcript.region == before
            assert box.styles.background == unasked  # (its own colour again)
            app.session.cancel("test over")
            await settle(pilot, lambda: app.session.done)
            # The run over: with no next task the rows are given back to the transcript.
            assert app.composer.display is offered
    run(main())


def test_the_box_standing_by_takes_no_focus_and_no_text():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}), hold())
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"] and answerable(app, "c1"))
            box = app.composer.box
            assert app.composer.display and not box.can_focus
            for key in ("tab", "tab", "shift+tab", "tab"):
                await pilot.press(key)
                assert app.focused is not box
            await pilot.click("#next-task")
            assert app.focused is not box
            await pilot.press(*"hello")
            assert box.value == "" and pending(app) == ["c1"]
            app.session.cancel("test over")
    run(main())


def test_a_reason_dropped_because_the_call_was_answered_gives_the_focus_back():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}), hold())
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"] and answerable(app, "c1"))
            await pilot.press("n", *"wai")
            assert app.focused is app.composer.box
            app.session.resolve_approval("c1", allow=True)
            await settle(pilot, lambda: app.composer.reason_for is None)
            assert app.focused is app.query_one("#transcript")
            assert not app.composer.box.can_focus and app.composer.box.value == ""
            app.session.cancel("test over")
    run(main())


def test_escape_goes_back_without_denying_and_keeps_the_draft():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}),
                       next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("t", *"draft")
            await pilot.press("escape")  # out of the box
            await pilot.press("n", *"hmm", "escape")
            assert pending(app) == ["c1"] and app.composer.box.value == "draft"
            await pilot.press("escape")
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert app.session.runner.answers == [True]
    run(main())


# -- an agent's question ------------------------------------------------------------------------

def test_a_question_is_answered_by_keys_every_field_kind():
    answers = []

    async def main():
        app = make_app(turn(1), asks(answers=answers))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: bool(app.view.questions))
            await settle(pilot, lambda: app.focused is not None
                         and app.focused.id == "qf-0")
            assert not app.check_action("approve", ())  # no approval key while it asks
            await pilot.press(*"Ada", "ctrl+s")
            error = str(app.query_one("#question-error").render())
            assert "Database: an answer is required" in error  # nothing answered yet
            assert app.session.pending_questions
            await pilot.press("tab", *"12.5", "tab", "space")  # budget; tests: yes -> no
            await pilot.press("tab", "down", "space")  # database: the second option
            await pilot.press("tab", "space", "down", "space")  # targets: both
            await pilot.press("ctrl+s")
            await settle(pilot, lambda: app.session.done)
            assert app.focused.id == "transcript"
    run(main())
    assert answers[0].action == "accept"
    assert answers[0].values == {"name": "Ada", "budget": 12.5, "tests": False, "db": "staging",
                                 "targets": ["linux", "mac"]}


def test_escape_declines_a_question_and_the_transcript_says_so():
    answers = []

    async def main():
        app = make_app(turn(1), asks(answers=answers))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.focused is not None and app.focused.id == "qf-0")
            await pilot.press("escape")
            await settle(pilot, lambda: app.session.done)
            row = next(i for i in app.view.items if i.kind == "question")
            text = "\n".join(s.text for s in app.query_one("#transcript")._strips(row.index))
            assert "the agent asks: Which database should I use?" in text
            assert "declined by you" in text
    run(main())
    assert answers[0].action == "decline"


def test_a_question_waits_while_the_human_types_a_message():
    async def main():
        app = make_app(turn(1), hold(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"half a thought")
            runner = app.session.runner
            app.run_worker(RunContext.of(runner).ask_question("q-9", "quick one?", FORM_FIELDS[:1]))
            await settle(pilot, lambda: bool(app.view.questions))
            await pilot.pause()
            assert app.focused is app.composer.box  # not taken away mid-sentence
            assert app.composer.box.value == "half a thought"
            app.session.cancel("done")
            await settle(pilot, lambda: app.session.done)
    run(main())


# -- snapshots ---------------------------------------------------------------------------------

def _quiet_app(*steps, **kwargs):
    return make_app(*steps, clock=None, **kwargs)


def _until_asked(app):
    async def run_before(pilot):
        await settle(pilot, lambda: app.focused is not None and app.focused.id == "qf-0")
        for widget in pilot.app.query(Input):
            widget.cursor_blink = False
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
def test_snapshot_question_form(snap_compare, size):
    app = _quiet_app(turn(1, "I need two answers before I touch the database."), asks(),
                     next_steps=_next)
    assert snap_compare(app, terminal_size=size, run_before=_until_asked(app))


@pytest.mark.parametrize(("count", "listed", "note"), [
    (6, 6, None), (7, 7, None), (8, 6, "… 2 more fields (enter to expand)"),
    (20, 6, "… 14 more fields (enter to expand)")])
def test_a_collapsed_question_lists_its_fields_or_says_how_many_more(count, listed, note):
    from rich.console import Console

    from cockpit.styles import Palette
    from cockpit.themes import load_themes
    from cockpit.widgets.transcript.question_rows import question_rows
    from engine_adapter.view import QuestionItem

    fields = [QuestionField(name=f"f{i}", kind="text") for i in range(count)]
    item = QuestionItem(1, 1, 0, "q-1", "Tell me", fields, None)
    palette = Palette(load_themes()["cockpit-dark"])
    for expanded in (False, True):
        lines = [strip.text.rstrip() for strip in question_rows(
            item, expanded, palette, Console(width=100), 100)]
        assert sum(line.startswith("  · f") for line in lines) == (count if expanded
                                                                    else listed)
        assert any(note in line for line in lines) if note and not expanded else not any(
            "more field" in line for line in lines)


@pytest.mark.parametrize("live", [True, False])
def test_quitting_with_queued_messages_asks_and_says_they_will_not_be_sent(live):
    from cockpit.screens import QuitScreen

    async def main():
        app = make_app(turn(1), hold(), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", *"later", "enter", *"and this", "enter")  # the box keeps focus
            if not live:  # a held queue: the run is over, and still the messages are kept
                app.session.cancel("cancelled by the user")
                await settle(pilot, lambda: app.session.done and app.steering.queue.held)
            await pilot.press("escape", "ctrl+q")
            await settle(pilot, lambda: isinstance(app.screen, QuitScreen))
            said = str(app.screen.query_one("Static").render())
            assert "2 queued messages will not be sent." in said
            assert ("still live" in said) is live
            await pilot.press("escape")
            assert not isinstance(app.screen, QuitScreen) and app.steering.queue.items == (
                "later", "and this")
            await pilot.press("ctrl+q", "ctrl+q")
            await settle(pilot, lambda: not app.is_running)
        assert len(app.sessions) == 1  # nothing was sent on the way out
    run(main())


def test_the_message_box_label_fits_again_when_the_terminal_resizes():
    async def main():
        app = make_app(turn(1), next_steps=_next)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.pause()
            label = app.query_one("#composer-label")
            assert not label.has_class("-one-line")
            await pilot.resize_terminal(60, 14)  # short: one line keeps the transcript in sight
            await pilot.pause()
            assert label.has_class("-one-line")
            await pilot.resize_terminal(*SIZE)
            await pilot.pause()
            assert not label.has_class("-one-line")
    run(main())
