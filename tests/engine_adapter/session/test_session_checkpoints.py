"""The Session's checkpoints: one per `turn_start`, journaled before that turn's first tool
runs (the built-in engine, a user engine that never awaits), one at the run's end before
`agent_end`, taken off the loop, and a failure journaled rather than raised."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, plain_folder, shell_turn, tree_hash

from engine_adapter import (
    JsonlEventJournal,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnStart,
    read_journal,
)
from engine_adapter.checkpoints import Checkpointer, CheckpointStore
from engine_adapter.engines.builtin import demo_runner, demo_task, make_workspace


def _session(runner, ws: Path, store: Path, journal: Path | None = None, **kw) -> Session:
    checkpoints = Checkpointer(CheckpointStore(store), ws, run="run")
    return Session(runner, TaskState(task="t"), checkpoints=checkpoints, unattended=True,
                   journal=JsonlEventJournal(journal) if journal else None, **kw)


def _order_holds(types: list[str]) -> None:
    """Every turn_start is followed by its checkpoint before anything that runs."""
    for i, kind in enumerate(types):
        if kind == "turn_start":
            rest = types[i + 1:]
            assert rest[0] == "checkpoint_taken", types
    assert types[-2:] == ["checkpoint_taken", "agent_end"], types


def test_a_user_engine_running_shell_commands_gets_a_checkpoint_before_each(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    git_before = tree_hash(ws / ".git")
    runner = StepRunner(
        shell_turn(1, "echo one > made.txt && echo x > README.md"),
        shell_turn(2, "rm made.txt && mkdir out && echo y > out/y.txt && echo z > x.log"),
        cwd=str(ws))
    session = _session(runner, ws, tmp_path / "store", tmp_path / "run.jsonl")
    run(session.run())
    events = list(read_journal(tmp_path / "run.jsonl"))
    types = [e.type for e in events]
    _order_holds(types)
    taken = [e for e in events if e.type == "checkpoint_taken"]
    assert [(e.turn, e.kind, e.error) for e in taken] == [
        (1, "turn", None), (2, "turn", None), (None, "end", None)]
    store = CheckpointStore(tmp_path / "store")
    first, second, end = (store.entries(store.read_manifest(e.checkpoint)) for e in taken)
    assert "made.txt" not in first and "made.txt" in second and "made.txt" not in end
    assert "out/y.txt" in end and "x.log" not in end  # ignored by .gitignore
    assert (taken[1].added, taken[1].modified) == (1, 1)
    assert tree_hash(ws / ".git") == git_before


def test_an_engine_that_never_awaits_still_checkpoints_before_its_tool(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")

    async def eager(r: StepRunner) -> None:
        r.emit(TurnStart(turn=1))
        r.emit(ToolStart(call_id="c", tool="write", tool_input={"path": "a.txt"}))
        (ws / "a.txt").write_text("written at once, with no await in between")
        r.emit(ToolEnd(call_id="c", tool="write", ok=True))

    session = _session(StepRunner(eager, cwd=str(ws)), ws, tmp_path / "store")
    run(session.run())
    _order_holds([e.type for e in session.history])
    (turn, _end) = [e for e in session.history if e.type == "checkpoint_taken"]
    store = CheckpointStore(tmp_path / "store")
    assert "a.txt" not in store.entries(store.read_manifest(turn.checkpoint))


def test_the_built_in_demo_checkpoints_every_turn_at_speed_0(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    session = Session(demo_runner(ws, speed=0), TaskState(task=demo_task()), unattended=True,
                      auto_approve=True, escalation_policy="approve",
                      amendment_policy="approve",
                      checkpoints=Checkpointer(CheckpointStore(tmp_path / "store"), ws,
                                               run="demo"))
    run(session.run())
    types = [e.type for e in session.history]
    _order_holds(types)
    assert types.count("checkpoint_taken") == types.count("turn_start") + 1
    assert session.history[-1].status == "completed"


def test_an_engine_that_forgets_agent_end_or_raises_still_gets_its_end_checkpoint(
        tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")

    async def boom(r: StepRunner) -> None:
        r.emit(TurnStart(turn=1))
        raise RuntimeError("engine bug")

    for runner in (StepRunner(shell_turn(1, "true"), end=False, cwd=str(ws)),
                   StepRunner(boom, cwd=str(ws))):
        session = _session(runner, ws, tmp_path / "store")
        run(session.run())
        types = [e.type for e in session.history]
        _order_holds(types)


def test_a_checkpoint_that_cannot_be_taken_is_journaled_and_the_run_goes_on(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")

    async def gone(r: StepRunner) -> None:
        shutil.rmtree(ws)
        r.emit(TurnStart(turn=1))
        r.emit(ToolStart(call_id="c", tool="t", tool_input={}))
        r.emit(ToolEnd(call_id="c", tool="t", ok=True))

    session = _session(StepRunner(gone, cwd=str(ws)), ws, tmp_path / "store")
    run(session.run())
    taken = [e for e in session.history if e.type == "checkpoint_taken"]
    assert taken and all(e.checkpoint is None and "no checkpoint taken" in e.error
                         for e in taken)
    assert session.history[-1].status == "completed"


def test_without_checkpoints_the_session_is_as_it_was(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    session = Session(StepRunner(shell_turn(1, "true"), cwd=str(ws)), TaskState(task="t"),
                      unattended=True)
    run(session.run())
    assert "checkpoint_taken" not in [e.type for e in session.history]


def test_the_checkpoint_is_taken_off_the_event_loop(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    threads: list[str] = []
    store = CheckpointStore(tmp_path / "store")
    checkpoints = Checkpointer(store, ws, run="run")
    original = checkpoints.snapshotter.take

    def spy(**kw):
        import threading
        threads.append(threading.current_thread().name)
        return original(**kw)

    checkpoints.snapshotter.take = spy  # type: ignore[method-assign]  # a spy, same behaviour
    session = Session(StepRunner(shell_turn(1, "true"), cwd=str(ws)), TaskState(task="t"),
                      unattended=True, checkpoints=checkpoints)
    run(session.run())
    assert threads and all(name.startswith("cockpit-checkpoint") for name in threads)
