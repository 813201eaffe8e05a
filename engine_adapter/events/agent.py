"""The events of an external agent's session besides the task's steps: its settings, title,
notices, replayed history, questions to the human, offered commands and passed-on notes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from engine_adapter.events.base import BaseEvent

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
    `fields`. `call_id`: the agent's tool call it belongs to, when it said. `url`: a link the
    agent asks the human to open (URL mode; no fields then), as the agent sent it: untrusted,
    every view escapes it, and the cockpit opens it only on the human's key."""

    type: Literal["question_asked"] = "question_asked"
    question_id: str
    message: str
    fields: list[QuestionField] = Field(default_factory=list)
    call_id: str | None = None
    url: str | None = None


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


class PlanEntry(BaseModel):
    """One entry of an agent's plan: what it means to do, how far it is (`status`: "pending",
    "in_progress", "completed" in ACP v1) and how much it matters (`priority`: "high",
    "medium", "low"). Kept as strings: a newer agent's word is shown, not refused."""

    model_config = ConfigDict(frozen=True, extra="allow")

    content: str
    status: str = "pending"
    priority: str = "medium"


class AgentPlan(BaseEvent):
    """An external agent's plan as it now stands (ACP `plan`: each update is the whole list,
    replacing the one before). `dropped`: entries past the cap, left out."""

    type: Literal["agent_plan"] = "agent_plan"
    turn: int | None = None
    entries: list[PlanEntry] = Field(default_factory=list)
    dropped: int = 0
