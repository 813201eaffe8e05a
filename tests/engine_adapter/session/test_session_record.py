"""`Session.record`: an event about a run after its end (a rewind from the live cockpit) is
stamped with the next `seq`, journaled by reopening the journal (its chain continues: the
verifier passes), and appended to `history`; while the run goes on it is refused."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, shell_turn

from engine_adapter import JsonlEventJournal, Session, TaskState, read_journal
from engine_adapter.checkpoints import (
    Checkpointer,
    CheckpointStore,
    RunCheckpoints,
    rewind_run,
    rewound_event,
)
from engine_adapter.events import WorkspaceRewound
from engine_adapter.journal import check_lines


def _rewound() -> WorkspaceRewound:
    return WorkspaceRewound(to_turn=1, checkpoint="a", before="b", after="c")


def test_record_after_the_end_continues_the_journal_and_its_chain(tmp_path):
    journal = tmp_path / "run.jsonl"
    session = Session(StepRunner(), TaskState(task="t"), journal=JsonlEventJournal(journal))
    run(session.run())
    ended = len(session.history)
    recorded = session.record(_rewound())
    assert recorded.seq == ended and session.history[-1] == recorded
    assert recorded.session_id == session.session_id
    events = list(read_journal(journal))
    assert events[-1].type == "workspace_rewound" and events[-1].seq == ended
    verdict = check_lines(journal.read_bytes().splitlines())
    assert not verdict.tampered, verdict.summary()
    again = session.record(_rewound())  # a second one: the next seq again
    assert again.seq == ended + 1


def test_record_is_refused_while_the_run_goes_on(tmp_path):
    async def main():
        started, gate = asyncio.Event(), asyncio.Event()

        async def wait(r) -> None:
            started.set()
            await gate.wait()

        session = Session(StepRunner(wait), TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await started.wait()
        with pytest.raises(RuntimeError, match="still going"):
            session.record(_rewound())
        gate.set()
        await task
        assert all(e.type != "workspace_rewound" for e in session.history)
    run(main())


def test_a_rewind_recorded_through_the_session_is_what_the_cli_reads(tmp_path):
    """The same plan and event as `cockpit rewind` (no second implementation): the rewind of a
    real run, recorded by `Session.record`, read back by `RunCheckpoints` from the journal."""
    ws = git_repo(tmp_path / "ws")
    journal = tmp_path / "run.jsonl"
    store = CheckpointStore(tmp_path / "store")
    session = Session(StepRunner(shell_turn(1, "echo x > README.md"), cwd=str(ws)),
                      TaskState(task="t"), journal=JsonlEventJournal(journal),
                      checkpoints=Checkpointer(store, ws, run="run"), unattended=True)
    run(session.run())
    facts = RunCheckpoints.of(session.history)
    outcome = rewind_run(store, facts, to=1)
    session.record(rewound_event(facts, outcome, to=1))
    assert (ws / "README.md").read_text() == "hello\n"
    again = RunCheckpoints.of(read_journal(journal))
    (rewind,) = again.rewinds
    assert rewind.restored == ["README.md"] and again.baseline() == outcome.after.id
