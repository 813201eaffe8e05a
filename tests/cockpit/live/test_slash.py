"""The cockpit's own slash commands in the message box, beside the agent's (one list): `/help`,
`/model`, `/mode` run in the cockpit and never reach the agent; `/model NAME` makes the switch
the palette would. Against the SDK test agent (a real process) and the scripted engine."""

from __future__ import annotations

import asyncio
import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from support.event_loop import run
from support.live_app import make_app, settle, turn, until_event
from support.pilot import until_shown
from textual.command import CommandPalette

from cockpit.export import export_beside
from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp
from cockpit.live.slash import builtin_command, offered_commands, unknown_command
from cockpit.screens import HelpScreen
from cockpit.screens.help import command_table
from engine_adapter import AgentCommand, CommandsAvailable
from engine_adapter.view import CommandView


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _acp_app(tmp_path, task="hello", **options):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"
    factory = agent_factory(shlex.join(agent_argv("--log", log)), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    app = CockpitApp(factory(task), theme="cockpit-dark", next_session=factory,
                     remember_theme=False, clock=None, arm_seconds=0.0, **options)
    return app, log


def _notices(app):
    return [str(n.message) for n in app._notifications]


def test_the_cockpits_commands_come_first_and_shadow_an_agents_of_the_same_name():
    agent = [CommandView("review", "review the diff", None), CommandView("HELP", "theirs", None)]
    names = [c.name for c in offered_commands(agent)]
    assert names == ["help", "model", "mode", "export", "clear", "review"]


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


# -- a /word that no one offers ---------------------------------------------------------------

AGENT = [CommandView("review", "review the diff", "focus"), CommandView("compact", "", None),
         CommandView("mcp:list", "", None), CommandView("$imagegen", "", None),
         CommandView("memory show", "", None)]
UNKNOWN = {
    "/foo": "foo", "/Foo bar": "Foo", "/fix-it now": "fix-it", "/foo:bar": "foo:bar",
    "/tmp is full": "tmp",  # (a one-word path: said, and enter again sends it)
    "/foo\nsecond line": "foo", "/reviews": "reviews", "/compactly": "compactly",
    "/show": "show",
}
KNOWN_OR_TEXT = [
    "/review", "/REVIEW the tests", "/memory show", "/memory", "/compact", "/mcp:list",
    "/help", "/model x", "/export",
    "$imagegen", "/etc/hosts is missing", "//foo", "/", "/ foo", "/1st try", "/-x",
    "hello /foo", " ", "", "/usr/bin/env", "/foo/bar", "/$HOME", "/é",
]


@pytest.mark.parametrize(("text", "name"), UNKNOWN.items(), ids=list(UNKNOWN))
def test_a_slash_word_no_one_offers_is_named(text, name):
    assert unknown_command(text, AGENT) == name


@pytest.mark.parametrize("text", KNOWN_OR_TEXT)
def test_a_known_command_or_plain_text_is_not_unknown(text):
    assert unknown_command(text, AGENT) is None


@given(st.text().filter(lambda t: not t.startswith("/")))
def test_text_not_starting_with_a_slash_is_never_a_command(text):
    assert unknown_command(text, []) is None


@given(st.from_regex(r"[A-Za-z][\w.:-]{0,20}", fullmatch=True), st.text(max_size=30))
def test_a_name_the_agent_offers_is_never_unknown_whatever_follows(name, rest):
    assert unknown_command(f"/{name} {rest}", [CommandView(name, "", None)]) is None


def _offers(*names):
    async def step(r) -> None:
        r.emit(CommandsAvailable(commands=[AgentCommand(name=n, description=f"does {n}")
                                           for n in names]))
    return step


@pytest.mark.parametrize(("offered", "typed", "sent"), [
    (("compact",), "/compact", True),  # the agent offers it: it goes to the agent as text
    ((), "/compact", False),  # an engine without it: said, not sent
    (("review",), "/foo", False),
    (("review",), "/review the tests", True),
    ((), "/etc/hosts is missing", True),  # a path is text
])
def test_a_slash_command_goes_to_the_agent_only_when_offered(offered, typed, sent):
    async def main():
        app = make_app(turn(1, "done"), _offers(*offered), next_steps=lambda t: [turn(1, t)])
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            app.composer.box.value = typed
            await pilot.press("enter")
            await settle(pilot, lambda: len(app.sessions) == 2 or bool(_notices(app)))
            if sent:
                assert app.session.state.task == typed
                return
            assert len(app.sessions) == 1
            assert any("is not a command of the cockpit or of the agent" in n
                       for n in _notices(app))
            assert app.composer.box.value == typed  # kept: edit it, or enter sends it
            await pilot.press("enter")
            await settle(pilot, lambda: len(app.sessions) == 2)
            assert app.session.state.task == typed
    run(main())


# -- /help --------------------------------------------------------------------------------------

def test_the_command_table_lists_both_kinds_and_cleans_the_agents_words():
    commands = offered_commands([CommandView("review", "look \x1b[31mhere", "focus")])
    console = Console(width=120, record=True, color_system=None)
    console.print(command_table(commands))
    text = console.export_text()
    assert all(word in text for word in ("/help", "/model [name]", "/export",
                                          "/review focus"))
    assert "\x1b" not in text


def test_help_lists_the_cockpits_commands_and_the_agents():
    async def main():
        app = make_app(turn(1, "done"), _offers("review", "compact"),
                       next_steps=lambda t: [turn(1, t)])
        async with app.run_test(size=(120, 60)) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            app.composer.box.value = "/help"
            await pilot.press("enter")
            await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
            console = Console(width=120, record=True, color_system=None)
            for static in app.screen.query("Static"):
                console.print(static.content)
            shown = console.export_text()
            for word in ("/help", "/model", "/mode", "/export", "/review", "/compact",
                         "does review"):
                assert word in shown, word
            assert len(app.sessions) == 1
    run(main())


# -- /export ------------------------------------------------------------------------------------

def _export_after_the_task(app, marker: str) -> tuple[str, int]:
    """Run `app` until its task ended, type `/export`, and return the notice holding `marker`
    and how many tasks there were then."""
    said: list[str] = []

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "agent_end")
            await until_shown(pilot, lambda: app.focused is app.composer.box)
            app.composer.box.value = "/export"
            await pilot.press("enter")
            await until_shown(pilot, lambda: any(marker in n for n in _notices(app)))
            said.append(next(n for n in _notices(app) if marker in n))
            said.append(str(len(app.sessions)))
            await pilot.press("ctrl+q")

    asyncio.run(main())
    return said[0], int(said[1])


