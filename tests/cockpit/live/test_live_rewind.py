"""The rewind key in the live cockpit (issue 27 §2): a real built-in run whose turns edit files,
`b` on a turn's header, the preview with its diffs, the confirm, the workspace restored, the
rewind journaled through the Session and shown, the next task's messages cut at that turn;
declined, nothing changes; while a task runs, it is refused; `.git` stays byte-identical."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.event_loop import run
from support.live_app import make_app, pending, settle, turn
from support.pilot import until_shown
from support.rewind_runs import FILES, rewind_factory
from support.workspaces import git_repo, git_status, state_of, tree_hash

from cockpit.live import CockpitApp
from cockpit.screens import RewindScreen
from cockpit.widgets import Transcript
from engine_adapter import read_journal
from engine_adapter.engines.builtin.conversation import TRANSCRIPT
from engine_adapter.engines.builtin.models import ModelReply, ToolResult, UserMessage
from engine_adapter.view import NoticeItem


def _conversation(tmp_path: Path) -> tuple[Path, Path, CockpitApp]:
    ws = git_repo(tmp_path / "ws", FILES)
    journal = tmp_path / "run.jsonl"
    factory = rewind_factory(ws, journal)
    app = CockpitApp(factory("edit the readme"), next_session=factory, clock=None,
                     remember_theme=False, theme="cockpit-dark", arm_seconds=0.0)
    return ws, journal, app


def _header(app: CockpitApp, turn: int, task: int = 1) -> int:
    """The index of the item that opens task `task`'s turn `turn` (its header is drawn on it)."""
    return next(i.index for i in app.view.items if i.task == task and i.turn == turn)


async def _ended(pilot, app: CockpitApp) -> None:
    await until_shown(pilot, lambda: app.session.done and not app.view.live)
    await pilot.pause()


def _rewinds(journal: Path) -> list:
    return [e for e in read_journal(journal) if e.type == "workspace_rewound"]


def test_b_on_a_turns_header_previews_asks_and_rewinds(tmp_path):
    ws, journal, app = _conversation(tmp_path)
    before_git, status_before, initial = tree_hash(ws / ".git"), git_status(ws), state_of(ws)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await _ended(pilot, app)
            assert (ws / "README.md").read_text() == "hi\n" and (ws / "notes.txt").exists()
            transcript = app.query_one(Transcript)
            transcript.focus()
            transcript.select(_header(app, 3))
            await pilot.pause()
            assert app.screen.active_bindings["b"].enabled  # on the header: the key applies
            await pilot.press("b")
            await until_shown(pilot, lambda: isinstance(app.screen, RewindScreen)
                              and app.screen.loaded)
            shown = app.screen
            assert isinstance(shown, RewindScreen)
            assert "would restore README.md" in shown.text
            assert "would remove notes.txt" in shown.text
            assert "-hi" in shown.diff and "+hello" in shown.diff  # now -> as it was
            await pilot.press("y")  # an approval key answers nothing here
            assert app.screen is shown and (ws / "README.md").read_text() == "hi\n"
            await pilot.press("b")  # the rewind key again: rewind
            await until_shown(pilot, lambda: bool(_rewinds(journal)) and any(
                isinstance(i, NoticeItem) and i.kind == "rewind" for i in app.view.items))
            assert state_of(ws) == initial  # turns 1-2 changed no file: as before the run
            (event,) = _rewinds(journal)
            assert event.to_turn == 3 and event.restored == ["README.md"]
            assert event.removed == ["notes.txt"]
            said = "the next task continues from the start of turn 3"
            assert event.conversation == said
            (row,) = [i for i in app.view.items if isinstance(i, NoticeItem)
                      and i.kind == "rewind"]
            assert row.text == ("↶ workspace rewound to the start of turn 3: 1 restored, "
                                f"1 removed; {said}")
            # through the Session: the next seq of the run, in its history too
            assert event.seq == app.session.history[-1].seq == len(app.session.history) - 1
            # the next task continues from turn 3: turns 3 and later are out of its messages
            assert app._start_next("and now?")
            await _ended(pilot, app)
            carried = app.sessions[1].state.data[TRANSCRIPT]
            assert [type(e) for e in carried[:1]] == [UserMessage]
            assert carried[0].text == "edit the readme"
            replies = [e for e in carried if isinstance(e, ModelReply)]
            results = [e.tool for e in carried if isinstance(e, ToolResult)]
            assert results == ["switch_to_editing", "declare_verification"]
            assert len(replies) == 3  # the first task's turns 1-2, and the next task's finish
            assert UserMessage("and now?") in carried
    run(main())
    assert tree_hash(ws / ".git") == before_git
    assert git_status(ws) == status_before


