"""Snapshots of the screens that matter (pytest-textual-snapshot; update with
`pytest tests/cockpit/live/test_app_snapshots.py --snapshot-update`)."""

from __future__ import annotations

import pytest
from support.live_app import (
    DIFF,
    gated,
    hold,
    make_app,
    pending,
    phase,
    plain,
    settle,
    turn,
    verify,
)
from textual.widgets import Input, TextArea

SIZE = (120, 34)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch, steady_stamps):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _app(*steps, **kwargs):
    # No wall clock: the elapsed time is the span of the events, so the picture is stable.
    return make_app(*steps, clock=None, **kwargs)


async def _quiet(pilot) -> None:
    for widget in [*pilot.app.query(Input), *pilot.app.query(TextArea)]:  # (the box too)
        widget.cursor_blink = False
    await pilot.pause()


def _until_pending(app, approval_id):
    async def run_before(pilot):
        await settle(pilot, lambda: pending(app) == [approval_id])
        await _quiet(pilot)
    return run_before


def _until_done(app, cancel=False):
    async def run_before(pilot):
        if cancel:
            await settle(pilot, lambda: bool(pending(app)))
            app.session.cancel("cancelled by the user")
        await settle(pilot, lambda: app.session.done)
        await _quiet(pilot)
    return run_before


def test_shell_approval_pending(snap_compare):
    app = _app(turn(1, "Let me check the **working tree** first."),
               plain("r1", "read_file", {"path": "app.py"}, "def greet(name):\n    return 1\n"),
               gated("c1", "shell", {"command": "git status --short"}))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_pending(app, "c1"))


def test_edit_approval_with_its_diff(snap_compare):
    app = _app(turn(1, "Switching to an f-string."), phase("edit", "investigate"),
               gated("e1", "edit", {"path": "app.py", "diff": DIFF}, tier=3))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_pending(app, "e1"))


def test_tier_four_prompt(snap_compare):
    app = _app(turn(1, "Cleaning the build directory."),
               gated("d1", "shell", {"command": "rm -rf build/"}, tier=4))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_pending(app, "d1"))


def test_failed_verification(snap_compare):
    app = _app(turn(1, "Running the checks."), verify(passed=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_done(app))


def test_completed_run(snap_compare):
    app = _app(turn(1, "Done: `greet()` uses an f-string."),
               plain("r1", "shell", {"command": "pytest -q"}, "1 passed in 0.01s"),
               verify(passed=True))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_done(app))


def test_cancelled_run(snap_compare):
    app = _app(turn(1, "Starting."), gated("c1", "shell", {"command": "make deploy"}), hold())
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_done(app, cancel=True))