def test_export_writes_the_report_next_to_the_journal_and_says_where(tmp_path):
    app, log = _acp_app(tmp_path, exporter=export_beside)
    said, tasks = _export_after_the_task(app, "report written to")
    assert said == f"report written to {tmp_path / 'run.md'}"
    assert "hello" in (tmp_path / "run.md").read_text(encoding="utf-8")
    assert tasks == 1
    assert [e["text"] for e in agent_log(log) if e["event"] == "prompt"] == ["hello"]


def test_an_export_that_fails_says_why(tmp_path):
    def full(journal):
        for number in range(1, 101):
            (journal.parent / ("run.md" if number == 1 else f"run-{number}.md")).touch()
        return export_beside(journal)

    app, _ = _acp_app(tmp_path, exporter=full)
    said, _ = _export_after_the_task(app, "/export failed")
    assert "all exist" in said and "cockpit export -o FILE" in said


def test_export_without_a_journal_or_an_exporter_says_how_instead():
    async def main():
        app = make_app(turn(1, "done"), next_steps=lambda t: [turn(1, t)])
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, lambda: app.session.done and app.focused is app.composer.box)
            app.composer.box.value = "/export"
            await pilot.press("enter")
            assert any("cockpit export JOURNAL" in n for n in _notices(app))
            assert len(app.sessions) == 1
    run(main())
