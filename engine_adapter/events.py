"""The typed events of a run: one frozen pydantic model per event type, joined in `HarnessEvent`.

Events are data. `parse_event` validates one; `event.model_dump_json()` (or `dump_event`) writes
one. `type`, `session_id`, `seq` and `ts` have placeholder defaults so an engine can build an event
without them; the `Session` stamps all three as it emits.

Every field an engine of this package writes is declared here, typed (the optional ones an
engine fills only when it knows them, e.g. an ACP agent's command and version). Unknown extra
fields are still kept when reading (forward compatibility: a newer writer's fields survive a round
trip through an older reader); an unknown `type` is a validation error.

`HarnessEvent` is the one list of event types: `EVENT_TYPES` and `__all__` are derived from it, so
a new event type is its class here, its fold handler and its one description — nothing else.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .timestamps import Timestamp

# `__all__` is at the end of the module: it is derived from `HarnessEvent`.

RunStatus = Literal["completed", "failed", "cancelled"]


class BaseEvent(BaseModel):
    """Fields every event carries. `seq`, `ts` and `session_id` are stamped by the Session."""

    model_config = ConfigDict(frozen=True, extra="allow")

    type: str
    session_id: str = ""
    seq: int = -1
    ts: Timestamp = 0.0  # finite, 0 <= ts < year 10000: anything else is a bad line


class AgentInfo(BaseModel):
    """How an external agent (ACP) names itself: empty strings where it said nothing."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str = ""
    title: str = ""
    version: str = ""
    protocol_version: int | None = None


