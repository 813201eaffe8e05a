"""The permission modes in the live cockpit (Pilot): the mode key cycles the mode (journaled, in
the status line, the next task starts in it), and an edit under review in ask mode opens in a
real `$EDITOR` (a shell script that rewrites the file) whose version is what gets written.
Snapshot of the edit review at 80x24 (update with `--snapshot-update`)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import pytest
from support.builtin_runs import runner
from support.event_loop import run
from support.live_app import DIFF, answerable, pending, settle, turn
from support.steps import StepRunner

from cockpit.live import CockpitApp
from cockpit.live.edit_review import editor_command, proposal_name
from engine_adapter import RunFold, Session, TaskState
from engine_adapter.sandbox import SandboxSettings
from engine_adapter.view.wording import approval_verdict

SWITCH = {"tool": "switch_to_editing", "input": {"reason": "the fix needs an edit"}}
DECLARE = {"tool": "declare_verification", "input": {"checks": [
    {"name": "passes", "command": "true"}]}}
EDIT = {"tool": "edit", "input": {"path": "a.txt", "old": "two", "new": "2"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("one\ntwo\n")
    return folder


def _editor(tmp_path: Path, body: str) -> str:
    """A real editor: a shell script run on the file it is given."""
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _app(session: Session, **kwargs: Any) -> CockpitApp:
    return CockpitApp(session, arm_seconds=0.0, remember_theme=False, theme="cockpit-dark",
                      **kwargs)


def _ask_run(ws: Path) -> Session:
    return Session(runner(ws, [SWITCH, DECLARE, EDIT, {"finish": "done"}],
                          sandbox=SandboxSettings(mode="off")), TaskState(task="t"), mode="ask")


def _edit_pending(app: CockpitApp) -> bool:
    return any(row.tool == "edit" for row in app.view.pending.values())


async def _to_the_edit(pilot: Any, app: CockpitApp) -> None:
    """Allow the switch to editing and the plan, until the edit's review is on screen."""
    for _ in range(3):
        await settle(pilot, lambda: bool(pending(app)) and answerable(app, pending(app)[0]))
        if _edit_pending(app):
            return
        asked = pending(app)
        await pilot.press("y")
        await settle(pilot, lambda asked=asked: pending(app) != asked)
    raise AssertionError("no edit to review")


def _edited_in_editor(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
                      ) -> tuple[Session, list[str]]:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, body))
    session = _ask_run(ws)
    notes: list[str] = []

    async def main() -> None:
        app = _app(session)
        async with app.run_test(size=(100, 30)) as pilot:
            original = app.notify

            def notify(message: str, **kwargs: Any) -> None:
                notes.append(message)
                original(message, **kwargs)
            app.notify = notify  # type: ignore[method-assign]
            await _to_the_edit(pilot, app)
            await pilot.press("e")
            await settle(pilot, lambda: bool(notes))
            if _edit_pending(app):  # nothing accepted: the request still waits; deny it
                await pilot.press("n")
                await pilot.press("enter")
            await settle(pilot, lambda: session.done)
    run(main())
    return session, notes


def test_the_editors_version_is_written_and_the_model_is_told(ws, tmp_path, monkeypatch):
    session, notes = _edited_in_editor(ws, tmp_path, monkeypatch,
                                       'printf "one\\nmine\\n" > "$1"')
    assert (ws / "a.txt").read_text() == "one\nmine\n"
    (resolved,) = [e for e in session.history if e.type == "approval_resolved"
                   and e.tool == "edit"]
    assert resolved.allowed and resolved.edited and resolved.via == "human"
    (ended,) = [e for e in session.history if e.type == "tool_end" and e.tool == "edit"]
    assert "differs from what you proposed" in ended.output
    assert "-2" in ended.output and "+mine" in ended.output
    assert notes[-1] == "accepted your version of a.txt"
    view = RunFold().apply_all(session.history)
    (row,) = [r for r in view.items if getattr(r, "tool", "") == "edit"
              and getattr(r, "approval", None) is not None]
    assert approval_verdict(row.approval) == "allowed by you, in your version"


@pytest.mark.parametrize(("body", "said"), [
    ("exit 3", "the editor exited with 3"),
    (":", "unchanged in the editor"),
    ("printf '\\377\\376' > \"$1\"", "not UTF-8 text"),
])
def test_an_editor_that_fails_or_changes_nothing_accepts_nothing(ws, tmp_path, monkeypatch,
                                                                  body, said):
    session, notes = _edited_in_editor(ws, tmp_path, monkeypatch, body)
    assert (ws / "a.txt").read_text() == "one\ntwo\n"  # denied after: nothing written
    assert any(said in note for note in notes), notes
    (resolved,) = [e for e in session.history if e.type == "approval_resolved"
                   and e.tool == "edit"]
    assert not resolved.allowed and not resolved.edited


