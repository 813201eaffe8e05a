"""An agent's own past session, read back for the replay viewer (`cockpit replay --agent NAME
--session ID`).

The agent starts as for `cockpit run --agent` (in the sandbox, its state folders writable) and
the session is opened by `session/load` alone: the updates the agent replays become the
journal's history events (`history_message`, `history_tool`), written as any run's are. Nothing
else is sent to the agent: no prompt, no settings, no MCP servers (a login only when the agent
asks for one to load). What the agent cannot do, or an id it does not know, is a `SetupError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from cockpit.launch.agents import AgentChoices, agent_runner, agent_spec, workspace
from cockpit.launch.checks import check_agent_program
from cockpit.launch.factory import RunOptions, SetupError, make_sandbox

__all__ = ["read_agent_session"]


STDERR_HEAD = "last lines the agent wrote to stderr:"


def _one_line(error: str) -> str:
    """The failure in one line: its first, and the agent's last stderr line when it wrote
    one (escaped: the agent's text is untrusted)."""
    from engine_adapter.text import printable

    lines = error.splitlines()
    text = printable(lines[0] if lines else "the agent stopped", 400)
    if STDERR_HEAD in lines:
        tail = [line.strip() for line in lines[lines.index(STDERR_HEAD) + 1:] if line.strip()]
        if tail:
            text += f" (its stderr ends: {printable(tail[-1], 200)})"
    return text


def read_agent_session(agent: str, session_id: str, *, cwd: str | Path | None,
                       journal: Path, say: Callable[[str], None] | None = None) -> Path:
    """Load `agent`'s session `session_id` (in `cwd`, default here: agents keep sessions by
    directory) and write its history to `journal`; returns `journal`. `say` hears one line
    once the agent is about to start. Raises `SetupError` in one line: an unknown agent, one
    that cannot load sessions, an id it does not know, an agent that fails."""
    from engine_adapter import JsonlEventJournal, Session, TaskState

    if not session_id.strip():
        raise SetupError("--session ID is empty: name one `cockpit sessions --agent NAME` lists")
    root = workspace(cwd)
    spec = agent_spec(agent)
    if not spec.known:
        check_agent_program(spec.command, root)
    runner = agent_runner(spec, root, AgentChoices(no_mcp=True), session_id,
                          sandbox=make_sandbox(RunOptions(), root), load_only=True)
    if say is not None:
        say(f"loading {spec.name}'s session {session_id} in {root} (session/load)…")

    async def read() -> tuple[str, str | None]:
        session = Session(runner, TaskState(task="", cwd=str(root)),
                          journal=JsonlEventJournal(journal), unattended=True)
        try:
            await session.run()
        finally:
            await runner.close()
        end = session.history[-1]
        return getattr(end, "status", "failed"), getattr(end, "error", None)

    status, error = asyncio.run(read())
    if status != "completed":
        first = _one_line(error or "the agent stopped")
        first = first.removeprefix(f"cannot load the agent's session {session_id}: ")
        raise SetupError(f"cannot read {spec.name}'s session {session_id}: {first}")
    return journal
