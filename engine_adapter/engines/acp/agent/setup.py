"""What the human asked for when an agent session opens: which conversation (a new one, or an
earlier one to resume), the MCP servers the agent may use, and the settings to start with.

These are plain values, filled by the command line or the app and handed to `AcpRunner`; the
modules that act on them are `opening` (new, resume, load), `mcp` and `settings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["McpServer", "SessionSetup", "Wanted"]


@dataclass(frozen=True)
class McpServer:
    """One MCP server to hand the agent (`[mcp_servers.NAME]` in config.toml).

    `transport` "stdio": the agent starts `command args` with `env` set; "http" or "sse": the
    agent connects to `url`, sending `headers`."""

    name: str
    transport: Literal["stdio", "http", "sse"] = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Wanted:
    """Settings the human asked for: `model` (the agent's model option), `mode` (a session mode
    or the agent's mode option) and `options` (any option by its id, as `(id, value)`)."""

    model: str | None = None
    mode: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.model or self.mode or self.options)

    def with_option(self, option_id: str, value: str) -> Wanted:
        """These settings with `option_id` set to `value` (replacing an earlier value)."""
        kept = tuple((k, v) for k, v in self.options if k != option_id)
        return Wanted(self.model, self.mode, (*kept, (option_id, value)))


@dataclass(frozen=True)
class SessionSetup:
    """How to open the agent's session: `resume` names an earlier ACP session to continue (by
    `session/resume` where the agent offers it, else `session/load`); `mcp_servers` go to the
    agent; `wanted` settings are set once the session is open. `load_only`: open `resume` by
    `session/load` alone, to read its history (`cockpit replay --agent --session`): a resume
    replays nothing."""

    resume: str | None = None
    mcp_servers: tuple[McpServer, ...] = ()
    wanted: Wanted = field(default_factory=Wanted)
    load_only: bool = False
