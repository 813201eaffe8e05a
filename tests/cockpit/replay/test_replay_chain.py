"""The replay viewer and the journal's chain (Pilot): the verdict arrives after the first frame,
from a thread; a changed journal is named with its line on the timeline and in a notice."""

from __future__ import annotations

import asyncio

from support.journals import fixture_events, write
from support.pilot import until_shown
from support.replay_app import opened

from cockpit.replay import ReplayApp
from engine_adapter import JsonlEventJournal


class RecordingReplayApp(ReplayApp):
    """The viewer, keeping each notice's text as it is shown."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notices: list[str] = []

    def notify(self, message, *args, **kwargs) -> None:
        self.notices.append(str(message))
        super().notify(message, *args, **kwargs)


def chained(path) -> list[bytes]:
    with JsonlEventJournal(path, fsync="never") as writer:
        for event in fixture_events():
            writer.write(event)
    return path.read_bytes().splitlines(keepends=True)


async def verdict_of(path):
    app = RecordingReplayApp(path, remember_theme=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await until_shown(pilot, lambda: opened(app))
        screen = app.replay_screen
        await until_shown(pilot, lambda: screen.chain_verdict is not None)
        await pilot.pause()
        return screen.chain_verdict, screen.timeline.state.problems, app.notices


def test_an_intact_journal_shows_no_warning(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    chained(path)
    verdict, problems, notices = asyncio.run(verdict_of(path))
    assert verdict.status == "intact"
    assert "CHANGED" not in problems
    assert not any("changed after the run" in n for n in notices)


def test_a_changed_journal_is_named_with_its_line(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    lines = chained(path)
    lines[5] = lines[5].replace(b'"seq":5', b'"seq":5 ', 1)
    path.write_bytes(b"".join(lines))
    verdict, problems, notices = asyncio.run(verdict_of(path))
    assert verdict.tampered and verdict.line == 6
    assert "⚠ CHANGED after the run at line 6" in problems
    assert any("This journal was changed after the run: changed at line 6" in n
               for n in notices)


def test_a_removed_line_is_named(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    lines = chained(path)
    del lines[3]
    path.write_bytes(b"".join(lines))
    verdict, problems, _ = asyncio.run(verdict_of(path))
    assert verdict.tampered and verdict.line == 4
    assert "at line 4" in problems


def test_an_old_journal_reads_as_before(tmp_path) -> None:
    path = tmp_path / "old.jsonl"
    write(path, fixture_events())
    verdict, problems, notices = asyncio.run(verdict_of(path))
    assert verdict.status == "unchained"
    assert problems == "" and not any("changed" in n for n in notices)
