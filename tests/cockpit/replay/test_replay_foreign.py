"""The journal picker and another tool's session file (Pilot, headless): listed as `foreign`
with what it is, never `crashed?`; enter says how to view it instead of opening it."""

from __future__ import annotations

import asyncio
import shutil

from support.journals import fixture_events, write
from support.paths import TESTS
from support.pilot import until_shown

from cockpit.replay import ReplayApp

FOREIGN = TESTS / "golden" / "foreign"


def test_the_picker_names_a_foreign_file_and_says_how_to_view_it(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    folder = tmp_path / "journals"
    folder.mkdir()
    shutil.copy(FOREIGN / "claude-code-session.jsonl", folder / "claude.jsonl")
    write(folder / "ours.jsonl", fixture_events())

    async def main() -> tuple[list[str], list[str], object]:
        app = ReplayApp(None, journal_dir=folder, remember_theme=False)
        async with app.run_test(size=(140, 30)) as pilot:
            from textual.widgets import DataTable

            await until_shown(pilot, lambda: app.screen.loaded)  # read in a thread
            table = app.screen.query_one(DataTable)
            rows = [str(table.get_row_at(i)[1]) + " " + str(table.get_row_at(i)[3])
                    for i in range(table.row_count)]
            foreign = next(i for i, row in enumerate(rows) if row.startswith("foreign"))
            for _ in range(foreign):
                await pilot.press("down")
            await pilot.press("enter")
            await until_shown(pilot, lambda: bool(app._notifications))
            messages = [n.message for n in app._notifications]
            screen = type(app.screen).__name__
            await pilot.press("q")
        return rows, messages, screen

    rows, messages, screen = asyncio.run(main())
    assert "foreign a Claude Code session" in rows
    assert not any("crashed" in row for row in rows)
    assert screen == "PickerScreen"  # not opened as a journal
    assert messages == ["claude.jsonl is a Claude Code session, not a cockpit journal; view it "
                        "with `cockpit replay --agent claude --session "
                        "3f2b8c1a-7d4e-4f6a-9b2c-1e5d7a9c0b3f --cwd /home/dev/project`"]
