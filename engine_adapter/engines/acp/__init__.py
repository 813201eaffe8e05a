"""Drive any Agent Client Protocol agent (Codex, Claude Code, Gemini CLI, …) as a cockpit engine.

    from engine_adapter import Session, TaskState
    from engine_adapter.engines.acp import AcpRunner, resolve_agent

    async with AcpRunner(resolve_agent("codex"), cwd="~/project") as runner:
        await Session(runner, TaskState(task="fix the failing test")).run()
        await Session(runner, TaskState(task="now add a test")).run()  # same ACP session

Modules: `runner` (the engine: `AcpRunner`, which owns one `agent.AgentConnection`),
`catalogue` (`agents.toml`: the agents known by name), `text` (an agent's text made safe to
show), `errors` (`AgentFailure`). Two packages by protocol role: `agent` (the process we drive:
started, connected, logged in, its session opened and kept) and `client` (what we answer: the
agent's updates, permissions, `fs/*`, `terminal/*`, questions and commands).
"""

from engine_adapter.engines.acp.catalogue import (
    AgentSpec,
    AgentSpecError,
    agent_env,
    load_catalogue,
    resolve_agent,
)
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.engines.acp.runner import AcpRunner

__all__ = [
    "AcpRunner",
    "AgentFailure",
    "AgentSpec",
    "AgentSpecError",
    "agent_env",
    "load_catalogue",
    "resolve_agent",
]
