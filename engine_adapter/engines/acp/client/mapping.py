"""ACP `session/update` notifications → cockpit events.

`UpdateMapper.on_update(update)` turns one update from the SDK into zero or more events and
emits them at once, synchronously: the SDK handles each incoming message in its own task, so
emitting before any `await` is what keeps arrival order.

    agent_message_chunk / agent_thought_chunk -> model_update (channel message / thought)
    tool_call                      -> tool_start (tool = the call's kind; tier: see
                                      `permissions.tier_for`)
    tool_call_update, a new input or kind
                                   -> tool_start again, `revision` N (the input as it now
                                      stands, judged again; `approved_input` when the call
                                      was approved for another one)
    tool_call_update, status completed/failed
                                   -> tool_end (content and terminal output; diffs in `diff`)
    plan                           -> model_decision (action "plan", the checklist as rationale)
    current_mode_update            -> phase_changed
    usage_update (cost grew)       -> model_usage (the cost since the last one)
    user_message_chunk, available_commands_update, config_option_update,
    session_info_update            -> nothing

The SDK's shapes of what it maps are named here once: `SessionUpdate`, `ContentBlock`,
`ToolCallContent`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ImageContentBlock,
    PlanEntry,
    ResourceContentBlock,
    SessionInfoUpdate,
    TerminalToolCallContent,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from engine_adapter.engines.acp.client.permissions import is_empty_input, tier_for
from engine_adapter.engines.acp.text import cap, clean, clean_json, kept
from engine_adapter.events import (
    BaseEvent,
    ModelDecisionEvent,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    ToolEnd,
    ToolStart,
)
from engine_adapter.files import unified_diff

__all__ = [
    "OUTPUT_LIMIT",
    "ContentBlock",
    "RenderedDiff",
    "SessionUpdate",
    "ToolCallContent",
    "ToolCallState",
    "UpdateMapper",
    "block_text",
    "input_key",
    "render_content",
]

OUTPUT_LIMIT = 64 * 1024  # characters of a tool's output kept in its tool_end
TITLE_LIMIT = 300
CHUNK_LIMIT = 256 * 1024  # one streamed delta; a bigger one is cut (and says so)

TerminalOutput = Callable[[str], str | None]
Channel = Literal["message", "thought"]

SessionUpdate = (UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart
                 | ToolCallProgress | AgentPlanUpdate | AgentPlanContentUpdate
                 | AgentPlanRemovedUpdate | AvailableCommandsUpdate | CurrentModeUpdate
                 | ConfigOptionUpdate | SessionInfoUpdate | UsageUpdate)
"""One `session/update` as the SDK reads it (`SessionNotification.update`)."""

ContentBlock = (TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
                | EmbeddedResourceContentBlock)
"""A piece of a message or of a tool call's content."""

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
"""One item of a tool call's content: a content block, a diff, or a terminal."""


class ToolCallState:
    """What is known so far about one of the agent's tool calls."""

    __slots__ = ("call_id", "content", "kind", "locations", "raw_input", "raw_output",
                 "revision", "started", "status", "title")

    def __init__(self, call_id: str, started: float) -> None:
        self.call_id = call_id
        self.kind: str = "other"
        self.title = ""
        self.status: str = "pending"
        self.content: list[ToolCallContent | RenderedDiff] = []
        self.locations: list[str] = []
        # As the agent sent them: any JSON value (the SDK's own type for them is `Any`).
        self.raw_input: Any = None
        self.raw_output: Any = None
        self.started = started
        self.revision = 0  # how many times its input changed since its first tool_start

    def merge(self, update: ToolCallStart | ToolCallProgress) -> None:
        """Fold a `tool_call` or `tool_call_update` in: fields it carries replace ours."""
        if update.kind:
            self.kind = update.kind
        if update.title:
            self.title = clean(update.title, TITLE_LIMIT)
        if update.status:
            self.status = update.status
        if update.content is not None:
            self.content = list(update.content)
        if update.locations is not None:
            self.locations = [clean(loc.path, 1000) for loc in update.locations]
        if update.raw_input is not None:
            self.raw_input = update.raw_input
        if update.raw_output is not None:
            self.raw_output = update.raw_output

    def what(self) -> tuple[str, str]:
        """What the call does, to compare: its kind and its input (canonical JSON)."""
        return self.kind, input_key(self.raw_input)

    def tool_input(self) -> dict[str, Any]:
        """The call's input as the cockpit shows it: the raw input, cleaned and capped."""
        raw = self.raw_input
        data: dict[str, Any] = dict(clean_json(raw)) if isinstance(raw, dict) else (
            {} if raw is None else {"input": clean_json(raw)})
        if self.locations and "path" not in data:
            data["locations"] = self.locations
        return data


def input_key(raw_input: Any) -> str:
    """A raw input as canonical text, to tell whether two inputs are the same (cleaned as the
    views show it: what differs only in characters nobody sees is the same)."""
    return json.dumps(clean_json(raw_input), sort_keys=True, ensure_ascii=False)


