"""Snapshots of the moments that matter at 160x48, 80x24 and 40x12: a pending approval with its
diff (and a timeout counting down), a finished run with a long reply, a failed run with its
error (update with `pytest tests/cockpit/live/test_layout_snapshots.py --snapshot-update`)."""

from __future__ import annotations

import pytest
from support.live_app import (
    DIFF,
    LONG_REPLY,
    gated,
    make_app,
    pending,
    phase,
    plain,
    reply,
    settle,
    turn,
    verify,
)
from textual.widgets import Input, TextArea

SIZES = [(160, 48), (80, 24), (40, 12)]
IDS = ["160x48", "80x24", "40x12"]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch, steady_stamps):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", "/home/dev")


async def _quiet(pilot) -> None:
    for widget in [*pilot.app.query(Input), *pilot.app.query(TextArea)]:  # (the box too)
        widget.cursor_blink = False
    await pilot.pause()


def _until(predicate):
    async def run_before(pilot):
        await settle(pilot, lambda: predicate(pilot.app))
        await _quiet(pilot)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_pending_edit_approval_with_its_diff(snap_compare, size):
    app = make_app(turn(1, "Switching to an f-string."), verify(passed=True),
                   phase("edit", "investigate"),
                   plain("r1", "read_file", {"path": "app.py"}, 'def greet(name):\n    ...\n'),
                   gated("e1", "edit", {"path": "app.py", "diff": DIFF}, tier=3),
                   cwd="/home/dev/projects/greeter", approval_timeout=30, clock=None)
    assert snap_compare(app, terminal_size=size,
                        run_before=_until(lambda app: pending(app) == ["e1"]))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_finished_run_with_a_long_reply(snap_compare, size):
    app = make_app(turn(1, "Starting."), verify(passed=True), reply(LONG_REPLY), end=False,
                   cwd="/home/dev/projects/greeter", clock=None, next_steps=lambda text: [])
    # The focus is in the message box once the run ended (the next task is typed at once).
    assert snap_compare(app, terminal_size=size,
                        run_before=_until(lambda app: app.session.done
                                          and app.focused is app.composer.box
                                          and app.composer.history))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_failed_run_shows_its_error(snap_compare, size):
    app = make_app(turn(1, "Looking at the failing test."), verify(passed=False),
                   reply("I started to fix", "failed",
                         "agent exited with status 1: ModuleNotFoundError: No module named "
                         "'acp'"),
                   end=False, cwd="/home/dev/projects/greeter", clock=None)
    assert snap_compare(app, terminal_size=size,
                        run_before=_until(lambda app: app.session.done))
