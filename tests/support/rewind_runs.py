"""A demo-like conversation of the built-in engine whose turns edit files, for the rewind key's
tests: the real engine and scripted model, real tools, checkpoints taken at each turn into the
test's own cockpit home, a journal per task (`SessionFactory`, as `cockpit demo` builds it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cockpit.launch import RunOptions, SessionFactory
from engine_adapter.checkpoints import CheckpointSettings
from support.builtin_runs import runner

SWITCH = {"tool": "switch_to_editing", "input": {"reason": "the fix needs an edit"}}
DECLARE = {"tool": "declare_verification",
           "input": {"checks": [{"name": "passes", "command": "true"}]}}
FIRST_TASK = [
    SWITCH,                                                                   # turn 1
    DECLARE,                                                                  # turn 2
    {"tool": "edit", "input": {"path": "README.md", "old": "hello", "new": "hi"}},  # turn 3
    {"tool": "write_file", "input": {"path": "notes.txt", "content": "new\n"}},     # turn 4
    {"finish": "edited"},                                                     # turn 5
]
NEXT_TASK = [{"finish": "nothing more to do"}]
FILES = {"README.md": "hello\n", "src/app.py": "print(1)\n"}


def rewind_factory(workspace: Path, journal: Path) -> SessionFactory:
    """The conversation: its first task plays `FIRST_TASK`, any later one `NEXT_TASK`; calls
    are allowed unattended (tier 3 and below), as `--auto-approve` does."""
    def make_runner(task: str, index: int) -> Any:
        return runner(workspace, FIRST_TASK if index == 1 else NEXT_TASK)

    return SessionFactory(make_runner, cwd=workspace, options=RunOptions(
        journal=journal, unattended=True, auto_approve=True, saved_grants=False,
        checkpoints=CheckpointSettings()))
