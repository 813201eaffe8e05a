"""The message box's prompt history, on the live cockpit: `up` in an empty box (or on its first
line) recalls this project's earlier prompts — from earlier runs too, read from the data dir —
`down` goes back to what was typed, and `ctrl+r` searches them; a corrupt history file is one
note, never a crash; every task sent (the first one too) is kept for the next run."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import gated, make_app, pending, settle, turn

from cockpit.live.prompts import workspace_of
from cockpit.prompt_history import PromptHistory

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _replies(text):
    return [turn(1, f"on it: {text}")]


def _app(tmp_path, earlier=(), **kwargs):
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    history = PromptHistory.for_workspace(workspace)
    for text in earlier:
        history.add(text)
    app = make_app(turn(1, "done"), cwd=str(workspace), task="the first task",
                   next_steps=_replies, **kwargs)
    return app, history


async def _ready(app, pilot):
    await settle(pilot, lambda: app.session.done and app.focused is app.composer.box
                 and "the first task" in app.composer.history)


def _notices(app):
    return [str(n.message) for n in app._notifications]


def test_up_recalls_earlier_prompts_of_this_project_newest_first_and_down_goes_back(tmp_path):
    async def main():
        app, history = _app(tmp_path, ["fix the tests", "add a README\nwith two lines"])
        assert workspace_of(app.session).endswith("ws")
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            box = app.composer.box
            await pilot.press("up")
            assert box.value == "the first task"  # this run's task is the newest
            await pilot.press("up")
            assert box.value == "add a README\nwith two lines"
            await pilot.press("up")  # the cursor went to the first line: up goes on
            assert box.value == "fix the tests"
            await pilot.press("up")  # the oldest stays
            assert box.value == "fix the tests"
            await pilot.press("down", "down")
            assert box.value == "the first task"
            await pilot.press("down")
            assert box.value == ""  # back to what was typed (nothing)
            await pilot.press("up", "enter")
            await settle(pilot, lambda: len(app.sessions) == 2 and app.session.done)
            assert app.session.state.task == "the first task"
        return history
    history = run(main())
    assert history.load().prompts == ("fix the tests", "add a README\nwith two lines",
                                      "the first task", "the first task")


def test_a_draft_comes_back_after_browsing_and_an_edit_ends_browsing(tmp_path):
    async def main():
        app, _ = _app(tmp_path, ["older"])
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            box = app.composer.box
            await pilot.press(*"my draft")
            await pilot.press("up")  # on the first (only) line: recalls, the draft is kept
            assert box.value == "the first task"
            await pilot.press("down")
            assert box.value == "my draft"
            await pilot.press("up", "end", "!")  # edited: a new message, down is the cursor's
            assert box.value == "the first task!"
            await pilot.press("down")
            assert box.value == "the first task!"
    run(main())


def test_on_a_later_line_up_moves_the_cursor_not_the_history(tmp_path):
    async def main():
        app, _ = _app(tmp_path, ["older"])
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            box = app.composer.box
            box.value = "line one\nline two"
            await pilot.press("up")
            assert box.value == "line one\nline two" and box.cursor_location[0] == 0
    run(main())


def test_ctrl_r_searches_every_word_and_enter_takes_the_prompt(tmp_path):
    async def main():
        app, _ = _app(tmp_path, ["deploy staging", "run the linter", "deploy production now",
                                 "Deploy STAGING again"])
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            composer = app.composer
            await pilot.press("ctrl+r")
            assert composer.searching
            await pilot.press(*"deploy")
            options = [str(o.prompt) for o in app.query_one("#commands").options]
            assert options == ["Deploy STAGING again", "deploy production now", "deploy staging"]
            await pilot.press("space", *"staging")
            options = [str(o.prompt) for o in app.query_one("#commands").options]
            assert options == ["Deploy STAGING again", "deploy staging"]
            await pilot.press("down", "enter")  # takes it; not sent yet
            assert not composer.searching and composer.box.value == "deploy staging"
            assert len(app.sessions) == 1
            await pilot.press("enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == "deploy staging"
    run(main())


def test_escape_closes_the_search_and_keeps_the_query_and_the_run_goes_on(tmp_path):
    async def main():
        app, _ = _app(tmp_path, ["a"])
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            await pilot.press("ctrl+r", *"zzz")
            assert [o for o in app.query_one("#commands").options] == []
            await pilot.press("escape")
            assert not app.composer.searching and app.composer.box.value == "zzz"
    run(main())


def test_from_an_empty_search_escape_closes_it_and_does_not_cancel(tmp_path):
    async def main():
        workspace = tmp_path / "ws"
        workspace.mkdir()
        app = make_app(turn(1, "first"), cwd=str(workspace),
                       next_steps=lambda text: [gated("c2", "run_command", {"command": "ls"})])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            await pilot.press(*"go", "enter")
            await settle(pilot, lambda: pending(app) == ["c2"])
            await pilot.press("ctrl+r", "escape", "escape")  # back from search, then arm
            assert not app.composer.searching and not app.session.done
    run(main())


CORRUPT = {
    "garbage": b"\x00\xff{{{\n",
    "half json": b'{"text": "kept"}\n{"text": \n',
}


@pytest.mark.parametrize("data", CORRUPT.values(), ids=CORRUPT.keys())
def test_a_corrupt_history_file_is_one_note_never_a_crash(tmp_path, data):
    async def main():
        workspace = tmp_path / "ws"
        workspace.mkdir()
        history = PromptHistory.for_workspace(workspace)
        history.path.parent.mkdir(parents=True)
        history.path.write_bytes(data)
        app = make_app(turn(1, "done"), cwd=str(workspace), task="the first task",
                       next_steps=_replies)
        async with app.run_test(size=SIZE) as pilot:
            await _ready(app, pilot)
            said = [n for n in _notices(app) if "prompt history" in n]
            assert len(said) == 1 and "unreadable line" in said[0]
            await pilot.press("up")
            assert app.composer.box.value == "the first task"
    run(main())


def test_a_history_file_swapped_for_a_symlink_is_not_followed(tmp_path):
    async def main():
        outside = tmp_path / "outside.jsonl"
        outside.write_text('{"text": "a prompt from elsewhere"}\n')
        workspace = tmp_path / "ws"
        workspace.mkdir()
        history = PromptHistory.for_workspace(workspace)
        history.path.parent.mkdir(parents=True)
        history.path.symlink_to(outside)
        app = make_app(turn(1, "done"), cwd=str(workspace), task="t", next_steps=_replies)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box
                         and len([n for n in _notices(app) if "prompt history" in n]) == 2)
            assert "a prompt from elsewhere" not in app.composer.history
        assert outside.read_text() == '{"text": "a prompt from elsewhere"}\n'
    run(main())
