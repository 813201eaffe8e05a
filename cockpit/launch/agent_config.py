"""What `config.toml` says about agents: the MCP servers to hand them, and the environment each
one gets on purpose.

```toml
[mcp_servers.files]           # a server the agent starts itself (stdio)
command = "npx"               # looked up on PATH when not absolute
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "info" }

[mcp_servers.docs]            # a server the agent connects to
url = "https://mcp.example.com/mcp"
transport = "http"            # or "sse" (default: http)
headers = { Authorization = "Bearer …" }

[agents.codex.env]            # set for `--agent codex` only
CODEX_HOME = "/home/me/.codex-work"
```

Every configured server goes to every agent session unless `--mcp NAME` picks some or `--no-mcp`
none. Reading never fails: a bad entry is left out and named in `problems`.
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.config import config_path
from engine_adapter.engines.acp.agent import McpServer

__all__ = ["ENV_NAME", "AgentsConfig", "load_agents_config"]

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class AgentsConfig:
    """The MCP servers by name, each agent's `[agents.NAME.env]`, and what was left out, why."""

    mcp_servers: dict[str, McpServer] = field(default_factory=dict)
    agent_env: dict[str, dict[str, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_table(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _server(name: str, table: Any, problems: list[str]) -> McpServer | None:
    where = f"[mcp_servers.{name}]"
    if not isinstance(table, dict):
        problems.append(f"{where} must be a table")
        return None
    known = {"command", "args", "env", "url", "transport", "headers"}
    for key in table.keys() - known:
        problems.append(f"{where} has no setting {key!r} (known: {', '.join(sorted(known))})")
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        problems.append(f"{where} needs either command (a server the agent starts) or url")
        return None
    if url is not None:
        transport = table.get("transport", "http")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            problems.append(f"{where} url must be an http:// or https:// address")
            return None
        if transport not in ("http", "sse"):
            problems.append(f"{where} transport must be \"http\" or \"sse\"")
            return None
        headers = table.get("headers", {})
        if not _string_table(headers):
            problems.append(f"{where} headers must be a table of strings")
            return None
        return McpServer(name=name, transport=transport, url=url,
                         headers=tuple(sorted(headers.items())))
    args, env = table.get("args", []), table.get("env", {})
    if not isinstance(command, str) or not command or not _strings(args):
        problems.append(f"{where} command must be a string and args a list of strings")
        return None
    if not _string_table(env) or not all(ENV_NAME.fullmatch(k) for k in env):
        problems.append(f"{where} env must be a table of variable names to strings")
        return None
    return McpServer(name=name, command=command, args=tuple(args),
                     env=tuple(sorted(env.items())))


def load_agents_config(path: Path | None = None) -> AgentsConfig:
    """The `[mcp_servers]` and `[agents.*.env]` settings (empty when the file is missing; a
    file that cannot be read is one problem)."""
    path = path or config_path()
    config = AgentsConfig()
    if not path.exists():
        return config
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        config.problems.append(f"{path}: {exc}")
        return config
    servers = raw.get("mcp_servers", {})
    if not isinstance(servers, dict):
        config.problems.append("[mcp_servers] must be a table of servers")
        servers = {}
    for name, table in servers.items():
        server = _server(str(name), table, config.problems)
        if server is not None:
            config.mcp_servers[str(name)] = server
    agents = raw.get("agents", {})
    for name, table in (agents.items() if isinstance(agents, dict) else ()):
        env = table.get("env") if isinstance(table, dict) else None
        if env is None:
            continue
        if not _string_table(env) or not all(ENV_NAME.fullmatch(k) for k in env):
            config.problems.append(f"[agents.{name}.env] must be a table of variable names to "
                                   "strings")
            continue
        config.agent_env[str(name)] = dict(env)
    return config


def resolve_command(server: McpServer) -> McpServer | str:
    """`server` with its command as an absolute path (ACP asks for one), or why it cannot be
    found."""
    if server.transport != "stdio" or os.path.isabs(server.command):
        return server
    found = shutil.which(server.command)
    if found is None:
        return (f"MCP server {server.name!r}: {server.command!r} is not on PATH (give its full "
                "path in config.toml)")
    return McpServer(name=server.name, command=found, args=server.args, env=server.env)
