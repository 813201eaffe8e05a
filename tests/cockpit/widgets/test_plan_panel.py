"""The agent's plan, pinned in the side column: the same `PlanPanel` in replay (a snapshot) and
live (against the SDK test agent), entries with status and priority, hidden without a plan, and
hostile plans (huge, control characters, words ACP does not have) shown truthfully."""

from __future__ import annotations

import asyncio
import json
import shlex
import time

import pytest
from fakes.acp_agent.helpers import agent_argv
from support.journals import write
from support.live_app import until_event
from support.pilot import until_shown
from support.replay_app import opened

from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp
from cockpit.replay import ReplayApp
from cockpit.widgets import PlanPanel
from engine_adapter import AgentEnd, AgentPlan, AgentStart, TurnEnd, TurnStart
from engine_adapter.events import PlanEntry

SIZE = (120, 34)

HOSTILE_PLAN = [
    PlanEntry(content="read the failing test", status="completed", priority="high"),
    PlanEntry(content="fix greet() \x1b[2J\x1b]0;pwned\x07 for real", status="in_progress",
              priority="high"),
    PlanEntry(content="run the suite \u202eesrever\u202c", status="pending", priority="low"),
    PlanEntry(content="a very long entry " + "word " * 60, status="pending", priority="medium"),
    PlanEntry(content="ask for review", status="blocked", priority="urgent"),
]


@pytest.fixture(autouse=True)
def _stable(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _journal(tmp_path, entries, dropped: int = 0):
    events = [AgentStart(task="fix greet()", engine="acp:test"), TurnStart(turn=1),
              AgentPlan(turn=1, entries=entries, dropped=dropped), TurnEnd(turn=1),
              AgentEnd(status="completed", result="done")]
    path = tmp_path / "run.jsonl"
    write(path, [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
                 for i, e in enumerate(events)])
    return path


def _at_end():
    async def run_before(pilot):
        await until_shown(pilot, lambda: opened(pilot.app))
        await pilot.press("end")
        await pilot.pause()
    return run_before


def test_snapshot_of_a_hostile_plan_in_replay(snap_compare, tmp_path):
    app = ReplayApp(_journal(tmp_path, HOSTILE_PLAN), remember_theme=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_at_end())


def _panel_text(path) -> tuple[bool, str]:
    async def main() -> tuple[bool, str]:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=SIZE, headless=True) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("end")
            await pilot.pause()
            panel = app.screen.query_one(PlanPanel)
            return panel.display, str(panel.render())
    return asyncio.run(main())


def test_a_plan_entry_reads_with_its_status_and_priority(tmp_path):
    shown, text = _panel_text(_journal(tmp_path, HOSTILE_PLAN))
    assert shown
    lines = text.splitlines()
    assert lines[0] == "Plan  1 of 5 done"
    assert lines[1] == "✓ read the failing test ! high"
    assert lines[2].startswith("▶ fix greet() ␛[2J␛]0;pwned␇ for real ! high")
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert lines[3].startswith("○ run the suite ") and lines[3].endswith(" low")
    assert lines[5] == "? ask for review urgent (blocked)"  # words ACP v1 does not have


@pytest.mark.parametrize(("count", "dropped", "more"), [
    (10_000, 0, "… 9,970 more entries"),  # a journal's hostile plan: the fold keeps 200
    (31, 0, "… 1 more entry"),
    (30, 0, None),
    (3, 500, "… 500 more entries"),  # entries the engine already dropped are counted
])
def test_a_huge_plan_is_cut_and_counted(tmp_path, count, dropped, more):
    entries = [PlanEntry(content=f"step {i}") for i in range(count)]
    shown, text = _panel_text(_journal(tmp_path, entries, dropped))
    lines = text.splitlines()
    assert shown and lines[0] == f"Plan  0 of {count + dropped:,} done"
    assert len(lines) <= 32
    assert lines[-1] == more if more else lines[-1] == f"○ step {count - 1}"


def test_no_plan_no_panel(tmp_path):
    shown, _text = _panel_text(_journal(tmp_path, []))
    assert not shown


def test_the_live_cockpit_pins_the_agents_plan(tmp_path, monkeypatch):
    """Against the SDK test agent: its plan, then a changed one (the whole list again, one
    entry done), pinned in the same panel."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    plans = [[{"content": "read the file", "status": "in_progress", "priority": "high"},
              {"content": "edit it", "status": "pending", "priority": "medium"}],
             [{"content": "read the file", "status": "completed", "priority": "high"},
              {"content": "edit it", "status": "in_progress", "priority": "medium"},
              {"content": "run the tests", "status": "pending", "priority": "low"}]]
    steps = [{"update": {"sessionUpdate": "plan", "entries": entries}} for entries in plans]
    factory = agent_factory(shlex.join(agent_argv()), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    session = factory("script " + json.dumps(steps))
    async def main() -> list[str]:
        app = CockpitApp(session, theme="cockpit-dark", next_session=factory,
                         remember_theme=False, clock=None, arm_seconds=0.0)
        async with app.run_test(size=SIZE, headless=True) as pilot:
            await until_event(session, "agent_end")
            panel = app.screen.query_one(PlanPanel)
            await until_shown(pilot, lambda: panel.display)
            lines = str(panel.render()).splitlines()
            await pilot.press("ctrl+q")
            return lines
    assert asyncio.run(main()) == ["Plan  1 of 3 done", "✓ read the file ! high", "▶ edit it",
                                   "○ run the tests low"]
