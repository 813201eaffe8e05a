"""An agent's conversation in the live cockpit (Pilot, headless) over the SDK test agent: a resumed
conversation shows its replayed history apart, the session's title and settings in the status
line, the command palette switches the agent's model and mode, a dead agent's lost conversation
is said so. Resuming from the journal picker and viewer is tested in
tests/cockpit/replay/test_replay_resume.py."""

from __future__ import annotations

import asyncio
import shlex

from fakes.acp_agent.helpers import agent_argv, agent_log
from support.live_app import next_task, until_event
from support.pilot import until_shown

from cockpit.launch import RunOptions, agent_factory
from cockpit.live import CockpitApp
from cockpit.widgets import StatusLine, Transcript


def _screen_text(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def _agent(tmp_path, *flags: str) -> str:
    # The agent runs in the sandbox: what it writes of its own lies in the workspace.
    return shlex.join(agent_argv("--log", tmp_path / "ws" / "agent.jsonl", "--state",
                                 tmp_path / "ws" / "state", *flags))


def _earlier(tmp_path, workspace) -> str:
    """A conversation with a title, kept in the test agent's state folder; its session id."""
    factory = agent_factory(_agent(tmp_path), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "earlier.jsonl",
                                               unattended=True))

    async def main():
        for task in ("hello", "title Parser work"):
            await factory(task).run()
        await factory.aclose()

    asyncio.run(main())
    return next(p.stem for p in (tmp_path / "ws" / "state").glob("*.json"))


def _logged(tmp_path, kind: str) -> list[dict]:
    return [e for e in agent_log(tmp_path / "ws" / "agent.jsonl") if e["event"] == kind]


def test_a_resumed_conversation_shows_its_history_title_and_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session_id = _earlier(tmp_path, workspace)
    factory = agent_factory(_agent(tmp_path, "--no-resume"), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"),
                            resume=session_id)
    first = factory("")  # open only: the human types the next task

    async def main() -> None:
        app = CockpitApp(first, theme="cockpit-dark", next_session=factory,
                         remember_theme=False, clock=None, arm_seconds=0.0)
        async with app.run_test(size=(200, 40), headless=True) as pilot:  # room for all
            await until_event(first, "agent_end")
            await until_shown(pilot, lambda: app.view.title == "Parser work")
            transcript = app.query_one(Transcript)
            await until_shown(pilot, lambda: "earlier conversation" in _screen_text(transcript))
            text = _screen_text(transcript)
            assert "⟲ earlier conversation, replayed by the agent: 4 messages" in text
            assert "│ you: title Parser work" in text and "│ agent: titled" in text
            status = app.query_one(StatusLine).render().plain
            assert "Parser work · " in status
            assert "reasoning effort Low · verbose off" in status and "fast" in status
            # The palette switches the model, then the mode, of the open session.
            for command in ("Agent Model: Smart model", "Agent mode: Code"):
                await pilot.press("ctrl+p")
                await pilot.press(*command)
                await pilot.press("enter")
                await until_shown(pilot, lambda c=command: any(
                    c in n.message for n in app._notifications))
            # The next task continues the same conversation, with the new settings.
            second = await next_task(app, pilot, "settings")
            await until_event(second, "agent_end")
            assert second.state.result == "model=smart effort=low verbose=False mode=code"
            await until_shown(pilot, lambda: app.view.model == "smart")
            assert app.view.phase == "code"
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert [e["session"] for e in _logged(tmp_path, "load")] == [session_id]
    assert [(e["id"], e["value"]) for e in _logged(tmp_path, "set_config_option")] == [
        ("model", "smart")]
    assert _logged(tmp_path, "prompt")[-1]["session"] == session_id


def test_a_dead_agents_lost_conversation_is_said_so(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    factory = agent_factory(_agent(tmp_path, "--no-resume", "--no-load"), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    first = factory("crash")

    async def main() -> None:
        app = CockpitApp(first, theme="cockpit-dark", next_session=factory,
                         remember_theme=False, clock=None, arm_seconds=0.0)
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(first, "agent_end")
            second = await next_task(app, pilot, "hello")
            await until_event(second, "agent_end")
            transcript = app.query_one(Transcript)
            await until_shown(pilot, lambda: "conversation is gone" in _screen_text(transcript))
            assert "the agent restarted; its earlier conversation is gone" in \
                _screen_text(transcript)
            await pilot.press("ctrl+q")

    asyncio.run(main())


