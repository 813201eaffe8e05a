"""The client side of ACP: what the cockpit answers when the agent calls it.

`AcpClient` is the object the SDK calls for `session/update`, `session/request_permission`,
`fs/read_text_file`, `fs/write_text_file` and `terminal/*`. Updates go through the
`UpdateMapper` to the current run's event sink; permissions, writes and commands go through the
run's approval controller (the `Session`), so grants, unattended mode and timeouts apply.

Reads inside the workspace are tier 1 and need no approval. A write or a command needs one,
unless the agent already got permission for exactly that (an allowed `edit` request naming the
path, an allowed `execute` request for the same command) in the current turn; each such
permission covers one operation.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from ...events import BaseEvent, ToolEnd, ToolStart
from ...runner import ApprovalController, CancelToken, EventSink
from ...shell import grant_prefix
from .mapping import OUTPUT_LIMIT, UpdateMapper
from .permissions import (
    approval_input,
    choose_option,
    command_of,
    destructive_reason,
    same_command,
    tier_for,
)
from .terminals import Terminal, TerminalError, Terminals
from .text import cap, clean
from .workspace import Workspace, WorkspaceError

__all__ = ["AcpClient", "RunContext"]

log = logging.getLogger(__name__)

PERMISSION_DENIED = -32001  # our error code for "the cockpit (its human) said no"
_EDIT_KINDS = frozenset({"edit", "delete", "move"})


@dataclass
class RunContext:
    """The run being served: where events go, who approves, what cancels. `live` is cleared
    just before `agent_end`, after which nothing more may be emitted into the run."""

    sink: EventSink
    controller: ApprovalController
    token: CancelToken
    live: bool = True


@dataclass
class _Permit:
    """A permission the agent got in this turn, good for one matching fs write or command."""

    kind: str
    command: str | list[str] | None
    paths: set[str] = field(default_factory=set)


def _paths_of(raw_input: Any, locations: list[str], workspace: Workspace) -> set[str]:
    paths = list(locations)
    if isinstance(raw_input, dict):
        for key in ("path", "file_path", "filePath", "abs_path", "target", "destination"):
            value = raw_input.get(key)
            if isinstance(value, str):
                paths.append(value)
    resolved = set()
    for path in paths:
        try:
            resolved.add(workspace.resolve(path))
        except WorkspaceError:
            continue
    return resolved


class AcpClient:
    """Serves one ACP session's calls into the cockpit (see the module docstring).

    `env` is the environment commands run with; `agent_name` names the agent in approval
    reasons; `forward_always` lets a human's "always" reach the agent as `allow_always`.
    """

    def __init__(self, workspace: Workspace, *, env: dict[str, str], agent_name: str,
                 forward_always: bool = False) -> None:
        self.workspace = workspace
        self.env = env
        self.agent_name = agent_name
        self.forward_always = forward_always
        self.run: RunContext | None = None
        self.terminals = Terminals(on_exit=self._terminal_exited)
        self.mapper = UpdateMapper(self._emit, terminal_output=self._terminal_text,
                                   display_path=self._display_path, workspace=workspace.root)
        self._permits: list[_Permit] = []
        self._ops = itertools.count(1)
        self._terminal_calls: dict[str, tuple[str, float]] = {}  # terminal id -> (call id, t0)

    def _display_path(self, path: str) -> str:
        try:
            return self.workspace.display(self.workspace.resolve(path))
        except WorkspaceError:
            return path

    # plumbing --------------------------------------------------------------------------------
    def _emit(self, event: BaseEvent) -> None:
        run = self.run
        if run is not None and run.live:
            run.sink.emit(event)

    def start_turn(self, turn: int) -> None:
        """A new prompt: permissions of the last one no longer cover anything."""
        self._permits.clear()
        self.mapper.start_turn(turn)

    def _active(self) -> RunContext:
        run = self.run
        if run is None or not run.live:
            raise RequestError(PERMISSION_DENIED, "no cockpit task is running; the request was "
                               "refused")
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        return run

    # session/update --------------------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Map the update to events now, before any await (keeps arrival order). Only reached
        if `take_notification` is not installed on the transport."""
        run = self.run
        if run is not None and run.live:
            self.mapper.on_update(update)

    def take_notification(self, method: str, params: Any) -> bool:
        """Handle `session/update` as the transport reads it (install as the transport's
        `on_notification`); other notifications go on to the SDK.

        Why not through the SDK's dispatch: it starts one task per incoming message, so order
        holds only by scheduling luck, and the task, telemetry span and bookkeeping cost more
        per streamed chunk than everything the cockpit does with it (measured: ~9 µs of ~16 µs a
        chunk). Here each update is validated with the SDK's own schema (text deltas with a
        direct two-field check) and mapped in arrival order, before any later message — the
        prompt's answer included — reaches the SDK.
        """
        if method != "session/update":
            return False
        run = self.run
        if run is None or not run.live:
            return True  # between tasks: nobody to tell
        # The bulk of a stream is plain text deltas: two fields, checked here directly (the
        # schema's union validation would cost more than the rest of the chunk's path).
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict):
            kind = update.get("sessionUpdate")
            if kind == "agent_message_chunk" or kind == "agent_thought_chunk":
                content = update.get("content")
                if isinstance(content, dict) and content.get("type") == "text":
                    text = content.get("text")
                    if isinstance(text, str):
                        self.mapper.text_chunk(
                            text, "message" if kind == "agent_message_chunk" else "thought")
                        return True
        try:
            notification = SessionNotification.model_validate(params)
        except ValidationError as exc:
            log.warning("ignoring an invalid session/update: %s", exc.errors()[:1])
            return True
        self.mapper.on_update(notification.update)
        return True

    # session/request_permission --------------------------------------------------------------
    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        """Ask the cockpit (grant, human, unattended rule) and answer by option kind."""
        cancelled = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        run = self.run
        if run is None or not run.live or run.token.cancelled:
            return cancelled
        call_id = clean(tool_call.tool_call_id, 200)
        known = self.mapper.tool_calls.get(call_id)
        kind = tool_call.kind or (known.kind if known else None) or "other"
        title = clean(tool_call.title or (known.title if known else "") or kind, 300)
        raw = tool_call.raw_input if tool_call.raw_input is not None else (
            known.raw_input if known else None)
        locations = [clean(loc.path, 1000) for loc in tool_call.locations or []] or (
            known.locations if known else [])
        tool_input = approval_input(raw, locations=locations, workspace=self.workspace.root)
        tier = tier_for(kind, raw, self.workspace.root)
        reason = f"{self.agent_name} asks to {kind}: {title}"
        why = destructive_reason(raw, self.workspace.root)
        if why:
            reason += f" (destructive: {why})"
        allowed = await run.controller.request_approval(call_id, kind, reason, tool_input,
                                                        tier=tier)
        if run.token.cancelled or not run.live:
            return cancelled
        if allowed:
            command = command_of(raw)
            self._permits.append(_Permit(kind, command,
                                         _paths_of(raw, locations, self.workspace)))
        remembered = allowed and self._granted(run, kind, tool_input, tier)
        option = choose_option(options, allowed=allowed, remembered=remembered,
                               forward_always=self.forward_always)
        if option is None:
            return cancelled
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=option.option_id))

    @staticmethod
    def _granted(run: RunContext, tool: str, tool_input: dict[str, Any], tier: int) -> bool:
        grants = getattr(run.controller, "grants", None) or []
        prefix = grant_prefix(tool, tool_input)
        return any(grant.matches(tool, prefix, tier) for grant in grants)

    def _take_permit(self, predicate: Any) -> _Permit | None:
        for permit in self._permits:
            if predicate(permit):
                self._permits.remove(permit)
                return permit
        return None

    async def _gate(self, run: RunContext, op_id: str, tool: str, reason: str,
                    tool_input: dict[str, Any], tier: int, permit: _Permit | None) -> None:
        """Ask unless a permit covers the operation; raise if the answer is no."""
        if permit is not None:
            return
        allowed = await run.controller.request_approval(op_id, tool, reason, tool_input,
                                                        tier=tier)
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        if not allowed:
            raise RequestError(PERMISSION_DENIED, f"the cockpit denied this: {reason}")

    # fs/* ------------------------------------------------------------------------------------
    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        """Read a file inside the workspace (tier 1: no approval)."""
        self._active()
        op_id = f"fs-read-{next(self._ops)}"
        started = time.monotonic()
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            self._emit_refusal(op_id, "read", clean(str(exc), 500), path)
            raise RequestError(-32602, clean(str(exc), 500)) from None
        shown = self.workspace.display(real)
        self._emit(ToolStart(call_id=op_id, tool="read", tool_input={"path": shown},
                             tier=1, title=f"read {shown}", source="client"))
        try:
            text = self.workspace.read(real, line, limit)
        except WorkspaceError as exc:  # started already: end that row, do not start another
            self._emit(ToolEnd(call_id=op_id, tool="read", ok=False, output="",
                               error=clean(str(exc), 500),
                               duration_ms=(time.monotonic() - started) * 1000))
            raise RequestError(-32602, clean(str(exc), 500)) from None
        self._emit(ToolEnd(call_id=op_id, tool="read", ok=True,
                           output=f"{len(text)} characters", error=None,
                           duration_ms=(time.monotonic() - started) * 1000))
        return ReadTextFileResponse(content=text)

    def _emit_refusal(self, op_id: str, tool: str, error: str, path: str) -> None:
        shown = clean(path, 1000)
        self._emit(ToolStart(call_id=op_id, tool=tool, tool_input={"path": shown}, tier=1,
                             title=f"{tool} {shown}", source="client"))
        self._emit(ToolEnd(call_id=op_id, tool=tool, ok=False, output="", error=error,
                           duration_ms=0.0))

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        """Write a file inside the workspace, after an approval unless already permitted."""
        run = self._active()
        op_id = f"fs-write-{next(self._ops)}"
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            self._emit_refusal(op_id, "edit", clean(str(exc), 500), path)
            raise RequestError(-32602, clean(str(exc), 500)) from None
        shown = self.workspace.display(real)
        tool_input = {"path": shown, "diff": clean(self.workspace.diff(real, content))}
        permit = self._take_permit(lambda p: p.kind in _EDIT_KINDS and real in p.paths)
        await self._gate(run, op_id, "edit", f"{self.agent_name} asks to write {shown}",
                         tool_input, 3, permit)
        started = time.monotonic()
        self._emit(ToolStart(call_id=op_id, tool="edit", tool_input=tool_input, tier=3,
                             title=f"write {shown}", source="client",
                             permitted_by="agent permission" if permit else None))
        try:
            self.workspace.write(real, content)
        except WorkspaceError as exc:
            self._emit(ToolEnd(call_id=op_id, tool="edit", ok=False, output="",
                               error=clean(str(exc), 500),
                               duration_ms=(time.monotonic() - started) * 1000))
            raise RequestError(-32603, clean(str(exc), 500)) from None
        self._emit(ToolEnd(call_id=op_id, tool="edit", ok=True,
                           output=f"wrote {len(content)} characters to {shown}", error=None,
                           duration_ms=(time.monotonic() - started) * 1000))
        return WriteTextFileResponse()

    # terminal/* ------------------------------------------------------------------------------
    async def create_terminal(self, session_id: str, command: str,
                              args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        """Start a command in the workspace, after an approval unless already permitted."""
        run = self._active()
        op_id = f"terminal-{next(self._ops)}"
        argv = [command, *(args or [])]
        try:
            real_cwd = self.workspace.resolve(cwd) if cwd else self.workspace.root
        except WorkspaceError as exc:
            raise RequestError(-32602, clean(str(exc), 500)) from None
        tool_input: dict[str, Any] = {"argv": [clean(word, 8192) for word in argv]}
        if real_cwd != self.workspace.root:
            tool_input["cwd"] = self.workspace.display(real_cwd)
        if env:
            tool_input["env"] = {clean(v.name, 200): clean(v.value, 2000) for v in env}
        tier = tier_for("execute", {"argv": argv}, self.workspace.root)
        shown = clean(shlex.join(argv), 2000)
        permit = self._take_permit(
            lambda p: p.kind == "execute" and p.command is not None
            and (same_command(p.command, argv) or same_command(p.command, shlex.join(argv))))
        await self._gate(run, op_id, "execute", f"{self.agent_name} asks to run {shown}",
                         tool_input, tier, permit)
        run_env = dict(self.env)
        run_env.update({v.name: v.value for v in env or []})
        try:
            terminal = await self.terminals.create(argv, cwd=real_cwd, env=run_env,
                                                   output_limit=output_byte_limit)
        except TerminalError as exc:
            self._emit_refusal(op_id, "execute", clean(str(exc), 500), shown)
            raise RequestError(-32603, clean(str(exc), 500)) from None
        self._terminal_calls[terminal.terminal_id] = (op_id, time.monotonic())
        self._emit(ToolStart(call_id=op_id, tool="execute", tool_input=tool_input, tier=tier,
                             title=f"run {shown}", source="client",
                             terminal_id=terminal.terminal_id,
                             permitted_by="agent permission" if permit else None))
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    def _terminal_exited(self, terminal: Terminal) -> None:
        entry = self._terminal_calls.pop(terminal.terminal_id, None)
        if entry is None:
            return
        op_id, started = entry
        code, sig = terminal.exit_code, terminal.signal_name
        ok = code == 0
        error = None if ok else ("killed" if terminal.killed else
                                 f"exit code {code}" if code is not None else f"signal {sig}")
        self._emit(ToolEnd(call_id=op_id, tool="execute", ok=ok,
                           output=clean(terminal.text(), OUTPUT_LIMIT), error=error,
                           duration_ms=(time.monotonic() - started) * 1000,
                           exit_code=code))

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

    async def stop_terminals(self, why: str) -> None:
        """End every running command of this session (a turn ended, cancel, close)."""
        for terminal in self.terminals.running:
            terminal.kill()
        await self.terminals.close()
        for terminal_id in list(self._terminal_calls):
            op_id, started = self._terminal_calls.pop(terminal_id)
            self._emit(ToolEnd(call_id=op_id, tool="execute", ok=False, output="",
                               error=f"stopped: {why}",
                               duration_ms=(time.monotonic() - started) * 1000))
