"""Snapshots of the replay viewer at a few positions of a fixture journal (update with
`pytest tests/cockpit/replay/test_replay_snapshots.py --snapshot-update`)."""

from __future__ import annotations

import time

import pytest
from support.journals import fixture_events, write
from support.pilot import until_shown
from support.replay_app import opened

from cockpit.replay import ReplayApp

SIZE = (120, 34)


@pytest.fixture(autouse=True)
def _stable(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TZ", "UTC")  # the timeline shows each event's wall time
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "run.jsonl"
    write(path, fixture_events())
    return path


def _after(*keys):
    async def run_before(pilot):
        await until_shown(pilot, lambda: opened(pilot.app))
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
    return run_before


def test_first_event(snap_compare, journal):
    app = ReplayApp(journal, remember_theme=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_after())


def test_at_a_pending_approval(snap_compare, journal):
    app = ReplayApp(journal, remember_theme=False)
    assert snap_compare(app, terminal_size=SIZE,
                        run_before=_after("right_curly_bracket"))


def test_at_a_failed_tool_call(snap_compare, journal):
    app = ReplayApp(journal, remember_theme=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_after("e", "e"))


def test_at_the_end(snap_compare, journal):
    app = ReplayApp(journal, remember_theme=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_after("end"))
