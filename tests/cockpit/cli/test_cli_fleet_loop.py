"""`cockpit attach` with no run: the fleet view, the run chosen in it, and back. A run's app is
collected as soon as it is left (it holds every event of the run), before the fleet view comes
back, not by a full collection that would fall on the next attach's start or a key."""

from __future__ import annotations

import weakref
from typing import Any

import pytest
import typer

from cockpit.cli import attach as attach_cli
from cockpit.host.fleet import fleet_app
from cockpit.host.fleet.fleet_app import FleetChoice


class _Live:
    """An attached run's app, as the loop sees it: a cycle of objects (as widgets are)."""

    def __init__(self, signalled: str | None = None) -> None:
        self.me = self  # (only the cycle collector frees it)
        self.ran = False
        self.signalled: str | None = None
        self._signal = signalled

    def run(self) -> None:
        self.ran = True
        self.signalled = self._signal


def test_a_run_left_is_collected_before_the_fleet_comes_back(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    lives: list[weakref.ref[_Live]] = []
    alive_when_back: list[bool] = []
    choices = [FleetChoice("local", "r1"), None]

    class Fleet:
        def __init__(self, watches: Any, **options: Any) -> None:
            alive_when_back.extend(ref() is not None for ref in lives)

        def run(self) -> FleetChoice | None:
            return choices.pop(0)

    def attached(run: str, **options: Any) -> _Live:
        live = _Live()
        lives.append(weakref.ref(live))
        return live

    monkeypatch.setattr(fleet_app, "FleetApp", Fleet)
    monkeypatch.setattr(attach_cli, "attached_app", attached)
    with pytest.raises(typer.Exit):
        attach_cli._fleet(None, None)
    assert len(lives) == 1 and alive_when_back == [False]


def test_a_run_ended_by_a_signal_ends_the_loop_without_the_fleet_again(tmp_path,
                                                                       monkeypatch) -> None:
    # The terminal closed while a run chosen in the fleet was open: the run's app ended on
    # SIGHUP; a fleet view opened again would wait for ever on a terminal that is gone (a
    # closed terminal sends its SIGHUP once).
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    fleets: list[object] = []
    choices = [FleetChoice("local", "r1"), FleetChoice("local", "r2")]

    class Fleet:
        def __init__(self, watches: Any, **options: Any) -> None:
            fleets.append(self)

        def run(self) -> FleetChoice | None:
            return choices.pop(0)

    monkeypatch.setattr(fleet_app, "FleetApp", Fleet)
    monkeypatch.setattr(attach_cli, "attached_app",
                        lambda run, **options: _Live("its terminal closed (SIGHUP)"))
    with pytest.raises(typer.Exit) as ended:
        attach_cli._fleet(None, None)
    assert ended.value.exit_code == 0 and len(fleets) == 1 and len(choices) == 1
