"""The sandbox every command the cockpit runs goes through: the built-in engine's `shell` calls
and verification checks, and the commands ACP agents run through `terminal/create`.

- `settings` — `SandboxSettings` (mode, network, read_deny, read_allow), the modes and the
  states an event records;
- `core` — `Sandbox` (what this machine offers, the approval policy's flag, `wrap()` for one
  command) and `Wrapped`;
- `bwrap` (Linux) and `seatbelt` (macOS) — the command lines; `seccomp` — the filter that
  leaves commands no unix socket; `hidden` — what is masked (credentials, socket folders) and
  the variables left out; `gitdirs` — the git dirs kept read-only; `install` — bwrap and the
  cockpit's own install, resolved outside the workspace; `blocked` — telling from a failed
  command's output what the sandbox stopped.
"""

from engine_adapter.sandbox.blocked import blocked_by_sandbox
from engine_adapter.sandbox.core import Sandbox, Wrapped
from engine_adapter.sandbox.hidden import CREDENTIAL_NAMES
from engine_adapter.sandbox.settings import (
    BYPASSED,
    ENV_VARIABLE,
    MODES,
    NO_SANDBOX,
    OFF,
    READ_ONLY,
    UNAVAILABLE,
    WORKSPACE_WRITE,
    SandboxSettings,
    agent_place_label,
    default_settings,
    is_sandboxed,
    path_list_problem,
    sandbox_label,
)

__all__ = [
    "BYPASSED",
    "CREDENTIAL_NAMES",
    "ENV_VARIABLE",
    "MODES",
    "NO_SANDBOX",
    "OFF",
    "READ_ONLY",
    "UNAVAILABLE",
    "WORKSPACE_WRITE",
    "Sandbox",
    "SandboxSettings",
    "Wrapped",
    "agent_place_label",
    "blocked_by_sandbox",
    "default_settings",
    "is_sandboxed",
    "path_list_problem",
    "sandbox_label",
]
