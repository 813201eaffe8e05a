"""An ACP agent's sessions and settings, against the SDK test agent, through a real Session and
its journal: sessions the agent lists, loads (its history replayed and kept as history) and
resumes; a conversation reopened after the agent died, or said to be gone; settings and modes at
start and between tasks; the session's title; MCP servers and the environment the agent
receives; logging in with an untyped API-key method."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, approve, drive, ready, types

from engine_adapter.engines.acp import AcpRunner, AgentFailure, AgentSpec
from engine_adapter.engines.acp.agent import (
    McpServer,
    SessionSetup,
    SessionsNotOffered,
    SettingError,
    Wanted,
)
from engine_adapter.view import HistoryItem, fold_events


def _spec(*args: str, **fields) -> AgentSpec:
    argv = agent_argv(*args)
    return AgentSpec(name="test", command=argv[0], args=tuple(argv[1:]), known=False, **fields)


class Agent:
    """A test agent with its sessions kept in `state` (so another process can reopen them)."""

    def __init__(self, tmp_path: Path, *flags: str) -> None:
        self.state = tmp_path / "state"
        self.log = tmp_path / "agent.jsonl"
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.journals = tmp_path / "journals"
        self.journals.mkdir(exist_ok=True)
        self.flags = flags
        self.count = 0

    def runner(self, *flags: str, setup: SessionSetup | None = None, **kwargs) -> AcpRunner:
        spec = _spec("--state", self.state, "--log", self.log, *self.flags, *flags,
                     **kwargs.pop("spec_fields", {}))
        return AcpRunner(spec, cwd=self.workspace, setup=setup, **kwargs)

    def run(self, runner: AcpRunner, *tasks: str, close: bool = True, **session_kwargs):
        """Each task in turn through one runner; the events of each."""
        async def main():
            results = []
            try:
                for task in tasks:
                    self.count += 1
                    results.append(await drive(runner, task, self.journals / f"{self.count}.jsonl",
                                               **session_kwargs))
            finally:
                if close:
                    await runner.close()
            return results
        return [events for _state, events in asyncio.run(main())]

    def logged(self, kind: str) -> list[dict]:
        return [e for e in agent_log(self.log) if e["event"] == kind]


def _first(events, kind):
    return next(e for e in events if e.type == kind)


def _reply(events) -> str:
    return events[-1].result


# -- settings ---------------------------------------------------------------------------------

def test_settings_asked_for_at_start_are_made_and_shown(tmp_path):
    agent = Agent(tmp_path)
    wanted = Wanted(model="Smart model", mode="code", options=(("effort", "HIGH"),
                                                                ("verbose", "on")))
    [events] = agent.run(agent.runner(setup=SessionSetup(wanted=wanted)), "settings")
    assert _reply(events) == "model=smart effort=high verbose=True mode=code"
    assert [(e["id"], e["value"]) for e in agent.logged("set_config_option")] == [
        ("model", "smart"), ("effort", "high"), ("verbose", True)]
    assert [e["mode"] for e in agent.logged("set_mode")] == ["code"]
    config = [e for e in events if e.type == "agent_config"]
    assert len(config) == 1  # the settings as they stand once the session is set up
    values = {o.id: o.value for o in config[0].options}
    assert values == {"model": "smart", "effort": "high", "verbose": True}
    assert [e.phase for e in events if e.type == "phase_changed"] == ["code"]
    view = fold_events(events)
    assert view.model == "smart" and view.phase == "code"


@pytest.mark.parametrize(("wanted", "message"), [
    (Wanted(model="gpt-9"), "--model gpt-9: the agent does not offer 'gpt-9' for model; valid "
                            "values: fast, smart"),
    (Wanted(mode="yolo"), "--mode yolo: the agent has no such mode; valid modes: ask, code"),
    (Wanted(options=(("temperature", "1"),)), "--option temperature=1: the agent has no "
     "setting 'temperature'; its settings: model, effort, verbose, mode (--mode)"),
    (Wanted(options=(("verbose", "maybe"),)), "--option verbose=maybe: verbose is on or off"),
])
def test_a_setting_the_agent_does_not_offer_fails_listing_the_valid_ones(tmp_path, wanted,
                                                                        message):
    agent = Agent(tmp_path)
    [events] = agent.run(agent.runner(setup=SessionSetup(wanted=wanted)), "hello")
    end = events[-1]
    assert end.status == "failed" and message in end.error
    assert not agent.logged("prompt")  # nothing was asked of the agent with the wrong settings


def test_settings_change_between_tasks_and_reach_the_next_journal(tmp_path):
    agent = Agent(tmp_path)
    runner = agent.runner()

    async def main():
        try:
            _, first = await drive(runner, "hello", tmp_path / "1.jsonl")
            await runner.set_option("model", "smart")
            await runner.set_mode("Code")
            with pytest.raises(SettingError, match="valid values: low, medium, high"):
                await runner.set_option("effort", "extreme")
            options, _modes, mode = runner.settings
            _, second = await drive(runner, "settings", tmp_path / "2.jsonl")
        finally:
            await runner.close()
        return first, second, options, mode

    _first_events, second, options, mode = asyncio.run(main())
    assert {o.id: o.value for o in options}["model"] == "smart" and mode == "code"
    assert _reply(second) == "model=smart effort=low verbose=False mode=code"
    # What changed between the tasks opens the next task's journal, right after agent_ready.
    assert types(second)[:4] == ["agent_start", "agent_ready", "agent_config", "phase_changed"]
    assert {o.id: o.value for o in second[2].options}["model"] == "smart"
    assert (second[3].previous, second[3].phase) == ("ask", "code")


def test_the_agent_changing_its_own_settings_and_title_is_shown(tmp_path):
    agent = Agent(tmp_path)
    [changed, titled] = agent.run(agent.runner(), "agent-config", "title Fix the parser")
    update = [e for e in changed if e.type == "agent_config"][-1]
    assert {o.id: o.value for o in update.options}["model"] == "smart"
    assert fold_events(changed).model == "smart"
    info = _first(titled, "session_info")
    assert (info.title, info.updated_at) == ("Fix the parser", "2026-01-02T03:04:05Z")
    assert fold_events(titled).title == "Fix the parser"


# -- listing, loading, resuming ---------------------------------------------------------------

def _earlier_conversation(agent: Agent) -> str:
    """Two tasks (one with an approved command) and a title, in a session kept on disk."""
    agent.run(agent.runner(), "hello", "permission allow_once,reject_once git status",
              "title Earlier work", answer=approve())
    [session] = [p.stem for p in agent.state.glob("*.json")]
    return session


def test_the_agent_lists_its_sessions_over_pages(tmp_path):
    agent = Agent(tmp_path)
    agent.run(agent.runner(), "title First")
    agent.run(agent.runner(), "title Second")
    runner = agent.runner()

    async def main():
        try:
            return await runner.list_sessions(str(agent.workspace))
        finally:
            await runner.close()

    listed = asyncio.run(main())
    assert sorted(s.title for s in listed) == ["First", "Second"]
    assert {s.cwd for s in listed} == {str(agent.workspace.resolve())}
    assert [e["cursor"] for e in agent.logged("list")] == [None, "page-2"]
    quiet = agent.runner("--no-list")

    async def unlisted():
        try:
            await quiet.list_sessions()
        finally:
            await quiet.close()

    with pytest.raises(SessionsNotOffered):
        asyncio.run(unlisted())


def test_load_replays_the_history_marked_as_history(tmp_path):
    agent = Agent(tmp_path)
    session = _earlier_conversation(agent)
    runner = agent.runner("--no-resume", setup=SessionSetup(resume=session))
    [events] = agent.run(runner, "hello")
    start = ready(events)
    assert start.resumed == "session/load" and start.acp_session_id == session
    assert start.new_session is False
    history = [e for e in events if e.type.startswith("history_")]
    said = [(e.role, e.text) for e in history if e.type == "history_message"]
    assert said[0] == ("user", "hello")  # the user's messages too, joined from their pieces
    assert ("user", "permission allow_once,reject_once git status") in said
    assert ("agent", "selected allow_once") in said
    tools = [(e.call_id, e.status) for e in history if e.type == "history_tool"]
    assert tools == [("h-perm-2", "pending"), ("h-perm-2", "completed")]
    # History is not activity: no tool row, no turn, nothing pending; the title came back.
    assert types(events).index("turn_start") > types(events).index("history_tool")
    view = fold_events(events)
    assert "h-perm-2" not in view.tool_calls and not view.pending
    [item] = [i for i in view.items if isinstance(i, HistoryItem)]
    assert item.messages == 6 and "you: hello\nagent: Hello" in item.text
    assert "tool: Run perm-2 (completed)" in item.text
    assert view.title == "Earlier work" and view.status == "completed"
    assert agent.logged("load") and not agent.logged("resume")


def test_resume_is_preferred_and_replays_nothing(tmp_path):
    agent = Agent(tmp_path)
    session = _earlier_conversation(agent)
    [events] = agent.run(agent.runner(setup=SessionSetup(resume=session)), "hello")
    assert ready(events).resumed == "session/resume"
    assert not [e for e in events if e.type.startswith("history_")]
    assert [e["session"] for e in agent.logged("resume")] == [session]
    assert agent.logged("prompt")[-1]["session"] == session  # the same conversation goes on


def test_an_open_only_task_shows_the_history_and_ends(tmp_path):
    agent = Agent(tmp_path)
    session = _earlier_conversation(agent)
    [events] = agent.run(agent.runner("--no-resume", setup=SessionSetup(resume=session)), "")
    assert events[-1].status == "completed" and "is open" in events[-1].result
    assert "turn_start" not in types(events) and "history_message" in types(events)
    assert len(agent.logged("prompt")) == 3  # the earlier three; nothing new was sent


@pytest.mark.parametrize("flags", [("--no-resume", "--no-load"), ()])
def test_resuming_what_cannot_be_resumed_is_an_error(tmp_path, flags):
    agent = Agent(tmp_path)
    [events] = agent.run(agent.runner(*flags, setup=SessionSetup(resume="sess-missing")),
                         "hello")
    end = events[-1]
    assert end.status == "failed"
    assert end.error.startswith("cannot resume the agent's session sess-missing: ")
    if flags:
        assert "offers neither session/resume nor session/load" in end.error
    else:  # both were tried: both answers are in the message, resume's first
        assert "session/resume with error" in end.error
        assert "; then the agent answered session/load with error" in end.error
        assert end.error.count("Session not found: sess-missing") == 2
    assert not agent.logged("prompt")


@pytest.mark.parametrize(("flags", "expected"), [
    ((), "the agent restarted; the conversation was reopened (session/resume)"),
    (("--no-resume",), "the agent restarted; the conversation was reopened (session/load)"),
    (("--no-resume", "--no-load"), "the agent restarted; its earlier conversation is gone"),
])
def test_a_dead_agent_is_restarted_and_the_conversation_reopened_or_said_gone(tmp_path, flags,
                                                                              expected):
    agent = Agent(tmp_path)
    crashed, after = agent.run(agent.runner(*flags), "crash", "hello")
    assert crashed[-1].status == "failed"
    notices = [e.text for e in after if e.type == "agent_notice"]
    assert len(notices) == 1 and notices[0].startswith(expected)
    sessions = [e["session"] for e in agent.logged("prompt")]
    if "gone" in expected:
        assert ready(after).new_session is True and sessions[0] != sessions[1]
    else:
        assert ready(after).new_session is False and sessions[0] == sessions[1]
    assert after[-1].status == "completed"


# -- MCP servers, environment, login ----------------------------------------------------------

def test_mcp_servers_reach_the_agent_and_one_it_cannot_take_is_named(tmp_path):
    agent = Agent(tmp_path)
    servers = (McpServer(name="files", command="/usr/bin/mcp-files", args=("--root", "."),
                         env=(("LEVEL", "debug"),)),
               McpServer(name="docs", transport="http", url="https://mcp.example/mcp",
                         headers=(("Authorization", "Bearer t"),)),
               McpServer(name="old", transport="sse", url="https://mcp.example/sse"))
    [events] = agent.run(agent.runner(setup=SessionSetup(mcp_servers=servers)), "mcp")
    got = json.loads(_reply(events))
    assert got == [
        {"name": "files", "command": "/usr/bin/mcp-files", "args": ["--root", "."],
         "env": [{"name": "LEVEL", "value": "debug"}]},
        {"type": "http", "name": "docs", "url": "https://mcp.example/mcp",
         "headers": [{"name": "Authorization", "value": "Bearer t"}]}]
    [notice] = [e for e in events if e.type == "agent_notice"]
    assert notice.level == "warning" and "MCP server 'old' was left out" in notice.text
    assert "does not take sse MCP servers (only stdio, http)" in notice.text


def test_the_environment_is_filtered_and_extended_on_purpose(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_SECRET_OF_THE_SHELL", "leak")
    agent = Agent(tmp_path)
    runner = agent.runner(env={"ON_PURPOSE": "yes"})
    [events] = agent.run(runner, "env ON_PURPOSE COCKPIT_SECRET_OF_THE_SHELL")
    assert json.loads(_reply(events)) == {"ON_PURPOSE": "yes",
                                          "COCKPIT_SECRET_OF_THE_SHELL": None}


def test_an_api_key_method_is_used_when_its_variable_is_set(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_AGENT_KEY", "k-1")
    agent = Agent(tmp_path, "--mode", "apikey")
    spec_fields = {"auth_vars": {"api-key": ("TEST_AGENT_KEY",)}, "env": ("TEST_AGENT_KEY",)}
    [events] = agent.run(agent.runner(spec_fields=spec_fields), "hello")
    assert events[-1].status == "completed"
    assert [e["method"] for e in agent.logged("authenticate")] == ["api-key"]
    notice = _first(events, "agent_notice")
    assert notice.text == ("logged in to the agent with its 'API Key' method (TEST_AGENT_KEY "
                           "is set)")
    assert "k-1" not in json.dumps([e.model_dump() for e in events])  # never journaled


def test_without_the_key_the_failure_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("TEST_AGENT_KEY", raising=False)
    agent = Agent(tmp_path, "--mode", "apikey")
    spec_fields = {"auth_vars": {"api-key": ("TEST_AGENT_KEY",)}, "env": ("TEST_AGENT_KEY",)}
    [events] = agent.run(agent.runner(spec_fields=spec_fields), "hello")
    error = events[-1].error
    assert "session/new with error -32000: Authentication required" in error
    assert "API Key (Use an API key to authenticate): set TEST_AGENT_KEY" in error
    assert "test reads TEST_AGENT_KEY" in error and "--pass-env NAME" in error
    assert not agent.logged("authenticate")  # nothing to satisfy it with: not even tried


def test_listing_sessions_of_an_agent_that_cannot_start_says_why(tmp_path):
    missing = AcpRunner(AgentSpec(name="gone", command=str(tmp_path / "nope")), cwd=tmp_path)

    async def missing_main():
        try:
            await missing.list_sessions()
        finally:
            await missing.close()

    with pytest.raises(AgentFailure, match="cannot start the agent"):
        asyncio.run(missing_main())


def test_each_task_journal_says_how_the_session_stands(tmp_path):
    """A later task's journal, replayed alone, still shows the model, mode and title."""
    agent = Agent(tmp_path)
    _titled, later = agent.run(agent.runner(setup=SessionSetup(wanted=Wanted(mode="code"))),
                               "title Kept", "hello")
    assert ready(later).new_session is False and ready(later).mode == "code"
    view = fold_events(later)
    assert (view.title, view.phase, view.model) == ("Kept", "code", "fast")
    assert "phase_changed" not in types(later)  # no change: no phase row


