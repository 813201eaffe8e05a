"""`RunCheckpoints.of_conversation`: a task's checkpoints with the whole conversation's baseline
(a later task's changes are the conversation's own, not someone else's), so a rewind to an
earlier task's turn takes back what later tasks did too."""

from __future__ import annotations

from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, shell_turn, state_of

from engine_adapter import Session, TaskState
from engine_adapter.checkpoints import (
    Checkpointer,
    CheckpointStore,
    RunCheckpoints,
    rewind_run,
    rewound_event,
)


def _task(ws, store, name: str, script: str) -> Session:
    session = Session(StepRunner(shell_turn(1, script), cwd=str(ws)), TaskState(task=name),
                      checkpoints=Checkpointer(store, ws, run=name), unattended=True)
    run(session.run())
    return session


def test_a_rewind_to_the_first_task_takes_back_the_second_tasks_changes(tmp_path):
    ws = git_repo(tmp_path / "ws")
    initial = state_of(ws)
    store = CheckpointStore(tmp_path / "store")
    first = _task(ws, store, "one", "echo one > a.txt")
    second = _task(ws, store, "two", "echo two > b.txt && echo changed > README.md")
    histories = [first.history, second.history]
    facts = RunCheckpoints.of_conversation(histories, 1)
    assert facts.last_seq == second.history[-1].seq
    outcome = rewind_run(store, facts, to=1)
    assert sorted(outcome.plan.remove) == ["a.txt", "b.txt"]
    assert outcome.plan.restore == ["README.md"] and not outcome.plan.left_alone
    assert state_of(ws) == initial
    # Recorded in the latest task; the next rewind's baseline is that rewind's result.
    second.record(rewound_event(facts, outcome, to=1))
    again = RunCheckpoints.of_conversation(histories, 2)
    assert again.baseline() == outcome.after.id
    forward = rewind_run(store, again, to=1)  # task two's turn 1: a.txt back, b.txt not yet
    assert forward.plan.restore == ["a.txt"] and not forward.plan.remove


def test_a_later_tasks_end_supersedes_an_earlier_rewind(tmp_path):
    ws = git_repo(tmp_path / "ws")
    store = CheckpointStore(tmp_path / "store")
    first = _task(ws, store, "one", "echo one > a.txt")
    facts = RunCheckpoints.of_conversation([first.history], 1)
    first.record(rewound_event(facts, rewind_run(store, facts, to=1), to=1))
    second = _task(ws, store, "two", "echo two > b.txt")
    later = RunCheckpoints.of_conversation([first.history, second.history], 1)
    assert later.rewinds == [] and later.baseline() == later.end.checkpoint
    outcome = rewind_run(store, later, to=1, dry_run=True)
    assert outcome.plan.remove == ["b.txt"] and not outcome.plan.left_alone
