"""The cockpit's own slash commands, offered in the message box beside the agent's (one list,
the box's completion): `/help`, `/model`, `/mode`, `/export`, `/clear`. They run in the cockpit
and never go to the agent; an agent command of the same name is shadowed by the cockpit's (the
box shows one).

`/model` and `/mode` are the command palette's switches for the agent's settings (see
`agent_settings`), offered as a list; with a value (`/model sonnet`) the one switch it names
is made at once. `/export` writes the run's Markdown report next to its journal (through the
exporter the CLI hands the app). `/clear` starts a new conversation (the conversation's
`fresh()`: the next task has no earlier ones; an agent opens a new session), once no task runs.

A `/word` that is neither the cockpit's nor one the agent offers (`/compact` to an agent
without it, a typo) is not sent: `unknown_command` names it, and the app says so, since an agent
would take it as a plain prompt. Text whose first word is a path (`/etc/hosts is …`) is text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cockpit.live.agent_settings import SettingCommand
from engine_adapter.view import CommandView, command_token

__all__ = ["BUILTIN_COMMANDS", "builtin_command", "offered_commands", "settings_for",
           "unknown_command"]

BUILTIN_COMMANDS: tuple[CommandView, ...] = (
    CommandView("help", "every key and command of the cockpit (runs here, not in the agent)",
                None),
    CommandView("model", "switch the agent's model (the palette's model switches)", "[name]"),
    CommandView("mode", "switch the agent's mode (the palette's mode switches)", "[name]"),
    CommandView("export", "write this task's report (Markdown) next to its journal", None),
    CommandView("clear", "start a new conversation: the next task begins without the earlier "
                "ones (the grants you gave are kept)", None),
)
_NAMES = {command.name for command in BUILTIN_COMMANDS}
# What a command name looks like when typed (`/review`, `/mcp:list`, `/fix-it`); a first word
# with another `/` or any other character is a path or prose, and goes as written.
_COMMAND_WORD = re.compile(r"/([A-Za-z][\w.:-]*)")


def offered_commands(agent: Sequence[CommandView]) -> tuple[CommandView, ...]:
    """The box's one list: the cockpit's commands, then the agent's (a name the cockpit has is
    the cockpit's)."""
    return (*BUILTIN_COMMANDS, *(c for c in agent if c.name.lower() not in _NAMES))


def builtin_command(text: str) -> tuple[str, str] | None:
    """(`name`, the rest) when `text` is one of the cockpit's commands, else None."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.strip().lower()
    return (name, rest.strip()) if name in _NAMES else None


def settings_for(name: str, commands: Sequence[SettingCommand], wanted: str = "") \
        -> list[SettingCommand]:
    """The switches `/model` or `/mode` offers (`wanted`: only those whose value or title
    holds it, case-insensitive)."""
    if name == "mode":
        found = [c for c in commands if c.kind == "mode" or c.category == "mode"]
    else:
        found = [c for c in commands if c.category == "model"
                 or (c.kind == "option" and c.setting == "model")]
    wanted = wanted.lower()
    if wanted:
        exact = [c for c in found if str(c.value).lower() == wanted]
        found = exact or [c for c in found if wanted in c.title.lower()
                          or wanted in str(c.value).lower()]
    return found


def unknown_command(text: str, agent: Sequence[CommandView]) -> str | None:
    """The name of the slash command `text` starts with when neither the cockpit nor the agent
    (`agent`, its offered commands) has it, else None (a known command, or not a command)."""
    head = text.split(None, 1)[0] if text.strip() else ""
    word = _COMMAND_WORD.fullmatch(head) if text.startswith("/") else None
    if word is None:
        return None
    name = word.group(1).lower()
    # By its first word: a name may hold a space (gemini's "memory show"), and `/memory` alone
    # is then the agent's to answer.
    offered = {command_token(c.name).lower().split(" ")[0] for c in agent if c.name.strip()}
    return None if name in _NAMES or f"/{name}" in offered else word.group(1)
