"""Drive any Agent Client Protocol agent (Codex, Claude Code, Gemini CLI, …) as a cockpit engine.

    from engine_adapter import Session, TaskState
    from engine_adapter.engines.acp import AcpRunner, resolve_agent

    async with AcpRunner(resolve_agent("codex"), cwd="~/project") as runner:
        await Session(runner, TaskState(task="fix the failing test")).run()
        await Session(runner, TaskState(task="now add a test")).run()  # same ACP session

Modules: `runner` (the engine), `process` (the agent's process group and pipes), `mapping`
(updates → events), `permissions` (approval tiers, inputs and answers), `client` (what the
cockpit serves the agent: permissions, `fs/*`, `terminal/*`), `workspace` and `terminals` (the
confinement behind them), `catalogue` (`agents.toml`: the agents known by name).
"""

from engine_adapter.engines.acp.catalogue import (
    AgentSpec,
    AgentSpecError,
    agent_env,
    load_catalogue,
    resolve_agent,
)
from engine_adapter.engines.acp.runner import AcpRunner, AgentFailure

__all__ = [
    "AcpRunner",
    "AgentFailure",
    "AgentSpec",
    "AgentSpecError",
    "agent_env",
    "load_catalogue",
    "resolve_agent",
]
