"""What a `shell` call asks to run — its argv, tier and the reason the human sees, inside the
sandbox or (`"sandbox": false`) outside it — and what the model is told when the sandbox
stopped a command."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine_adapter.engines.builtin.process import shell_argv
from engine_adapter.engines.builtin.tools import ToolError
from engine_adapter.sandbox import WORKSPACE_WRITE, Sandbox
from engine_adapter.shell import DESTRUCTIVE, classify_command

__all__ = ["ShellRequest", "blocked_hint", "shell_request"]


@dataclass(frozen=True)
class ShellRequest:
    """A checked `shell` call: what to run, its tier, the reason to show, and whether it is to
    run outside the sandbox (asked every time, never granted or auto-approved)."""

    argv: list[str]
    tier: int
    reason: str
    outside: bool


def shell_request(tool_input: Mapping[str, Any], root: str | Path,
                  sandbox: Sandbox) -> ShellRequest:
    """Check a `shell` call's input and decide its tier and reason; `ToolError` if malformed."""
    command = _command_of(tool_input)
    wanted = tool_input.get("sandbox", True)
    if not isinstance(wanted, bool):
        raise ToolError("'sandbox' must be true or false")
    found = classify_command(command, root)
    tier, reason = found.tier, found.reason
    if tier >= DESTRUCTIVE:
        reason = f"destructive: {reason}"
    # Outside the sandbox only when there is one to leave: it is then a tier-4 ask.
    outside = not wanted and sandbox.active
    if outside:
        tier = DESTRUCTIVE
        reason = ("run OUTSIDE the sandbox, with your full access to files and network "
                  f"(the model asked with \"sandbox\": false); {reason}")
    args = shell_argv(command) if isinstance(command, str) else command
    return ShellRequest(args, tier, reason, outside)


def _command_of(tool_input: Mapping[str, Any]) -> str | list[str]:
    """A `shell` call's shell line (`command`) or its words (`argv`); `ToolError` if malformed."""
    command, argv = tool_input.get("command"), tool_input.get("argv")
    if (command is None) == (argv is None):
        raise ToolError("give either 'command' (a shell line) or 'argv'")
    if argv is not None:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ToolError("'argv' must be a non-empty list of strings")
        return list(argv)
    if not isinstance(command, str):  # (the tool's schema already says so)
        raise ToolError("'command' must be a shell line")
    if not command.strip():
        raise ToolError("'command' is empty")
    return command


def blocked_hint(blocked: str, sandbox: Sandbox) -> str:
    """What the model reads after a command the sandbox stopped."""
    where = "the workspace and $TMPDIR" if sandbox.state == WORKSPACE_WRITE else "$TMPDIR"
    network = "" if sandbox.network else ", and have no network"
    return (f"blocked by sandbox: {blocked}. Commands run in a sandbox: they can write only in "
            f"{where}{network}. If the task truly needs this, call shell again with "
            "\"sandbox\": false and say why in your message; the human is asked every time.")
