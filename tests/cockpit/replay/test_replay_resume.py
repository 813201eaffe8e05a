"""Resuming from the journal picker and viewer (Pilot, headless): `r` resumes the run shown when
its agent is one the catalogue knows, says how otherwise, and never exits to resume when the
viewer was handed no resume check (as `ReplayApp(path)` from Python is)."""

from __future__ import annotations

import asyncio
import json

from support.pilot import until_shown

from cockpit.cli.journals import resume_problem
from cockpit.replay import ReplayApp, ResumeRequest
from cockpit.replay.picker import NO_RESUME
from engine_adapter import JsonlEventJournal
from engine_adapter.events import AgentEnd, AgentStart, SessionInfoChanged


def _journal(path, engine: str) -> None:
    journal = JsonlEventJournal(path)
    for seq, event in enumerate((
            AgentStart(task="fix it", engine=engine, cwd=str(path.parent),
                       acp_session_id="sess-1"),
            SessionInfoChanged(title="Fixing"), AgentEnd(status="completed", result="ok"))):
        journal.write(event.model_copy(update={"seq": seq, "ts": 1000.0 + seq,
                                               "session_id": "s"}))
    journal.close()


def test_the_picker_and_the_viewer_resume_the_run_they_show(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    folder = tmp_path / "journals"
    folder.mkdir()
    _journal(folder / "codex.jsonl", "acp:codex")
    _journal(tmp_path / "custom.jsonl", "acp:my-own-agent")

    async def picker() -> object:
        app = ReplayApp(None, journal_dir=folder, theme="cockpit-dark", remember_theme=False,
                        resume_check=resume_problem)  # (what `cockpit replay` hands it)
        async with app.run_test(size=(120, 30), headless=True) as pilot:
            await until_shown(pilot, lambda: app.screen.loaded)  # read in a thread
            await pilot.press("r")
            await pilot.pause()
        return app.return_value

    result = asyncio.run(picker())
    assert result == ResumeRequest(folder / "codex.jsonl")

    async def viewer() -> tuple[object, list[str]]:
        app = ReplayApp(tmp_path / "custom.jsonl", theme="cockpit-dark", remember_theme=False,
                        resume_check=resume_problem)
        async with app.run_test(size=(120, 30), headless=True) as pilot:
            await until_shown(pilot, lambda: app.replay_screen is not None
                          and app.replay_screen.replay is not None)
            await pilot.press("r")
            await until_shown(pilot, lambda: bool(app._notifications))
            messages = [n.message for n in app._notifications]
            await pilot.press("q")
        return app.return_value, messages

    result, messages = asyncio.run(viewer())
    assert result is None  # an agent the catalogue does not know is never started from here
    assert "resume it with `cockpit resume JOURNAL --agent`" in messages[0]
    assert json.loads((tmp_path / "custom.jsonl").read_text().splitlines()[0])["engine"] == \
        "acp:my-own-agent"


def test_a_viewer_handed_no_resume_check_never_exits_to_resume(tmp_path, monkeypatch):
    # `ReplayApp(path)` from Python: resuming starts an agent, which only the command line does.
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    folder = tmp_path / "journals"
    folder.mkdir()
    _journal(folder / "codex.jsonl", "acp:codex")

    async def picker() -> tuple[object, list[str]]:
        app = ReplayApp(None, journal_dir=folder, theme="cockpit-dark", remember_theme=False)
        async with app.run_test(size=(120, 30), headless=True) as pilot:
            await until_shown(pilot, lambda: app.screen.loaded)
            await pilot.press("r")
            await until_shown(pilot, lambda: bool(app._notifications))
            messages = [n.message for n in app._notifications]
            await pilot.press("q")
        return app.return_value, messages

    result, messages = asyncio.run(picker())
    assert result is None and messages == [NO_RESUME]
