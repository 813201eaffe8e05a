"""The process we drive: the agent started, connected, logged in, and its session opened.

- `process`: the agent's process group and pipes, stopped whole; `connection`: the process and
  its ACP connection (started, `initialize`d, stopped), waiting on it with cancel and timeouts;
  `contained`: where the agent process runs (`AgentBox`: in the sandbox, its state writable).
- `opening`: its session opened (new, loaded, resumed) once it answered `initialize`; `auth`: the
  login methods the cockpit can satisfy; `mcp`: the MCP servers handed to it.
- `session`: what the cockpit keeps of its session between turns; `settings`: its settings and
  modes; `setup`: what the human asked for when the session opens.
"""

from engine_adapter.engines.acp.agent.connection import AgentConnection, WaitCancelled, race
from engine_adapter.engines.acp.agent.contained import AgentBox
from engine_adapter.engines.acp.agent.opening import (
    ListedSession,
    SessionOpener,
    SessionsNotOffered,
)
from engine_adapter.engines.acp.agent.process import AgentProcess
from engine_adapter.engines.acp.agent.session import AgentSession, Opened
from engine_adapter.engines.acp.agent.settings import (
    SettingError,
    Step,
    agent_mode_for,
    apply_step,
    plan_settings,
)
from engine_adapter.engines.acp.agent.setup import McpServer, SessionSetup, Wanted

__all__ = [
    "AgentBox",
    "AgentConnection",
    "AgentProcess",
    "AgentSession",
    "ListedSession",
    "McpServer",
    "Opened",
    "SessionOpener",
    "SessionSetup",
    "SessionsNotOffered",
    "SettingError",
    "Step",
    "WaitCancelled",
    "Wanted",
    "agent_mode_for",
    "apply_step",
    "plan_settings",
    "race",
]
