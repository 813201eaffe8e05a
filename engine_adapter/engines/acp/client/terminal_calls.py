"""The `terminal/*` half of the ACP client: commands an agent runs through the cockpit.

`TerminalCalls` is mixed into `AcpClient` (the SDK calls these methods on the client object).
A `terminal/create` is approved as the whole request (`terminal_input`: argv, env, cwd, output
limit), unless an `execute` permission of this turn covers exactly that command with no env and
no cwd of its own (and the sandbox is not missing); a cwd outside the workspace is refused and
journaled as a failed row. Each command runs in the sandbox and its own scope (`terminals`), so
nothing it starts outlives it; `COCKPIT_SANDBOX=off` in its env asks to run it outside the
sandbox (tier 4: the human decides every time).
"""

from __future__ import annotations

import asyncio
import shlex
import time
from typing import TYPE_CHECKING, Any

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

from engine_adapter.engines.acp.client.files import WorkspaceError
from engine_adapter.engines.acp.client.mapping import OUTPUT_LIMIT
from engine_adapter.engines.acp.client.permissions import PERMISSION_DENIED, tier_for
from engine_adapter.engines.acp.client.terminals import (
    OUTSIDE_VARIABLE,
    Terminal,
    TerminalError,
    Terminals,
)
from engine_adapter.engines.acp.text import cap, clean
from engine_adapter.events import ToolEnd, ToolStart
from engine_adapter.sandbox import NO_SANDBOX, UNAVAILABLE
from engine_adapter.shell import DESTRUCTIVE

if TYPE_CHECKING:
    from engine_adapter.engines.acp.client.client import AcpClient

__all__ = ["WORD_LIMIT", "TerminalCalls", "terminal_input"]

WORD_LIMIT = 8192  # characters of one argv word or env value kept in an approval's input


