"""`--headless` and checkpoints (issue 27 §2): a checkpoint taken as it should be prints no line
of its own; the run's end sums them up in one indented line (how many, what they stored); one
that failed, or left files over the size cap, still has its line."""

from __future__ import annotations

import io

from support.event_loop import run
from support.rewind_runs import FILES, rewind_factory
from support.workspaces import git_repo

from cockpit.headless import LinePrinter, run_headless
from engine_adapter import AgentEnd, CheckpointTaken, TurnStart


def test_a_real_run_prints_its_checkpoints_once_at_the_end(tmp_path):
    ws = git_repo(tmp_path / "ws", FILES)
    session = rewind_factory(ws, tmp_path / "run.jsonl")("edit the readme")
    out = io.StringIO()
    run(run_headless(session, out=out, color=False))
    lines = out.getvalue().splitlines()
    taken = [e for e in session.history if e.type == "checkpoint_taken"]
    assert len(taken) == 6  # five turns and the run's end
    assert not [line for line in lines if line.startswith("checkpoint")]
    (summary,) = [line for line in lines if "checkpoints of the workspace" in line]
    assert summary.startswith(" " * 10 + "6 checkpoints of the workspace, ")
    assert "stored (`cockpit checkpoints` lists them" in summary
    assert lines.index(summary) > next(i for i, line in enumerate(lines) if line.startswith("end"))


def test_a_failed_checkpoint_keeps_its_line():
    out = io.StringIO()
    printer = LinePrinter(out)
    for event in (TurnStart(turn=1), CheckpointTaken(turn=1, checkpoint="c1", files=3,
                                                     stored_bytes=2048),
                  CheckpointTaken(turn=2, error="no checkpoint taken: the disk is full"),
                  CheckpointTaken(turn=3, checkpoint="c3", large=["big.bin"], large_count=1),
                  AgentEnd(status="completed", result="done")):
        printer.handle(event)
    lines = out.getvalue().splitlines()
    marked = [line for line in lines if line.startswith("checkpoint")]
    assert len(marked) == 2
    assert "the disk is full" in marked[0] and "big.bin" in marked[1]
    assert lines[-1].strip() == ("1 checkpoint of the workspace, 2 KB stored (`cockpit "
                                 "checkpoints` lists them, `cockpit rewind --to N` goes back "
                                 "to a turn)")
