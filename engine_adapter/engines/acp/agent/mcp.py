"""The MCP servers handed to an agent with its session (`session/new`, `load`, `resume`).

Every agent takes stdio servers (it starts them itself); http and sse servers only when its
`initialize` answer says so (`mcpCapabilities`). A server the agent cannot take is left out and
the human is told which and why, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from engine_adapter.engines.acp.agent.setup import McpServer

__all__ = ["acp_servers"]


def acp_servers(servers: Sequence[McpServer], init: Any) -> tuple[list[Any], list[str]]:
    """The servers in the SDK's shapes, and a sentence for each one the agent cannot take."""
    caps = getattr(getattr(init, "agent_capabilities", None), "mcp_capabilities", None)
    taken: list[Any] = []
    skipped: list[str] = []
    for server in servers:
        if server.transport == "stdio":
            taken.append(McpServerStdio(
                name=server.name, command=server.command, args=list(server.args),
                env=[EnvVariable(name=k, value=v) for k, v in server.env]))
            continue
        if not getattr(caps, server.transport, False):
            skipped.append(f"MCP server {server.name!r} was left out: the agent does not take "
                           f"{server.transport} MCP servers (only stdio"
                           + (", http" if getattr(caps, "http", False) else "")
                           + (", sse" if getattr(caps, "sse", False) else "") + ")")
            continue
        headers = [HttpHeader(name=k, value=v) for k, v in server.headers]
        model = HttpMcpServer if server.transport == "http" else SseMcpServer
        taken.append(model(type=server.transport, name=server.name, url=server.url,
                           headers=headers))
    return taken, skipped
