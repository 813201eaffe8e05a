"""An agent's own past sessions on the command line, against the SDK test agent (real processes,
the agent in the real sandbox): `cockpit sessions --agent` (its `session/list`) and `cockpit replay
--agent NAME --session ID` (its `session/load`, folded into a journal and shown by the viewer,
lines without a terminal), read-only: nothing but `initialize` and `session/load` reaches the
agent. Every way it cannot work is one line and exit code 2."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, ready
from support.pilot import until_shown
from support.replay_app import opened
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.launch import read_agent_session
from cockpit.replay import ReplayApp
from engine_adapter import read_journal


class Agent:
    """The test agent with its sessions kept in the workspace (where the sandbox lets it write)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.workspace = tmp / "ws"
        self.workspace.mkdir()
        self.log = self.workspace / "agent.jsonl"
        self.state = self.workspace / "state"

    def command(self, *flags: str) -> str:
        return shlex.join(agent_argv("--log", self.log, "--state", self.state, *flags))

    def cli(self, *args: str | Path):
        return CliRunner().invoke(app, [str(a) for a in args])

    def run(self, task: str) -> str:
        """A real run that leaves a session behind; returns its id."""
        journal = self.tmp / f"run-{len(list(self.tmp.glob('run-*')))}.jsonl"
        result = self.cli("run", task, "--agent", self.command(), "--cwd", self.workspace,
                          "--headless", "--journal", journal)
        assert result.exit_code == 0, result.output
        return ready(list(read_journal(journal))).acp_session_id

    def requests(self) -> list[str]:
        return [e["event"] for e in agent_log(self.log)]


@pytest.fixture
def agent(tmp_path, monkeypatch) -> Agent:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    made = Agent(tmp_path)
    monkeypatch.chdir(made.workspace)
    return made


def test_replay_shows_the_agents_session_as_history_and_sends_nothing_else(agent):
    session = agent.run("title Parser work")
    before = len(agent.requests())
    result = agent.cli("replay", "--agent", agent.command(), "--session", session)
    assert result.exit_code == 0, result.output
    assert "history   you: title Parser work\n" in result.output  # the user's turn, replayed
    assert "history   agent: titled\n" in result.output
    assert "agent: sandbox" in result.output  # started as `run` starts it
    assert "nothing was sent to it" in result.output
    # What reached the agent: its start and the load, no prompt, no setting, no MCP server.
    seen = agent_log(agent.log)[before:]
    kinds = [e["event"] for e in seen]
    assert "load" in kinds
    assert not {"prompt", "set_config_option", "set_mode", "new", "resume"} & set(kinds), kinds
    assert next(e for e in seen if e["event"] == "load")["mcp"] == []


def test_replay_with_cwd_and_the_sessions_list_names_the_command(agent, tmp_path):
    session = agent.run("title Listed")
    listed = agent.cli("sessions", "--agent", agent.command(), "--json", "--cwd",
                       agent.workspace)
    assert listed.exit_code == 0, listed.output
    found = json.loads(listed.output)
    assert [s["session_id"] for s in found] == [session]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = CliRunner().invoke(app, ["replay", "--agent", agent.command(), "--session",
                                      session, "--cwd", str(agent.workspace)])
    assert result.exit_code == 0, result.output
    assert "history   agent: titled" in result.output
    assert "sessions" in CliRunner().invoke(app, ["sessions", "--help"]).output
    assert "cockpit replay --agent NAME --session ID" in " ".join(
        CliRunner().invoke(app, ["sessions", "--help"]).output.split())


@pytest.mark.parametrize(("args", "message", "starts"), [
    (["--session", "{session}"], "--session ID needs --agent NAME", False),
    (["--agent", "{agent}"], "needs --session ID: `cockpit sessions --agent", False),
    (["{tmp}/j.jsonl", "--agent", "{agent}", "--session", "x"],
     "give either JOURNAL or --agent NAME --session ID, not both", False),
    (["--agent", "{agent}", "--session", " "], "--session ID is empty", False),
    (["--cwd", "{tmp}"], "--cwd DIR goes with --agent NAME --session ID", False),
    (["{tmp}/j.jsonl", "--cwd", "{tmp}"], "not both", False),
    (["--agent", "{agent}", "--session", "x", "--cwd", "{tmp}/none"], "is not a directory",
     False),
    (["--agent", "no-such-agent-xyz", "--session", "x"], "no-such-agent-xyz", False),
    (["--agent", "{agent}", "--session", "sess-unknown"],
     "cannot read python's session sess-unknown: the agent answered session/load with error "
     "-32602: Session not found: sess-unknown", True),
    (["--agent", "{agent} --no-load", "--session", "{session}"],
     "the agent does not offer session/load (loadSession)", True),
    (["--agent", "{agent} --no-load --no-resume", "--session", "{session}"],
     "the agent does not offer session/load", True),
    (["--agent", "sh -c 'echo boom >&2; exit 3'", "--session", "x"],
     "cannot read sh's session x: the agent exited with code 3 during initialize without "
     "writing anything on stdout", False),  # an agent that dies at once
    (["--agent", "sh -c 'printf \"\\033[31mred\\n\" >&2; exit 4'", "--session", "x"],
     "(its stderr ends: red)", False),  # its words cleaned: no escape reaches the terminal
    (["--agent", "/no/such/agent/program", "--session", "x"], "/no/such/agent/program", False),
    (["--agent", "true", "--session", "x"], "cannot read true's session x", False),
])
def test_every_way_a_past_session_cannot_be_read_is_one_line(agent, args, message, starts):
    session = agent.run("hello")
    started = agent.requests().count("initialize")
    filled = [a.replace("{agent}", agent.command()).replace("{session}", session)
              .replace("{tmp}", str(agent.tmp)) for a in args]
    result = agent.cli("replay", *filled)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.strip().splitlines()
             if not line.startswith("loading ")]
    assert len(lines) == 1 and message in lines[0], result.output
    assert "Traceback" not in result.output and "\x1b" not in result.output
    assert (agent.requests().count("initialize") > started) == starts


def test_sessions_of_an_agent_without_a_list_is_one_line(agent):
    agent.run("hello")
    result = agent.cli("sessions", "--agent", agent.command("--no-list"))
    assert result.exit_code == 2
    assert result.output.strip() == (
        "cockpit: error: python does not list its sessions (it offers no session/list); "
        "`cockpit sessions` lists the ones your journals know")


def test_the_viewer_shows_the_loaded_session(agent, tmp_path):
    session = agent.run("title Viewer")
    said: list[str] = []
    path = read_agent_session(agent.command(), session, cwd=agent.workspace,
                              journal=tmp_path / "loaded.jsonl", say=said.append)
    assert said == [f"loading python's session {session} in {agent.workspace} "
                    "(session/load)…"]
    events = list(read_journal(path))
    assert [e.type for e in events][:4] == ["agent_start", "agent_ready", "history_message",
                                            "history_message"]
    assert ready(events).resumed == "session/load" and ready(events).acp_session_id == session
    assert events[-1].type == "agent_end" and events[-1].status == "completed"

    async def main() -> None:
        viewer = ReplayApp(path, remember_theme=False)
        async with viewer.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(viewer))
            await pilot.press("end")
            items = viewer.replay_screen.view.items
            history = [i for i in items if i.kind == "history"]
            assert len(history) == 1
            assert history[0].text == "you: title Viewer\nagent: titled"

    asyncio.run(main())
