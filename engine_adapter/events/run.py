"""The events of a run's course: its start and end, turns, phases, the model's decisions, text,
usage and retries, verification checks, cancellation and escalation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engine_adapter.events.base import BaseEvent

RunStatus = Literal["completed", "failed", "cancelled"]


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
    """The run began: what it is for and what drives it. Always the first event of a run, sent
    as the run starts (before an external agent has answered anything).

    `ready` False: the engine is still starting what drives the task (an external agent that
    has to answer `initialize` and open its session); an `agent_ready` follows with what the
    agent then said of itself (or the run ends, if it could not start). None (the built-in
    engine, users' engines, every journal written before `agent_ready` existed): the run is
    ready at once, and whatever this event carries of the fields below is all there is.
    `command`: the command line that started an external agent. `resumes`: the journal of the
    run whose conversation this one continues, when the engine rebuilt it from there (the
    built-in engine under `cockpit resume`; `resumed` is then "journal").

    The fields an `agent_ready` carries (`agent`, `modes`, `acp_session_id`, `new_session`,
    `resumed`, `mode`, `sandbox`, `sandbox_network`, `sandbox_note`, `agent_sandbox`) may also
    come here, with the same meaning: older journals of agent runs carry them here, and an
    engine that knows them at once may send them here (`sandbox*`: where the built-in
    engine's commands run).
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
    agent_sandbox: str | None = None
    ready: bool | None = None
    resumes: str | None = None


class AgentReady(BaseEvent):
    """The external agent of a run that started with `agent_start(ready=False)` is ready: it
    answered `initialize` and its session is open. What only that tells:

    `agent` (its own name and version), `engine` (the run's engine name when the agent's own
    name changes it: an agent the catalogue does not know is named by its command until it
    says its name), `modes`, `acp_session_id` and whether that session is `new_session`
    (false: the agent keeps the conversation's context), `resumed`: how an earlier
    conversation was opened again ("session/resume" or "session/load"; its replayed history
    then follows as `history_*` events), and the agent's current `mode` (the phase the task
    starts in). Where commands go: `sandbox` (a state of `engine_adapter.sandbox`:
    "workspace-write", "read-only", "off", "unavailable") for the terminals the cockpit runs
    for it, `sandbox_network`, `sandbox_note` (why there is none, and the fix), and
    `agent_sandbox`: where the agent process itself runs (a state as for `sandbox`; "off" when
    it runs outside on purpose, "unavailable" when bwrap is missing).
    """

    type: Literal["agent_ready"] = "agent_ready"
    engine: str | None = None
    agent: AgentInfo | None = None
    modes: list[AgentMode] | None = None
    acp_session_id: str | None = None
    new_session: bool | None = None
    resumed: str | None = None
    mode: str | None = None
    sandbox: str | None = None
    sandbox_network: bool | None = None
    sandbox_note: str | None = None
    agent_sandbox: str | None = None


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

    `scope` "session": not a model call but the agent's own report on its session (ACP's
    `usage_update`: the context window's fill, and the cost added since its last report); no
    tokens (they read "unknown", never 0), and it is not counted as a call. None (older
    journals too): one model call.
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
    scope: Literal["session"] | None = None


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

