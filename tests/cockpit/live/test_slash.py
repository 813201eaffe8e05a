"""The cockpit's own slash commands in the message box, beside the agent's (one list): `/help`,
`/model`, `/mode` run in the cockpit and never reach the agent; `/model NAME` makes the switch
the palette would. Against the SDK test agent (a real process) and the scripted engine."""

from __future__ import annotations

import asyncio
import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log
from support.event_loop import run
from support.live_app import make_app, settle, turn, until_event
from support.pilot import until_shown
from textual.command import CommandPalette

from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp
from cockpit.live.slash import builtin_command, offered_commands
from cockpit.screens import HelpScreen
from engine_adapter.view import CommandView


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _acp_app(tmp_path, task="hello"):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"
    factory = agent_factory(shlex.join(agent_argv("--log", log)), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    app = CockpitApp(factory(task), theme="cockpit-dark", next_session=factory,
                     remember_theme=False, clock=None, arm_seconds=0.0)
    return app, log


def _notices(app):
    return [str(n.message) for n in app._notifications]


def test_the_cockpits_commands_come_first_and_shadow_an_agents_of_the_same_name():
    agent = [CommandView("review", "review the diff", None), CommandView("HELP", "theirs", None)]
    names = [c.name for c in offered_commands(agent)]
    assert names == ["help", "model", "mode", "review"]


CASES = {"/help": ("help", ""), "/model smart": ("model", "smart"), "/MODE  code": ("mode", "code"),
         "/model": ("model", "")}


@pytest.mark.parametrize(("text", "expected"), CASES.items(), ids=CASES.keys())
def test_builtin_command_reads_the_name_and_the_rest(text, expected):
    assert builtin_command(text) == expected


@pytest.mark.parametrize("text", ["/review", "help", " /help", "/helpme", "$model", "/", ""])
def test_other_text_is_not_a_builtin_command(text):
    assert builtin_command(text) is None


def test_with_the_acp_agent_model_switches_at_once_and_mode_lists_the_switches(tmp_path):
    app, log = _acp_app(tmp_path)

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "agent_end")
            await until_shown(pilot, lambda: bool(app.view.commands)
                              and app.focused is app.composer.box)
            await pilot.press("slash")
            rows = [str(o.prompt).split()[0] for o in app.query_one("#commands").options]
            assert rows[:3] == ["/help", "/model", "/mode"] and "/memory" in rows
            app.composer.box.value = "/model smart"
            await pilot.press("enter")
            await until_shown(pilot, lambda: any(e["event"] == "set_config_option"
                                                 for e in agent_log(log)))
            app.composer.box.value = "/mode"
            await pilot.press("enter")
            await until_shown(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press("escape")
            app.composer.box.value = "/help"
            await pilot.press("enter")
            await until_shown(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("escape")
            assert len(app.sessions) == 1  # none of them was sent to the agent as a task
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert [(e["id"], e["value"]) for e in agent_log(log) if e["event"] == "set_config_option"] \
        == [("model", "smart")]
    assert [e["text"] for e in agent_log(log) if e["event"] == "prompt"] == ["hello"]


def test_a_model_the_agent_does_not_offer_is_said_and_nothing_is_sent(tmp_path):
    app, log = _acp_app(tmp_path)

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "agent_end")
            await until_shown(pilot, lambda: app.focused is app.composer.box)
            app.composer.box.value = "/model gpt-\x1b[31m9"
            await pilot.press("enter")
            await until_shown(pilot, lambda: any("offers no model" in n for n in _notices(app)))
            said = next(n for n in _notices(app) if "offers no model" in n)
            assert "\x1b" not in said
            assert len(app.sessions) == 1
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert not [e for e in agent_log(log) if e["event"] == "set_config_option"]


@pytest.mark.parametrize("name", ["model", "mode"])
def test_an_engine_without_settings_says_so(name):
    async def main():
        app = make_app(turn(1, "done"), next_steps=lambda text: [turn(1, text)])
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            app.composer.box.value = f"/{name}"
            await pilot.press("enter")
            assert any(f"the agent offers no {name} to switch to" in n for n in _notices(app))
            assert len(app.sessions) == 1
    run(main())
