"""The client side of ACP: what the cockpit answers when the agent calls it.

`AcpClient` is the object the SDK calls for `session/update`, `session/request_permission`,
`fs/read_text_file`, `fs/write_text_file` and `terminal/*`. Updates go through the
`UpdateMapper` to the current run's event sink; permissions, writes and commands go through the
run's approval controller (the `Session`), so grants, unattended mode and timeouts apply.

Reads inside the workspace are tier 1 and need no approval. A write or a command needs one,
unless the agent already got permission for exactly that in the current turn (see
`permissions.Permits`); each such permission covers one operation. A write's approval and its
row carry its diff; a command's approval carries the whole request (argv, env, cwd, output
limit). A refused request (outside the workspace, not a regular file, …) is journaled as a
failed row, like any other call. File I/O and diffs run in worker threads (`fileio.off_loop`),
never on the event loop; a `session/update` carrying diffs is rendered there too, before the
next message is read, so order holds.

Approval ids are unique within a turn: an agent chooses its own tool call ids and may reuse one
(or pick one of ours, `fs-write-1`), so a second request with an id already in use gets a
suffix (`t-1~2`): each request waits on its own answer, and the human's answer goes to the
request shown.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    AuthCapabilities,
    ClientCapabilities,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionNotification,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.client.commands import OfferedCommands
from engine_adapter.engines.acp.client.elicitation import ElicitationCalls
from engine_adapter.engines.acp.client.files import Workspace, WorkspaceError
from engine_adapter.engines.acp.client.mapping import OUTPUT_LIMIT, RenderedDiff, UpdateMapper
from engine_adapter.engines.acp.client.notes import DenialNotes
from engine_adapter.engines.acp.client.permissions import (
    PERMISSION_DENIED,
    Permits,
    approval_input,
    choose_option,
    destructive_reason,
    tier_for,
)
from engine_adapter.engines.acp.client.terminal_calls import TerminalCalls
from engine_adapter.engines.acp.client.terminals import Terminals
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import BaseEvent, ToolEnd, ToolStart
from engine_adapter.files import FileRefused, off_loop, unified_diff_async
from engine_adapter.sandbox import Sandbox
from engine_adapter.text import plural

__all__ = ["AcpClient", "client_capabilities"]

log = logging.getLogger(__name__)



def client_capabilities() -> ClientCapabilities:
    """What the cockpit offers an agent in `initialize`: reading and writing files, terminals,
    questions as forms (`elicitation/create`, form mode; links are not opened), and
    `auth.terminal` (the agent may name a login the human runs in a terminal; the cockpit shows
    that command, it never runs what the agent names)."""
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True,
        elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()),
        auth=AuthCapabilities(terminal=True))


class AcpClient(TerminalCalls, ElicitationCalls, OfferedCommands):
    """Serves one ACP session's calls into the cockpit (see the module docstring).

    `env` is the environment commands run with; `agent_name` names the agent in approval
    reasons; `forward_always` lets a human's "always" reach the agent as `allow_always`;
    `sandbox` is where `terminal/create` commands run (None: no sandbox).
    """

    def __init__(self, workspace: Workspace, *, env: dict[str, str], agent_name: str,
                 forward_always: bool = False, sandbox: Sandbox | None = None) -> None:
        self.workspace = workspace
        self.env = env
        self.sandbox = sandbox
        self.agent_name = agent_name
        self.forward_always = forward_always
        self.run: RunContext | None = None
        # Sees each `session/update`'s params first (the agent session's title, settings and
        # replayed history, see `agent_session`): True handled it, None leaves it to us.
        self.session_hook: Callable[[Any], bool | None] | None = None
        self.terminals = Terminals(on_exit=self._terminal_exited)
        self.mapper = UpdateMapper(self._emit, terminal_output=self._terminal_text,
                                   display_path=self._display_path, workspace=workspace.root)
        self.permits = Permits()
        self.notes = DenialNotes()  # a denial's reason, on its way to the agent
        self._ids_in_use: set[str] = set()  # approval ids given out this turn
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
        self.permits.clear()
        self._ids_in_use.clear()
        self.mapper.start_turn(turn)

    def _approval_id(self, wanted: str) -> str:
        """`wanted`, or `wanted~N` if that id is already in use this turn (by an earlier
        request, one of our own operations, or a tool call of the agent's)."""
        taken = self._ids_in_use
        approval_id, n = wanted, 1
        while approval_id in taken or (approval_id != wanted and (
                approval_id in self.mapper.tool_calls or approval_id in self.mapper.finished)):
            n += 1
            approval_id = f"{wanted}~{n}"
        taken.add(approval_id)
        return approval_id

    def _op_id(self, kind: str) -> str:
        """A fresh id for one of our own operations, unlike any id the agent used."""
        while True:
            op_id = f"{kind}-{next(self._ops)}"
            if op_id not in self._ids_in_use and op_id not in self.mapper.tool_calls \
                    and op_id not in self.mapper.finished:
                return self._approval_id(op_id)

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
        """Map the update to events now, before any other await (keeps arrival order). Only
        reached if `take_notification` is not installed on the transport."""
        if getattr(update, "session_update", None) == "available_commands_update":
            self.take_commands(update)
            return
        run = self.run
        if run is None or not run.live:
            return
        if _has_diffs(update):
            await self._map_rendered(update)
        else:
            self.mapper.on_update(update)

    async def _map_rendered(self, update: Any) -> None:
        """Render the update's diffs in a worker thread (a diff of a big file takes a while),
        then map it. The transport reads no further message meanwhile, so order holds."""
        content = [RenderedDiff(await self._diff_text([item]))
                   if getattr(item, "type", None) == "diff" else item for item in update.content]
        run = self.run
        if run is not None and run.live:
            self.mapper.on_update(update.model_copy(update={"content": content}))

    def take_notification(self, method: str, params: Any) -> bool | Awaitable[None]:
        """Handle `session/update` as the transport reads it (install as the transport's
        `on_notification`); other notifications go on to the SDK.

        Why not through the SDK's dispatch: it starts one task per incoming message, so order
        holds only by scheduling luck, and the task, telemetry span and bookkeeping cost more
        per streamed chunk than everything the cockpit does with it (measured: ~9 µs of ~16 µs a
        chunk). Here each update is validated with the SDK's own schema (text deltas with a
        direct two-field check) and mapped in arrival order, before any later message — the
        prompt's answer included — reaches the SDK. An update carrying diffs returns an
        awaitable instead: the transport awaits it (the diffs are rendered off the loop) before
        it reads the next message.
        """
        if method != "session/update":
            return False
        hook = self.session_hook
        if hook is not None:
            handled = hook(params)
            if handled is not None:
                return handled
        run = self.run
        if run is None or not run.live:
            # Between tasks nobody is told, but the agent's commands are kept for the next one.
            self.keep_commands_update(params)
            return True
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
        if notification.update.session_update == "available_commands_update":
            self.take_commands(notification.update)
            return True
        if _has_diffs(notification.update):
            return self._map_rendered(notification.update)
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
        content = tool_call.content if tool_call.content is not None else (
            known.content if known else [])
        if "diff" not in tool_input:
            diff = await self._diff_text(content)
            if diff:
                tool_input["diff"] = diff
        tier = tier_for(kind, raw, self.workspace.root)
        reason = f"{self.agent_name} asks to {kind}: {title}"
        why = destructive_reason(raw, self.workspace.root)
        if why:
            reason += f" (destructive: {why})"
        if run.token.cancelled or not run.live:
            return cancelled
        approval_id = self._approval_id(call_id)
        allowed = await run.controller.request_approval(approval_id, kind, reason, tool_input,
                                                        tier=tier)
        if run.token.cancelled or not run.live:
            return cancelled
        said = None if allowed else run.denial_reason(approval_id)
        if said:
            self.notes.denied(run, approval_id, f"{kind}: {title}", said)
        if allowed:
            self.permits.add(kind, raw, locations, self.workspace.resolve)
        remembered = allowed and run.is_granted(kind, tool_input, tier)
        option = choose_option(options, allowed=allowed, remembered=remembered,
                               forward_always=self.forward_always)
        if option is None:
            return cancelled
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=option.option_id))

    async def _diff_text(self, content: list[Any]) -> str:
        """The diffs among a tool call's content, rendered in a worker thread (each cut to fit
        a tool row's output, so the note saying it was cut survives)."""
        parts = []
        for item in content or []:
            if getattr(item, "type", None) == "diff":
                name = clean(self._display_path(item.path), 1000).lstrip("/")
                parts.append(await unified_diff_async(item.old_text, item.new_text, name,
                                                      limit=OUTPUT_LIMIT - 1024))
        return "".join(parts)

    async def _gate(self, run: RunContext, op_id: str, tool: str, reason: str,
                    tool_input: dict[str, Any], tier: int, permit: object | None, *,
                    sandboxed: bool | None = None) -> None:
        """Ask unless a permit covers the operation; raise if the answer is no, or if the task
        was cancelled meanwhile (with a permit too: nothing acts after a cancel). `sandboxed`:
        see `Session.request_approval`."""
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        if permit is not None:
            return
        allowed = await run.request_approval(op_id, tool, reason, tool_input, tier=tier,
                                             sandboxed=sandboxed)
        if run.token.cancelled:
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        if not allowed:
            said = run.denial_reason(op_id)
            raise RequestError(PERMISSION_DENIED, f"the cockpit denied this: {reason}" + (
                f". The user's reason: {said}" if said else ""))

    # fs/* ------------------------------------------------------------------------------------
    def _refused(self, op_id: str, tool: str, exc: Exception, tool_input: dict[str, Any],
                 title: str, *, tier: int = 1, code: int = -32602) -> RequestError:
        """Journal a request refused before it ran (a failed row saying why) and return the
        error that answers the agent."""
        error = clean(str(exc), 500)
        self._emit(ToolStart(call_id=op_id, tool=tool, tool_input=tool_input, tier=tier,
                             title=clean(title, 1000), source="client"))
        self._emit(ToolEnd(call_id=op_id, tool=tool, ok=False, output="", error=error,
                           duration_ms=0.0))
        return RequestError(code, error)

    def _ended(self, op_id: str, tool: str, started: float, *, error: str | None = None,
               output: str = "") -> None:
        self._emit(ToolEnd(call_id=op_id, tool=tool, ok=error is None, output=output,
                           error=error, duration_ms=(time.monotonic() - started) * 1000))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        """Read a regular file inside the workspace (tier 1: no approval), in a worker
        thread."""
        self._active()
        op_id = self._op_id("fs-read")
        started = time.monotonic()
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            shown = clean(path, 1000)
            raise self._refused(op_id, "read", exc, {"path": shown}, f"read {shown}") from None
        shown = self.workspace.display(real)
        self._emit(ToolStart(call_id=op_id, tool="read", tool_input={"path": shown},
                             tier=1, title=f"read {shown}", source="client"))
        try:
            text = await off_loop(lambda: self.workspace.read(real, line, limit),
                                  what=f"reading {shown}")
        except (WorkspaceError, FileRefused) as exc:  # started already: end that row
            self._ended(op_id, "read", started, error=clean(str(exc), 500))
            raise RequestError(-32602, clean(str(exc), 500)) from None
        self._ended(op_id, "read", started, output=plural(len(text), "character"))
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        """Write a regular file inside the workspace, after an approval (showing the diff)
        unless an `edit` permission of this turn covers it; file I/O in worker threads."""
        run = self._active()
        op_id = self._op_id("fs-write")
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            shown = clean(path, 1000)
            raise self._refused(op_id, "edit", exc, {"path": shown}, f"write {shown}") from None
        shown = self.workspace.display(real)
        try:
            diff = await off_loop(lambda: self.workspace.prepare_write(real, content),
                                  what=f"preparing the write of {shown}")
        except (WorkspaceError, FileRefused) as exc:
            raise self._refused(op_id, "edit", exc, {"path": shown}, f"write {shown}") from None
        tool_input = {"path": shown, "diff": clean(diff)}
        permit = self.permits.take_write(real)
        await self._gate(run, op_id, "edit", f"{self.agent_name} asks to write {shown}",
                         tool_input, 3, permit)
        started = time.monotonic()
        self._emit(ToolStart(call_id=op_id, tool="edit", tool_input=tool_input, tier=3,
                             title=f"write {shown}", source="client",
                             permitted_by="agent permission" if permit else None))
        if run.token.cancelled:  # e.g. the journal could not record the start: do not act
            self._ended(op_id, "edit", started, error="cancelled before it ran")
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        try:
            await off_loop(lambda: self.workspace.write(real, content),
                           what=f"writing {shown}")
        except (WorkspaceError, FileRefused) as exc:
            self._ended(op_id, "edit", started, error=clean(str(exc), 500))
            raise RequestError(-32603, clean(str(exc), 500)) from None
        wrote = plural(len(content), "character")
        self._ended(op_id, "edit", started, output=f"wrote {wrote} to {shown}")
        return WriteTextFileResponse()


def _has_diffs(update: Any) -> bool:
    content = getattr(update, "content", None)
    return isinstance(content, list) and any(getattr(c, "type", None) == "diff"
                                             for c in content)