def block_text(block: ContentBlock) -> str:
    """A content block as plain text: its text, else a short mark of what it is (`[image
    image/png]`, `[name: uri]` for a link)."""
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ResourceContentBlock):
        return f"[{block.name or 'link'}: {block.uri}]"
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        return f"[resource {resource.uri}]"
    return f"[{block.type} {block.mime_type}]"


class RenderedDiff(NamedTuple):
    """A tool call's diff content the client already rendered off the loop: it stands in the
    content list where the SDK's diff item was, so the mapper keeps it apart from the output."""

    text: str
    type: str = "rendered_diff"
    path: str = ""  # the file, as the agent named it
    new_hash: str = ""  # `permissions.content_hash` of its new content (what an edit permit binds)


def render_content(items: Sequence[ToolCallContent | RenderedDiff],
                   terminal_output: TerminalOutput | None = None,
                   display_path: Callable[[str], str] | None = None) -> tuple[str, str]:
    """A tool call's content as plain text, and its diffs apart: `(text, diff)`. The text
    holds the text blocks and terminal output; the diff, the unified diff of each diff item.
    `display_path` shortens a diff's path (relative to the workspace, say)."""
    parts: list[str] = []
    diffs: list[str] = []
    for item in items:
        if isinstance(item, ContentToolCallContent):
            parts.append(block_text(item.content))
        elif isinstance(item, RenderedDiff):
            diffs.append(item.text)
        elif isinstance(item, FileEditToolCallContent):
            # The client renders diffs off the loop first; this is the rest.
            path = clean(display_path(item.path) if display_path else item.path, 1000)
            diffs.append(unified_diff(item.old_text, item.new_text, path.lstrip("/"),
                                      limit=OUTPUT_LIMIT - 1024, seconds=0.05))
        else:
            text = terminal_output(item.terminal_id) if terminal_output is not None else None
            parts.append(text if text is not None else f"[terminal {item.terminal_id}]")
    return ("\n".join(part.rstrip("\n") for part in parts if part),
            "".join(diff if diff.endswith("\n") else diff + "\n" for diff in diffs if diff))


def _render_plan(entries: list[PlanEntry]) -> str:
    marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
    return "\n".join(f"{marks.get(e.status, '[ ]')} {clean(e.content, 1000)}" for e in entries)


