"""How an external agent's session reads besides the task's steps: its questions and their
answers, the commands it offers, notes passed on to it, its settings, title, notices and
replayed history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_adapter.description import Description, Tone
from engine_adapter.events import answer_text, fields_text

__all__ = ["AGENT_SESSION_DESCRIBERS", "COMMAND_SIGILS", "command_token", "option_value_name",
           "options_text"]


def _question_asked(e: Any) -> Description:
    form = fields_text(e.fields)
    return Description("question", f"{e.question_id} {e.message}" + (f" — {form}" if form
                                                                     else ""),
                       "warn", "?", "the agent asks: ")


def _question_answered(e: Any) -> Description:
    label, tone = {"accept": ("answered", "good"), "decline": ("declined", "bad")}.get(
        e.action, ("cancelled", "warn"))
    said = answer_text((), e.action, e.values, via=e.via, reason=e.reason, human="a human")
    return Description(label, f"{e.question_id} {said}", tone, "→")  # type: ignore[arg-type]


COMMAND_SIGILS = "$@#!"
"""A command whose name starts with one of these (codex's `$skills`) is typed as it is named."""


def command_token(name: str) -> str:
    """What a human types for an agent's command: `/review`, or `$imagegen` as it is named."""
    return name if name[:1] in COMMAND_SIGILS else f"/{name}"


def _commands_available(e: Any) -> Description:
    names = ", ".join(command_token(c.name) for c in e.commands)
    return Description("commands", names or "(none)", "dim", "/", "the agent offers: ")


def _prompt_note(e: Any) -> Description:
    how = "while it worked" if e.delivery == "in_turn" else "with the task"
    return Description("note", e.text, "info", "✎", f"passed on to the agent {how}: ")

def option_value_name(option: Any) -> str:
    """An agent setting's current value as the agent names it ("on"/"off" for a boolean)."""
    value = option.value
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "?"
    for choice in option.choices:
        if choice.value == value:
            return choice.name or choice.value
    return str(value)


def options_text(options: Any, *, skip: Any = ()) -> str:
    """`model Sonnet · reasoning effort High · fast mode off`: each of an agent's settings
    (`AgentOption`s) by its name and current value; those whose id is in `skip` left out."""
    left_out = set(skip)
    return " · ".join(f"{(o.name or o.id).strip().lower()} {option_value_name(o)}"
                      for o in options if o.id not in left_out)


_HISTORY_ROLES = {"user": "you", "agent": "agent", "thought": "agent, thinking"}


def _agent_config(e: Any) -> Description:
    return Description("settings", options_text(e.options) or "none", "info", "⚙", "settings: ")


def _session_info(e: Any) -> Description:
    return Description("title", e.title or "(none)", "info", "✎", "session title: ")


def _agent_notice(e: Any) -> Description:
    tone: Tone = {"warning": "warn", "error": "bad"}.get(e.level, "info")  # type: ignore
    return Description("note", e.text, tone, "!" if e.level != "info" else "·")


def _history_message(e: Any) -> Description:
    return Description("history", f"{_HISTORY_ROLES.get(e.role, e.role)}: {e.text}", "dim",
                       "⟲", "earlier, ")


def _history_tool(e: Any) -> Description:
    status = f" ({e.status})" if e.status else ""
    return Description("history", f"tool {e.call_id} {e.title or e.tool}{status}", "dim", "⟲",
                       "earlier, ")


AGENT_SESSION_DESCRIBERS: dict[str, Callable[[Any], Description]] = {
    "question_asked": _question_asked,
    "question_answered": _question_answered,
    "commands_available": _commands_available,
    "prompt_note": _prompt_note,
    "agent_config": _agent_config,
    "session_info": _session_info,
    "agent_notice": _agent_notice,
    "history_message": _history_message,
    "history_tool": _history_tool,
}
"""The describer of each event type of an external agent's session."""
