"""The real ACP agents from npm, offline (no key, no network, no model call):
their `initialize` answers are still the captured ones the unit tests read; Claude lists and
resumes a conversation of its own through `cockpit sessions` / `cockpit resume`, with its model
and mode set and a model it lacks refused with its real choices; Codex logs in with its api-key
method and takes a mode; Gemini gets workspace trust, its model on the command line and no more
of the shell's environment than the filter and the human allow.

Each agent is skipped when it is not installed (see tests/fakes/acp_agent/real.py). Every start
takes seconds (node), so each test starts an agent as few times as it can.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp.schema import InitializeResponse
from fakes.acp_agent.helpers import drive, group_gone, ready
from fakes.acp_agent.real import ANSWERS, claude_transcript, group_processes, offline_env, require
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.paths import journal_dir
from engine_adapter import read_journal
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.agent import SessionSetup, SessionsNotOffered, Wanted

pytestmark = pytest.mark.slow


def _same_as_captured(runner: AcpRunner, captured: str) -> None:
    """The live `initialize` answer says what the captured one says (capabilities and login
    methods), when the installed version is the captured one."""
    dump = {"mode": "json", "by_alias": True, "exclude_none": True}
    answer = InitializeResponse.model_validate_json((ANSWERS / captured).read_text()
                                                    ).model_dump(**dump)
    live = runner.connection.init.model_dump(**dump)
    if live["agentInfo"]["version"] != answer["agentInfo"]["version"]:
        pytest.skip(f"installed {live['agentInfo']['version']}, captured "
                    f"{answer['agentInfo']['version']}: capture the new answer")
    assert live["agentCapabilities"] == answer["agentCapabilities"]
    assert live["authMethods"] == answer["authMethods"]


def _open(runner: AcpRunner, journal: Path, check=None):
    """Open the agent's session without a task (nothing is sent to a model); `check(runner)`
    runs while the agent is still up. Returns the journal's events and the group id."""

    async def main():
        try:
            _state, events = await drive(runner, "", journal)
            if check is not None:
                await check(runner)
        finally:
            pgid = runner.connection.process.pgid if runner.connection.process else None
            await runner.close()
        return events, pgid

    events, pgid = asyncio.run(main())
    assert pgid is None or group_gone(pgid)  # nothing of the agent is left behind
    return events


def _settings(events) -> dict[str, str]:
    [*_, config] = [e for e in events if e.type == "agent_config"]
    return {o.id: o.value for o in config.options}


def test_claude_lists_and_resumes_its_own_conversation_from_the_cli(tmp_path, monkeypatch):
    require("claude", checked=True)
    home, workspace = tmp_path / "home", (tmp_path / "ws").resolve()
    workspace.mkdir()
    offline_env(monkeypatch, home)
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "cockpit"))
    session = claude_transcript(home, workspace, "Fix the failing test",
                                ("fix the failing test", "The test now passes."))
    cli = CliRunner()

    listed = cli.invoke(app, ["sessions", "--agent", "claude", "--cwd", str(workspace),
                              "--json"])
    assert listed.exit_code == 0, listed.output
    [found] = json.loads(listed.output)
    assert (found["session_id"], found["title"], found["cwd"], found["source"]) == (
        session, "Fix the failing test", str(workspace), "agent")

    resumed = cli.invoke(app, ["resume", "--agent", "claude", "--session", session, "--cwd",
                               str(workspace), "--headless", "--model", "sonnet", "--mode",
                               "plan"])
    assert resumed.exit_code == 0, resumed.output
    assert f"resuming claude's session {session} in {workspace}" in resumed.output
    assert f"the agent's session {session} is open" in resumed.output
    [journal] = journal_dir().glob("*.jsonl")
    events = list(read_journal(journal))
    start = ready(events)
    assert (events[0].engine, start.acp_session_id, start.resumed) == (
        "acp:claude", session, "session/resume")
    assert _settings(events)["model"] == "sonnet"
    assert [e.phase for e in events if e.type == "phase_changed"][-1] == "plan"

    listing = cli.invoke(app, ["journals", "--agent", "claude", "--status", "completed"])
    [line] = listing.output.strip().splitlines()
    assert "claude" in line and "completed" in line and str(journal) in line
    known = cli.invoke(app, ["sessions", "--json"])  # no agent asked: the journals' sessions
    assert [(s["session_id"], s["source"]) for s in json.loads(known.output)] == [
        (session, "journal")]

    # From the journal: the agent by its catalogue name, the workspace from the cockpit's own
    # journal; a model Claude does not offer fails, listing the ones it does.
    again = cli.invoke(app, ["resume", str(journal), "--headless", "--model", "gpt-9"])
    assert again.exit_code == 1, again.output
    assert f"resuming claude's session {session} in {workspace}" in again.output
    assert "--model gpt-9: the agent does not offer 'gpt-9' for model; valid values: " \
           in again.output
    assert "sonnet" in again.output.split("valid values: ", 1)[1]
    assert "Traceback" not in again.output


