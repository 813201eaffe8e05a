"""`agent_start` is journaled as an ACP run starts, before the agent answers `initialize`; what
only the agent tells (its name, modes, session id, where it runs) comes after, as `agent_ready`.
Against the SDK test agent held on a named pipe: it answers `initialize` only once the test
writes to it, so "before" is a fact of the run, not of timing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path

from fakes.acp_agent.helpers import agent_argv, ready, types

from engine_adapter import JsonlEventJournal, Session, TaskState, read_journal
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.view import RunFold, fold_events


def _release(fifo: Path) -> None:
    """Let the held agent answer: write to its pipe (blocks until the agent opens it)."""
    with open(fifo, "wb") as pipe:
        pipe.write(b"answer now\n")


def _unblock(fifo: Path) -> None:
    """Open the pipe's reading end ourselves, so a `_release` left waiting (the agent died
    before it opened the pipe) can end."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))


def test_agent_start_is_journaled_before_the_agent_answers_initialize(tmp_path):
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    journal = tmp_path / "run.jsonl"

    async def main() -> tuple[list[str], bool, list]:
        runner = AcpRunner(agent_argv("--hold-initialize", fifo), cwd=workspace)
        session = Session(runner, TaskState(task="hello"), journal=JsonlEventJournal(journal))
        stream = session.events()
        run = asyncio.ensure_future(session.run())
        fold = RunFold()
        try:
            first = await asyncio.wait_for(stream.__anext__(), 30)  # as it is emitted
            fold.apply(first)
            # The agent is still held inside `initialize`: the journal already has the start.
            on_disk = journal.read_text().splitlines()
            starting = fold.view.starting
            await asyncio.wait_for(asyncio.to_thread(_release, fifo), 30)
            await run
        finally:
            _unblock(fifo)
            await runner.close()
        return on_disk, starting, list(read_journal(journal))

    on_disk, starting, events = asyncio.run(main())
    [line] = on_disk
    start = json.loads(line)
    assert (start["type"], start["task"], start["ready"]) == ("agent_start", "hello", False)
    assert start["cwd"] == os.path.realpath(workspace) and "python" in start["command"]
    assert starting  # the views say "starting agent …" from the start on
    assert types(events)[:2] == ["agent_start", "agent_ready"]
    said = ready(events)
    assert said.agent is not None and said.agent.name == "cockpit-test-agent"
    assert said.acp_session_id and said.new_session is True
    assert events[-1].status == "completed"
    view = fold_events(events)
    assert not view.starting and view.agent == "Cockpit test agent 1.0"


def test_an_agent_that_cannot_start_ends_the_run_after_its_agent_start(tmp_path):
    runner = AcpRunner([str(tmp_path / "no-such-agent")], cwd=tmp_path)
    journal = tmp_path / "run.jsonl"

    async def main() -> None:
        try:
            await Session(runner, TaskState(task="hello"), journal=JsonlEventJournal(journal)
                          ).run()
        finally:
            await runner.close()

    asyncio.run(main())
    events = list(read_journal(journal))
    assert types(events) == ["agent_start", "agent_end"]  # no agent_ready: it never answered
    assert events[-1].status == "failed" and "no-such-agent" in events[-1].error
    view = fold_events(events)
    assert not view.starting and view.status == "failed"