# -- a journal that cannot be written --------------------------------------------------------

SESSION_KINDS = ("agent_notice", "agent_config", "history_message", "history_tool",
                 "session_info")


@pytest.mark.parametrize("kind", SESSION_KINDS)
def test_a_disk_that_fills_up_at_the_sessions_events_fails_the_run_before_any_prompt(tmp_path,
                                                                                      kind):
    from support.event_loop import run
    from support.journal_faults import ENOSPC, DiskFillsUp, first_of

    from engine_adapter import Session, TaskState, read_journal

    agent = Agent(tmp_path)
    session_id = _earlier_conversation(agent)
    prompts = len(agent.logged("prompt"))
    old = McpServer(name="old", transport="sse", url="https://mcp.example/sse")  # a notice
    runner = agent.runner("--no-resume", setup=SessionSetup(resume=session_id,
                                                            mcp_servers=(old,)))
    journal = DiskFillsUp(tmp_path / "run.jsonl", first_of(kind))
    session = Session(runner, TaskState(task="hello"), journal=journal)
    try:
        state = run(session.run())
    finally:
        asyncio.run(runner.close())
    assert journal.failed_event is not None  # the reopened session said it
    assert (state.status, session.history[-1].status) == ("failed", "failed")
    assert ENOSPC in state.error and state.error.startswith("journal write failed")
    on_disk = list(read_journal(tmp_path / "run.jsonl"))
    assert [e.seq for e in on_disk] == list(range(journal.failed_event.seq))
    assert len(agent.logged("prompt")) == prompts  # nothing was sent once it could not be kept
