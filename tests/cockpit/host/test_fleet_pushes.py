"""What a host's push costs the fleet view (`FleetApp.show`): a run whose row shows the same as
before keeps its cells (not built again, not compared, not updated), and a changed run updates
only the cells that changed."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from support.event_loop import run as run_loop

from cockpit.host.fleet.board import board
from cockpit.host.fleet.fleet_app import FleetApp

T0 = 1_790_000_000.0


def _row(run: str, activity: float, tokens: int = 100) -> dict:
    return {"id": run, "task": "stream words", "engine": "bench", "status": "running",
            "waiting": {"approvals": 0, "questions": 0}, "activity": activity,
            "tokens": tokens, "cost": None, "asks": [], "tasks": 1}


def _fleet(activity: dict[str, float], tokens: dict[str, int] | None = None) -> dict:
    return {"local": [_row(run, at, (tokens or {}).get(run, 100))
                      for run, at in activity.items()]}


@pytest.fixture(autouse=True)
def _utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")  # (the last activity's second is read in local time)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def _test_an_unchanged_run_keeps_its_cells() -> None:
    app = FleetApp(remember_theme=False, arm_seconds=0)
    async with app.run_test(size=(160, 30)) as pilot:
        runs = ["a1", "b2", "c3", "d4"]
        app.show(board(_fleet(dict.fromkeys(runs, T0 + 0.1))))
        await pilot.pause()
        built: Counter[str] = Counter()
        updated: list[tuple[str, str]] = []
        cells = app._run_cells
        table = app.query_one("#runs")
        update_cell = table.update_cell

        def counting_cells(run, when):
            built[run.id] += 1
            return cells(run, when)

        def counting_update(row_key, column_key, value, **options):
            updated.append((row_key, str(value)))
            return update_cell(row_key, column_key, value, **options)

        app._run_cells = counting_cells  # type: ignore[method-assign]
        table.update_cell = counting_update  # type: ignore[method-assign]
        # b2 streams on within the same second (its row shows the same); c3's tokens move.
        app.show(board(_fleet({"a1": T0 + 0.1, "b2": T0 + 0.6, "c3": T0 + 0.1,
                               "d4": T0 + 0.1}, {"c3": 2_500})))
        assert built == {"c3": 1}
        assert updated == [("local\x00c3", "2,500")]
        # A second later, b2's last activity is the one cell that changes.
        app.show(board(_fleet({"a1": T0 + 0.1, "b2": T0 + 1.2, "c3": T0 + 0.1,
                               "d4": T0 + 0.1}, {"c3": 2_500})))
        assert built == {"c3": 1, "b2": 1}
        assert updated[1:] == [("local\x00b2", time.strftime("%H:%M:%S",
                                                              time.localtime(T0 + 1.2)))]
        await pilot.pause()
        row = table.get_row("local\x00b2")
        assert str(row[4]) == time.strftime("%H:%M:%S", time.localtime(T0 + 1))
        assert str(table.get_row("local\x00c3")[5]) == "2,500"


def test_an_unchanged_run_keeps_its_cells() -> None:
    run_loop(_test_an_unchanged_run_keeps_its_cells())
