"""What a host's push costs the fleet view (`FleetApp.show`): a run whose row shows the same as
before keeps its cells (not built again, not compared, not updated), and a changed run updates
only the cells that changed; and when a push is drawn: never before the key that came with it
(after its action, in its frame, and, while keys come, in the next key's: never in a frame of
its own between keys)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest
from support.event_loop import run as run_loop
from textual import events

from cockpit.host.fleet import fleet_app
from cockpit.host.fleet.board import board
from cockpit.host.fleet.fleet_app import FleetApp
from cockpit.host.fleet.watch import HostWatch

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


class _Pushed(HostWatch):
    """A host whose pushes the test makes (`push`); nothing is connected."""

    async def run(self) -> None:
        await asyncio.Event().wait()

    def push(self, rows: list[dict]) -> None:
        self.rows, self.problem = rows, None
        self.on_change()


class _Logged(FleetApp):
    """The fleet view, saying in `said` when a key's action ran and when a push was drawn;
    `push_with_key` is pushed as the next key goes to its widget."""

    def __init__(self, watch: _Pushed) -> None:
        super().__init__([watch], remember_theme=False, arm_seconds=0)
        self.watch = watch
        self.said: list[str] = []
        self.push_with_key: list[dict] | None = None

    async def on_event(self, event: events.Event) -> None:
        arrived = isinstance(event, events.Key) and not event.is_forwarded  # (read it first:
        await super().on_event(event)  # forwarding marks the event)
        if arrived and self.push_with_key is not None:
            rows, self.push_with_key = self.push_with_key, None
            self.watch.push(rows)

    async def run_action(self, action, default_namespace=None, namespaces=None) -> bool:
        self.said.append(f"action {action}")
        return await super().run_action(action, default_namespace, namespaces)

    def show(self, shown, *, rows=None) -> int:
        self.said.append(f"show {len(shown.runs)}")
        return super().show(shown, rows=rows)


async def _test_a_push_is_drawn_after_the_key_that_came_with_it() -> None:
    from support.pilot import until_shown

    app = _Logged(_Pushed("local"))
    async with app.run_test(size=(160, 30)) as pilot:
        app.watch.push(_fleet(dict.fromkeys(["a1", "b2", "c3"], T0))["local"])
        await until_shown(pilot, lambda: len(app.board.runs) == 3)
        app.query_one("#runs").focus()
        await pilot.pause()
        app.said.clear()
        # A push arrives as `down` goes to the runs table: it is drawn after the key's action.
        app.push_with_key = _fleet(dict.fromkeys(["a1", "b2", "c3", "d4"], T0))["local"]
        await pilot.press("down")
        await until_shown(pilot, lambda: len(app.board.runs) == 4)
        assert app.said == ["action cursor_down", "show 4"]


def test_a_push_is_drawn_after_the_key_that_came_with_it() -> None:
    run_loop(_test_a_push_is_drawn_after_the_key_that_came_with_it())


async def _test_while_keys_come_a_push_waits_for_the_next_key(monkeypatch) -> None:
    from support.pilot import until_shown

    monkeypatch.setattr(fleet_app, "KEY_SECONDS", 3600.0)  # (keys "keep coming": no clock)
    app = _Logged(_Pushed("local"))
    async with app.run_test(size=(160, 30)) as pilot:
        app.watch.push(_fleet(dict.fromkeys(["a1", "b2", "c3"], T0))["local"])
        await until_shown(pilot, lambda: len(app.board.runs) == 3)
        app.query_one("#runs").focus()
        await pilot.press("down")
        app.said.clear()
        app.watch.push(_fleet(dict.fromkeys(["a1", "b2", "c3", "d4"], T0))["local"])
        for _ in range(5):
            await pilot.pause()
        assert app.said == [] and len(app.board.runs) == 3  # (it waits for the next key)
        await pilot.press("up")
        await until_shown(pilot, lambda: len(app.board.runs) == 4)
        assert app.said == ["action cursor_up", "show 4"]
        table = app.query_one("#runs")
        assert table.row_count == 4 and table.cursor_row == 0


def test_while_keys_come_a_push_waits_for_the_next_key(monkeypatch) -> None:
    run_loop(_test_while_keys_come_a_push_waits_for_the_next_key(monkeypatch))


class _Framed(_Logged):
    """`_Logged`, saying also each frame drawn and, when a key comes back from its widget (its
    action ran), how many runs the board then has."""

    async def on_event(self, event: events.Event) -> None:
        returned = isinstance(event, events.Key) and event.is_forwarded
        await super().on_event(event)
        if returned:
            self.said.append(f"returned {len(self.board.runs)}")

    def _display(self, screen, renderable) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            self.said.append("frame")


async def _test_while_keys_come_a_push_has_no_frame_of_its_own(monkeypatch) -> None:
    """A push that came between two keys is drawn in the second key's frame: once its action
    ran, before that frame (a frame of the push's own, between the keys, kept the next key's
    frame back a period of the frame cap or two: the busy fleet's slowest keys)."""
    from support.pilot import until_shown

    monkeypatch.setattr(fleet_app, "KEY_SECONDS", 3600.0)  # (keys "keep coming": no clock)
    app = _Framed(_Pushed("local"))
    async with app.run_test(size=(160, 30)) as pilot:
        app.watch.push(_fleet(dict.fromkeys(["a1", "b2", "c3"], T0))["local"])
        await until_shown(pilot, lambda: len(app.board.runs) == 3)
        app.query_one("#runs").focus()
        await pilot.press("down")
        for _ in range(5):
            await pilot.pause()
        app.said.clear()
        app.watch.push(_fleet(dict.fromkeys(["a1", "b2", "c3", "d4"], T0))["local"])
        for _ in range(5):
            await pilot.pause()
        assert app.said == []  # (no frame: the push waits for the next key)
        await pilot.press("up")
        await until_shown(pilot, lambda: "frame" in app.said)
        assert app.said[:4] == ["action cursor_up", "show 4", "returned 4", "frame"]


def test_while_keys_come_a_push_has_no_frame_of_its_own(monkeypatch) -> None:
    run_loop(_test_while_keys_come_a_push_has_no_frame_of_its_own(monkeypatch))


def _tokens_shown(app: FleetApp, tokens: int) -> int:
    """How many rows of the runs table show `tokens`."""
    table = app.query_one("#runs")
    return sum(str(table.get_row_at(n)[5]) == f"{tokens:,}" for n in range(table.row_count))


async def _test_while_keys_come_a_key_carries_a_few_changed_rows(monkeypatch) -> None:
    """A push that changes five runs' rows, while keys come: each key's frame carries at most
    `ROWS_PER_KEY` of them (a row drawn again costs a frame about what the key's own cursor
    move does), the others wait for the next keys; once keys stop, a push is drawn whole."""
    from support.pilot import until_shown

    monkeypatch.setattr(fleet_app, "KEY_SECONDS", 3600.0)  # (keys "keep coming": no clock)
    assert fleet_app.ROWS_PER_KEY == 2
    runs = ["a1", "b2", "c3", "d4", "e5"]
    app = _Logged(_Pushed("local"))
    async with app.run_test(size=(160, 30)) as pilot:
        app.watch.push(_fleet(dict.fromkeys(runs, T0))["local"])
        await until_shown(pilot, lambda: len(app.board.runs) == 5)
        app.query_one("#runs").focus()
        await pilot.press("down")
        app.watch.push(_fleet(dict.fromkeys(runs, T0), dict.fromkeys(runs, 2_500))["local"])
        for _ in range(5):
            await pilot.pause()
        assert _tokens_shown(app, 2_500) == 0
        for key, drawn in (("up", 2), ("down", 4), ("up", 5)):
            await pilot.press(key)
            await until_shown(pilot, lambda: app.said[-1].startswith("show"))
            assert _tokens_shown(app, 2_500) == drawn
        assert all(run.tokens == 2_500 for run in app.board.runs)  # (the keys act on it all)
        # The keys stopped (their pause passed): a push is drawn whole, with no key.
        monkeypatch.setattr(app, "_keys_until", 0.0)
        app.watch.push(_fleet(dict.fromkeys(runs, T0), dict.fromkeys(runs, 3_000))["local"])
        await until_shown(pilot, lambda: _tokens_shown(app, 3_000) == 5)


def test_while_keys_come_a_key_carries_a_few_changed_rows(monkeypatch) -> None:
    run_loop(_test_while_keys_come_a_key_carries_a_few_changed_rows(monkeypatch))