def test_declining_changes_nothing(tmp_path):
    ws, journal, app = _conversation(tmp_path)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await _ended(pilot, app)
            before = state_of(ws)
            transcript = app.query_one(Transcript)
            transcript.focus()
            transcript.select(_header(app, 1))
            await pilot.press("b")
            await until_shown(pilot, lambda: isinstance(app.screen, RewindScreen)
                              and app.screen.loaded)
            await pilot.press("escape")
            await until_shown(pilot, lambda: not isinstance(app.screen, RewindScreen))
            assert state_of(ws) == before
            assert not _rewinds(journal)
            assert not any(isinstance(i, NoticeItem) and i.kind == "rewind"
                           for i in app.view.items)
    run(main())


def test_the_key_applies_only_on_a_turns_header(tmp_path):
    _, _, app = _conversation(tmp_path)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await _ended(pilot, app)
            transcript = app.query_one(Transcript)
            transcript.focus()
            header = _header(app, 3)
            transcript.select(header + 1)  # the turn's second item: no header on it
            await pilot.pause()
            assert transcript.selected_turn_header is None
            shown = app.screen.active_bindings.get("b")
            assert shown is None or not shown.enabled
            assert "rewind here" not in str(app.query_one("#keys").render())
            transcript.select(header)
            await pilot.pause()
            assert app.screen.active_bindings["b"].enabled
            assert "b rewind here" in str(app.query_one("#keys").render())  # the keys line
    run(main())


def test_refused_while_a_task_runs(tmp_path):
    async def ask(r) -> None:
        await r.ask("c1", "shell", {"command": "ls"}, tier=3, reason="look")

    app = make_app(turn(1, "Looking."), ask, cwd=str(tmp_path))
    said: list[str] = []

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            app.notify = lambda message, **kw: said.append(str(message))  # what the user reads
            transcript = app.query_one(Transcript)
            transcript.focus()
            transcript.select(_header(app, 1))
            await pilot.press("b")
            await until_shown(pilot, lambda: bool(said))
            assert not isinstance(app.screen, RewindScreen)
            assert said == ["cannot rewind to turn 1: a task is running: wait for it to end, "
                            "or cancel it (escape twice), then rewind"]
            app.session.cancel()
    run(main())


SNAPSHOT_WORKSPACE = Path("/tmp/cockpit-rewind-snapshot/ws")  # named in the picture: fixed


def test_the_rewind_preview_at_80x24(snap_compare, tmp_path, steady_stamps):
    shutil.rmtree(SNAPSHOT_WORKSPACE.parent, ignore_errors=True)
    ws = git_repo(SNAPSHOT_WORKSPACE, FILES)
    factory = rewind_factory(ws, tmp_path / "run.jsonl")
    app = CockpitApp(factory("edit the readme"), next_session=factory, clock=None,
                     remember_theme=False, theme="cockpit-dark", arm_seconds=0.0)

    async def run_before(pilot) -> None:
        await _ended(pilot, app)
        transcript = app.query_one(Transcript)
        transcript.focus()
        transcript.select(_header(app, 1))
        await pilot.press("b")
        await until_shown(pilot, lambda: isinstance(app.screen, RewindScreen)
                          and app.screen.loaded)
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    finally:
        shutil.rmtree(SNAPSHOT_WORKSPACE.parent, ignore_errors=True)


def test_after_a_rewind_an_agents_conversation_is_said_to_hold_the_later_turns(tmp_path):
    """The SDK test agent over ACP: its conversation is its own (`session/fork`, unstable,
    copies a whole conversation, so it could not drop the later turns either): the rewind's row
    in the transcript says so."""
    import shlex

    from fakes.acp_agent.helpers import agent_argv

    from cockpit.launch import RunOptions, agent_factory
    from engine_adapter.checkpoints import CheckpointSettings

    ws = git_repo(tmp_path / "ws", FILES)
    agent = shlex.join(agent_argv("--log", ws / "agent.jsonl", "--state", ws / "state"))
    journal = tmp_path / "run.jsonl"
    factory = agent_factory(agent, cwd=ws, options=RunOptions(
        journal=journal, unattended=True, auto_approve=True, saved_grants=False,
        checkpoints=CheckpointSettings()))
    # Its turn writes a file through the cockpit (after the turn's checkpoint, which the gate
    # waits for): the rewind has something to take back.
    app = CockpitApp(factory("write notes.txt"), next_session=factory, clock=None,
                     remember_theme=False, theme="cockpit-dark", arm_seconds=0.0)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await _ended(pilot, app)
            transcript = app.query_one(Transcript)
            transcript.focus()
            transcript.select(_header(app, 1))
            await pilot.press("b")
            await until_shown(pilot, lambda: isinstance(app.screen, RewindScreen)
                              and app.screen.loaded)
            await pilot.press("b")
            await until_shown(pilot, lambda: any(
                isinstance(i, NoticeItem) and i.kind == "rewind" for i in app.view.items))
            (row,) = [i for i in app.view.items if isinstance(i, NoticeItem)
                      and i.kind == "rewind"]
            assert row.text.endswith("; the agent's own conversation still holds the later "
                                     "turns")
            assert not (ws / "notes.txt").exists()
            await factory.aclose()
    run(main())
    (event,) = _rewinds(journal)
    assert event.conversation == "the agent's own conversation still holds the later turns"