class TerminalCalls:
    """`terminal/*` for `AcpClient` (which provides the workspace, env, gate and events)."""

    terminals: Terminals
    _terminal_calls: dict[str, tuple[str, float]]  # terminal id -> (call id, start time)

    async def create_terminal(self: AcpClient, session_id: str, command: str,
                              args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        """Start a command in the workspace, after an approval of the whole request unless an
        `execute` permission of this turn covers it (only one with no env and no cwd)."""
        run = self._active()
        op_id = self._op_id("terminal")
        argv = [command, *(args or [])]
        tool_input = terminal_input(argv, env, cwd, output_byte_limit)
        shown = clean(shlex.join(argv), 2000)
        tier = tier_for("execute", {"argv": argv}, self.workspace.root)
        sandbox = self.sandbox
        outside = sandbox is not None and sandbox.active and any(
            v.name == OUTSIDE_VARIABLE and v.value.strip().lower() in ("off", "0", "false")
            for v in env or [])
        flag = sandbox.approval_flag(bypass=outside) if sandbox is not None else None
        reason = f"{self.agent_name} asks to run {shown}"
        if outside:
            tier = DESTRUCTIVE
            reason += " OUTSIDE the sandbox, with your full access to files and network"
        elif sandbox is not None and sandbox.state == UNAVAILABLE:
            reason += NO_SANDBOX
        try:
            real_cwd = self.workspace.resolve(cwd) if cwd is not None else self.workspace.root
        except WorkspaceError as exc:
            raise self._refused(op_id, "execute", exc, tool_input, f"run {shown}",
                                tier=tier) from None
        if real_cwd == self.workspace.root:
            tool_input.pop("cwd", None)  # the workspace itself: what the human assumes anyway
        else:
            tool_input["cwd"] = self.workspace.display(real_cwd)
        # A permission for `git diff` says nothing about an env or a cwd the human never saw.
        # Nor does it cover a command the sandbox would have held, on a machine without one.
        plain = "env" not in tool_input and "cwd" not in tool_input and flag is not False
        permit = self.permits.take_command(argv) if plain else None
        await self._gate(run, op_id, "execute", reason, tool_input, tier, permit,
                         sandboxed=flag)
        run_env = dict(self.env)
        run_env.update({v.name: v.value for v in env or [] if v.name != OUTSIDE_VARIABLE})
        try:
            prepared = self.terminals.prepare(argv, cwd=real_cwd, env=run_env,
                                              output_limit=output_byte_limit,
                                              sandbox=sandbox, outside=outside)
        except TerminalError as exc:
            raise self._refused(op_id, "execute", exc, tool_input, f"run {shown}", tier=tier,
                                code=-32603) from None
        # Write-ahead: the row is journaled before the command starts, so a crash in between
        # leaves a started row, never a command that ran without one.
        started = time.monotonic()
        self._emit(ToolStart(call_id=op_id, tool="execute", tool_input=tool_input, tier=tier,
                             title=f"run {shown}", source="client",
                             terminal_id=prepared.terminal_id,
                             permitted_by="agent permission" if permit else None,
                             sandbox=prepared.sandbox,
                             sandbox_network=sandbox.network if prepared.sandbox else None))
        if run.token.cancelled:  # e.g. the journal could not record the start: do not act
            prepared.discard()
            self._ended(op_id, "execute", started, error="cancelled before it ran")
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        try:
            terminal = await self.terminals.start(prepared)
        except TerminalError as exc:
            self._ended(op_id, "execute", started, error=clean(str(exc), 500))
            raise RequestError(-32603, clean(str(exc), 500)) from None
        self._terminal_calls[terminal.terminal_id] = (op_id, started)
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    def _terminal_exited(self: AcpClient, terminal: Terminal) -> None:
        entry = self._terminal_calls.pop(terminal.terminal_id, None)
        if entry is None:
            return
        op_id, started = entry
        code, sig = terminal.exit_code, terminal.signal_name
        ok = code == 0
        error = None if ok else ("killed" if terminal.killed else
                                 f"exit code {code}" if code is not None else f"signal {sig}")
        if error and terminal.blocked:
            error += f"; blocked by sandbox: {terminal.blocked}"
        self._emit(ToolEnd(call_id=op_id, tool="execute", ok=ok,
                           output=clean(terminal.text(), OUTPUT_LIMIT), error=error,
                           duration_ms=(time.monotonic() - started) * 1000,
                           exit_code=code, sandbox=terminal.sandbox,
                           sandbox_blocked=terminal.blocked))

    def _terminal_text(self, terminal_id: str) -> str | None:
        terminal = self.terminals.find(terminal_id)
        if terminal is None:
            return None
        status = ("" if not terminal.exited.done() else
                  f"\n[exit code {terminal.exit_code}]" if terminal.exit_code is not None
                  else f"\n[{terminal.signal_name}]")
        return cap(terminal.text(), OUTPUT_LIMIT) + status

    def _status(self, terminal: Terminal) -> TerminalExitStatus | None:
        if not terminal.exited.done():
            return None
        return TerminalExitStatus(exit_code=terminal.exit_code, signal=terminal.signal_name)

    async def terminal_output(self, session_id: str, terminal_id: str,
                              **kwargs: Any) -> TerminalOutputResponse:
        """The output so far, whether it was cut, and the exit status once exited."""
        try:
            terminal = self.terminals.get(terminal_id)
        except TerminalError as exc:
            raise RequestError(-32602, clean(str(exc), 500)) from None
        return TerminalOutputResponse(output=terminal.text(), truncated=terminal.truncated,
                                      exit_status=self._status(terminal))

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        """Wait for the command to exit."""
        try:
            terminal = self.terminals.get(terminal_id)
        except TerminalError as exc:
            raise RequestError(-32602, clean(str(exc), 500)) from None
        await asyncio.shield(terminal.exited)
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code,
                                           signal=terminal.signal_name)

    async def kill_terminal(self, session_id: str, terminal_id: str,
                            **kwargs: Any) -> KillTerminalResponse:
        """Kill the command (the terminal stays readable until released)."""
        try:
            self.terminals.get(terminal_id).kill()
        except TerminalError as exc:
            raise RequestError(-32602, clean(str(exc), 500)) from None
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse:
        """Kill the command if it still runs and forget the terminal."""
        self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def stop_terminals(self: AcpClient, why: str) -> None:
        """End every running command of this session (a turn ended, cancel, close)."""
        for terminal in self.terminals.running:
            terminal.kill()
        await self.terminals.close()
        for terminal_id in list(self._terminal_calls):
            op_id, started = self._terminal_calls.pop(terminal_id)
            self._emit(ToolEnd(call_id=op_id, tool="execute", ok=False, output="",
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
