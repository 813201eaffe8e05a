"""The live cockpit over the SDK test agent: a message queued while the agent works and a
denial's reason both reach it with the next prompt; the agent's commands complete in the box and
run; ctrl+j stops a turn and sends at once; an agent's question is answered by keys, and its link
opens only on `o`."""

from __future__ import annotations

import asyncio
import shlex
import webbrowser

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log
from support.live_app import answerable, until_event
from support.pilot import until_shown

from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _app(tmp_path, task, *agent_args):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"  # the agent runs in the sandbox: it writes only here
    factory = agent_factory(shlex.join(agent_argv("--log", log, *agent_args)), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    first = factory(task)
    app = CockpitApp(first, theme="cockpit-dark", next_session=factory, remember_theme=False,
                     clock=None, arm_seconds=0.0)
    return app, log


def _prompts(log):
    return [e for e in agent_log(log) if e["event"] == "prompt"]


def test_a_queued_message_and_a_deny_reason_reach_the_agent(tmp_path):
    app, log = _app(tmp_path, "deny-wait git push")

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            first = app.session
            await until_event(first, "approval_requested")
            await until_shown(pilot, lambda: answerable(app))
            await pilot.press("t", *"hello", "enter")  # queued: the agent is working
            assert app.steering.queue.items == ("hello",)
            await pilot.press("escape", "n", *"use the staging remote", "enter")
            await until_event(first, "agent_end")
            await until_shown(pilot, lambda: len(app.sessions) == 2)
            await until_event(app.session, "agent_end")
            assert app.session.state.result.startswith("Hello, world: prompt 2")
            await pilot.press("ctrl+q")

    asyncio.run(main())
    first, second = _prompts(log)
    assert first["blocks"] == ["deny-wait git push"]
    note = ("[note from the user] I denied your request to execute: Run git push. "
            "My reason: use the staging remote")
    assert second["blocks"] == [note, "hello"]


def test_commands_complete_from_the_agent_and_ctrl_j_sends_at_once(tmp_path):
    app, log = _app(tmp_path, "hello")

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "agent_end")
            await until_shown(pilot, lambda: bool(app.view.commands))
            await pilot.press("slash", *"mem")
            rows = [str(o.prompt) for o in app.query_one("#commands").options]
            assert rows == ["/memory show  Show what it remembers"]
            await pilot.press("tab", "enter")
            await until_shown(pilot, lambda: len(app.sessions) == 2)
            await until_event(app.session, "agent_end")
            assert app.session.state.result == "ran /memory show"
            # a long turn, stopped by a message sent at once
            assert app.focused is app.composer.box  # the focus stays in the box
            app.composer.box.value = "slow 100000 0.01"
            await pilot.press("enter")
            await until_shown(pilot, lambda: len(app.sessions) == 3)
            await until_event(app.session, "model_update")
            await until_shown(pilot, lambda: app.view.live)
            assert app.focused is app.composer.box  # still there after sending
            await pilot.press(*"hello", "ctrl+j")
            await until_event(app.sessions[2], "agent_end")
            await until_shown(pilot, lambda: len(app.sessions) == 4)
            await until_event(app.session, "agent_end")
            assert app.sessions[2].state.status == "cancelled"
            assert app.session.state.result.startswith("Hello, world: prompt 4")
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert [p["text"] for p in _prompts(log)] == ["hello", "/memory show", "slow 100000 0.01",
                                                  "hello"]
    assert "cancel" in [e["event"] for e in agent_log(log)]


def test_an_agents_question_is_answered_by_keys(tmp_path):
    app, log = _app(tmp_path, "ask boolean choice")

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "question_asked")
            await until_shown(pilot, lambda: app.focused is not None
                          and app.focused.id == "qf-0")
            await pilot.press("space", "tab", "down", "space", "ctrl+s")
            await until_event(app.session, "agent_end")
            await pilot.press("ctrl+q")

    asyncio.run(main())
    elicited = next(e for e in agent_log(log) if e["event"] == "elicitation")
    assert elicited["content"] == {"boolean": False, "choice": "staging"}


def test_an_agents_link_opens_only_on_o_and_the_agent_gets_accept(tmp_path, monkeypatch):
    opened: list[str] = []

    class Recorder(webbrowser.BaseBrowser):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            opened.append(url)
            return True

    monkeypatch.setattr(webbrowser, "get", lambda using=None: Recorder("recorder"))
    app, log = _app(tmp_path, "ask-url")

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "question_asked")
            form = app.display_widget.question_form
            await until_shown(pilot, lambda: app.focused is form)
            await pilot.press("enter", "space")
            assert opened == []  # shown, not opened
            await pilot.press("o")
            await until_event(app.session, "agent_end")
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert opened == ["https://example.com/login"]
    elicited = next(e for e in agent_log(log) if e["event"] == "elicitation")
    assert (elicited["action"], elicited["content"]) == ("accept", None)