def test_claude_answers_as_captured_and_switches_mode_and_model(tmp_path, monkeypatch):
    spec = require("claude")
    offline_env(monkeypatch, tmp_path / "home")
    listed, switched = [], {}

    async def check(runner):
        listed.extend(await runner.list_sessions(None))
        _same_as_captured(runner, "claude-agent-acp-0.49.0.json")
        # What the command palette does between tasks: switch the mode, then the model.
        await runner.set_mode("Plan Mode")
        await runner.set_option("model", "Sonnet")
        options, _modes, mode = runner.settings
        switched.update({o.id: o.value for o in options}, current=mode)

    events = _open(AcpRunner(spec, cwd=tmp_path, setup=SessionSetup(
        wanted=Wanted(mode="acceptEdits"))), tmp_path / "j.jsonl", check)
    assert ready(events).new_session and events[-1].status == "completed"
    assert {"mode", "model"} <= set(_settings(events))
    assert [e.phase for e in events if e.type == "phase_changed"][-1] == "acceptEdits"
    assert listed == []  # a session nothing was said in is not kept
    assert (switched["mode"], switched["current"], switched["model"]) == (
        "plan", "plan", "sonnet")  # the mode setting and the session mode agree


def test_codex_logs_in_with_its_api_key_method_and_takes_a_mode(tmp_path, monkeypatch):
    spec = require("codex")
    home = tmp_path / "home"
    offline_env(monkeypatch, home)
    (home / ".codex").mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cockpit-test-not-a-key")
    monkeypatch.setenv("COCKPIT_TEST_SECRET", "must-not-pass")
    seen = {}

    async def check(runner):
        _same_as_captured(runner, "codex-acp-2.6.0.json")
        seen["listed"] = await runner.list_sessions(None)
        seen["env"] = [env for _, env in group_processes(runner.connection.process.pgid)]

    runner = AcpRunner(spec, cwd=tmp_path, env={"CODEX_HOME": str(home / ".codex"),
                                                "COCKPIT_ON_PURPOSE": "yes"},
                       setup=SessionSetup(wanted=Wanted(mode="read-only")))
    events = _open(runner, tmp_path / "j.jsonl", check)
    notices = [e.text for e in events if e.type == "agent_notice"]
    assert "logged in to the agent with its 'API Key' method (OPENAI_API_KEY is set)" in notices
    assert events[-1].status == "completed" and _settings(events)["mode"] == "read-only"
    assert seen["listed"] == []
    assert seen["env"] and all(env.get("COCKPIT_ON_PURPOSE") == "yes" for env in seen["env"])
    assert not any("COCKPIT_TEST_SECRET" in env for env in seen["env"])  # filtered out


def test_gemini_gets_trust_its_model_at_launch_and_no_session_list(tmp_path, monkeypatch):
    spec = require("gemini")
    offline_env(monkeypatch, tmp_path / "home")
    monkeypatch.setenv("GEMINI_API_KEY", "cockpit-test-not-a-key")
    seen = {}

    async def check(runner):
        _same_as_captured(runner, "gemini-cli-0.61.0.json")
        seen["processes"] = group_processes(runner.connection.process.pgid)
        with pytest.raises(SessionsNotOffered):
            await runner.list_sessions(None)

    runner = AcpRunner(spec, cwd=tmp_path, setup=SessionSetup(
        wanted=Wanted(model="gemini-2.5-flash", mode="plan")))
    events = _open(runner, tmp_path / "j.jsonl", check)
    assert events[-1].status == "completed", events[-1]
    assert [e.phase for e in events if e.type == "phase_changed"][-1] == "plan"
    gemini = [(argv, env) for argv, env in seen["processes"] if "--acp" in argv]
    assert gemini, seen["processes"]
    for argv, env in gemini:
        assert "--model=gemini-2.5-flash" in argv  # its model is chosen at launch
        assert env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true"  # the human chose this folder
        assert env.get("GEMINI_API_KEY") == "cockpit-test-not-a-key"  # a variable it reads


def test_gemini_without_a_key_fails_with_its_words_and_the_ways_to_log_in(tmp_path,
                                                                          monkeypatch):
    require("gemini")
    offline_env(monkeypatch, tmp_path / "home")
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "cockpit"))
    result = CliRunner().invoke(app, ["run", "hello", "--agent", "gemini", "--cwd",
                                      str(tmp_path), "--headless"])
    assert result.exit_code == 1, result.output
    assert "the agent answered session/new with error -32000: Gemini API key is missing" \
        in result.output  # its own words, before any prompt
    assert "Gemini API key (Use an API key with Gemini Developer API): set GEMINI_API_KEY" \
        in result.output
    assert "Traceback" not in result.output
