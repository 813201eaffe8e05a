"""The pluggable model interface of the built-in engine, and how its decisions are read.

A model is given the transcript so far (`ModelRequest`) and answers with an async stream of
`TextDelta` (streamed text, on the message or thought channel), `Usage` (tokens of this call) and
exactly one `RawDecision`: call a tool, or finish. The engine parses the decision itself
(`parse_decision`), so a model that says something malformed gets a `decision_error` and another
turn to correct it — the model never has to be trusted to produce valid structure.

Decision shape (a dict, or its JSON text):

    {"action": "tool", "tool": "read_file", "input": {"path": "README.md"}, "rationale": "…"}
    {"action": "finish", "result": "what was done", "success": true}
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from engine_adapter.text import a_or_an

__all__ = [
    "Decision",
    "DecisionFeedback",
    "DecisionParseError",
    "Model",
    "ModelError",
    "ModelOutput",
    "ModelReply",
    "ModelRequest",
    "RawDecision",
    "Retrying",
    "TextDelta",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "parse_decision",
]


# -- what the model is given ---------------------------------------------------------------------

@dataclass(frozen=True)
class UserMessage:
    """The task, as the human wrote it."""

    text: str


@dataclass(frozen=True)
class ModelReply:
    """What the model said in one turn, and the decision it made (as it wrote it).

    `calls` holds every decision of the reply as the model sent it (a model that makes several
    tool calls in one reply has several; `decision` is then the list of their values)."""

    text: str
    decision: Any
    calls: tuple[RawDecision, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    """How a tool call went. `status`: "ok", "failed" (the tool ran and failed, or refused the
    input), or "denied" (the approval said no, so it never ran)."""

    call_id: str
    tool: str
    status: Literal["ok", "failed", "denied"]
    output: str = ""
    error: str | None = None
    model_call_id: str | None = None  # the model's own id of the call this answers, if it gave one


@dataclass(frozen=True)
class DecisionFeedback:
    """The model's last decision could not be used; `error` says why (`model_call_id`: the
    model's id of the call it was about, if it gave one)."""

    error: str
    model_call_id: str | None = None


TranscriptEntry = UserMessage | ModelReply | ToolResult | DecisionFeedback


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: its name, tier, what it does, its input fields."""

    name: str
    tier: int
    description: str
    required: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    optional: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelRequest:
    """Everything a model call sees."""

    task: str
    turn: int
    phase: str
    transcript: tuple[TranscriptEntry, ...]
    tools: tuple[ToolSpec, ...]
    plan: tuple[Mapping[str, Any], ...] = ()  # the frozen verification plan, if declared
    instructions: str = ""  # the project's instructions file (AGENTS.md), read at the start
    instructions_from: str = ""  # its name
    mode: str = "accept-edits"  # the cockpit's permission mode (plan: nothing is written or run)


# -- what the model answers ----------------------------------------------------------------------

@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text."""

    text: str
    channel: Literal["message", "thought"] = "message"


@dataclass(frozen=True)
class Usage:
    """Tokens (and cost, when known) of this call; several are added up."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class RawDecision:
    """The decision as the model produced it: a dict or JSON text, not yet validated.

    `call_id` is the model's own id for it (echoed back in the `ToolResult` or
    `DecisionFeedback` that answers it); `error`, when set, says why the model's layer already
    knows it is unusable (its arguments are not JSON, say): the engine reports it as a
    decision error without parsing `value`."""

    value: Any
    call_id: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Retrying:
    """The model's server failed in a way worth another try (rate limit, server error, a cut
    stream); the model waits `delay_s` seconds and asks again. Any text streamed before it
    belongs to the abandoned attempt."""

    attempt: int  # 1 for the first retry
    max_attempts: int
    delay_s: float
    error: str


ModelOutput = TextDelta | Usage | RawDecision | Retrying


class ModelError(Exception):
    """A model call that cannot succeed (bad key, unknown model, server down); the message is
    shown as it is and ends the run `failed`."""


@runtime_checkable
class Model(Protocol):
    """A model: `respond` streams text and usage, then one decision."""

    name: str

    def respond(self, request: ModelRequest) -> AsyncIterator[ModelOutput]: ...


# -- reading a decision --------------------------------------------------------------------------

class DecisionParseError(ValueError):
    """A decision the engine cannot act on; the message is what the model is told."""


@dataclass(frozen=True)
class Decision:
    """A valid decision: call `tool` with `tool_input`, or finish."""

    action: Literal["tool", "finish"]
    tool: str | None = None
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    rationale: str | None = None
    result: str | None = None
    success: bool = True


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({str: "string", int: "integer", float: "number", bool: "boolean",
                        list: "list", dict: "object"}.get(k, k.__name__) for k in kinds)


def _check_type(value: Any, kind: type | tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        return False
    return isinstance(value, kind)


def parse_decision(raw: Any, tools: Mapping[str, ToolSpec]) -> Decision:
    """Validate a raw decision against the tools; raises `DecisionParseError` saying what is
    wrong in words the model can act on."""
    if isinstance(raw, (str, bytes)):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise DecisionParseError(f"the decision is not valid JSON ({exc})") from None
    if not isinstance(raw, Mapping):
        raise DecisionParseError("the decision must be a JSON object")
    action = raw.get("action")
    rationale = raw.get("rationale")
    if rationale is not None and not isinstance(rationale, str):
        raise DecisionParseError("'rationale' must be a string")
    if action == "finish":
        result, success = raw.get("result"), raw.get("success", True)
        if not isinstance(result, str) or not result.strip():
            raise DecisionParseError("a finish needs a 'result': what was done, in words")
        if not isinstance(success, bool):
            raise DecisionParseError("'success' must be true or false")
        return Decision("finish", rationale=rationale, result=result, success=success)
    if action != "tool":
        raise DecisionParseError(f"'action' must be \"tool\" or \"finish\", not {action!r}")
    name = raw.get("tool")
    spec = tools.get(name) if isinstance(name, str) else None
    if spec is None:
        known = ", ".join(sorted(tools))
        raise DecisionParseError(f"unknown tool {name!r}; the tools are: {known}")
    tool_input = raw.get("input", {})
    if not isinstance(tool_input, Mapping):
        raise DecisionParseError(f"the input of {name} must be an object")
    for key, kind in spec.required.items():
        if key not in tool_input:
            raise DecisionParseError(f"{name} needs {key!r} ({_type_name(kind)})")
    for key, value in tool_input.items():
        expected = spec.required.get(key) or spec.optional.get(key)
        if expected is None:
            raise DecisionParseError(f"{name} takes no {key!r}")
        if not _check_type(value, expected):
            raise DecisionParseError(f"{name}: {key!r} must be {a_or_an(_type_name(expected))}")
    return Decision("tool", tool=name, tool_input=dict(tool_input), rationale=rationale)
