"""What the cockpit keeps of the agent's session between turns: its title, its settings, and —
while `session/load` replays it — the earlier conversation, marked as history.

`AgentSession.take(params)` sees each `session/update` before the rest of the client does
(install it as `AcpClient.session_hook`):

- while a replay is on (`start_replay` … `end_replay`), every update belongs to the history:
  messages (the user's included, `user_message_chunk`) become `history_message` events, tool
  calls `history_tool` events, consecutive deltas of one speaker joined; plans and usage of the
  past are dropped (they are not this task's activity); anything else (a mode, a title, the
  agent's commands) is kept, in order, to be mapped once the run is live. Nothing is emitted
  yet: `agent_start` must come first, and it is sent only once the session is open;
- otherwise `session_info_update` and `config_option_update` keep the title and settings up to
  date and are announced as `session_info` / `agent_config` events: into the live run, or, when
  no task runs, queued for the next one (`flush`); so is a mode change between tasks.

`Opened` is the session as `opening` opened it: `AgentSession.opened` keeps its settings and
`announce_opened` tells the first run what came with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    SessionInfoUpdate,
    SessionNotification,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from pydantic import ValidationError

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.agent.settings import options_from_acp
from engine_adapter.engines.acp.client import SessionUpdate, UpdateMapper, block_text
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import (
    AgentConfig,
    AgentMode,
    AgentNotice,
    AgentOption,
    BaseEvent,
    HistoryMessage,
    HistoryTool,
    PhaseChanged,
    SessionInfoChanged,
)
from engine_adapter.text import plural

__all__ = ["AgentSession", "Opened"]

log = logging.getLogger(__name__)

HISTORY_LIMIT = 100_000  # replayed events kept of one load; the rest are counted, not kept
JOIN_LIMIT = 64 * 1024  # characters of one joined history_message
Role = Literal["user", "agent", "thought"]
_ROLES: dict[str, Role] = {"user_message_chunk": "user", "agent_message_chunk": "agent",
                           "agent_thought_chunk": "thought"}
_PAST = {"plan", "usage_update"}  # of the past: not replayed as this task's activity

Replayed = BaseEvent | SessionUpdate
"""What a replay keeps, in order: history events to emit, and updates to map once a run is
live (a mode, a title, the agent's commands)."""


@dataclass
class Opened:
    """The session as it opened (see `opening`): its id, how (None: new; else the method that
    reopened it), its modes and settings, the history a load replayed, and what the human
    should be told."""

    session_id: str
    resumed: str | None = None
    modes: list[AgentMode] = field(default_factory=list)
    mode: str | None = None
    options: list[AgentOption] = field(default_factory=list)
    history: list[Replayed] = field(default_factory=list)
    notices: list[AgentNotice] = field(default_factory=list)


class AgentSession:
    """The agent session's title, settings and modes, and the replay of its history (see the
    module docstring). `run()` gives the live run's context, or None between tasks."""

    def __init__(self, mapper: UpdateMapper, run: Callable[[], RunContext | None]) -> None:
        self.mapper = mapper
        self._run = run
        self.session_id: str | None = None
        self.title: str | None = None
        self.updated_at: str | None = None
        self.options: list[AgentOption] = []
        self.modes: list[AgentMode] = []
        self.queued: list[BaseEvent] = []
        self._replay: list[Replayed] | None = None
        self._tools: dict[str, tuple[str, str | None, str | None]] = {}
        self._text: tuple[Role, list[str]] | None = None  # the replayed message being joined
        self._text_size = 0
        self._dropped = 0

    # announcing ------------------------------------------------------------------------------
    def announce(self, event: BaseEvent) -> None:
        """Into the live run, or queued for the next task's start."""
        run = self._run()
        if run is not None and run.live:
            run.emit(event)
        else:
            self.queued.append(event)

    def flush(self, run: RunContext) -> None:
        """Emit what was queued between tasks (call right after `agent_start`)."""
        queued, self.queued = self.queued, []
        for event in queued:
            run.emit(event)

    def config_event(self) -> AgentConfig:
        """The settings as they stand, as an event."""
        return AgentConfig(options=list(self.options))

    def set_options(self, options: list[AgentOption]) -> None:
        """New settings (the agent's whole list); announced when they changed."""
        changed = options != self.options
        self.options = options
        if changed:
            self.announce(self.config_event())

    def set_mode(self, mode: str) -> None:
        """The current mode changed (the human set it between tasks): queued as a phase."""
        previous = self.mapper.mode
        if mode != previous:
            self.mapper.mode = mode
            self.announce(PhaseChanged(phase=mode, previous=previous))

    def announce_opened(self, run: RunContext, opened: Opened) -> None:
        """Right after `agent_start` of a freshly opened session: the history a load replayed
        (its other updates mapped now, in order), the notices, the settings and the mode."""
        for item in opened.history:
            if isinstance(item, BaseEvent):
                run.emit(item)
            elif not self._own_update(item):
                self.mapper.on_update(item)
        for notice in opened.notices:
            run.emit(notice)
        if self.options:
            run.emit(self.config_event())
        if opened.mode is not None and self.mapper.mode != opened.mode:
            previous, self.mapper.mode = self.mapper.mode, opened.mode
            run.emit(PhaseChanged(phase=opened.mode, previous=previous))

    def restate(self, run: RunContext) -> None:
        """At the start of a later task of the same session: its settings and title as they
        stand (what changed between the tasks is in them; a mode change stays queued, to be
        shown as one)."""
        restated = AgentConfig | SessionInfoChanged
        self.queued = [e for e in self.queued if not isinstance(e, restated)]
        if self.options:
            run.emit(self.config_event())
        if self.title is not None or self.updated_at is not None:
            run.emit(SessionInfoChanged(title=self.title, updated_at=self.updated_at))

    def opened(self, opened: Opened) -> None:
        """The session just opened (and was set up): its settings and modes as they stand.
        What was announced while it opened is dropped: `announce_opened` tells it all."""
        self.session_id = opened.session_id
        self.options, self.modes = list(opened.options), list(opened.modes)
        self.queued = []
        self.mapper.mode = None

    # session/update --------------------------------------------------------------------------
    def take(self, params: object) -> bool | None:
        """Handle one `session/update`'s params if it is ours (True), else None: the client
        maps it as usual."""
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        replaying = self._replay is not None
        if not replaying and kind not in ("session_info_update", "config_option_update",
                                          "current_mode_update"):
            return None
        if not replaying and kind == "current_mode_update":
            run = self._run()
            if run is not None and run.live:
                return None  # the mapper reports it as a phase change
        try:
            parsed = SessionNotification.model_validate(params).update
        except ValidationError as exc:
            log.warning("ignoring an invalid session/update: %s", exc.errors()[:1])
            return True
        if replaying:
            self._replayed(parsed)
        elif not self._own_update(parsed) and isinstance(parsed, CurrentModeUpdate):
            self.set_mode(clean(parsed.current_mode_id, 200))
        return True

    def _own_update(self, update: SessionUpdate) -> bool:
        """Keep a title or the settings an update brings (True), else leave it (False)."""
        if isinstance(update, SessionInfoUpdate):
            self._info(update)
        elif isinstance(update, ConfigOptionUpdate):
            self.set_options(options_from_acp(update.config_options))
        else:
            return False
        return True

    def _info(self, update: SessionInfoUpdate) -> None:
        fields = update.model_fields_set
        title = self.title
        if "title" in fields:
            title = clean(update.title, 300) if update.title else None
        updated = self.updated_at
        if "updated_at" in fields:
            updated = clean(update.updated_at, 100) if update.updated_at else None
        if (title, updated) == (self.title, self.updated_at):
            return
        self.title, self.updated_at = title, updated
        self.announce(SessionInfoChanged(title=title, updated_at=updated))

    # the replay of a session/load ------------------------------------------------------------
    def start_replay(self) -> None:
        """The agent is about to replay the conversation (a `session/load` is on its way)."""
        self._replay, self._tools, self._dropped = [], {}, 0
        self._text, self._text_size = None, 0

    def end_replay(self) -> list[Replayed]:
        """Stop replaying; returns what came, in order: history events to emit, and other
        updates to map once the run is live."""
        self._join()
        replay, self._replay = self._replay or [], None
        if self._dropped:
            replay.append(AgentNotice(level="warning", text=(
                f"the agent replayed a long history: {plural(self._dropped, 'more update')} "
                "were not kept")))
        self._tools = {}
        return replay

    def _join(self) -> None:
        """Keep the message being joined as one event."""
        if self._text is not None:
            role, parts = self._text
            self._text, self._text_size = None, 0
            self._keep(HistoryMessage(role=role, text="".join(parts)))

    def _keep(self, item: Replayed) -> None:
        if self._text is not None:
            self._join()
        replay = self._replay
        assert replay is not None
        if len(replay) >= HISTORY_LIMIT:
            self._dropped += 1
        else:
            replay.append(item)

    def _replayed(self, update: SessionUpdate) -> None:
        if isinstance(update, UserMessageChunk | AgentMessageChunk | AgentThoughtChunk):
            role = _ROLES[update.session_update]
            text = clean(block_text(update.content), JOIN_LIMIT)
            if not text:
                return
            if self._text is not None and (self._text[0] != role
                                           or self._text_size + len(text) > JOIN_LIMIT):
                self._join()
            if self._text is None:
                self._text = (role, [])
            self._text[1].append(text)
            self._text_size += len(text)
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            self._tool(update)
        elif update.session_update not in _PAST:
            self._keep(update)

    def _tool(self, update: ToolCallStart | ToolCallProgress) -> None:
        call_id = clean(update.tool_call_id, 200)
        kind, title, status = self._tools.get(call_id, ("other", None, None))
        kind = update.kind or kind
        title = clean(update.title, 300) if update.title else title
        status = update.status or status
        if (kind, title, status) == self._tools.get(call_id):
            return
        self._tools[call_id] = (kind, title, status)
        output = ""
        if status in ("completed", "failed"):
            texts = [block_text(c.content) for c in update.content or []
                     if isinstance(c, ContentToolCallContent)]
            output = clean("\n".join(texts), 2000)
        self._keep(HistoryTool(call_id=call_id, tool=clean(kind, 100), title=title,
                               status=status, output=output))
