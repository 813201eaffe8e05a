"""The built-in `write_file`/`edit` into a file that runs later by itself (issue 24 §B): the git
dir, hooks, start-up files. Such a write is tier 2 no more: it asks every time (tier 4), is
never auto-approved, never granted (no `[a]`, a standing grant never matches), and writes
nothing when denied; with a human's `y` it is written. Ordinary files still write at once."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest
from support.builtin_runs import end, of_type, run_steps, runner
from support.runs_later import ORDINARY, RUNS_LATER, plant

from engine_adapter import ApprovalGrant, Session, TaskState

SWITCH = {"tool": "switch_to_editing", "input": {"reason": "r"}}
DECLARE = {"tool": "declare_verification", "input": {"checks": [{"name": "ok", "command": "true"}]}}
NEXT = {"then": "next"}


def _snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under `root` (links not followed) and a hash of each file."""
    found = {}
    for folder, dirs, files in os.walk(root):
        found.update({os.path.relpath(os.path.join(folder, d), root): "dir" for d in dirs})
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                found[os.path.relpath(path, root)] = hashlib.sha256(
                    Path(path).read_bytes()).hexdigest()
    return found


@pytest.fixture
def ws(tmp_path):
    return plant(tmp_path / "ws")


def _write(path: str) -> dict:
    return {"tool": "write_file", "input": {"path": path, "content": "[core]\n\tfsmonitor = x\n"},
            "on_denied": NEXT}


def test_writes_that_run_later_ask_at_tier_4_and_auto_approve_denies_them(ws) -> None:
    before = _snapshot(ws)
    grants = [ApprovalGrant(tool="write_file", prefix=p, tier=3) for p in ("write_file", "", ".")]
    session = run_steps(ws, [SWITCH, DECLARE, *map(_write, RUNS_LATER), {"finish": "done"}],
                        auto_approve=True, grants=grants)
    assert end(session).status == "completed"
    asked = [e for e in of_type(session, "approval_requested") if e.tool == "write_file"]
    assert [e.tool_input["path"] for e in asked] == RUNS_LATER
    for event in asked:
        assert event.tier == 4, event.tool_input["path"]
        assert not event.grantable and event.prefix == ""
        assert "diff" in event.tool_input  # the human sees what would change
    resolved = [e for e in of_type(session, "approval_resolved") if e.tool == "write_file"]
    assert [e.allowed for e in resolved] == [False] * len(RUNS_LATER)
    assert all(e.via == "auto" for e in resolved)
    assert _snapshot(ws) == before  # nothing was written, no folder made


def test_ordinary_writes_still_run_at_once(ws) -> None:
    session = run_steps(ws, [SWITCH, DECLARE, *map(_write, ORDINARY), {"finish": "done"}],
                        auto_approve=True)
    assert not [e for e in of_type(session, "approval_requested") if e.tool == "write_file"]
    for path in ORDINARY:
        assert (ws / path).read_text() == "[core]\n\tfsmonitor = x\n", path


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", "tools/hooks/pre-push",
                                  ".envrc", "gitlink/config"])
def test_a_human_may_allow_one_and_an_edit_asks_too(ws, path) -> None:
    target = ws / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("old\n")

    async def main() -> Session:
        edit = {"tool": "edit", "input": {"path": path, "old": "old", "new": "new"},
                "on_denied": NEXT}
        again = {"tool": "edit", "input": {"path": path, "old": "new", "new": "newer"},
                 "on_denied": NEXT}
        session = Session(runner(ws, [SWITCH, DECLARE, edit, again, {"finish": "ok"}]),
                          TaskState(task="t"))
        answers = iter([True, True, True, False])  # switch, plan, the edit once, then no

        async def human() -> None:
            async for event in session.events():
                if event.type == "approval_requested":
                    session.resolve_approval(event.approval_id, allow=next(answers),
                                             remember=True)
        watcher = asyncio.create_task(human())
        await asyncio.wait_for(session.run(), 30)
        await watcher
        return session

    session = asyncio.run(main())
    asked = [e for e in of_type(session, "approval_requested") if e.tool == "edit"]
    assert [e.tier for e in asked] == [4, 4]  # asked again: the `remember` granted nothing
    assert "-old" in asked[0].tool_input["diff"] and "+new" in asked[0].tool_input["diff"]
    assert not any(g.tool == "edit" for g in session.grants)
    assert target.read_text() == "new\n"
