"""The MCP servers handed to an agent with its session (`session/new`, `load`, `resume`).

Every agent takes stdio servers (it starts them itself); http and sse servers only when its
`initialize` answer says so (`mcpCapabilities`). A server the agent cannot take is left out and
the human is told which and why, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    InitializeResponse,
    McpServerStdio,
    SseMcpServer,
)

from engine_adapter.engines.acp.agent.setup import McpServer

__all__ = ["AgentMcpServer", "acp_servers"]

AgentMcpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""An MCP server in one of the SDK's shapes, as `session/new`, `load` and `resume` take it."""


def acp_servers(servers: Sequence[McpServer],
                init: InitializeResponse) -> tuple[list[AgentMcpServer], list[str]]:
    """The servers in the SDK's shapes, and a sentence for each one the agent cannot take."""
    agent_caps = init.agent_capabilities
    caps = agent_caps.mcp_capabilities if agent_caps is not None else None
    offered = {"http": bool(caps and caps.http), "sse": bool(caps and caps.sse)}
    taken: list[AgentMcpServer] = []
    skipped: list[str] = []
    for server in servers:
        if server.transport == "stdio":
            taken.append(McpServerStdio(
                name=server.name, command=server.command, args=list(server.args),
                env=[EnvVariable(name=k, value=v) for k, v in server.env]))
            continue
        if not offered[server.transport]:
            skipped.append(f"MCP server {server.name!r} was left out: the agent does not take "
                           f"{server.transport} MCP servers (only stdio"
                           + (", http" if offered["http"] else "")
                           + (", sse" if offered["sse"] else "") + ")")
            continue
        headers = [HttpHeader(name=k, value=v) for k, v in server.headers]
        if server.transport == "http":
            taken.append(HttpMcpServer(type="http", name=server.name, url=server.url,
                                       headers=headers))
        else:
            taken.append(SseMcpServer(type="sse", name=server.name, url=server.url,
                                      headers=headers))
    return taken, skipped
