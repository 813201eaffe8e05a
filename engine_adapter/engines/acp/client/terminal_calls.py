"""The `terminal/*` half of the ACP client: commands an agent runs through the cockpit.

`TerminalCalls` carries them out for `AcpClient`, whose `terminal/*` methods (the ones the SDK
calls) hand over to it; it owns the running commands (`Terminals`) and the row each one
journals. A `terminal/create` is approved as the whole request (`terminal_input`: argv, env,
cwd, output limit), unless an `execute` permission of this turn covers exactly that command with
no env and no cwd of its own (and the sandbox is not missing); a cwd outside the workspace is
refused and journaled as a failed row. Each command runs in the sandbox and its own scope
(`terminals`), so nothing it starts outlives it; `COCKPIT_SANDBOX=off` in its env asks to run it
outside the sandbox (tier 4: the human decides every time).
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Callable
from typing import Any

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from engine_adapter.engines.acp.client.files import Workspace, WorkspaceError
from engine_adapter.engines.acp.client.mapping import OUTPUT_LIMIT
from engine_adapter.engines.acp.client.operations import Operations
from engine_adapter.engines.acp.client.permissions import PERMISSION_DENIED, Permits, tier_for
from engine_adapter.engines.acp.client.terminals import (
    OUTSIDE_VARIABLE,
    Terminal,
    TerminalError,
    Terminals,
)
from engine_adapter.engines.acp.text import cap, clean
from engine_adapter.events import ToolEnd, ToolStart
from engine_adapter.processes import command_env
from engine_adapter.sandbox import NO_SANDBOX, UNAVAILABLE, Sandbox
from engine_adapter.shell import DESTRUCTIVE

__all__ = ["TERMINAL_TOOL", "WORD_LIMIT", "TerminalCalls", "terminal_input"]

TERMINAL_TOOL = "terminal"
"""The tool a `terminal/create` is asked, granted and journaled as: a command the cockpit runs,
in its sandbox. Not `execute`, the agent's own tool (run by the agent, outside it): a grant names
what it covers, so `[a]` on one never answers the other. (Saved `execute` grants from before the
split keep covering the agent's own `execute` only: that is the name they give.)"""

WORD_LIMIT = 8192  # characters of one argv word or env value kept in an approval's input


class TerminalCalls:
    """`terminal/*` for one client: `operations` numbers, gates and journals each command;
    `workspace` confines its cwd; `env` is the environment it runs with; `sandbox` is where it
    runs (None: no sandbox); `permits` are the agent's permissions of this turn;
    `agent_name()` names the agent in approval reasons (its title once the session opened)."""

    def __init__(self, operations: Operations, workspace: Workspace, *, env: dict[str, str],
                 sandbox: Sandbox | None, permits: Permits,
                 agent_name: Callable[[], str]) -> None:
        self.operations = operations
        self.workspace = workspace
        self.env = env
        self.sandbox = sandbox
        self.permits = permits
        self._agent_name = agent_name
        self.terminals = Terminals(on_exit=self._exited)
        self._rows: dict[str, tuple[str, float]] = {}  # terminal id -> (call id, start time)

    async def create(self, command: str, args: list[str] | None, env: list[EnvVariable] | None,
                     cwd: str | None, output_byte_limit: int | None) -> CreateTerminalResponse:
        """Start a command in the workspace, after an approval of the whole request unless an
        `execute` permission of this turn covers it (only one with no env and no cwd)."""
        ops = self.operations
        run = ops.active()
        op_id = ops.op_id("terminal")
        argv = [command, *(args or [])]
        tool_input = terminal_input(argv, env, cwd, output_byte_limit)
        shown = clean(shlex.join(argv), 2000)
        sandbox = self.sandbox
        outside = sandbox is not None and sandbox.active and any(
            v.name == OUTSIDE_VARIABLE and v.value.strip().lower() in ("off", "0", "false")
            for v in env or [])
        flag = sandbox.approval_flag(bypass=outside) if sandbox is not None else None
        tier, reason = self._tier_and_reason(argv, shown, outside=outside)
        try:
            real_cwd = self.workspace.resolve(cwd) if cwd is not None else self.workspace.root
        except WorkspaceError as exc:
            raise ops.refused(op_id, TERMINAL_TOOL, exc, tool_input, f"run {shown}",
                              tier=tier) from None
        if real_cwd == self.workspace.root:
            tool_input.pop("cwd", None)  # the workspace itself: what the human assumes anyway
        else:
            tool_input["cwd"] = self.workspace.display(real_cwd)
        # A permission for `git diff` says nothing about an env or a cwd the human never saw.
        # Nor does it cover a command the sandbox would have held, on a machine without one.
        plain = "env" not in tool_input and "cwd" not in tool_input and flag is not False
        permit = self.permits.take_command(argv) if plain else None
        await ops.gate(run, op_id, TERMINAL_TOOL, reason, tool_input, tier, permit, sandboxed=flag)
        # The agent's own environment holds its key: a command's output goes back to it and to
        # the journal, so secrets are left out (what the agent asks for on purpose is shown).
        run_env = sandbox.command_env(self.env) if sandbox is not None else command_env(self.env)
        run_env.update({v.name: v.value for v in env or [] if v.name != OUTSIDE_VARIABLE})
        try:
            prepared = self.terminals.prepare(argv, cwd=real_cwd, env=run_env,
                                              output_limit=output_byte_limit,
                                              sandbox=sandbox, outside=outside)
        except TerminalError as exc:
            raise ops.refused(op_id, TERMINAL_TOOL, exc, tool_input, f"run {shown}", tier=tier,
                              code=-32603) from None
        # Write-ahead: the row is journaled before the command starts, so a crash in between
        # leaves a started row, never a command that ran without one.
        started = time.monotonic()
        ops.emit(ToolStart(call_id=op_id, tool=TERMINAL_TOOL, tool_input=tool_input, tier=tier,
                           title=f"run {shown}", source="client",
                           terminal_id=prepared.terminal_id,
                           permitted_by="agent permission" if permit else None,
                           sandbox=prepared.sandbox,
                           sandbox_network=sandbox.network if sandbox and prepared.sandbox
                           else None))
        if run.token.cancelled:  # e.g. the journal could not record the start: do not act
            prepared.discard()
            ops.ended(op_id, TERMINAL_TOOL, started, error="cancelled before it ran")
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        try:
            terminal = await self.terminals.start(prepared)
        except TerminalError as exc:
            ops.ended(op_id, TERMINAL_TOOL, started, error=clean(str(exc), 500))
            raise RequestError(-32603, clean(str(exc), 500)) from None
        self._rows[terminal.terminal_id] = (op_id, started)
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    def _tier_and_reason(self, argv: list[str], shown: str, *, outside: bool) -> tuple[int, str]:
        """The command's tier and the approval's reason (which says where it runs)."""
        tier = tier_for("execute", {"argv": argv}, self.workspace.root)
        reason = f"{self._agent_name()} asks to run {shown}"
        if outside:
            tier = DESTRUCTIVE
            reason += " OUTSIDE the sandbox, with your full access to files and network"
        elif self.sandbox is not None and self.sandbox.state == UNAVAILABLE:
            reason += NO_SANDBOX
        return tier, reason

    def _exited(self, terminal: Terminal) -> None:
        entry = self._rows.pop(terminal.terminal_id, None)
        if entry is None:
            return
        op_id, started = entry
        code, sig = terminal.exit_code, terminal.signal_name
        ok = code == 0
        error = None if ok else ("killed" if terminal.killed else
                                 f"exit code {code}" if code is not None else f"signal {sig}")
        if error and terminal.blocked:
            error += f"; blocked by sandbox: {terminal.blocked}"
        self.operations.emit(ToolEnd(call_id=op_id, tool=TERMINAL_TOOL, ok=ok,
                                     output=clean(terminal.text(), OUTPUT_LIMIT), error=error,
                                     duration_ms=(time.monotonic() - started) * 1000,
                                     exit_code=code, sandbox=terminal.sandbox,
                                     sandbox_blocked=terminal.blocked))

    def output_text(self, terminal_id: str) -> str | None:
        """A terminal's output as a tool call's content shows it (capped, the exit status
        last), or None for a terminal the client does not run."""
        terminal = self.terminals.find(terminal_id)
        if terminal is None:
            return None
        status = ("" if not terminal.exited.done() else
                  f"\n[exit code {terminal.exit_code}]" if terminal.exit_code is not None
                  else f"\n[{terminal.signal_name}]")
        return cap(terminal.text(), OUTPUT_LIMIT) + status

    def _get(self, terminal_id: str) -> Terminal:
        try:
            return self.terminals.get(terminal_id)
        except TerminalError as exc:
            raise RequestError(-32602, clean(str(exc), 500)) from None

    def output(self, terminal_id: str) -> TerminalOutputResponse:
        """The output so far, whether it was cut, and the exit status once exited."""
        terminal = self._get(terminal_id)
        status = TerminalExitStatus(exit_code=terminal.exit_code, signal=terminal.signal_name) \
            if terminal.exited.done() else None
        return TerminalOutputResponse(output=terminal.text(), truncated=terminal.truncated,
                                      exit_status=status)

    async def wait_for_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """Wait for the command to exit."""
        terminal = self._get(terminal_id)
        await asyncio.shield(terminal.exited)
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code,
                                           signal=terminal.signal_name)

    def kill(self, terminal_id: str) -> KillTerminalResponse:
        """Kill the command (the terminal stays readable until released)."""
        self._get(terminal_id).kill()
        return KillTerminalResponse()

    def release(self, terminal_id: str) -> ReleaseTerminalResponse:
        """Kill the command if it still runs and forget the terminal."""
        self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def stop_all(self, why: str) -> None:
        """End every running command of this session (a turn ended, cancel, close)."""
        for terminal in self.terminals.running:
            terminal.kill()
        await self.terminals.close()
        for terminal_id in list(self._rows):
            op_id, started = self._rows.pop(terminal_id)
            self.operations.emit(ToolEnd(call_id=op_id, tool=TERMINAL_TOOL, ok=False, output="",
                                         error=f"stopped: {why}",
                                         duration_ms=(time.monotonic() - started) * 1000))


def terminal_input(argv: list[str], env: list[EnvVariable] | None, cwd: str | None,
                   output_byte_limit: int | None) -> dict[str, Any]:
    """The approval input of a `terminal/create`: the whole request, cleaned. `argv` is the
    program and its arguments as run (no shell); `env` the variables it sets (the last of a
    repeated name wins, as it will when run); `cwd` as sent; `outputByteLimit` if given."""
    data: dict[str, Any] = {"argv": [clean(word, WORD_LIMIT) for word in argv]}
    if env:
        data["env"] = {clean(v.name, 200): clean(v.value, WORD_LIMIT) for v in env}
    if cwd is not None:
        data["cwd"] = clean(cwd, 1000)
    if output_byte_limit is not None:
        data["outputByteLimit"] = output_byte_limit
    return data
