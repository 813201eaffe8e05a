"""An ACP agent's `fs/write_text_file` into a file that runs later by itself (issue 24 §B), with
the SDK test agent (tests/fakes/acp_agent) through a real Session and journal: every path of the
table asks at tier 4, `--auto-approve` denies it, an agent's own edit permission for it asks at
tier 4 and covers no write, and a `remember` grants nothing. Ordinary writes are plain edits
(tier 2: ask mode asks, accept-edits runs them)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from support.runs_later import ORDINARY, RUNS_LATER, plant

from engine_adapter.engines.acp import AcpRunner
from engine_adapter.files import runs_later


class _Agent:
    def __init__(self, base: Path) -> None:
        self.workspace = plant(base / "ws")
        self.journals = base
        self.loop = asyncio.new_event_loop()
        self.runner = AcpRunner(agent_argv(), cwd=self.workspace)
        self.count = 0

    def run(self, task: str, answer=None, **session):
        self.count += 1
        journal = self.journals / f"task-{self.count}.jsonl"
        _state, events = self.loop.run_until_complete(asyncio.wait_for(
            drive(self.runner, task, journal, answer=answer, **session), 60))
        assert events[-1].type == "agent_end", events[-1]
        return events[-1].result or "", events


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    shared = _Agent(tmp_path_factory.mktemp("acp-runs-later"))
    yield shared
    shared.loop.run_until_complete(shared.runner.close())
    shared.loop.close()


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _asked(events):
    return [e for e in events if e.type == "approval_requested"]


# The test agent reads its task as words: a path with a space cannot be given to it.
@pytest.mark.parametrize("path", [p for p in RUNS_LATER if " " not in p])
def test_a_write_that_runs_later_asks_at_tier_4_and_auto_approve_denies_it(agent, path):
    target = Path(os.path.realpath(agent.workspace / path))
    before = _digest(target)
    reply, events = agent.run(f"write {path}", unattended=True, auto_approve=True)
    (asked,) = _asked(events)
    assert asked.tool == "edit" and asked.tier == 4, asked.reason
    assert not asked.grantable
    assert runs_later(agent.workspace, path, target) in asked.reason  # says why
    (resolved,) = [e for e in events if e.type == "approval_resolved"]
    assert not resolved.allowed and resolved.via == "auto"
    assert reply.startswith("write error:")
    assert _digest(target) == before


@pytest.mark.parametrize("path", ORDINARY[:6])
def test_ordinary_writes_are_plain_edits(agent, path):
    """Not a file that runs later: a plain edit (tier 2), which ask mode asks about and
    accept-edits runs, the journal saying the mode did."""
    reply, events = agent.run(f"write {path}", unattended=True, auto_approve=True, mode="ask")
    (asked,) = _asked(events)
    assert asked.tier == 2
    assert reply == "write ok"
    reply, events = agent.run(f"write {path}")
    assert not _asked(events) and reply == "write ok"
    (ran,) = [e for e in events if e.type == "approval_resolved"]
    assert ran.allowed and ran.via == "mode" and ran.rule == \
        "accept edits mode: an edit inside the workspace"


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/post-checkout", "tools/hooks/x",
                                  ".envrc", "store/config"])
def test_an_edit_permission_for_it_asks_at_tier_4_and_covers_no_write(agent, path):
    target = Path(os.path.realpath(agent.workspace / path))
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text("keep me\n")
    before = target.read_text()
    allowed = iter([True, False])

    def answer(session, event):
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=next(allowed), remember=True)

    reply, events = agent.run(f"permit edit {path}", answer=answer)
    permission, write = _asked(events)
    assert permission.tier == 4 and write.tier == 4  # the write asked again, at tier 4
    assert "+via permit" in write.tool_input["diff"]
    assert reply.startswith("allow_once; write error:")
    assert target.read_text() == before


def test_with_a_human_yes_it_is_written_and_remember_grants_nothing(agent):
    target = agent.workspace / ".envrc"
    for _ in range(2):
        reply, events = agent.run("write .envrc", answer=approve(remember=True))
        (asked,) = _asked(events)  # asked both times
        assert asked.tier == 4
        assert reply == "write ok"
    assert target.read_text() == "written\n"
