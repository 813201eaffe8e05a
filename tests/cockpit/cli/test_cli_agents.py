"""`cockpit agents` and `cockpit run --agent` (headless), end to end with the SDK test agent."""

from __future__ import annotations

import shlex

from fakes.acp_agent.helpers import agent_argv, agent_log, none_left, ready
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import read_journal


def _cli(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def test_agents_lists_the_catalogue_with_install_hints(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    result = _cli("agents")
    assert result.exit_code == 0
    for name, hint in (("codex", "npm install -g @agentclientprotocol/codex-acp"),
                       ("claude", "npm install -g @agentclientprotocol/claude-agent-acp"),
                       ("gemini", "npm install -g @google/gemini-cli")):
        assert f"\n{name} " in "\n" + result.output
        assert f"not installed: {hint}" in result.output
    assert "cockpit run --agent NAME" in result.output


def test_run_agent_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    both = _cli("run", "hi", "--agent", "codex", "--engine", "x:y", "--headless")
    assert both.exit_code == 2
    assert both.output.strip() == ("cockpit: error: --engine and --agent cannot be used "
                                   "together: pick one")
    unknown = _cli("run", "hi", "--agent", "no-such-agent", "--headless")
    assert unknown.exit_code == 2 and "unknown agent 'no-such-agent'" in unknown.output
    monkeypatch.setenv("PATH", "/nonexistent")
    missing = _cli("run", "hi", "--agent", "codex", "--headless")
    assert missing.exit_code == 2
    assert "install it with: npm install -g @agentclientprotocol/codex-acp" in missing.output
    assert "Traceback" not in both.output + unknown.output + missing.output


def test_run_agent_headless_end_to_end_leaves_no_process(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "agent.jsonl"  # the agent runs in the sandbox: it writes only here
    journal = tmp_path / "run.jsonl"
    command = shlex.join(agent_argv("--log", log))
    result = _cli("run", "hello", "--agent", command, "--cwd", str(workspace), "--headless",
                  "--journal", str(journal))
    assert result.exit_code == 0, result.output
    assert f"journal: {journal}" in result.output
    events = list(read_journal(journal))
    assert ready(events).engine == "acp:cockpit-test-agent" and events[-1].status == "completed"
    assert ready(events).agent_sandbox == "workspace-write"  # the agent ran in the sandbox
    assert "agent: sandbox" in result.output
    assert none_left(str(log))  # nothing of the agent is left in the process table
    logged = [e["event"] for e in agent_log(log)]
    assert logged[:2] == ["initialize", "new_session"]
    assert logged[-1] == "stdin closed"  # closed cleanly when the run ended, not killed


def test_run_agent_headless_shows_the_login_help_when_a_prompt_needs_a_login(tmp_path,
                                                                             monkeypatch):
    """claude-agent-acp's way: the session opens without a login, the prompt fails
    "Authentication required"; headless prints the agent's ways to log in, exits non-zero."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TEST_AGENT_KEY", raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = shlex.join(agent_argv("--mode", "auth-prompt"))
    result = _cli("run", "hello", "--agent", command, "--cwd", str(workspace), "--headless",
                  "--journal", str(tmp_path / "run.jsonl"))
    assert result.exit_code != 0
    assert "Authentication required" in result.output
    assert "the agent offers these ways to log in" in result.output
    assert "--pass-env TEST_AGENT_KEY" in result.output
    assert "Traceback" not in result.output