class AgentMode(BaseModel):
    """One of the modes an external agent offers (its `phase_changed` names one by `id`)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    name: str = ""


class AgentStart(BaseEvent):
    """The run began: what it is for and what drives it.

    An engine that drives an external agent adds what it knows of it: `agent` (its own name and
    version), `command` (the command line that started it), `modes`, `acp_session_id` and
    whether that session is `new_session` (false: the agent keeps the conversation's context),
    `resumed`: how an earlier conversation was opened again ("session/resume" or
    "session/load"; its replayed history then follows as `history_*` events), and the agent's
    current `mode` (the phase the task starts in).
    An engine whose commands the cockpit runs says where they go: `sandbox` (a state of
    `engine_adapter.sandbox`: "workspace-write", "read-only", "off", "unavailable"),
    `sandbox_network`, and `sandbox_note` (why there is none, and the fix).
    """

    type: Literal["agent_start"] = "agent_start"
    task: str
    engine: str
    model: str | None = None
    cwd: str | None = None
    agent: AgentInfo | None = None
    command: str | None = None
    modes: list[AgentMode] | None = None
    acp_session_id: str | None = None
    new_session: bool | None = None
    resumed: str | None = None
    mode: str | None = None
    sandbox: str | None = None
    sandbox_network: bool | None = None
    sandbox_note: str | None = None


class AgentEnd(BaseEvent):
    """The run ended. Always the last event of a run. `stderr`: the last lines an external agent
    wrote to its stderr, when it failed."""

    type: Literal["agent_end"] = "agent_end"
    status: RunStatus
    result: str | None = None
    error: str | None = None
    stderr: list[str] | None = None


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
    """A tool call began running. `call_id` joins it to its `ToolEnd` (and approval, if any).

    Optional, from engines that know them: `source` ("client": the cockpit itself ran it for an
    external agent, a file read or write or a command in a terminal; "agent": the agent ran it
    and reports it), `terminal_id` (the terminal a command runs in) and `permitted_by` (what let
    it run without asking again, e.g. "agent permission": an approval the agent asked for
    earlier in the turn covers it). A command's `sandbox` state (as on `AgentStart`, or
    "bypassed": approved to run outside it) and `sandbox_network`.
    """

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    tool: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 1
    title: str | None = None
    source: str | None = None
    terminal_id: str | None = None
    permitted_by: str | None = None
    sandbox: str | None = None
    sandbox_network: bool | None = None


class ToolEnd(BaseEvent):
    """A tool call finished, well or badly. Optional: `title` (the call's title as it stood at
    the end, when the agent renamed it while it ran), a command's `exit_code`, its `sandbox`
    state (as on its `ToolStart`) and what the sandbox stopped (`sandbox_blocked`: "write to
    /etc/x", "network"), and `diff`: the unified diff of the files the call changed when the
    engine knows it (an agent's edit reported with diff content), made off the event loop and
    capped by `engine_adapter.diffs`; views show it, never compute one."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    tool: str
    ok: bool
    output: str = ""
    error: str | None = None
    duration_ms: float | None = None
    title: str | None = None
    exit_code: int | None = None
    diff: str | None = None
    sandbox: str | None = None
    sandbox_blocked: str | None = None


class ApprovalRequested(BaseEvent):
    """A human must decide on a gated call. `prefix` is what `[a] always` would grant;
    `grantable` and `ungrantable_reason` are the Session's verdict on whether it may
    (`None` in journals written before the verdict travelled in the event)."""

    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    tool: str
    reason: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 3
    prefix: str = ""
    grantable: bool | None = None
    ungrantable_reason: str | None = None

    @property
    def grant_verdict(self) -> tuple[bool, str | None]:
        """`(grantable, why not)` as the views show it: the Session's verdict, or, for an old
        journal without one, grantable iff the prefix is not blank and the tier below 4 (what
        the Session then stored; no reason known)."""
        if self.grantable is None:
            return bool(self.prefix.strip()) and self.tier < 4, None
        return self.grantable, None if self.grantable else self.ungrantable_reason


class ApprovalResolved(BaseEvent):
    """A gated call was decided: by a human, a standing grant, a deny rule, an approval policy,
    or automatically (the unattended rules, a timeout, a cancel).

    Optional, when known: `scope` and `grant_id` — the grant or deny rule that decided (`via`
    "grant" / "deny-rule"), or the grant a human's `[a] always` kept (`remember`); `rule` — that
    grant or rule in words, or the policy rule that decided; `error` — why the policy failed
    (a deny). A decision made without asking (no `approval_requested` before it) also carries
    the call's `tool_input` and `tier`, so the views show what was decided.
    `reason`: the human's own words with the answer ("deny: use the staging database"), which
    the engine passes on to the agent; `None` when none was given.
    """

    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    tool: str
    allowed: bool
    via: Literal["human", "grant", "auto", "deny-rule", "policy"]
    remember: bool = False
    scope: Literal["session", "project", "user"] | None = None
    grant_id: str | None = None
    rule: str | None = None
    error: str | None = None
    tool_input: dict[str, Any] | None = None
    tier: int | None = None
    reason: str | None = None


class DecisionError(BaseEvent):
    """The model produced a decision the engine could not use; `raw` is what it said."""

    type: Literal["decision_error"] = "decision_error"
    turn: int | None = None
    error: str
    raw: str | None = None


class ModelUsage(BaseEvent):
    """Tokens (and cost, when known) of one model call — not cumulative.

    Optional, when the engine reports them (all, like the rest, for this call only): tokens spent
    thinking (`thought_tokens`) and read from or written to a prompt cache
    (`cached_read_tokens`, `cached_write_tokens`); the cost in the agent's own `currency`
    (`cost`; `cost_usd` holds it too when that is USD); and how full the context window is after
    the call (`context_used` of `context_size` tokens; a level, not a delta).
    """

    type: Literal["model_usage"] = "model_usage"
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    thought_tokens: int | None = None
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None
    cost: float | None = None
    currency: str | None = None
    context_used: int | None = None
    context_size: int | None = None


class ModelRetry(BaseEvent):
    """A model call failed in a way worth another try (rate limit, server error, a cut stream):
    the engine waits `delay_s` seconds, then asks again (`attempt` of `max_attempts`)."""

    type: Literal["model_retry"] = "model_retry"
    turn: int | None = None
    attempt: int
    max_attempts: int
    delay_s: float
    error: str


AnswerValue = str | int | float | bool | list[str]
"""One field's answer to an agent's question: text, a number, yes/no, or the options chosen."""


class QuestionOption(BaseModel):
    """One option of a choice field: the `value` sent back, and how it reads (`label`)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    value: str
    label: str = ""


class AgentChoice(BaseModel):
    """One value an agent's select option can take."""

    model_config = ConfigDict(frozen=True, extra="allow")

    value: str
    name: str = ""


class AgentOption(BaseModel):
    """One of an agent's session settings (ACP `configOptions`): model, reasoning effort, …

    `kind` is "select" (`value` is one of `choices`) or "boolean"; `category` is the agent's hint
    of what it is ("model", "mode", "thought_level", …) when it gave one."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    name: str = ""
    kind: Literal["select", "boolean"] = "select"
    category: str | None = None
    value: str | bool | None = None
    choices: list[AgentChoice] = Field(default_factory=list)


class AgentConfig(BaseEvent):
    """An external agent's session settings as they stand now (all of them, each time): sent
    when the session opens and whenever the agent or the human changes one."""

    type: Literal["agent_config"] = "agent_config"
    options: list[AgentOption] = Field(default_factory=list)


class SessionInfoChanged(BaseEvent):
    """An external agent named (or renamed) its session: its `title`, and when it was last
    active (`updated_at`, ISO 8601) when it said."""

    type: Literal["session_info"] = "session_info"
    title: str | None = None
    updated_at: str | None = None


class AgentNotice(BaseEvent):
    """Something about the agent session the human should know that is not a step of the task:
    "the agent restarted; its earlier conversation is gone", an MCP server it cannot take, how
    it was logged in. `level` is "info", "warning" or "error"."""

    type: Literal["agent_notice"] = "agent_notice"
    level: Literal["info", "warning", "error"] = "info"
    text: str


class HistoryMessage(BaseEvent):
    """Replayed history, not new activity: a delta of an earlier message of the conversation,
    by `role` ("user", "agent", or the agent's "thought"), as an agent replays it when the
    conversation is opened again (`session/load`)."""

    type: Literal["history_message"] = "history_message"
    role: Literal["user", "agent", "thought"] = "agent"
    text: str


class HistoryTool(BaseEvent):
    """Replayed history, not new activity: an earlier tool call of the conversation as the agent
    replays it (sent again, under the same `call_id`, as its status changes)."""

    type: Literal["history_tool"] = "history_tool"
    call_id: str
    tool: str = "other"
    title: str | None = None
    status: str | None = None
    output: str = ""


class QuestionField(BaseModel):
    """One field of an agent's question form.

    `kind`: "text" (a line of text), "number" or "integer", "boolean" (yes or no), "choice"
    (one of `options`) or "multi" (any of `options`). `minimum`/`maximum` bound a number, a
    text's length, or how many options a "multi" takes. `format` is a text's expected form
    ("email", "uri", "date", …), shown as a hint.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    kind: Literal["text", "number", "integer", "boolean", "choice", "multi"]
    title: str = ""
    description: str = ""
    required: bool = False
    default: AnswerValue | None = None
    options: list[QuestionOption] | None = None
    minimum: float | None = None
    maximum: float | None = None
    format: str | None = None


class QuestionAsked(BaseEvent):
    """The agent asks the human something (an ACP elicitation): a `message` and a form of
    `fields`. `call_id`: the agent's tool call it belongs to, when it said."""

    type: Literal["question_asked"] = "question_asked"
    question_id: str
    message: str
    fields: list[QuestionField] = Field(default_factory=list)
    call_id: str | None = None


class QuestionAnswered(BaseEvent):
    """A question was answered: `accept` with `values` (field name → answer), `decline` (the
    human, or the rules when no human is present, said no), or `cancel` (the run was cancelled
    first). `via`: "human" or "auto"; `reason` says why an automatic answer was given."""

    type: Literal["question_answered"] = "question_answered"
    question_id: str
    action: Literal["accept", "decline", "cancel"]
    values: dict[str, AnswerValue] | None = None
    via: Literal["human", "auto"] = "human"
    reason: str | None = None


class AgentCommand(BaseModel):
    """A command an external agent offers (typed as `/name` in a task): what it does, and a hint
    for its input when it takes one."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    description: str = ""
    hint: str | None = None


class CommandsAvailable(BaseEvent):
    """The commands the agent offers now (the whole list; it replaces any earlier one)."""

    type: Literal["commands_available"] = "commands_available"
    commands: list[AgentCommand] = Field(default_factory=list)


class PromptNote(BaseEvent):
    """The engine passed the human's words on to the agent besides the task: the reason given
    with a denial (`approval_id`). `delivery`: "in_turn" (the agent took it while it worked) or
    "with_prompt" (sent with the next task's prompt)."""

    type: Literal["prompt_note"] = "prompt_note"
    text: str
    approval_id: str | None = None
    delivery: Literal["in_turn", "with_prompt"] = "with_prompt"


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
    """A verification check began running (`sandbox`: where its command runs, as on
    `ToolStart`)."""

    type: Literal["verification_start"] = "verification_start"
    check_id: str
    name: str
    sandbox: str | None = None


class VerificationEnd(BaseEvent):
    """A verification check finished (`sandbox`, `sandbox_blocked`: as on `ToolEnd`)."""

    type: Literal["verification_end"] = "verification_end"
    check_id: str
    name: str
    passed: bool
    output: str = ""
    duration_ms: float | None = None
    sandbox: str | None = None
    sandbox_blocked: str | None = None


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
    | ModelRetry
    | QuestionAsked
    | QuestionAnswered
    | CommandsAvailable
    | PromptNote
    | AgentConfig
    | SessionInfoChanged
    | AgentNotice
    | HistoryMessage
    | HistoryTool,
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
    "AgentChoice",
    "AgentCommand",
    "AgentInfo",
    "AgentMode",
    "AgentOption",
    "AnswerValue",
    "BaseEvent",
    "EventParseError",
    "HarnessEvent",
    "QuestionField",
    "QuestionOption",
    "VerificationCheck",
    "dump_event",
    "parse_event",
    "stamped",
    *(cls.__name__ for cls in EVENT_CLASSES),
]


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
