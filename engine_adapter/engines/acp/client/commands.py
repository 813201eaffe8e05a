"""The commands an ACP agent offers (`available_commands_update`), kept and announced.

Agents send their list right after `session/new` — before any task runs — and again whenever it
changes. `OfferedCommands` (mixed into `AcpClient`) keeps the latest list whenever it arrives and
announces it as `commands_available` in every task that runs (once at its start, and again on
each change), so each task's journal says what the human could type. Names and descriptions are
the agent's words: cleaned and capped here, at most `MAX_COMMANDS` of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import AvailableCommandsUpdate
from pydantic import ValidationError

from engine_adapter.engines.acp.text import clean
from engine_adapter.events import AgentCommand, CommandsAvailable

if TYPE_CHECKING:
    from engine_adapter.engines.acp.client.client import AcpClient

__all__ = ["MAX_COMMANDS", "OfferedCommands", "agent_commands"]

MAX_COMMANDS = 500
NAME_LIMIT = 100
DESCRIPTION_LIMIT = 1_000
HINT_LIMIT = 200


def agent_commands(available: list[Any]) -> tuple[AgentCommand, ...]:
    """The agent's `AvailableCommand`s as events' `AgentCommand`s (cleaned, capped, named
    commands only, the first of a repeated name)."""
    commands: list[AgentCommand] = []
    seen: set[str] = set()
    for command in available[:MAX_COMMANDS]:
        name = clean(command.name.strip(), NAME_LIMIT).lstrip("/")
        if not name or name in seen:
            continue
        seen.add(name)
        given = command.input.root if command.input is not None else None
        hint = getattr(given, "hint", None)
        commands.append(AgentCommand(name=name,
                                     description=clean(command.description, DESCRIPTION_LIMIT),
                                     hint=clean(hint, HINT_LIMIT) if hint else None))
    return tuple(commands)


class OfferedCommands:
    """`available_commands_update` for `AcpClient`: the latest list (`offered_commands`) and
    the last one announced (`announced_commands`)."""

    offered_commands: tuple[AgentCommand, ...] | None = None
    announced_commands: tuple[AgentCommand, ...] | None = None

    def keep_commands_update(self: AcpClient, params: Any) -> bool:
        """Keep the list if `params` is a `session/update` carrying one; True if it did.
        (Called for updates that arrive while no task runs.)"""
        update = params.get("update") if isinstance(params, dict) else None
        if not isinstance(update, dict) or \
                update.get("sessionUpdate") != "available_commands_update":
            return False
        try:
            parsed = AvailableCommandsUpdate.model_validate(update)
        except ValidationError:
            return False
        self.take_commands(parsed)
        return True

    def take_commands(self: AcpClient, update: Any) -> None:
        """The agent's new list: kept, and announced in the running task if there is one."""
        self.offered_commands = agent_commands(update.available_commands)
        self.announce_commands()

    def announce_commands(self: AcpClient, *, again: bool = False) -> None:
        """Tell the running task the agent's commands (once per list; `again`: a new task)."""
        commands = self.offered_commands
        run = self.run
        if commands is None or run is None or not run.live:
            return
        if not again and self.announced_commands == commands:
            return
        self.announced_commands = commands
        run.emit(CommandsAvailable(commands=list(commands)))
