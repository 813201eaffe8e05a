"""A grant for a look-alike says so where grants are reviewed: the saved grant's note names the
odd characters of its tool and prefix (`gіt`, `shеll`), and a plain one says nothing more."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run, until
from support.steps import StepRunner

from engine_adapter import Session, TaskState
from engine_adapter.grants import GrantStore


def _saved(tmp_path, tool: str, command: str):
    work = tmp_path / "work"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)

    async def ask(r: StepRunner) -> None:
        await r.ask("c1", tool, {"command": command})

    session = Session(StepRunner(ask), TaskState(task="t", cwd=str(work)), grant_store=store)

    async def main() -> None:
        task = asyncio.ensure_future(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("c1", allow=True, remember=True, scope="project")
        await task

    run(main())
    return GrantStore(tmp_path / "cfg", project=work).grants()


@pytest.mark.parametrize(("tool", "named"), [
    ("shеll", "shеll (е is Cyrillic U+0435)"),  # a Cyrillic е
    ("ѕhell", "ѕhell (ѕ is Cyrillic U+0455)"),
    ("ｓhell", "ｓ is full-width U+FF53"),
    ("mcp__gіthub__push", "mcp__gіthub__push (і is Cyrillic U+0456)"),
])
def test_a_saved_grant_for_a_look_alike_tool_says_so(tmp_path, tool, named) -> None:
    (saved,) = _saved(tmp_path, tool, "git status")
    assert saved.tool == tool and saved.prefix == "git status"
    assert saved.note.startswith("allowed from the approval bar")
    assert "⚠ look-alike or hidden characters: " in saved.note and named in saved.note


def test_a_tool_with_an_invisible_character_is_never_saved(tmp_path) -> None:
    """(The grant store refuses it: the grant is kept for the session, and the bar said so.)"""
    assert _saved(tmp_path, "sh\u200dell", "git status") == []


def test_a_plain_grant_says_nothing_more(tmp_path) -> None:
    (saved,) = _saved(tmp_path, "shell", "git status")
    assert "look-alike" not in saved.note
