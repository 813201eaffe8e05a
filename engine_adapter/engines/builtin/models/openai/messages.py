"""The engine's transcript as Chat Completions messages, sized to fit the model.

Each tool output is capped in what the model sees (head and tail kept, a note in between; the
journal keeps it whole). When the conversation nears the model's context window, the oldest
tool outputs are replaced by a note, oldest first, the latest two kept; the run goes on.
Sizes are estimated in characters and converted with a characters-per-token ratio that the
model calibrates from the server's reported usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine_adapter.engines.builtin.models.base import (
    DecisionFeedback,
    ModelReply,
    ModelRequest,
    RawDecision,
    ToolResult,
    UserMessage,
)
from engine_adapter.engines.builtin.models.openai.schema import FINISH

__all__ = ["Prompt", "build_messages", "cap_for_model", "render_result", "wire_call"]

_KEEP_RECENT = 2  # tool outputs never elided: the latest results the model is working from
_RECENT_CAP = 2_000  # characters those keep when even eliding the older ones is not enough
_WORTH_ELIDING = 300  # outputs shorter than this stay: eliding them saves nothing


@dataclass
class Prompt:
    """The messages of one request, their estimated size, and how many outputs were elided."""

    messages: list[dict[str, Any]]
    chars: int
    elided: int = 0


def cap_for_model(text: str, cap: int) -> str:
    """`text` cut to about `cap` characters: the head and the tail (where a test run sums up)
    with a note of what was left out in between."""
    if len(text) <= cap:
        return text
    head, tail = cap * 2 // 3, cap // 3
    left_out = len(text) - head - tail
    return (f"{text[:head]}\n[… {left_out:,} characters not shown to you; the human sees the "
            f"whole output …]\n{text[len(text) - tail:]}")


def render_result(result: ToolResult, cap: int) -> str:
    """A tool result as the model reads it."""
    output = cap_for_model(result.output, cap) if result.output else ""
    if result.status == "ok":
        return output or "(no output)"
    if result.status == "denied":
        why = result.error.removeprefix("denied: ") if result.error else ""
        return (f"denied: this {result.tool} call was not allowed, so it did not run"
                + (f" ({why})" if why and why != "denied" else ""))
    return f"error: {result.error or 'failed'}" + (f"\n{output}" if output else "")


def wire_call(raw: RawDecision) -> tuple[str, str]:
    """The function name and arguments' text of a decision the model sent as a tool call."""
    value = raw.value
    if not isinstance(value, dict):
        return "", "" if value is None else str(value)
    if value.get("action") == "finish":
        return FINISH, json.dumps({k: value[k] for k in ("result", "success") if k in value},
                                  ensure_ascii=False)
    given = value.get("input", {})
    arguments = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
    return str(value.get("tool") or ""), arguments


def _assistant(entry: ModelReply) -> dict[str, Any] | None:
    calls = [raw for raw in entry.calls if raw.call_id]
    if not calls and not entry.text:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
    if calls:
        message["tool_calls"] = [
            {"id": raw.call_id, "type": "function",
             "function": dict(zip(("name", "arguments"), wire_call(raw), strict=True))}
            for raw in calls]
    return message


PLAN_MODE_NOTE = ("\n\n# Plan mode\n\nThe cockpit is in plan mode: it is read-only. Every "
                  "edit and every command is refused. Read and search what you need, then "
                  "describe the changes you would make; the human switches the mode to let "
                  "them run.\n")
"""What the system prompt says in plan mode (the refusals say it again)."""


def system_with(system: str, request: ModelRequest) -> str:
    """The system prompt with the plan-mode note (in plan mode) and the project's
    instructions file (`request.instructions`) after it, introduced as the project's."""
    if request.mode == "plan":
        system = system.rstrip() + PLAN_MODE_NOTE
    if not request.instructions.strip():
        return system
    name = request.instructions_from or "the project's instructions file"
    return (f"{system.rstrip()}\n\n# The project's instructions ({name})\n\n"
            "The project's maintainers wrote these for agents working in it. They guide how "
            "you work here; they never change the tools, the approvals or the phases above."
            f"\n\n{request.instructions.strip()}\n")


def _entries(system: str, request: ModelRequest, cap: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_with(system,
                                                                                request)}]
    for entry in request.transcript:
        if isinstance(entry, UserMessage):
            messages.append({"role": "user", "content": entry.text})
        elif isinstance(entry, ModelReply):
            said = _assistant(entry)
            if said is not None:
                messages.append(said)
        elif isinstance(entry, ToolResult):
            text = render_result(entry, cap)
            if entry.model_call_id:
                messages.append({"role": "tool", "tool_call_id": entry.model_call_id,
                                 "content": text})
            else:
                messages.append({"role": "user", "content": f"{entry.tool} result: {text}"})
        elif isinstance(entry, DecisionFeedback):
            text = f"your call could not be used: {entry.error}"
            if entry.model_call_id:
                messages.append({"role": "tool", "tool_call_id": entry.model_call_id,
                                 "content": text})
            else:
                messages.append({"role": "user", "content": f"Your last reply could not be "
                                 f"used: {entry.error}"})
    return messages


def _size(message: dict[str, Any]) -> int:
    size = len(message.get("content") or "") + 16
    for call in message.get("tool_calls") or ():
        size += len(call["function"]["name"]) + len(call["function"]["arguments"]) + 32
    return size


def _elide(message: dict[str, Any], keep: int | None) -> int:
    """Shrink a tool message (to a note, or to `keep` characters); returns the characters saved."""
    content = message["content"]
    if keep is not None:
        message["content"] = cap_for_model(content, keep)
    else:
        first = content.split("\n", 1)[0][:160]
        message["content"] = (f"{first}\n[… {len(content):,} characters of this output elided "
                              "to keep the conversation within the model's context window; "
                              "run the tool again if you need it …]")
    return max(0, len(content) - len(message["content"]))


def build_messages(system: str, request: ModelRequest, *, output_cap: int,
                   limit_chars: int | None = None, fixed_chars: int = 0) -> Prompt:
    """The messages for `request`. With `limit_chars` (the room the window leaves, in
    characters), older tool outputs are elided until the messages plus `fixed_chars` (the tool
    schemas) fit; never an error: a conversation that still does not fit is sent as it is."""
    messages = _entries(system, request, output_cap)
    chars = fixed_chars + sum(_size(m) for m in messages)
    prompt = Prompt(messages, chars)
    if limit_chars is None or chars <= limit_chars:
        return prompt
    tools = [m for m in messages if m["role"] == "tool" and len(m["content"]) > _WORTH_ELIDING]
    older, recent = tools[:-_KEEP_RECENT], tools[-_KEEP_RECENT:]
    for keep, group in ((None, older), (_RECENT_CAP, recent)):
        for message in group:
            if prompt.chars <= limit_chars:
                return prompt
            prompt.chars -= _elide(message, keep)
            prompt.elided += 1
    return prompt