def test_no_editor_set_says_how_to_set_one(ws, tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    session = _ask_run(ws)
    notes: list[str] = []

    async def main() -> None:
        app = _app(session)
        async with app.run_test(size=(100, 30)) as pilot:
            app.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
            await _to_the_edit(pilot, app)
            await pilot.press("e")
            await settle(pilot, lambda: bool(notes))
            assert _edit_pending(app)  # still waiting for an answer
            session.cancel()
            await settle(pilot, lambda: session.done)
    run(main())
    assert "set $VISUAL or $EDITOR" in notes[0]
    assert (ws / "a.txt").read_text() == "one\ntwo\n"


@pytest.mark.parametrize(("path", "name"), [
    ("src/app.py", "app.py"), ("..", "proposed.txt"), ("a/../..", "proposed.txt"),
    (".bashrc", "bashrc"), ("x y;$(rm -rf ~).sh", "x_y___rm_-rf___.sh"), ("", "proposed.txt"),
    ("-c:!sh", "-c__sh"), ("é\x1b[31m", "___31m")])
def test_the_proposals_file_name_is_safe_whatever_the_agent_named(path: str, name: str) -> None:
    assert proposal_name(path) == name


def test_visual_comes_before_editor_and_is_split_like_a_shell() -> None:
    assert editor_command({"VISUAL": "code --wait", "EDITOR": "vi"}) == ["code", "--wait"]
    assert editor_command({"EDITOR": "nano"}) == ["nano"]
    assert editor_command({"VISUAL": " ", "EDITOR": ""}) is None


def test_a_missing_editor_program_is_named(ws, tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
    session = _ask_run(ws)
    said: list[str] = []

    async def main() -> None:
        app = _app(session)
        async with app.run_test(size=(100, 30)) as pilot:
            app.notify = lambda message, **kw: said.append(message)  # type: ignore[method-assign]
            await _to_the_edit(pilot, app)
            await pilot.press("e")
            await settle(pilot, lambda: bool(said))
            session.cancel()
            await settle(pilot, lambda: session.done)
    run(main())
    assert "was not found" in said[0] and "no-such-editor" in said[0]


# -- the mode key --------------------------------------------------------------------------------

def test_the_mode_key_cycles_the_mode_journals_it_and_the_status_line_shows_it(ws):
    session = Session(runner(ws, [{"tool": "shell", "input": {"command": "ls"}},
                                  {"finish": "done"}], sandbox=SandboxSettings(mode="off")),
                      TaskState(task="t"))

    async def main() -> None:
        app = _app(session)
        async with app.run_test(size=(140, 30)) as pilot:
            await settle(pilot, lambda: bool(pending(app)))
            status = app.query_one("StatusLine")
            assert app.view.mode == "accept-edits"  # (the default: shown where there is room)
            await pilot.press("m")
            assert session.mode == "auto"
            # (no sandbox: auto asks, and the status line says so)
            await settle(pilot, lambda: "mode auto (asks)" in str(status.render()))
            assert app.view.mode == "auto"
            await pilot.press("m", "m")
            await settle(pilot, lambda: app.view.mode == "ask")
            assert len(pending(app)) == 1  # the command shown still waits for the human
            await pilot.press("y")
            await settle(pilot, lambda: session.done)
    run(main())
    changes = [(e.previous, e.mode, e.source) for e in session.history
               if e.type == "mode_changed"]
    assert changes == [("accept-edits", "auto", "human"), ("auto", "plan", "human"),
                       ("plan", "ask", "human")]
    (resolved,) = [e for e in session.history if e.type == "approval_resolved"]
    assert resolved.via == "human" and resolved.allowed


def test_snapshot_of_the_edit_review_at_80x24(snap_compare, steady_stamps):
    async def edit_step(r: StepRunner) -> None:
        r.approval_controller.offer_edit("c3", "app.py", 'def greet(name):\n'
                                         '    return f"hello {name}"\n')
        await r.ask("c3", "edit", {"path": "app.py", "old": '"hello " + name',
                                   "new": 'f"hello {name}"', "diff": DIFF}, tier=2,
                    reason="edit app.py")
    session = Session(StepRunner(turn(1, "Changing the greeting."), edit_step,
                                 cwd="/home/dev/project"),
                      TaskState(task="make greet() use an f-string"), session_id="s1",
                      mode="ask")

    async def run_before(pilot: Any) -> None:
        await settle(pilot, lambda: pending(pilot.app) == ["c3"])
        await pilot.pause()
    assert snap_compare(_app(session, clock=None), terminal_size=(80, 24),
                        run_before=run_before)


# -- replay --------------------------------------------------------------------------------------

def test_replay_shows_the_mode_and_each_change(ws, tmp_path):
    from support.replay_app import text_at_end

    from cockpit.widgets import StatusLine, Transcript
    from engine_adapter import JsonlEventJournal

    journal = tmp_path / "run.jsonl"
    session = Session(runner(ws, [{"tool": "list_dir", "input": {}}, {"finish": "done"}]),
                      TaskState(task="t"), mode="plan", journal=JsonlEventJournal(journal))

    async def main() -> None:
        async def watch() -> None:
            async for event in session.events():
                if event.type == "turn_start":
                    session.set_mode("ask")
        watcher = asyncio.ensure_future(watch())
        await session.run()
        await watcher
    asyncio.run(main())
    status = text_at_end(journal, StatusLine, size=(140, 30), until=lambda t: "mode" in t)
    assert "mode ask" in status
    shown = text_at_end(journal, Transcript, size=(140, 30),
                        until=lambda t: "permission mode" in t)
    assert "permission mode plan" in shown and "permission mode plan → ask" in shown
