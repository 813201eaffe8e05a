"""`/clear` in the live cockpit: the next task starts a new conversation (a new session id and
journal; an ACP agent opens a new session on the same process), the grants given are kept, the
transcript shows the divider, and a running task is never cut short by it (refused with a note).
Against the SDK test agent (a real process), and the fold and factory on their own."""

from __future__ import annotations

import asyncio
import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log
from support.event_loop import run
from support.live_app import make_app, settle, turn, until_event
from support.pilot import until_shown

from cockpit.launch import RunOptions, SessionFactory, agent_factory
from cockpit.live import CockpitApp
from engine_adapter import AgentStart, ApprovalGrant, SessionState, read_journal
from engine_adapter.view import fold_events
from engine_adapter.view.fold import NEW_CONVERSATION


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _screen_text(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def _acp(tmp_path, task: str):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"
    factory = agent_factory(shlex.join(agent_argv("--log", log)), cwd=workspace,
                            options=RunOptions(journal=tmp_path / "run.jsonl"))
    app = CockpitApp(factory(task), theme="cockpit-dark", next_session=factory,
                     remember_theme=False, clock=None, arm_seconds=0.0)
    return app, factory, log


async def _send(app, pilot, text: str) -> None:
    await until_shown(pilot, lambda: app.focused is app.composer.box)
    app.composer.box.value = text
    await pilot.press("enter")


def test_clear_starts_a_new_conversation_on_the_same_agent_keeping_the_grants(tmp_path):
    app, factory, log = _acp(tmp_path, "hello")
    grant = ApprovalGrant(tool="execute", prefix="git status", tier=3)
    factory.conversation.grants.append(grant)  # what an `[a] always` of this session left
    grants = factory.conversation.grants
    seen: dict[str, object] = {}

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "agent_end")
            await _send(app, pilot, "/clear")
            await until_shown(pilot, lambda: any("new conversation" in n for n in _notices(app)))
            assert len(app.sessions) == 1  # nothing was sent: the next task starts it
            await _send(app, pilot, "hello")
            await until_shown(pilot, lambda: len(app.sessions) == 2)
            await until_event(app.session, "agent_end")
            transcript = app.query_one("Transcript")
            await until_shown(pilot, lambda: "new conversation" in _screen_text(transcript))
            seen["view"] = app.view
            await pilot.press("ctrl+q")

    asyncio.run(main())
    first, second = (list(read_journal(path)) for path in factory.journals)
    assert factory.journals == [tmp_path / "run.jsonl", tmp_path / "run-2.jsonl"]
    assert first[0].session_id != second[0].session_id  # a conversation of its own
    ready = [next(e for e in events if e.type == "agent_ready") for events in (first, second)]
    assert ready[1].new_session is True and ready[0].acp_session_id != ready[1].acp_session_id
    logged = agent_log(log)
    assert [e["event"] for e in logged].count("new_session") == 2
    pids = {end.result.rsplit("pid ", 1)[1] for end in (first[-1], second[-1])}
    assert len(pids) == 1  # the same agent process answered both
    assert factory.conversation.grants is grants and factory.conversation.grants == [grant]
    assert [t.task for t in factory.conversation.tasks] == ["hello"]  # the new one's only
    view = seen["view"]
    assert [i.text for i in view.items if getattr(i, "kind", "") == "conversation"] == [
        NEW_CONVERSATION]


def test_clear_while_a_task_runs_is_refused_with_a_note(tmp_path):
    app, factory, _log = _acp(tmp_path, "wait-permission")

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await until_event(app.session, "approval_requested")
            await pilot.press("slash")  # the box opens on `/`
            app.composer.box.value = "/clear"
            await pilot.press("enter")
            await until_shown(pilot, lambda: any("a task is running" in n
                                                 for n in _notices(app)))
            assert not app.session.done and app.session.pending_approvals
            app.session.cancel("the test is over")
            await until_event(app.session, "agent_end")
            await pilot.press("ctrl+q")

    asyncio.run(main())
    assert len(factory.journals) == 1
    assert factory.conversation.session_id == app.sessions[0].session_id  # not cleared


def test_clear_without_a_next_task_says_there_is_nothing_to_clear():
    # A cockpit whose next tasks come from a plain callable (a `CockpitApp` built by hand),
    # not a conversation's factory: nothing it could start afresh.
    app = make_app(turn(1, "done"), next_steps=lambda text: [turn(1, text)])

    async def main():
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, lambda: app.session.done and app.composer.box.can_focus)
            app.composer.box.focus()
            app.composer.box.value = "/clear"
            await pilot.press("enter")
            await settle(pilot, lambda: any("nothing to clear" in n for n in _notices(app)))
            assert len(app.sessions) == 1

    run(main())


def test_fresh_keeps_the_grants_and_names_new_journals(tmp_path):
    made: list[object] = []

    class Runner:
        renewed = 0

        def new_conversation(self) -> None:
            Runner.renewed += 1

    runner = Runner()
    state = SessionState()
    factory = SessionFactory(lambda _t, _i: made.append(1) or runner, cwd=tmp_path,
                             options=RunOptions(journal=tmp_path / "j.jsonl", saved_grants=False),
                             conversation=state)
    first = factory("one")
    (tmp_path / "j.jsonl").write_text("{}\n")  # the first task's journal holds its run
    factory.fresh()
    assert Runner.renewed == 1 and factory.conversation.grants is state.grants
    second = factory("two")
    assert second.session_id != first.session_id
    assert factory.journals == [tmp_path / "j.jsonl", tmp_path / "j-2.jsonl"]
    assert [t.task for t in factory.conversation.tasks] == ["two"]


def test_the_fold_divides_conversations_by_session_id():
    def start(session_id: str, seq: int = 0):
        return AgentStart(task="t", engine="builtin").model_copy(
            update={"session_id": session_id, "seq": seq})

    same = fold_events([start("a"), start("a")])
    assert not [i for i in same.items if getattr(i, "kind", "") == "conversation"]
    other = fold_events([start("a"), start("b")])
    rows = [getattr(i, "kind", "") for i in other.items]
    assert rows == ["task", "conversation", "task"]
