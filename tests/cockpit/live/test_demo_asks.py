"""Every ask of the demo on a small screen (issue 26 §3): at 80x24, 60x20 and 40x12 the keys that
answer it are in sight beside the start of what it runs, the footer names the deny key, and after
`a` the scope keys are on the keys line. The asks come from the demo's own engine, played for
real (`support.demo_asks`). Pilot checks for each, and a snapshot of each (update with
`pytest tests/cockpit/live/test_demo_asks.py --snapshot-update`)."""

from __future__ import annotations

import pytest
from support.demo_asks import WORKSPACE, DemoAsk, demo_asks
from support.event_loop import run
from support.live_app import make_app, pending, settle, turn

from cockpit.live import CockpitApp

SIZES = [(80, 24), (60, 20), (40, 12)]
SIZE_IDS = ["80x24", "60x20", "40x12"]
# The demo's asks in order (a test below holds the demo to this list).
ASKS = ["shell-python3_-m_unittest", "switch_to_editing", "declare_verification",
        "shell-ls_-l_stats", "shell-ls_-l_tests", "shell-rm_-rf_stats__pycache__",
        "alter_verification"]
GRANTABLE = ["shell-ls_-l_stats", "shell-ls_-l_tests"]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch, steady_stamps):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", "/home/dev")


def _ask(name: str) -> DemoAsk:
    return next(ask for ask in demo_asks() if ask.name == name)


def _app(ask: DemoAsk) -> CockpitApp:
    async def step(r) -> None:
        await r.ask(ask.call_id, ask.tool, ask.tool_input, tier=ask.tier, reason=ask.reason)

    # A conversation that can go on (as `cockpit demo`): the message box takes its rows too.
    return make_app(turn(1, "Looking at the project."), step, cwd=WORKSPACE, clock=None,
                    next_steps=lambda text: [])


def _line(app: CockpitApp, selector: str) -> str:
    return str(app.query_one(selector).render())


def _in_sight(app: CockpitApp, selector: str) -> bool:
    region = app.query_one(selector).region
    return region.height > 0 and region.y >= 0 and region.bottom <= app.size.height - 1


def test_the_demo_asks_what_these_tests_cover():
    assert [ask.name for ask in demo_asks()] == ASKS


def _at_ask(name: str, size: tuple[int, int], check, *press: str) -> None:
    """Drive the demo's ask `name` at `size` to its bar (then `press`), and `check(app)`."""
    ask = _ask(name)

    async def main():
        app = _app(ask)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: pending(app) == [ask.call_id])
            if press:
                await pilot.press(*press)
            await settle(pilot, lambda: app.display_widget.approval_bar.choosing
                         is (press == ("a",)))
            check(app)
    run(main())


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("name", ASKS)
def test_every_ask_shows_its_keys_with_the_start_of_what_it_runs(name, size):
    def check(app: CockpitApp) -> None:
        keys = _line(app, "#approval-keys")
        assert "[y]" in keys and "[n] deny" in keys, keys
        assert _in_sight(app, "#approval-keys")
        # The input's first row (what a key allows) is on screen, right under the head.
        shown = app.query_one("#approval-input")
        box = app.display_widget.approval_bar.box.body
        assert shown.region.y < box.region.bottom, "the input is scrolled out of sight"
        assert app.query_one("#approval-head").region.height == 1  # (one row: the short form)
        footer = _line(app, "#keys")
        assert footer.startswith("y allow once"), footer  # the answering keys first
        assert "n deny" in footer[:size[0] - 2], footer
    _at_ask(name, size, check)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("name", GRANTABLE)
def test_after_a_the_scope_keys_are_on_the_keys_line(name, size):
    def check(app: CockpitApp) -> None:
        keys = _line(app, "#approval-keys")
        for scope in ("[s] session", "[p] project", "[u] "):
            assert scope in keys, keys
        assert _in_sight(app, "#approval-keys")
        footer = _line(app, "#keys")
        assert footer.startswith("y allow once  n deny  s this session"), footer
    _at_ask(name, size, check, "a")


def _until_pending(ask: DemoAsk, press: tuple[str, ...] = ()):
    async def run_before(pilot) -> None:
        await settle(pilot, lambda: pending(pilot.app) == [ask.call_id])
        if press:
            await pilot.press(*press)
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("name", ASKS)
def test_snapshot_of_every_ask(snap_compare, name, size):
    ask = _ask(name)
    assert snap_compare(_app(ask), terminal_size=size, run_before=_until_pending(ask))


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_snapshot_of_the_scope_step(snap_compare, size):
    ask = _ask(GRANTABLE[0])
    assert snap_compare(_app(ask), terminal_size=size, run_before=_until_pending(ask, ("a",)))
