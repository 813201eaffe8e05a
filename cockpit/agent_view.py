"""How an external agent's session reads in one line: its settings (model, mode, effort, …)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine_adapter.text import escaped

__all__ = ["describe_options", "option_value_name"]


def option_value_name(option: Any) -> str:
    """The current value of one `AgentOption` as the agent names it ("on"/"off" for a
    boolean)."""
    value = option.value
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "?"
    for choice in option.choices:
        if choice.value == value:
            return choice.name or choice.value
    return str(value)


def describe_options(options: Iterable[Any], *, skip: Iterable[str] = ()) -> str:
    """`model gpt-5 · effort high · mode Default`: each option's name (lower case) and its
    current value, untrusted characters escaped; options whose id is in `skip` left out."""
    left_out = set(skip)
    parts = []
    for option in options:
        if option.id in left_out:
            continue
        name = (option.name or option.id).strip().lower()
        parts.append(f"{escaped(name)[:40]} {escaped(option_value_name(option))[:60]}")
    return " · ".join(parts)
