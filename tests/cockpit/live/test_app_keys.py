"""Pilot tests for every key path of the live cockpit."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import gated, make_app, pending, plain, settle, turn
from textual.containers import Vertical
from textual.widgets import Static

from cockpit.live import CockpitApp
from cockpit.screens import HelpScreen, PagerScreen, QuitScreen
from cockpit.widgets import Transcript
from engine_adapter import JsonlEventJournal, Session, TaskState, read_journal

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def test_y_allows_once():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}, output="clean"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            assert app.query_one("#approval").has_class("-pending")
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            row = app.view.tool_calls["c1"]
            assert row.status == "ok" and row.approval.via == "human"
            assert not app.query_one("#approval").has_class("-pending")
            assert app.session.runner.answers == [True]
            assert app.session.grants == []
    run(main())


def test_a_grants_and_a_later_call_is_allowed_by_the_grant():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}),
                       gated("c2", "shell", {"command": "git status --short"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a", "s")
            await settle(pilot, lambda: app.session.done)
            assert [g.prefix for g in app.view.grants] == ["git status"]
            later = app.view.tool_calls["c2"]
            assert later.approval.via == "grant" and later.status == "ok"
            transcript = app.query_one(Transcript)
            text = "\n".join(s.text for s in transcript._strips(later.index))
            assert "allowed by a standing grant" in text
            assert "git status" in app.query_one("#grants").render().plain
    run(main())


def test_a_on_an_ungrantable_call_does_nothing():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "rm -rf build"}, tier=4))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a")
            await pilot.pause()
            assert pending(app) == ["c1"] and app.session.grants == []
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_n_denies():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git push"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
            assert app.session.runner.answers == [False]
            assert app.view.tool_calls["c1"].status == "denied"
    run(main())


def test_approval_keys_apply_only_while_an_approval_is_pending():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            assert app.check_action("approve", ()) is True
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert app.check_action("approve", ()) is False
            assert app.check_action("deny", ()) is False
            await pilot.press("y", "n")  # nothing pending: no-ops, no crash
    run(main())


def test_several_pending_oldest_first_with_count():
    async def main():
        import asyncio

        async def two(r):
            await asyncio.gather(r.ask("c1", "shell", {"command": "git status"}),
                                 r.ask("c2", "shell", {"command": "git diff"}))

        app = make_app(turn(1), two)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: len(pending(app)) == 2)
            head = app.query_one("#approval-head").render().plain
            assert "1 of 2 pending" in head
            assert app.query_one("#approval").approval_id == "c1"
            await pilot.press("n", "enter")
            await settle(pilot, lambda: pending(app) == ["c2"])
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert sorted(app.session.runner.answers) == [False, True]
    run(main())


def test_escape_twice_cancels_and_once_does_not():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("escape")
            assert not app.session.cancel_token.cancelled
            await pilot.press("escape")
            await settle(pilot, lambda: app.session.done)
            assert app.view.status == "cancelled"
            assert app.query_one("#end-panel").has_class("-cancelled")
    run(main())


def test_quit_during_a_live_run_asks_then_cancels_and_closes_the_journal(tmp_path):
    async def main():
        from support.steps import StepRunner
        journal = JsonlEventJournal(tmp_path / "run.jsonl")
        runner = StepRunner(turn(1), gated("c1", "shell", {"command": "git status"}))
        session = Session(runner, TaskState(task="t"), journal=journal)
        app = CockpitApp(session, theme="cockpit-dark", remember_theme=False, arm_seconds=0.0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: bool(pending(app)))
            await pilot.press("ctrl+q")
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("escape")  # stay
            assert not isinstance(app.screen, QuitScreen) and not session.done
            await pilot.press("ctrl+q")
            await pilot.press("ctrl+q")  # the quit key again confirms
            await settle(pilot, lambda: not app.is_running)
        assert session.done and journal.closed
        events = list(read_journal(tmp_path / "run.jsonl"))
        assert events[-1].type == "agent_end" and events[-1].status == "cancelled"
        assert app.return_value == "cancelled"
    run(main())


# Every key a waiting approval or its scope step uses, and others a hand reaches for in a
# dialog: none of them quits, and none answers the approval behind the dialog.
NOT_QUIT_KEYS = ["y", "n", "a", "s", "p", "u", "enter", "space", "q", "Y", "ctrl+c", "tab"]


def test_the_quit_dialog_is_confirmed_only_by_the_quit_key_never_by_an_approval_key():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("ctrl+q")
            dialog = app.screen
            assert isinstance(dialog, QuitScreen)
            assert dialog.query_one(Vertical).border_title == "quit cockpit?"
            text = str(dialog.query_one("#quit-text", Static).render())
            assert "[^q] again: quit" in text and "[esc] stay" in text and "[y]" not in text
            for key in NOT_QUIT_KEYS:
                await pilot.press(key)
                assert app.screen is dialog, key
                assert pending(app) == ["c1"] and not app.session.done, key
                note = str(dialog.query_one("#quit-note", Static).render())
                assert "does nothing here" in note and "^q again quits" in note, key
            await pilot.press("escape")  # stays: the approval is still there to answer
            assert not isinstance(app.screen, QuitScreen) and pending(app) == ["c1"]
            await pilot.press("ctrl+q", "ctrl+q")
            await settle(pilot, lambda: not app.is_running)
        assert app.return_value == "cancelled" and app.session.runner.answers == [False]
    run(main())


def test_a_remapped_quit_key_is_the_one_that_confirms(tmp_path, monkeypatch):
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        app.config.keymap["quit"] = "ctrl+x"
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("ctrl+x")
            assert isinstance(app.screen, QuitScreen)
            assert "[^x] again: quit" in str(app.screen.query_one("#quit-text",
                                                                   Static).render())
            await pilot.press("y", "ctrl+q")
            assert isinstance(app.screen, QuitScreen) and not app.session.done
            await pilot.press("ctrl+x")
            await settle(pilot, lambda: not app.is_running)
        assert app.return_value == "cancelled"
    run(main())


@pytest.mark.parametrize("live", [True, False])
def test_ctrl_c_says_what_cancels_and_what_quits(live):
    async def main():
        steps = [turn(1), gated("c1", "shell", {"command": "git status"})] if live \
            else [turn(1)]
        app = make_app(*steps)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"] if live else app.session.done)
            await pilot.press("ctrl+c")
            await pilot.pause()
            said = [(n.title, n.message) for n in app._notifications]
            assert said, "ctrl+c said nothing"
            title, message = said[-1]
            assert title == "ctrl+c copies selected text here"
            assert ("esc esc cancels the run" in message) is live
            assert "^q quits" in message
            assert app.is_running and (not app.session.done) is live  # nothing stopped
    run(main())


def test_quit_after_the_run_does_not_ask():
    async def main():
        app = make_app(turn(1))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.press("ctrl+q")
            await settle(pilot, lambda: not app.is_running)
        assert app.return_value == "completed"
    run(main())


def test_arrows_enter_expand_pager_and_inspect():
    async def main():
        short = "\n".join(f"line {i}" for i in range(10))
        long = "\n".join(f"row {i}" for i in range(5_000))
        app = make_app(turn(1, "hi"), plain("r1", "read_file", {"path": "a.py"}, short),
                       plain("r2", "read_file", {"path": "b.py"}, long))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            transcript = app.query_one(Transcript)
            transcript.focus()
            r1 = app.view.tool_calls["r1"].index
            r2 = app.view.tool_calls["r2"].index
            while transcript.cursor != r1:
                await pilot.press("up")
            before = transcript._heights[r1]
            await pilot.press("enter")
            assert transcript._heights[r1] > before  # expanded in place
            await pilot.press("enter")
            assert transcript._heights[r1] == before  # collapsed again
            await pilot.press("down")
            assert transcript.cursor == r2
            await pilot.press("enter")  # 5,000 lines: the pager
            await settle(pilot, lambda: isinstance(app.screen, PagerScreen))
            await pilot.press("end", "escape")
            await settle(pilot, lambda: not isinstance(app.screen, PagerScreen))
            await pilot.press("i")
            await settle(pilot, lambda: isinstance(app.screen, PagerScreen))
            text = "\n".join(app.screen.query_one("#pager").lines)
            assert '"type": "tool_start"' in text and '"type": "tool_end"' in text
            await pilot.press("q")
    run(main())


def test_help_is_generated_from_the_binding_table_with_the_keymap(tmp_path):
    async def main():
        (tmp_path / "home" / "config").mkdir(parents=True)
        (tmp_path / "home" / "config" / "config.toml").write_text(
            '[keymap]\napprove = "Y"\n', encoding="utf-8")
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("y")  # remapped away: nothing happens
            assert pending(app) == ["c1"]
            await pilot.press("Y")
            await settle(pilot, lambda: not pending(app))
            await pilot.press("question_mark")
            await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
            from rich.console import Console

            from cockpit.screens.help import help_table
            console = Console(width=100, record=True)
            console.print(help_table(keymap=app.config.keymap))
            out = console.export_text()
            assert "Y" in out and "Allow the oldest pending" in out and "ctrl+q" in out
            await pilot.press("escape")
            await settle(pilot, lambda: not isinstance(app.screen, HelpScreen))
            await pilot.press("escape", "escape")
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_next_task_runs_in_the_same_session_with_grants_carried_over():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}),
                       next_steps=lambda text: [turn(1, text),
                                                gated("c1", "shell", {"command": "git status"})])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a", "a")  # a again: the default scope, this session
            await settle(pilot, lambda: app.session.done)
            assert app.query_one("#composer").has_class("-shown")
            await pilot.click("#next-task")
            await pilot.press(*"again", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2 and app.session.done)
            assert app.sessions[1].session_id == app.sessions[0].session_id
            assert app.view.task_index == 2 and app.view.task == "again"
            second = app.view.tool_calls["c1"]
            assert second.task == 2 and second.approval.via == "grant"
            assert app.raw_events(second).count("approval_resolved") == 1
    run(main())


def test_no_next_task_input_without_a_factory():
    async def main():
        app = make_app(turn(1))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            assert app.query_one("#end-panel").has_class("-shown")
            assert not app.query_one("#composer").has_class("-shown")
    run(main())
