"""The command palette's entries for an agent's session settings: one per value it can switch
to (a mode, a model, a reasoning effort, an option on or off), for the live cockpit.

The runner is reached only through what it offers for this (`settings`, `set_option`,
`set_mode`): an engine without them has no such entries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cockpit.widgets import clean_line
from engine_adapter.view import option_value_name

__all__ = ["SettingCommand", "change_setting", "setting_commands"]


@dataclass(frozen=True)
class SettingCommand:
    """One palette entry: its title and help, and the change it makes (`kind` "mode" or
    "option", the setting's id and the new value); `category` is the option's ("model",
    "mode", "thought_level", …; "mode" for a mode)."""

    title: str
    help: str
    kind: str
    setting: str
    value: str | bool
    category: str = ""


def _configurable(runner: Any) -> bool:
    return all(callable(getattr(runner, name, None)) for name in ("set_option", "set_mode")) \
        and hasattr(runner, "settings")


def setting_commands(runner: Any) -> list[SettingCommand]:
    """The switches the runner's open session offers (none when it has no session)."""
    if not _configurable(runner):
        return []
    options, modes, current = runner.settings
    commands = []
    for mode in modes:
        if mode.id != current:
            name = clean_line(mode.name or mode.id, 60)
            commands.append(SettingCommand(f"Agent mode: {name}",
                                           f"Switch the agent to its {name} mode",
                                           "mode", mode.id, mode.id, "mode"))
    for option in options:
        if modes and option.category == "mode":
            continue  # the modes above switch it
        label = clean_line(option.name or option.id, 40)
        if option.kind == "boolean":
            value = not bool(option.value)
            commands.append(SettingCommand(
                f"Agent {label}: {'on' if value else 'off'}",
                f"Turn the agent's {label} {'on' if value else 'off'}", "option", option.id,
                value, option.category or ""))
            continue
        for choice in option.choices:
            if choice.value != option.value:
                name = clean_line(choice.name or choice.value, 60)
                commands.append(SettingCommand(
                    f"Agent {label}: {name}",
                    f"Set the agent's {label} to {name} (now "
                    f"{clean_line(option_value_name(option), 60)})", "option", option.id,
                    choice.value, option.category or ""))
    return commands


async def change_setting(runner: Any, command: SettingCommand,
                         notify: Callable[[str, str], Awaitable[None] | None]) -> None:
    """Make the change; `notify(message, severity)` says how it went (the agent's own words
    when it refused)."""
    try:
        if command.kind == "mode":
            await runner.set_mode(command.setting)
        else:
            await runner.set_option(command.setting, command.value)
    except Exception as exc:  # SettingError or AgentFailure: the message is for the human
        notify(f"{command.title}: {clean_line(str(exc), 500)}", "error")
        return
    notify(f"{command.title} — set", "information")