class UpdateMapper:
    """Maps one ACP session's updates to events, keeping the state that needs (open tool calls,
    the current mode, the cumulative cost, the reply text of the turn).

    `emit` receives each event; `turn` is stamped on the events that carry one. `workspace`
    (default: the current directory) is where a call's command would run, for its tier.
    `terminal_output(terminal_id)` renders an embedded terminal the client runs (or `None`).
    """

    def __init__(self, emit: Callable[[BaseEvent], None], *,
                 terminal_output: TerminalOutput | None = None,
                 display_path: Callable[[str], str] | None = None,
                 workspace: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.emit = emit
        self.terminal_output = terminal_output
        self.display_path = display_path
        self.workspace = workspace or os.getcwd()  # judges whether a command is destructive
        self.clock = clock
        self.turn: int | None = None
        self.mode: str | None = None
        self.tool_calls: dict[str, ToolCallState] = {}
        self.finished: set[str] = set()
        # Per call id: what an approval was given for (its input as canonical text, and the
        # input the approval showed), to journal a change made after it.
        self.approvals: dict[str, tuple[str, dict[str, Any]]] = {}
        # Called with a call id whose input changed after it was approved (its permits go).
        self.on_changed: Callable[[str], None] | None = None
        self.reply: list[str] = []
        self.cost: float | None = None  # cumulative, as the agent reports it
        self.context: tuple[int, int] | None = None  # (used, size) tokens of the context window
        self.ignored = 0
        # By the update's tag; each handler takes the update class of its tag.
        self._handlers: dict[str, Callable[[Any], None]] = {
            "agent_message_chunk": self._message,
            "agent_thought_chunk": self._thought,
            "tool_call": self._tool_call,
            "tool_call_update": self._tool_call,
            "plan": self._plan,
            "current_mode_update": self._mode,
            "usage_update": self._usage,
        }

    def start_turn(self, turn: int) -> None:
        """A new prompt began: later events carry `turn`; the reply starts empty.

        Ended calls are forgotten: the fold keys calls per task, and an agent that numbers its
        calls per prompt (`t-1` again) must get new rows, not have them dropped as late."""
        self.turn = turn
        self.reply = []
        self.finished.clear()
        self.approvals.clear()

    def on_update(self, update: SessionUpdate) -> None:
        """Map one update (an SDK model with a `session_update` tag)."""
        handler = self._handlers.get(update.session_update)
        if handler is None:
            self.ignored += 1
            return
        handler(update)

    # text ------------------------------------------------------------------------------------
    def text_chunk(self, text: str, channel: Channel) -> None:
        """One streamed delta of the reply (`message`) or of the agent's thinking (`thought`)."""
        if not text:
            return
        text = kept(text, CHUNK_LIMIT)  # marked by every view, not escaped here
        if channel == "message":
            self.reply.append(text)
        # Plain construction: measured faster (~1 µs) than `model_construct` (~2.5 µs).
        self.emit(ModelUpdate(turn=self.turn, text=text, channel=channel))

    def _message(self, update: AgentMessageChunk) -> None:
        self.text_chunk(block_text(update.content), "message")

    def _thought(self, update: AgentThoughtChunk) -> None:
        self.text_chunk(block_text(update.content), "thought")

    # tool calls ------------------------------------------------------------------------------
    def ensure_started(self, update: ToolCallStart | ToolCallProgress) -> ToolCallState:
        """The state of the call `update` names, announcing it (`tool_start`) if it is new."""
        call_id = clean(update.tool_call_id, 200)
        state = self.tool_calls.get(call_id)
        if state is None:
            state = self.tool_calls[call_id] = ToolCallState(call_id, self.clock())
            state.merge(update)
            self._announce(state)
        elif update.raw_input is not None or update.kind:
            before = state.what()
            state.merge(update)
            if state.what() != before:  # the input (or kind) as it now stands, judged again
                state.revision += 1
                self._announce(state)
        else:
            state.merge(update)
        return state

    def _announce(self, state: ToolCallState) -> None:
        """A `tool_start` for the call as it now stands (`revision` > 0: again), saying so when
        it changed after it was approved."""
        approved = self.approvals.get(state.call_id)
        changed = approved is not None and approved[0] != input_key(state.raw_input)
        if changed and self.on_changed is not None:
            self.on_changed(state.call_id)
        self.emit(ToolStart(call_id=state.call_id, tool=state.kind,
                            tool_input=state.tool_input(),
                            tier=tier_for(state.kind, state.raw_input, self.workspace),
                            title=state.title or None, revision=state.revision or None,
                            approved_input=approved[1] if changed and approved else None))

    def approved(self, call_id: str, raw_input: Any, shown: dict[str, Any]) -> None:
        """The call was approved for `raw_input` (showing `shown`). A later different input is
        journaled as changed after approval — at once, if the call already stands for another
        one (an update changed it while the human was deciding); not when its updates have
        sent none yet (the request carried it)."""
        key = input_key(raw_input)
        self.approvals[call_id] = (key, shown)
        state = self.tool_calls.get(call_id)
        if state is not None and not is_empty_input(state.raw_input) and \
                input_key(state.raw_input) != key:
            state.revision += 1
            self._announce(state)

    def _tool_call(self, update: ToolCallStart | ToolCallProgress) -> None:
        if clean(update.tool_call_id, 200) in self.finished:
            self.ignored += 1  # a late update to a call that already ended: its row is final
            return
        state = self.ensure_started(update)
        if state.status in ("completed", "failed"):
            self._end_tool(state)

    def _end_tool(self, state: ToolCallState, error: str | None = None) -> None:
        self.tool_calls.pop(state.call_id, None)
        self.finished.add(state.call_id)
        output, diff = render_content(state.content, self.terminal_output, self.display_path)
        if not output and state.raw_output is not None:
            raw = state.raw_output
            output = raw if isinstance(raw, str) else json.dumps(clean_json(raw), indent=1,
                                                                 ensure_ascii=False)
        output = kept(output, OUTPUT_LIMIT)
        ok = error is None and state.status == "completed"
        if not ok and error is None:
            error = cap(clean(output), 2000) if output else "the tool call failed"
        self.emit(ToolEnd(call_id=state.call_id, tool=state.kind, ok=ok, output=output,
                          error=error, duration_ms=(self.clock() - state.started) * 1000.0,
                          title=state.title or None, diff=kept(diff) or None))

    def close_open_calls(self, why: str) -> None:
        """End every call the agent left open (the turn ended, was cancelled, or crashed)."""
        for state in list(self.tool_calls.values()):
            self._end_tool(state, error=f"{why} while the call was {state.status}")

    # the rest --------------------------------------------------------------------------------
    def _plan(self, update: AgentPlanUpdate) -> None:
        entries = [{"content": clean(e.content, 1000), "status": e.status, "priority": e.priority}
                   for e in update.entries]
        self.emit(ModelDecisionEvent(turn=self.turn, action="plan", tool=None,
                                     tool_input={"entries": entries},
                                     rationale=_render_plan(update.entries)))

    def _mode(self, update: CurrentModeUpdate) -> None:
        mode = clean(update.current_mode_id, 200)
        if mode == self.mode:
            return
        previous, self.mode = self.mode, mode
        self.emit(PhaseChanged(phase=mode, previous=previous))

    def _usage(self, update: UsageUpdate) -> None:
        self.context = (update.used, update.size)
        cost = update.cost
        if cost is None:
            return
        delta = round(cost.amount - (self.cost or 0.0), 10)
        self.cost = cost.amount
        if delta > 0:
            self.emit(ModelUsage(model=None, input_tokens=0, output_tokens=0,
                                 cost_usd=delta if cost.currency.upper() == "USD" else None,
                                 cost=delta, currency=clean(cost.currency, 10),
                                 context_used=update.used, context_size=update.size))
