"""Helpers for the ACP tests: the test agent's command line, driving a task through a Session,
and checking that no process is left behind."""

from __future__ import annotations

import asyncio
import json
import os
import select
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine_adapter import JsonlEventJournal, Session, TaskState, read_journal
from engine_adapter.engines.acp import AcpRunner

AGENT_SCRIPT = Path(__file__).with_name("agent.py")


def agent_argv(*args: str | os.PathLike[str]) -> list[str]:
    """The command line that starts the test agent."""
    return [sys.executable, str(AGENT_SCRIPT), *map(str, args)]


def agent_log(path: Path) -> list[dict[str, Any]]:
    """What the test agent observed (its --log file)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_exited(pid: int, timeout: float = 10.0) -> bool:
    """Wait (on the process itself, through a pidfd) until `pid` has exited; True if it has."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def group_gone(pgid: int) -> bool:
    """Whether no process is left in the process group (zombies count as gone)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    # Something answers: it may be a zombie waiting for its (init) parent to reap it.
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            return False
    return True


def processes_with(marker: str) -> list[int]:
    """Every live process (not a zombie) whose command line holds `marker`, from the process
    table: an agent in the sandbox reports only its pid inside its own PID namespace."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def none_left(marker: str, timeout: float = 10.0) -> bool:
    """Wait (on each process itself) until no process whose command line holds `marker` is
    left; True when none is."""
    for pid in processes_with(marker):
        wait_exited(pid, timeout)
    return not processes_with(marker)


Answer = Callable[[Session, Any], None]


async def drive(runner: AcpRunner, task: str, journal: Path, *,
                answer: Answer | None = None, **session_kwargs: Any) -> tuple[TaskState, list]:
    """Run one task through a Session with a journal; `answer(session, event)` sees every event
    as it happens (to resolve approvals or cancel). Returns the final state and the journal."""
    session = Session(runner, TaskState(task=task), journal=JsonlEventJournal(journal),
                      **session_kwargs)

    async def watch() -> None:
        async for event in session.events():
            if answer is not None:
                answer(session, event)

    watcher = asyncio.ensure_future(watch())
    state = await session.run()
    await watcher
    return state, list(read_journal(journal))


def approve(allow: bool = True, remember: bool = False) -> Answer:
    """An `answer` that resolves every approval the same way."""
    def answer(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=allow, remember=remember)
    return answer


def ready(events: list) -> Any:
    """The run's one `agent_ready`: what the agent said of itself and its session (its
    `agent_start` comes at once, before the agent answered)."""
    found = [event for event in events if event.type == "agent_ready"]
    assert len(found) == 1, [event.type for event in events]
    return found[0]


def types(events: list) -> list[str]:
    """The event types, in order."""
    return [event.type for event in events]
