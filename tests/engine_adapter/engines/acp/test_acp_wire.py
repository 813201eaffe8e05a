"""The stable ACP v1 surface against the SDK test agent (real processes): a login asked for on a
prompt, the agent's stderr on a cancel, `usage_update`, `plan`, `session/close`, URL-mode
elicitation and boolean config options — each with hostile variants."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, drive

from engine_adapter.engines.acp import AcpRunner


def _runner(tmp_path: Path, *args: str, **kwargs) -> AcpRunner:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return AcpRunner(agent_argv("--log", tmp_path / "agent.jsonl", *args), cwd=workspace,
                     **kwargs)


def _once(tmp_path: Path, task: str, *args: str, **kwargs):
    async def main():
        async with _runner(tmp_path, *args, **kwargs) as runner:
            return await drive(runner, task, tmp_path / "j.jsonl")
    return asyncio.run(main())


# 1. a login asked for on a prompt --------------------------------------------------------------
def test_a_prompt_that_needs_a_login_shows_the_login_help(tmp_path, monkeypatch):
    """claude-agent-acp opens a session without a login, then fails the prompt: the failure
    names the agent's ways to log in, as a failed session open does."""
    monkeypatch.delenv("TEST_AGENT_KEY", raising=False)
    state, events = _once(tmp_path, "hello", "--mode", "auth-prompt")
    assert state.status == "failed"
    error = state.error or ""
    assert "Authentication required" in error
    assert "the agent offers these ways to log in" in error
    assert "log in in a terminal with:" in error and "--login" in error  # the terminal method
    assert "TEST_AGENT_KEY" in error and "--pass-env TEST_AGENT_KEY" in error
    assert events[-1].type == "agent_end" and events[-1].error == error


@pytest.mark.parametrize(("code", "message", "hinted"), [
    (-32000, "Authentication required", True),
    (-32000, "Not logged in: run the login first", True),
    (-32000, "Please sign in to continue", True),
    (-32000, "Invalid API key", True),
    (-32000, "authorization header missing", True),
    (-32000, "AUTH_REQUIRED", True),
    (-32000, "model overloaded, try later", False),  # the generic server error: no login help
    (-32000, "rate limited", False),
    (-32603, "Authentication service is down", False),  # another code: not a login request
    (-32602, "login field is invalid", False),
])
def test_login_help_only_when_the_agent_asks_for_a_login(tmp_path, code, message, hinted):
    state, _ = _once(tmp_path, f"fail {code} {message}")
    assert state.status == "failed" and message in (state.error or "")
    assert ("log in" in (state.error or "")) is hinted


def test_login_help_for_an_agent_that_declares_no_method(tmp_path):
    """No method declared: still say what to do, not nothing."""
    state, _ = _once(tmp_path, "fail -32000 Authentication required")
    assert "declares no way to log in" in (state.error or "")
