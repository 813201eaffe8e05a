"""An agent's settings and sessions on the command line, headless, against the SDK test agent:
`run --agent` with model, mode, options, MCP servers and environment; `resume` (from a journal or
a session id); `sessions` (the agent's list, or the journals'); `journals` with agent, tokens,
cost and filters; and the one-line errors for every wrong combination."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, ready
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import read_journal


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        # The agent runs in the sandbox: what it writes of its own lies in the workspace.
        self.log = self.workspace / "agent.jsonl"
        self.state = self.workspace / "state"
        self.count = 0

    def agent(self, *flags: str) -> str:
        return shlex.join(agent_argv("--log", self.log, "--state", self.state, *flags))

    def __call__(self, *args: str):
        return CliRunner().invoke(app, [str(a) for a in args])

    def run(self, task: str, *args: str, agent: str | None = None):
        self.count += 1
        journal = self.tmp / f"run-{self.count}.jsonl"
        result = self("run", task, "--agent", agent or self.agent(), "--cwd", self.workspace,
                      "--headless", "--journal", journal, *args)
        return result, journal

    def logged(self, kind: str) -> list[dict]:
        return [e for e in agent_log(self.log) if e["event"] == kind]


@pytest.fixture
def cli(tmp_path, home, monkeypatch) -> Cli:
    made = Cli(tmp_path)
    # `resume` of a --journal path works "here": here is the workspace, where the agent, in
    # the sandbox, keeps its log and sessions.
    monkeypatch.chdir(made.workspace)
    return made


def _reply(journal: Path) -> str:
    return list(read_journal(journal))[-1].result


def _write_config(home: Path, text: str) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(text)


def test_run_sets_model_mode_and_options_at_start(cli):
    result, journal = cli.run("settings", "--model", "smart", "--mode", "code",
                              "--option", "effort=high", "--option", "verbose=true")
    assert result.exit_code == 0, result.output
    assert _reply(journal) == "model=smart effort=high verbose=True mode=code"
    assert "settings  model Smart model · reasoning effort High · verbose on" in result.output
    assert "phase     code" in result.output


def test_an_offer_the_agent_lacks_is_a_failed_run_listing_the_valid_values(cli):
    result, _journal = cli.run("hello", "--model", "gpt-9")
    assert result.exit_code == 1
    assert "--model gpt-9: the agent does not offer 'gpt-9' for model; valid values: fast, " \
           "smart" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["run", "hi", "--mode", "x", "--headless"], "--mode 'x': the cockpit's modes are ask, "
     "accept-edits, auto and plan (an agent's own mode goes with --agent NAME)"),
    (["run", "hi", "--option", "a=1", "--headless"], "--option, --mcp, --no-mcp, --env and "
     "--agent-state go with --agent NAME"),
    (["run", "hi", "--agent", "codex", "--base-url", "http://x", "--headless"],
     "--base-url and --api-key-env go with --model NAME for the built-in engine"),
    (["run", "hi", "--agent", "{agent}", "--mcp", "a", "--no-mcp", "--headless"],
     "--mcp and --no-mcp cannot be used together"),
    (["run", "hi", "--agent", "{agent}", "--mcp", "a", "--headless"],
     "--mcp 'a': no such MCP server in config.toml ([mcp_servers.NAME]); configured: none"),
    (["run", "hi", "--agent", "{agent}", "--pass-env", "COCKPIT_UNSET_VAR", "--headless"],
     "--pass-env COCKPIT_UNSET_VAR: COCKPIT_UNSET_VAR is not set in this shell"),
    (["run", "hi", "--agent", "{agent}", "--env", "1X=2", "--headless"],
     "--env 1X=…: '1X' is not a variable name"),
    (["run", "hi", "--agent", "{agent}", "--env", "NOVALUE", "--headless"],
     "--env 'NOVALUE': expected KEY=VALUE"),
    (["run", "hi", "--agent", "{agent}", "--option", "=x", "--headless"],
     "--option '=x': expected KEY=VALUE"),
    (["run", "hi", "--agent", "{agent}", "--model", "--yolo", "--headless"],
     "--model '--yolo': a model name cannot start with '-'"),
    (["resume", "--session", "s1", "--headless"], "--session ID needs --agent NAME"),
    (["resume", "a", "b", "--agent", "codex", "--session", "s1", "--headless"],
     "with --session ID, give at most one argument: the TASK"),
    (["resume", "{tmp}/nope.jsonl", "--headless"], "no journal at"),
    (["resume", "--headless"], "no agent run in the journals to resume"),
    (["journals", "--status", "done"], "--status 'done': use one of completed, failed, "
     "cancelled, running, crashed"),
])
def test_wrong_combinations_are_one_line_errors(cli, args, message):
    args = [a.replace("{agent}", cli.agent()).replace("{tmp}", str(cli.tmp)) for a in args]
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_mcp_servers_from_config_and_their_flags(cli, home):
    _write_config(home, f'''
[mcp_servers.files]
command = "{sys.executable}"
args = ["-m", "files"]

[mcp_servers.docs]
url = "https://mcp.example/mcp"

[mcp_servers.broken]
command = "no-such-mcp-server-xyz"

[mcp_servers.typo]
commnd = "x"
''')
    result, journal = cli.run("mcp")
    assert result.exit_code == 0, result.output
    assert [s["name"] for s in json.loads(_reply(journal))] == ["docs", "files"]
    assert "config.toml: [mcp_servers.typo] needs either command" in result.output  # warned
    _, journal = cli.run("mcp", "--mcp", "docs")
    assert [s["name"] for s in json.loads(_reply(journal))] == ["docs"]
    _, journal = cli.run("mcp", "--no-mcp")
    assert json.loads(_reply(journal)) == []
    broken, _ = cli.run("mcp", "--mcp", "broken")
    assert broken.exit_code == 2 and "'no-such-mcp-server-xyz' is not on PATH" in broken.output


def test_environment_passed_on_purpose(cli, home, monkeypatch):
    name = os.path.basename(sys.executable)  # a command's agent is named for its program
    _write_config(home, f'[agents."{name}".env]\nFROM_CONFIG = "c"\nOVERRIDDEN = "config"\n')
    monkeypatch.setenv("FROM_SHELL", "s")
    monkeypatch.setenv("NOT_PASSED", "secret")
    result, journal = cli.run("env FROM_CONFIG OVERRIDDEN FROM_SHELL NOT_PASSED FROM_FLAG",
                              "--pass-env", "FROM_SHELL", "--env", "OVERRIDDEN=flag",
                              "--env", "FROM_FLAG=f=g")
    assert result.exit_code == 0, result.output
    assert json.loads(_reply(journal)) == {"FROM_CONFIG": "c", "OVERRIDDEN": "flag",
                                           "FROM_SHELL": "s", "NOT_PASSED": None,
                                           "FROM_FLAG": "f=g"}


def test_resume_a_journal_shows_the_history_then_continues(cli):
    first, journal = cli.run("title Parser work")
    assert first.exit_code == 0
    session = ready(list(read_journal(journal))).acp_session_id
    agent = cli.agent("--no-resume")
    result = cli("resume", journal, "settings", "--agent", agent, "--headless",
                 "--journal", cli.tmp / "resumed.jsonl")
    assert result.exit_code == 0, result.output
    assert f"resuming {agent}'s session {session}" in result.output
    assert "history   you: title Parser work\n" in result.output  # replayed: labelled so
    assert "history   agent: titled\n" in result.output
    events = list(read_journal(cli.tmp / "resumed.jsonl"))
    assert ready(events).resumed == "session/load" and ready(events).acp_session_id == session
    assert events[-1].result.startswith("model=fast")
    assert [e["session"] for e in cli.logged("load")] == [session]


def test_resume_without_a_task_opens_the_conversation(cli):
    _, journal = cli.run("hello")
    result = cli("resume", journal, "--agent", cli.agent(), "--headless")
    assert result.exit_code == 0, result.output
    assert "is open: send a task to continue the conversation" in result.output


def test_resume_never_starts_a_command_read_from_a_journal(cli):
    _, journal = cli.run("hello")
    result = cli("resume", journal, "hello", "--headless")
    assert result.exit_code == 2
    assert "the journal's agent is not in the catalogue: name it with --agent" in result.output
    assert "never starts a command read from a journal" in result.output
    assert len(cli.logged("initialize")) == 1  # only the first run's agent ever started


def test_resume_by_session_id_and_the_newest_run(cli):
    _, journal = cli.run("title By id")
    session = ready(list(read_journal(journal))).acp_session_id
    result = cli("resume", "settings", "--agent", cli.agent(), "--session", session,
                 "--headless")
    assert result.exit_code == 0, result.output
    assert [e["session"] for e in cli.logged("resume")] == [session]
    missing = cli("resume", "hello", "--agent", cli.agent(), "--session", "sess-gone",
                  "--headless")
    assert missing.exit_code == 1
    assert "cannot resume the agent's session sess-gone: " in missing.output


def test_sessions_from_the_agent_and_from_the_journals(cli):
    _, _one = cli.run("title One")
    _, _two = cli.run("title Two")
    listed = cli("sessions", "--agent", cli.agent(), "--json")
    assert listed.exit_code == 0, listed.output
    found = json.loads(listed.output)
    assert sorted(s["title"] for s in found) == ["One", "Two"]
    assert {s["source"] for s in found} == {"agent"}
    unlisted = cli("sessions", "--agent", cli.agent("--no-list"))
    assert unlisted.exit_code == 2  # one line saying so, never the journals' list instead
    assert "does not list its sessions (it offers no session/list)" in unlisted.output
    assert len(unlisted.output.strip().splitlines()) == 1


def test_sessions_and_journals_read_the_journal_folder(cli, home):
    for task in ("title Alpha", "hello"):
        result = cli("run", task, "--agent", cli.agent(), "--cwd", cli.workspace, "--headless")
        assert result.exit_code == 0, result.output
    text = cli("sessions")
    assert text.exit_code == 0
    lines = text.output.strip().splitlines()
    assert len(lines) == 2 and any("Alpha" in line for line in lines)
    # A command's runs go by the agent's own name (what it said in `initialize`).
    journals = cli("journals", "--agent", "cockpit-test-agent", "--search", "alpha")
    _header, *lines = journals.output.strip().splitlines()
    assert len(lines) == 1 and "Alpha — title Alpha" in lines[0] and "completed" in lines[0]
    assert cli("journals", "--agent", "codex").output.startswith("no journal in")
    assert len(cli("journals", "--status", "completed").output.strip().splitlines()) == 1 + 2


def test_sessions_list_runs_journaled_elsewhere(cli):
    """`--journal PATH` outside the journal folder: indexed when the run starts, so the
    journals' session list has it (issue 26 §4)."""
    _, journal = cli.run("title Elsewhere")
    listed = cli("sessions", "--json")
    assert listed.exit_code == 0, listed.output
    (found,) = json.loads(listed.output)
    assert found["title"] == "Elsewhere" and found["source"] == "journal"
    assert found["journal"] == str(journal)


def test_resume_takes_the_sandbox_options_as_run_does(cli):
    _, journal = cli.run("hello")
    result = cli("resume", journal, "settings", "--agent", cli.agent(), "--headless",
                 "--sandbox", "off", "--journal", cli.tmp / "unsandboxed.jsonl")
    assert result.exit_code == 0, result.output
    assert ready(list(read_journal(cli.tmp / "unsandboxed.jsonl"))).sandbox == "off"
    started = len(cli.logged("initialize"))
    bad = cli("resume", journal, "settings", "--agent", cli.agent(), "--headless",
              "--sandbox", "nowhere")
    assert bad.exit_code == 2 and "--sandbox 'nowhere': use one of" in bad.output
    assert len(cli.logged("initialize")) == started  # refused before any agent started
