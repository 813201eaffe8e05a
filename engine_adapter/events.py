"""The typed events of a run: one frozen pydantic model per event type, joined in `HarnessEvent`.

Events are data. `parse_event` validates one; `event.model_dump_json()` (or `dump_event`) writes
one. `type`, `session_id`, `seq` and `ts` have placeholder defaults so an engine can build an event
without them; the `Session` stamps all three as it emits.

Unknown extra fields are kept (forward compatibility: a newer writer's fields survive a round
trip through an older reader); an unknown `type` is a validation error.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = [
    "EVENT_TYPES",
    "AgentEnd",
    "AgentStart",
    "ApprovalRequested",
    "ApprovalResolved",
    "BaseEvent",
    "CancellationObserved",
    "DecisionError",
    "DeclarationRequired",
    "EventParseError",
    "HarnessEvent",
    "ModelDecisionEvent",
    "ModelRetry",
    "ModelUpdate",
    "ModelUsage",
    "PhaseChanged",
    "TaskEscalated",
    "ToolEnd",
    "ToolStart",
    "TurnEnd",
    "TurnStart",
    "VerificationCheck",
    "VerificationEnd",
    "VerificationPlanFrozen",
    "VerificationStart",
    "dump_event",
    "parse_event",
]

RunStatus = Literal["completed", "failed", "cancelled"]


class BaseEvent(BaseModel):
    """Fields every event carries. `seq`, `ts` and `session_id` are stamped by the Session."""

    model_config = ConfigDict(frozen=True, extra="allow")

    type: str
    session_id: str = ""
    seq: int = -1
    ts: float = 0.0


class AgentStart(BaseEvent):
    """The run began: what it is for and what drives it."""

    type: Literal["agent_start"] = "agent_start"
    task: str
    engine: str
    model: str | None = None
    cwd: str | None = None


class AgentEnd(BaseEvent):
    """The run ended. Always the last event of a run."""

    type: Literal["agent_end"] = "agent_end"
    status: RunStatus
    result: str | None = None
    error: str | None = None


class TurnStart(BaseEvent):
    """A turn (one model call and what it leads to) began; `turn` is 1-based."""

    type: Literal["turn_start"] = "turn_start"
    turn: int


class TurnEnd(BaseEvent):
    """A turn ended, with the engine's or agent's stop reason when it has one."""

    type: Literal["turn_end"] = "turn_end"
    turn: int
    stop_reason: str | None = None


class PhaseChanged(BaseEvent):
    """The engine moved to another phase (investigate, edit, verify, or an agent's mode)."""

    type: Literal["phase_changed"] = "phase_changed"
    phase: str
    previous: str | None = None


class DeclarationRequired(BaseEvent):
    """The model tried to act before declaring what the engine requires (a verification plan)."""

    type: Literal["declaration_required"] = "declaration_required"
    turn: int | None = None
    reason: str


class ModelDecisionEvent(BaseEvent):
    """The model decided what to do next: call a tool, or finish."""

    type: Literal["model_decision"] = "model_decision"
    turn: int | None = None
    action: str
    tool: str | None = None
    tool_input: dict[str, Any] | None = None
    rationale: str | None = None


class ModelUpdate(BaseEvent):
    """A delta of streamed model text, on the message or the thought channel."""

    type: Literal["model_update"] = "model_update"
    turn: int | None = None
    text: str
    channel: Literal["message", "thought"] = "message"


class ToolStart(BaseEvent):
    """A tool call began running. `call_id` joins it to its `ToolEnd` (and approval, if any)."""

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    tool: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 1
    title: str | None = None


class ToolEnd(BaseEvent):
    """A tool call finished, well or badly."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    tool: str
    ok: bool
    output: str = ""
    error: str | None = None
    duration_ms: float | None = None


class ApprovalRequested(BaseEvent):
    """A human must decide on a gated call. `prefix` is what `[a] always` would grant."""

    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    tool: str
    reason: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 3
    prefix: str = ""


class ApprovalResolved(BaseEvent):
    """A gated call was decided: by a human, by a standing grant, or automatically."""

    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    tool: str
    allowed: bool
    via: Literal["human", "grant", "auto"]
    remember: bool = False


class DecisionError(BaseEvent):
    """The model produced a decision the engine could not use; `raw` is what it said."""

    type: Literal["decision_error"] = "decision_error"
    turn: int | None = None
    error: str
    raw: str | None = None


class ModelUsage(BaseEvent):
    """Tokens (and cost, when known) of one model call — not cumulative."""

    type: Literal["model_usage"] = "model_usage"
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class ModelRetry(BaseEvent):
    """A model call failed in a way worth another try (rate limit, server error, a cut stream):
    the engine waits `delay_s` seconds, then asks again (`attempt` of `max_attempts`)."""

    type: Literal["model_retry"] = "model_retry"
    turn: int | None = None
    attempt: int
    max_attempts: int
    delay_s: float
    error: str


class VerificationCheck(BaseModel):
    """One check of a verification plan."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    name: str
    command: str | None = None


class VerificationPlanFrozen(BaseEvent):
    """The verification plan is fixed; it changes only through an approved amendment."""

    type: Literal["verification_plan_frozen"] = "verification_plan_frozen"
    checks: list[VerificationCheck]


class VerificationStart(BaseEvent):
    """A verification check began running."""

    type: Literal["verification_start"] = "verification_start"
    check_id: str
    name: str


class VerificationEnd(BaseEvent):
    """A verification check finished."""

    type: Literal["verification_end"] = "verification_end"
    check_id: str
    name: str
    passed: bool
    output: str = ""
    duration_ms: float | None = None


class CancellationObserved(BaseEvent):
    """The engine saw the cancel token at a boundary and is stopping."""

    type: Literal["cancellation_observed"] = "cancellation_observed"
    reason: str
    turn: int | None = None


class TaskEscalated(BaseEvent):
    """The task moved up to a riskier mode (investigate → edit) after an approved switch."""

    type: Literal["task_escalated"] = "task_escalated"
    reason: str
    target: str | None = None


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
    | ModelRetry,
    Field(discriminator="type"),
]
"""Any event of a run, discriminated on `type`."""

EVENT_ADAPTER: TypeAdapter[HarnessEvent] = TypeAdapter(HarnessEvent)

EVENT_TYPES: dict[str, type[BaseEvent]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        AgentStart, AgentEnd, TurnStart, TurnEnd, PhaseChanged, DeclarationRequired,
        ModelDecisionEvent, ModelUpdate, ToolStart, ToolEnd, ApprovalRequested,
        ApprovalResolved, DecisionError, ModelUsage, VerificationPlanFrozen,
        VerificationStart, VerificationEnd, CancellationObserved, TaskEscalated, ModelRetry,
    )
}
"""Each event `type` string and its class, in CONTRACT order."""


class EventParseError(ValueError):
    """Raised by `parse_event` for input that is not a valid event; the message names the field."""


def _describe(exc: ValidationError) -> str:
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
        raise EventParseError(f"not a valid event: {_describe(exc)}") from None


def dump_event(event: BaseEvent) -> bytes:
    """One event as compact UTF-8 JSON bytes, without a newline."""
    return event.__pydantic_serializer__.to_json(event)
