"""Snapshots of the fleet view at 80x24 and 40x12, drawn from the rows a host pushes (`watch`):
an inbox of asks across runs and hosts (one with hostile text: markup and an escape sequence,
shown as written), a host that cannot be reached, and an empty inbox (update with `pytest
tests/cockpit/host/test_fleet_snapshots.py --snapshot-update`)."""

from __future__ import annotations

import time

import pytest
from support.pilot import until_shown

from cockpit.host.fleet.board import board
from cockpit.host.fleet.fleet_app import FleetApp

T0 = 1_790_000_000.0


def _ask(approval_id: str, command: str, asked: float, *, prefix: str = "",
         why: str = "an interpreter runs arbitrary code") -> dict:
    return {"kind": "approval", "id": approval_id, "tool": "shell", "command": f"$ {command}",
            "reason": "the model says: see which test fails", "tier": 3, "prefix": prefix,
            "why": why if not prefix else "", "asked": asked}


def _row(run: str, status: str, asks: list[dict], *, tokens: int = 4066,
         cost: float | None = 0.0123, task: str = "Fix the failing test in this project.") -> dict:
    return {"id": run, "task": task, "engine": "demo", "status": status,
            "waiting": {"approvals": len(asks), "questions": 0},
            "started": "2026-09-21T08:00:00Z", "journal": f"/j/{run}.jsonl",
            "activity": T0 + 30, "tokens": tokens, "cost": cost, "asks": asks, "tasks": 1}


BUSY = {
    "local": [
        _row("3b9a828c75a0", "running", [_ask("T1", "python3 -m unittest", T0 + 5)]),
        _row("f49a3fc888f5", "running",
             [_ask("T4", "git status", T0 + 20, prefix="git status")]),
        _row("0c4d1e2f3a4b", "completed", [], tokens=52_310, cost=0.41),
    ],
    "box2": [
        _row("574f3c4dce64", "running",
             [_ask("T2", "echo [bold red]pwned[/] \x1b[2J\x1b]0;title\x07", T0 + 10)],
             task="Port the [link=http://x]parser[/link] to\x1b[31m rust"),
    ],
    "gone": "unreachable: ssh: Could not resolve hostname gone: Name or service not known",
}
QUIET = {"local": [_row("0c4d1e2f3a4b", "completed", [], tokens=52_310, cost=0.41)]}


@pytest.fixture(autouse=True)
def _stable(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TZ", "UTC")  # the times of the asks and of the last activity
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _showing(hosts):
    async def run_before(pilot):
        pilot.app.show(board(hosts))
        await until_shown(pilot, lambda: pilot.app.board.runs)
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", [(80, 24), (40, 12)])
def test_an_inbox_across_hosts_and_a_host_unreachable(snap_compare, size) -> None:
    app = FleetApp(remember_theme=False, arm_seconds=0)
    assert snap_compare(app, terminal_size=size, run_before=_showing(BUSY))


def test_nothing_waiting(snap_compare) -> None:
    app = FleetApp(remember_theme=False, arm_seconds=0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_showing(QUIET))
