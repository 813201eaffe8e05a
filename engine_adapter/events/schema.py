"""The typed events of a run: one frozen pydantic model per event type, joined in `HarnessEvent`.

Events are data. `parse_event` validates one; `event.model_dump_json()` (or `dump_event`) writes
one. `type`, `session_id`, `seq` and `ts` have placeholder defaults so an engine can build an event
without them; the `Session` stamps all three as it emits.

The classes live by family (`base`: the fields every event carries; `run`: the run's course,
model and verification; `tools`: tool calls and approvals; `agent`: an external agent's
session) and are all importable from the package `engine_adapter.events`.

Every field an engine of this package writes is declared there, typed (the optional ones an
engine fills only when it knows them, e.g. an ACP agent's command and version). Unknown extra
fields are still kept when reading (forward compatibility: a newer writer's fields survive a round
trip through an older reader); an unknown `type` is a validation error.

`HarnessEvent` is the one list of event types: `EVENT_TYPES` is derived from it, and a test holds
the package face's `__all__` (written out, so a type checker reads it) to it. A new event type is
its class (joined in the union here and exported by the face), its fold handler and its one
description.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar, get_args

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from engine_adapter.events.agent import (
    AgentConfig,
    AgentNotice,
    AgentPlan,
    CommandsAvailable,
    HistoryMessage,
    HistoryTool,
    PromptNote,
    QuestionAnswered,
    QuestionAsked,
    SessionInfoChanged,
)
from engine_adapter.events.base import BaseEvent
from engine_adapter.events.modes import ModeChanged
from engine_adapter.events.prompt import FilesMentioned
from engine_adapter.events.run import (
    AgentEnd,
    AgentReady,
    AgentStart,
    CancellationObserved,
    DecisionError,
    DeclarationRequired,
    ModelDecisionEvent,
    ModelRetry,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    TaskEscalated,
    TurnEnd,
    TurnStart,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
)
from engine_adapter.events.tools import ApprovalRequested, ApprovalResolved, ToolEnd, ToolStart
from engine_adapter.events.workspace import CheckpointTaken, WorkspaceRewound

HarnessEvent = Annotated[
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | PhaseChanged
    | DeclarationRequired
    | ModelDecisionEvent
    | ModelUpdate
    | ToolStart
    | ToolEnd
    | ApprovalRequested
    | ApprovalResolved
    | DecisionError
    | ModelUsage
    | VerificationPlanFrozen
    | VerificationStart
    | VerificationEnd
    | CancellationObserved
    | TaskEscalated
    | ModelRetry
    | QuestionAsked
    | QuestionAnswered
    | CommandsAvailable
    | PromptNote
    | AgentConfig
    | SessionInfoChanged
    | AgentNotice
    | HistoryMessage
    | HistoryTool
    | CheckpointTaken
    | WorkspaceRewound
    | AgentPlan
    | FilesMentioned
    | ModeChanged
    | AgentReady,
    Field(discriminator="type"),
]
"""Any event of a run, discriminated on `type`."""

EVENT_ADAPTER: TypeAdapter[HarnessEvent] = TypeAdapter(HarnessEvent)

EVENT_CLASSES: tuple[type[BaseEvent], ...] = get_args(get_args(HarnessEvent)[0])
"""Every event class, in the union's (CONTRACT's) order."""

EVENT_TYPES: dict[str, type[BaseEvent]] = {
    cls.model_fields["type"].default: cls for cls in EVENT_CLASSES}
"""Each event `type` string and its class, in CONTRACT order (a journal index's type codes are
positions in it: add new types at the end)."""

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_CLASSES",
    "EVENT_TYPES",
    "EventParseError",
    "HarnessEvent",
    "dump_event",
    "parse_error_text",
    "parse_event",
    "stamped",
]


class EventParseError(ValueError):
    """Raised by `parse_event` for input that is not a valid event; the message names the field."""


def parse_error_text(exc: ValidationError) -> str:
    """What is wrong with an event that failed validation, a field or five, e.g.
    ``tool_end.ok: Input should be a valid boolean``."""
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        if err["type"] == "union_tag_invalid":
            tag = err.get("ctx", {}).get("tag")
            parts.append(f"type: unknown event type {tag!r}")
            continue
        if err["type"] == "union_tag_not_found":
            parts.append("type: field required")
            continue
        loc = ".".join(str(p) for p in err["loc"]) or "(event)"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def parse_event(data: str | bytes | dict[str, Any]) -> HarnessEvent:
    """Validate one event from a JSON text (str or bytes) or an already-decoded dict.

    Raises `EventParseError` (a `ValueError`) naming the bad field, e.g.
    ``tool_end.ok: Input should be a valid boolean``.
    """
    try:
        if isinstance(data, dict):
            return EVENT_ADAPTER.validate_python(data)
        return EVENT_ADAPTER.validate_json(data)
    except ValidationError as exc:
        raise EventParseError(f"not a valid event: {parse_error_text(exc)}") from None


def dump_event(event: BaseEvent) -> bytes:
    """One event as compact UTF-8 JSON bytes, without a newline."""
    return event.__pydantic_serializer__.to_json(event)


E = TypeVar("E", bound=BaseEvent)
_STAMP_FIELDS = frozenset({"session_id", "seq", "ts"})
_new_instance = object.__new__
# The four slots pydantic gives every model, set through their descriptors (as pydantic's own
# `model_construct` does with `object.__setattr__`, only without the name lookup).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def stamped(event: E, session_id: str, seq: int, ts: float) -> E:
    """A copy of `event` carrying the Session's stamp; `event` itself is left as it was (the
    engine that built it may keep it, or emit it again).

    The same model as `event.model_copy(update={"session_id": …, "seq": …, "ts": …})` (a test
    holds them equal), built the way `model_construct` builds one: a new instance whose field
    dict is the old one with the three stamp fields replaced, sharing the frozen field values
    and extras. Measured: a fifth of `model_copy`'s cost, whose generic update loop would cost
    more than the rest of `Session.emit`.
    """
    new = _new_instance(type(event))
    fields = event.__dict__.copy()
    fields["session_id"] = session_id
    fields["seq"] = seq
    fields["ts"] = ts
    _set_dict(new, fields)
    _set_extra(new, event.__pydantic_extra__)
    _set_fields_set(new, event.__pydantic_fields_set__ | _STAMP_FIELDS)
    _set_private(new, event.__pydantic_private__)
    return new
