"""The client side of ACP: what the cockpit answers when the agent calls it.

`AcpClient` is the object the SDK calls for `session/update`, `session/request_permission`,
`fs/read_text_file`, `fs/write_text_file`, `terminal/*` and `elicitation/*`. Updates go through
the `UpdateMapper` to the current run's event sink; permissions, writes and commands go through
the run's approval controller (the `Session`), so grants, unattended mode and timeouts apply.

It answers permissions and `fs/*` itself and hands the rest to what it owns: `terminal/*` to
`TerminalCalls`, `elicitation/*` to `ElicitationCalls`, the agent's commands to
`OfferedCommands`; ids, the approval gate and the rows of its own operations are `Operations`'.

Reads inside the workspace are tier 1 and need no approval. A write or a command goes to the
gate, unless the agent already got permission for exactly that in the current turn (see
`permissions.Permits`); each such permission covers one operation. A write that is a plain edit
inside the workspace is tier 2, which accept-edits and auto run unasked (the gate resolves it
`via="mode"`; ask asks, plan denies); a file that runs later is tier 4, and a file a permission
request named this turn tier 3 (the human's call: the permit for the content shown, or asked). A
write's approval and its row carry its diff; a command's approval carries the whole request
(argv, env, cwd, output limit). A refused request (outside the workspace, not a regular file, …)
is journaled as a failed row, like any other call. File I/O and diffs run in worker threads
(`files.off_loop`), never on the event loop; a `session/update` carrying diffs is rendered there
too, before the next message is read, so order holds. Approval ids are unique within a turn (see
`operations`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import Agent, RequestError
from acp.schema import (
    AllowedOutcome,
    AuthCapabilities,
    AvailableCommandsUpdate,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationMode,
    ElicitationUrlCapabilities,
    EnvVariable,
    FileEditToolCallContent,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionConfigOptionsCapabilities,
    SessionNotification,
    TerminalOutputResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.client.commands import OfferedCommands
from engine_adapter.engines.acp.client.elicitation import ElicitationCalls
from engine_adapter.engines.acp.client.files import Workspace, WorkspaceError, shown_path
from engine_adapter.engines.acp.client.mapping import (
    LOCATE_LIMIT,
    OUTPUT_LIMIT,
    RenderedDiff,
    SessionUpdate,
    ToolCallContent,
    UpdateMapper,
)
from engine_adapter.engines.acp.client.notes import DenialNotes, edited_note_text
from engine_adapter.engines.acp.client.operations import Operations
from engine_adapter.engines.acp.client.permissions import (
    EMPTY_INPUT,
    PERMISSION_DENIED,
    Permits,
    agent_auto_max_tier,
    approval_input,
    choose_option,
    content_hash,
    destructive_reason,
    is_empty_input,
    tier_for,
)
from engine_adapter.engines.acp.client.terminal_calls import TerminalCalls
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import ToolStart
from engine_adapter.files import FileRefused, off_loop, runs_later, unified_diff_async
from engine_adapter.sandbox import Sandbox
from engine_adapter.shell import ASK, DESTRUCTIVE, EDIT
from engine_adapter.text import plural

__all__ = ["AcpClient", "client_capabilities"]

EDITED_LIMIT = 8_000
"""Characters of the diff between a write as the agent sent it and as the human edited it, told
to the agent."""

_WRITES_ITSELF = frozenset({"edit", "delete", "move"})
"""Permission kinds whose change the agent then makes itself: no edit review is offered."""

# Input keys (lower-cased, without `_`) that name a file a tool call writes.
_PATH_KEYS = frozenset({"path", "filepath", "file", "filename", "notebookpath", "target",
                        "destination", "dest", "newpath", "oldpath", "source"})

log = logging.getLogger(__name__)



def client_capabilities() -> ClientCapabilities:
    """What the cockpit offers an agent in `initialize`: reading and writing files, terminals,
    questions as forms and links (`elicitation/create`, form and URL mode: a link is shown and
    opened only by the human's key), and
    boolean session config options (`session.configOptions.boolean`), and
    `auth.terminal` (the agent may name a login the human runs in a terminal; the cockpit shows
    that command, it never runs what the agent names)."""
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True,
        elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities(),
                                            url=ElicitationUrlCapabilities()),
        # Boolean config options are opt-in (ACP v1): without this an agent leaves them out.
        session=ClientSessionCapabilities(config_options=SessionConfigOptionsCapabilities(
            boolean=BooleanConfigOptionCapabilities())),
        auth=AuthCapabilities(terminal=True))


class AcpClient:
    """Serves one ACP session's calls into the cockpit (see the module docstring).

    `env` is the environment commands run with; `agent_name` names the agent in approval
    reasons; `forward_always` lets a human's "always" reach the agent as `allow_always`;
    `sandbox` is where `terminal/create` commands run (None: no sandbox). `agent_sandboxed`:
    the agent process itself runs in the sandbox, so what it runs of its own is contained and
    `--auto-approve` may answer its permissions as any other call (see
    `permissions.agent_auto_max_tier`); False until the agent sandbox exists.
    """

    def __init__(self, workspace: Workspace, *, env: dict[str, str], agent_name: str,
                 forward_always: bool = False, sandbox: Sandbox | None = None) -> None:
        self.workspace = workspace
        self.agent_name = agent_name
        self.forward_always = forward_always
        self.agent_sandboxed = False
        self.run: RunContext | None = None
        # Sees each `session/update`'s params first (the agent session's title, settings and
        # replayed history, see `agent.session`): True handled it, None leaves it to us.
        self.session_hook: Callable[[object], bool | None] | None = None
        self.permits = Permits()
        self.notes = DenialNotes()  # a denial's reason, on its way to the agent
        self.operations = Operations(self._live, agent_ids=self._agent_ids)
        self.terminal_calls = TerminalCalls(self.operations, workspace, env=env,
                                            sandbox=sandbox, permits=self.permits,
                                            agent_name=lambda: self.agent_name)
        self.elicitation = ElicitationCalls(self._live)
        self.commands = OfferedCommands(self._live)
        self.mapper = UpdateMapper(self.operations.emit,
                                   terminal_output=self.terminal_calls.output_text,
                                   display_path=self._display_path, workspace=workspace.root,
                                   locate=workspace.located)
        self.mapper.on_changed = self.permits.revoke  # an input changed after it was allowed

    def _live(self) -> RunContext | None:
        return self.run

    def _agent_ids(self, call_id: str) -> bool:
        """Whether the agent uses `call_id` for one of its tool calls of this turn."""
        return call_id in self.mapper.tool_calls or call_id in self.mapper.finished

    def _display_path(self, path: str) -> str:
        return self.workspace.display_any(path)

    def start_turn(self, turn: int) -> None:
        """A new prompt: permissions of the last one no longer cover anything."""
        self.permits.clear()
        self.operations.start_turn()
        self.mapper.start_turn(turn)

    # session/update --------------------------------------------------------------------------
    async def session_update(self, session_id: str, update: SessionUpdate,
                             **kwargs: Any) -> None:
        """Map the update to events now, before any other await (keeps arrival order). Only
        reached if `take_notification` is not installed on the transport."""
        if isinstance(update, AvailableCommandsUpdate):
            self.commands.take(update)
            return
        run = self.run
        if run is None or not run.live:
            return
        with_diffs = _with_diffs(update)
        if with_diffs is not None:
            await self._map_rendered(with_diffs)
        else:
            self.mapper.on_update(update)

    async def _map_rendered(self, update: ToolCallStart | ToolCallProgress) -> None:
        """Render the update's diffs in a worker thread (a diff of a big file takes a while),
        then map it. The transport reads no further message meanwhile, so order holds."""
        content = [RenderedDiff(await self._diff_text([item]), path=item.path,
                                new_hash=content_hash(item.new_text))
                   if isinstance(item, FileEditToolCallContent) else item
                   for item in update.content or []]
        run = self.run
        if run is not None and run.live:
            # `model_copy` does not validate: each rendered diff stands where the SDK's diff
            # item was, and the mapper knows it apart (see `mapping.RenderedDiff`).
            self.mapper.on_update(update.model_copy(update={"content": content}))

    def take_notification(self, method: str, params: object) -> bool | Awaitable[None]:
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
            self.commands.keep_update(params)
            return True
        # The bulk of a stream is plain text deltas: two fields, checked here directly (the
        # schema's union validation would cost more than the rest of the chunk's path).
        raw = params.get("update") if isinstance(params, dict) else None
        if isinstance(raw, dict):
            kind = raw.get("sessionUpdate")
            if kind == "agent_message_chunk" or kind == "agent_thought_chunk":
                content = raw.get("content")
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
        update = notification.update
        if isinstance(update, AvailableCommandsUpdate):
            self.commands.take(update)
            return True
        with_diffs = _with_diffs(update)
        if with_diffs is not None:
            return self._map_rendered(with_diffs)
        self.mapper.on_update(update)
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
        # The input as it stands: the request's own, else what the call's updates sent.
        raw = tool_call.raw_input if not is_empty_input(tool_call.raw_input) else (
            known.raw_input if known else tool_call.raw_input)
        named = [clean(loc.path, 1000) for loc in tool_call.locations or []] or (
            known.locations if known else [])
        locations = [self.workspace.located(loc) if i < LOCATE_LIMIT
                     else shown_path(loc, self.workspace.root) for i, loc in enumerate(named)]
        tool_input = approval_input(raw, locations=locations, workspace=self.workspace.root)
        content = tool_call.content if tool_call.content is not None else (
            known.content if known else [])
        if "diff" not in tool_input:
            diff = await self._diff_text(content)
            if diff:
                tool_input["diff"] = diff
        tier = tier_for(kind, raw, self.workspace.root, asking=True)
        reason = f"{self.agent_name} asks to {kind}: {title}"
        why = destructive_reason(raw, self.workspace.root, asking=True)
        if why == EMPTY_INPUT:
            reason += f" ({why})"
        elif why:
            reason += f" (destructive: {why})"
        later, named = await off_loop(lambda: self._runs_later(raw, locations, content),
                                      what="checking the paths of a permission request")
        self.permits.asked_for(named)  # the human's call this turn, whatever they answer
        if later is not None:  # the agent may write it itself once allowed: ask every time
            tier = DESTRUCTIVE
            reason += f" ({later})"
        if run.mode == "ask" and kind in _WRITES_ITSELF:  # what `e` cannot do here, said
            reason += " (the agent writes this itself: it cannot be edited before it lands)"
        if _over(run):
            return cancelled
        approval_id = self.operations.approval_id(call_id)
        allowed = await run.request_approval(
            approval_id, kind, reason, tool_input, tier=tier,
            auto_max_tier=agent_auto_max_tier(agent_sandboxed=self.agent_sandboxed))
        if _over(run):
            return cancelled
        said = None if allowed else run.denial_reason(approval_id)
        if said:
            self.notes.denied(run, approval_id, f"{kind}: {title}", said)
        if allowed:
            self.permits.add(kind, raw, locations, self.workspace.resolve,
                             shown=_shown_contents(content), call_id=call_id)
            self.mapper.approved(call_id, raw, tool_input)
        remembered = allowed and run.is_granted(kind, tool_input, tier)
        option = choose_option(options, allowed=allowed, remembered=remembered,
                               forward_always=self.forward_always)
        if option is None:
            return cancelled
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=option.option_id))

    def _runs_later(self, raw: Any, locations: Sequence[str],
                    content: Sequence[ToolCallContent | RenderedDiff]
                    ) -> tuple[str | None, list[str]]:
        """Why a path a permission request names (its locations, its input's path keys, its
        diffs) is a file that runs later by itself, or None; and the real paths it names inside
        the workspace. File I/O: off the loop."""
        paths = list(locations)
        if isinstance(raw, dict):
            paths += [v for k, v in raw.items() if isinstance(v, str) and k.lower().replace(
                "_", "") in _PATH_KEYS]
        paths += [item.path for item in content if isinstance(item, FileEditToolCallContent)]
        reals: list[str] = []
        later: str | None = None
        for path in paths[:64]:
            try:
                real = self.workspace.resolve(path)
            except WorkspaceError:
                continue  # outside the workspace: the write itself is refused
            reals.append(real)
            shown = os.path.relpath(path, self.workspace.root) if os.path.isabs(path) else path
            found = runs_later(self.workspace.root, shown, real) if later is None else None
            if found is not None:
                later = f"{clean(self.workspace.display(real), 200)} {found}"
        return later, reals

    async def _diff_text(self, content: Sequence[ToolCallContent | RenderedDiff]) -> str:
        """The diffs among a tool call's content, rendered in a worker thread (each cut to fit
        a tool row's output, so the note saying it was cut survives)."""
        parts = []
        for item in content:
            if isinstance(item, RenderedDiff):  # the call's update had it rendered already
                parts.append(item.text)
            elif isinstance(item, FileEditToolCallContent):
                name = clean(self._display_path(item.path), 1000)
                parts.append(await unified_diff_async(item.old_text, item.new_text, name,
                                                      limit=OUTPUT_LIMIT - 1024))
        return "".join(parts)

    # fs/* ------------------------------------------------------------------------------------
    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        """Read a regular file inside the workspace (tier 1: no approval), in a worker
        thread."""
        ops = self.operations
        ops.active()
        op_id = ops.op_id("fs-read")
        started = time.monotonic()
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            shown = clean(path, 1000)
            raise ops.refused(op_id, "read", exc, {"path": shown}, f"read {shown}") from None
        shown = self.workspace.display(real)
        ops.emit(ToolStart(call_id=op_id, tool="read", tool_input={"path": shown},
                           tier=1, title=f"read {shown}", source="client"))
        try:
            text = await off_loop(lambda: self.workspace.read(real, line, limit),
                                  what=f"reading {shown}")
        except (WorkspaceError, FileRefused) as exc:  # started already: end that row
            ops.ended(op_id, "read", started, error=clean(str(exc), 500))
            raise RequestError(-32602, clean(str(exc), 500)) from None
        ops.ended(op_id, "read", started, output=plural(len(text), "character"))
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        """Write a regular file inside the workspace, through the gate with its diff (a plain
        edit at tier 2: the mode may run it unasked) unless an `edit` permission of this turn
        covers it; file I/O in worker threads."""
        ops = self.operations
        run = ops.active()
        op_id = ops.op_id("fs-write")
        try:
            real = self.workspace.resolve(path)
        except WorkspaceError as exc:
            shown = clean(path, 1000)
            raise ops.refused(op_id, "edit", exc, {"path": shown}, f"write {shown}") from None
        shown = self.workspace.display(real)
        try:
            diff, later = await off_loop(
                lambda: (self.workspace.prepare_write(real, content),
                         runs_later(self.workspace.root, path, real)),
                what=f"preparing the write of {shown}")
        except (WorkspaceError, FileRefused) as exc:
            raise ops.refused(op_id, "edit", exc, {"path": shown}, f"write {shown}") from None
        tool_input = {"path": shown, "diff": clean(diff)}
        reason = f"{self.agent_name} asks to write {shown}"
        # A plain edit in the workspace is tier 2: accept-edits and auto run it (the gate
        # says so in the journal), ask asks, plan denies. More than a plain edit asks.
        tier = EDIT
        if later is not None:  # a file that runs by itself: asked every time, no permit
            reason, tier, permit = f"{reason}: {later}", DESTRUCTIVE, None
        else:
            permit = self.permits.take_write(real, content)
            if self.permits.asked_about(real):  # the human's call: their permit, or asked
                tier = ASK
                if permit is None:
                    reason += (" (a permission request named this file this turn: other "
                               "content than it showed, or no permission given)")
        if permit is None or run.mode == "plan":  # asked: the human may edit it first
            run.offer_edit(op_id, shown, content)
        await ops.gate(run, op_id, "edit", reason, tool_input, tier, permit)
        edited = run.edited_content(op_id)
        if edited is not None:  # the human's own version is what gets written
            proposed, content = content, edited
            changes = await unified_diff_async(proposed, edited, shown, limit=EDITED_LIMIT)
            self.notes.note(run, op_id, edited_note_text(shown, changes))
        started = time.monotonic()
        ops.emit(ToolStart(call_id=op_id, tool="edit", tool_input=tool_input, tier=tier,
                           title=f"write {shown}", source="client",
                           permitted_by="agent permission" if permit else None))
        if run.token.cancelled:  # e.g. the journal could not record the start: do not act
            ops.ended(op_id, "edit", started, error="cancelled before it ran")
            raise RequestError(PERMISSION_DENIED, "the cockpit cancelled the task")
        try:
            await off_loop(lambda: self.workspace.write(real, content),
                           what=f"writing {shown}")
        except (WorkspaceError, FileRefused) as exc:
            ops.ended(op_id, "edit", started, error=clean(str(exc), 500))
            raise RequestError(-32603, clean(str(exc), 500)) from None
        wrote = plural(len(content), "character")
        ops.ended(op_id, "edit", started, output=f"wrote {wrote} to {shown}" + (
            ": the human's own version, not the agent's (the agent is told how it differs)"
            if edited is not None else ""))
        return WriteTextFileResponse()

    # terminal/* (see `terminal_calls`) -------------------------------------------------------
    async def create_terminal(self, session_id: str, command: str,
                              args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        """Start a command in the workspace, after an approval of the whole request unless an
        `execute` permission of this turn covers it."""
        return await self.terminal_calls.create(command, args, env, cwd, output_byte_limit)

    async def terminal_output(self, session_id: str, terminal_id: str,
                              **kwargs: Any) -> TerminalOutputResponse:
        """The output so far, whether it was cut, and the exit status once exited."""
        return self.terminal_calls.output(terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        """Wait for the command to exit."""
        return await self.terminal_calls.wait_for_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str,
                            **kwargs: Any) -> KillTerminalResponse:
        """Kill the command (the terminal stays readable until released)."""
        return self.terminal_calls.kill(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse:
        """Kill the command if it still runs and forget the terminal."""
        return self.terminal_calls.release(terminal_id)

    # elicitation/* (see `elicitation`) -------------------------------------------------------
    async def create_elicitation(self, message: str, mode: ElicitationMode,
                                 **kwargs: Any) -> CreateElicitationResponse:
        """Put the agent's question (a form, or a link to open) to the human."""
        return await self.elicitation.create(message, mode)

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """A link question finished on the agent's side: nothing to do (its answer went back
        when the human gave it)."""
        self.elicitation.complete(elicitation_id)

    # what else the SDK's `Client` has --------------------------------------------------------
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods are served (the same answer as leaving this out)."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    def on_connect(self, conn: Agent) -> None:
        """Nothing to do: the connection is kept by whoever made it (`AgentConnection`)."""


def _with_diffs(update: SessionUpdate) -> ToolCallStart | ToolCallProgress | None:
    """`update` if it is a tool call whose content carries diffs (rendered off the loop before
    it is mapped), else None."""
    if isinstance(update, ToolCallStart | ToolCallProgress) and any(
            isinstance(item, FileEditToolCallContent) for item in update.content or []):
        return update
    return None


def _shown_contents(content: Sequence[ToolCallContent | RenderedDiff]) -> list[tuple[str, str]]:
    """`(path, hash of the new content)` of each diff a permission showed (an edit permit
    covers a write of exactly that content)."""
    shown = []
    for item in content:
        if isinstance(item, FileEditToolCallContent):
            shown.append((item.path, content_hash(item.new_text)))
        elif isinstance(item, RenderedDiff) and item.path:
            shown.append((item.path, item.new_hash))
    return shown


def _over(run: RunContext) -> bool:
    """Whether the run was cancelled or has ended (looked at again after each await)."""
    return bool(run.token.cancelled) or not run.live
