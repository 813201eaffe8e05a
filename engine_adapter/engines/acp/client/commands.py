"""The commands an ACP agent offers (`available_commands_update`), kept and announced.

Agents send their list right after `session/new` — before any task runs — and again whenever it
changes. `OfferedCommands` (owned by `AcpClient`, which hands it each list) keeps the latest
list whenever it arrives and announces it as `commands_available` in every task that runs (once
at its start, and again on each change), so each task's journal says what the human could type.
Names and descriptions are the agent's words: cleaned and capped here, at most `MAX_COMMANDS` of
them.
"""

from __future__ import annotations

from collections.abc import Callable

from acp.schema import AvailableCommand, AvailableCommandsUpdate
from pydantic import ValidationError

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import AgentCommand, CommandsAvailable

__all__ = ["MAX_COMMANDS", "OfferedCommands", "agent_commands"]

MAX_COMMANDS = 500
NAME_LIMIT = 100
DESCRIPTION_LIMIT = 1_000
HINT_LIMIT = 200


def agent_commands(available: list[AvailableCommand]) -> tuple[AgentCommand, ...]:
    """The agent's `AvailableCommand`s as events' `AgentCommand`s (cleaned, capped, named
    commands only, the first of a repeated name)."""
    commands: list[AgentCommand] = []
    seen: set[str] = set()
    for command in available[:MAX_COMMANDS]:
        name = clean(command.name.strip(), NAME_LIMIT).lstrip("/")
        if not name or name in seen:
            continue
        seen.add(name)
        hint = command.input.root.hint if command.input is not None else None
        commands.append(AgentCommand(name=name,
                                     description=clean(command.description, DESCRIPTION_LIMIT),
                                     hint=clean(hint, HINT_LIMIT) if hint else None))
    return tuple(commands)


class OfferedCommands:
    """The agent's commands for one client: the latest list (`offered`) and the last one
    announced (`announced`); `run()` gives the live run's context, or None between tasks."""

    def __init__(self, run: Callable[[], RunContext | None]) -> None:
        self._run = run
        self.offered: tuple[AgentCommand, ...] | None = None
        self.announced: tuple[AgentCommand, ...] | None = None

    def keep_update(self, params: object) -> bool:
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
        self.take(parsed)
        return True

    def take(self, update: AvailableCommandsUpdate) -> None:
        """The agent's new list: kept, and announced in the running task if there is one."""
        self.offered = agent_commands(update.available_commands)
        self.announce()

    def announce(self, *, again: bool = False) -> None:
        """Tell the running task the agent's commands (once per list; `again`: a new task)."""
        commands = self.offered
        run = self._run()
        if commands is None or run is None or not run.live:
            return
        if not again and self.announced == commands:
            return
        self.announced = commands
        run.emit(CommandsAvailable(commands=list(commands)))
