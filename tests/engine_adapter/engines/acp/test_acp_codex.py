"""A handshake with a real ACP agent installed from npm: @agentclientprotocol/codex-acp.

Skipped unless it is installed: in COCKPIT_TEST_AGENTS_BIN (default
/tmp/acp-agents/node_modules/.bin) or on PATH, or point COCKPIT_TEST_CODEX_ACP at the binary, e.g.

    npm install --prefix /tmp/acp-agents @agentclientprotocol/codex-acp
    export COCKPIT_TEST_CODEX_ACP=/tmp/acp-agents/node_modules/.bin/codex-acp
    pytest tests/engine_adapter/engines/acp/test_acp_codex.py

Without network or an API key it still answers `initialize`; `session/new` then fails with its
own "Authentication required", which must reach the user verbatim (agent_end and journal).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from fakes.acp_agent.helpers import drive, group_gone, types
from fakes.acp_agent.real import installed

from engine_adapter.engines.acp import AcpRunner, load_catalogue

CODEX = os.environ.get("COCKPIT_TEST_CODEX_ACP") or installed("codex")

pytestmark = pytest.mark.skipif(
    not CODEX or not os.access(CODEX, os.X_OK),
    reason="codex-acp is not installed: `npm install --prefix /tmp/acp-agents "
    "@agentclientprotocol/codex-acp` and set COCKPIT_TEST_CODEX_ACP to "
    "/tmp/acp-agents/node_modules/.bin/codex-acp (or put codex-acp on PATH)")


def test_codex_answers_initialize_and_its_auth_error_reaches_the_user(tmp_path, monkeypatch):
    for key in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    spec = load_catalogue()["codex"]
    spec = type(spec)(**{**spec.__dict__, "command": CODEX})

    async def main():
        runner = AcpRunner(spec, cwd=workspace, startup_timeout=60,
                           env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
        try:
            state, events = await drive(runner, "say hello", tmp_path / "j.jsonl")
        finally:
            pgid = runner.connection.process.pgid if runner.connection.process else None
            await runner.close()
        return state, events, pgid

    state, events, pgid = asyncio.run(main())
    start, end = events[0], events[-1]
    assert start.type == "agent_start" and start.engine == "acp:codex"
    assert "agent_ready" not in types(events)  # initialize answered, but no session opened
    assert state.status == "failed" and end.type == "agent_end"
    assert "session/new with error -32000: Authentication required" in end.error
    assert "OPENAI_API_KEY" in end.error  # the agent's own auth methods, and our hint
    assert (tmp_path / "j.jsonl").read_text().count("Authentication required") >= 1
    assert pgid is None or group_gone(pgid)
