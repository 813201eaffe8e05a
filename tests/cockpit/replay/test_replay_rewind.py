"""The rewind key in the replay viewer (issue 27 §2): on an ended run's journal, `b` on a turn's
first row previews the rewind with its diffs and asks; confirmed, the workspace is restored, the
rewind is appended to the journal's chain (as `cockpit rewind` does: `cockpit verify` passes)
and the reopened viewer shows it; a workspace that is gone or a damaged store: one line, nothing
changed."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from support.pilot import until_shown
from support.replay_app import opened
from support.rewind_runs import FILES, rewind_factory
from support.workspaces import git_repo, git_status, state_of, tree_hash
from typer.testing import CliRunner

from cockpit.cli.main import app as cli_app
from cockpit.paths import checkpoint_dir
from cockpit.replay import ReplayApp
from cockpit.screens import RewindScreen
from cockpit.widgets import Transcript
from engine_adapter import read_journal
from engine_adapter.view import NoticeItem


def _ended_run(tmp_path: Path) -> tuple[Path, Path, tuple[dict, str, str]]:
    """The ended run's workspace and journal, and the workspace before the run: its files,
    its `.git`'s hash and `git status`."""
    ws = git_repo(tmp_path / "ws", FILES)
    before = state_of(ws), tree_hash(ws / ".git"), git_status(ws)
    journal = tmp_path / "run.jsonl"
    asyncio.run(rewind_factory(ws, journal)("edit the readme").run())
    return ws, journal, before


def _viewer(journal: Path) -> ReplayApp:
    return ReplayApp(journal, remember_theme=False, theme="cockpit-dark")


async def _on_header(pilot, viewer: ReplayApp, turn: int) -> Transcript:
    await until_shown(pilot, lambda: opened(viewer))
    await pilot.press("end")
    screen = viewer.replay_screen
    await until_shown(pilot, lambda: screen.view is not None and any(
        i.kind == "end" for i in screen.view.items))
    transcript = screen.query_one(Transcript)
    transcript.focus()
    transcript.select(next(i.index for i in screen.view.items if i.turn == turn))
    await pilot.pause()
    return transcript


def _rewinds(journal: Path) -> list:
    return [e for e in read_journal(journal) if e.type == "workspace_rewound"]


def test_b_in_replay_rewinds_an_ended_run_and_appends_to_its_journal(tmp_path):
    ws, journal, (initial, git_before, status_before) = _ended_run(tmp_path)
    viewer = _viewer(journal)

    async def main():
        async with viewer.run_test(size=(120, 40)) as pilot:
            await _on_header(pilot, viewer, 1)
            await pilot.press("b")
            await until_shown(pilot, lambda: isinstance(viewer.screen, RewindScreen)
                              and viewer.screen.loaded)
            assert "would restore README.md" in viewer.screen.text
            assert "would remove notes.txt" in viewer.screen.text
            await pilot.press("b")
            await until_shown(pilot, lambda: bool(_rewinds(journal)))
            # reopened at its end: the rewind's row, without moving there
            await until_shown(pilot, lambda: viewer.replay_screen is not None
                              and viewer.replay_screen.view is not None)
            screen = viewer.replay_screen
            await until_shown(pilot, lambda: screen.view is not None and any(
                isinstance(i, NoticeItem) and i.kind == "rewind" for i in screen.view.items))
    asyncio.run(main())
    assert state_of(ws) == initial
    (event,) = _rewinds(journal)
    assert event.to_turn == 1 and event.removed == ["notes.txt"]
    assert tree_hash(ws / ".git") == git_before and git_status(ws) == status_before
    verified = CliRunner().invoke(cli_app, ["verify", str(journal)])
    assert verified.exit_code == 0, verified.output


def _refused(journal: Path) -> list[str]:
    viewer = _viewer(journal)
    said: list[str] = []

    async def main():
        async with viewer.run_test(size=(120, 40)) as pilot:
            await _on_header(pilot, viewer, 3)
            viewer.notify = lambda message, **kw: said.append(str(message))
            await pilot.press("b")
            await until_shown(pilot, lambda: any(s.startswith("cannot") for s in said)
                              and not isinstance(viewer.screen, RewindScreen))
    asyncio.run(main())
    return [s for s in said if s.startswith("cannot")]


def test_a_workspace_that_is_gone_is_one_line(tmp_path):
    ws, journal, _ = _ended_run(tmp_path)
    shutil.rmtree(ws)
    (line,) = _refused(journal)
    assert line == f"cannot rewind to turn 3: the workspace {ws} is gone"
    assert not _rewinds(journal)


def test_a_damaged_store_is_one_line_and_changes_nothing(tmp_path):
    ws, journal, _ = _ended_run(tmp_path)
    before = state_of(ws)
    for manifest in (checkpoint_dir() / "manifests").glob("*.json"):
        manifest.write_text("{not json")
    (line,) = _refused(journal)
    assert line.startswith("cannot rewind to turn 3: ") and "\n" not in line
    assert state_of(ws) == before and not _rewinds(journal)
