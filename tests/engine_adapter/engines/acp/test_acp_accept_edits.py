"""Accept edits for an ACP agent's client-side writes (issue 27 §3), with the test ACP agent (a
real process speaking ACP) through a real Session and journal.

In accept-edits and auto, an `fs/write_text_file` that is a plain edit inside the workspace runs
without asking, journaled with its diff and resolved `via="mode"`; ask mode asks for it and plan
mode denies it. Everything that is more than a plain edit still asks or is refused, in
accept-edits too: each attack below is tried there. A file a permission request named this turn
is the human's call: the write runs on the permit for exactly the content shown, or asks.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive

from engine_adapter import Session
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.client.files import MAX_FILE_BYTES
from engine_adapter.sandbox import SandboxSettings


class _Agent:
    """One test agent for the module, each task a fresh Session and journal."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.workspace = base / "ws"
        self.workspace.mkdir()
        self.outside = base / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("outside\n")
        self.loop = asyncio.new_event_loop()
        self.runner = AcpRunner(agent_argv(), cwd=self.workspace,
                                sandbox=SandboxSettings(mode="off"))
        self.count = 0

    def run(self, task: str, answer: Any = None, **session: Any) -> tuple[str, list[Any]]:
        self.count += 1
        journal = self.base / f"task-{self.count}.jsonl"
        _state, events = self.loop.run_until_complete(asyncio.wait_for(
            drive(self.runner, task, journal, answer=answer or approve(False), **session), 120))
        assert events[-1].type == "agent_end", events[-1]
        return events[-1].result or "", events


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Any:
    shared = _Agent(tmp_path_factory.mktemp("acp-accept-edits"))
    yield shared
    shared.loop.run_until_complete(shared.runner.close())
    shared.loop.close()


def of(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


# -- each mode -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "label"), [("accept-edits", "accept edits"), ("auto", "auto")])
def test_a_plain_edit_runs_unasked_and_the_journal_says_the_mode_ran_it(agent: _Agent, mode: str,
                                                                        label: str) -> None:
    target = agent.workspace / f"plain-{mode}.txt"
    target.write_text("before\n")
    reply, events = agent.run(f"write {target.name}", mode=mode)
    assert reply == "write ok" and target.read_text() == "written\n"
    assert not of(events, "approval_requested")
    (ran,) = of(events, "approval_resolved")
    assert ran.allowed and ran.via == "mode" and ran.tool == "edit" and ran.tier == 2
    assert ran.rule == f"{label} mode: an edit inside the workspace"
    assert "-before" in ran.tool_input["diff"] and "+written" in ran.tool_input["diff"]
    (start,) = [e for e in of(events, "tool_start") if e.tool == "edit"]
    assert start.tier == 2 and start.tool_input == ran.tool_input
    assert [e.ok for e in of(events, "tool_end")] == [True]


def test_ask_mode_asks_for_the_plain_edit_with_its_diff(agent: _Agent) -> None:
    target = agent.workspace / "plain-ask.txt"
    reply, events = agent.run(f"write {target.name}", mode="ask")
    assert reply.startswith("write error: the cockpit denied this") and not target.exists()
    (asked,) = of(events, "approval_requested")
    assert asked.tool == "edit" and asked.tier == 2 and "+written" in asked.tool_input["diff"]
    reply, _ = agent.run(f"write {target.name}", answer=approve(), mode="ask")
    assert reply == "write ok" and target.read_text() == "written\n"


def test_plan_mode_denies_the_plain_edit(agent: _Agent) -> None:
    target = agent.workspace / "plain-plan.txt"
    reply, events = agent.run(f"write {target.name}", mode="plan")
    assert "write error" in reply and "plan mode" in reply and not target.exists()
    assert not of(events, "approval_requested")
    (denied,) = of(events, "approval_resolved")
    assert not denied.allowed and denied.via == "mode"


def test_unattended_accept_edits_runs_the_plain_edit_as_the_built_in_does(agent: _Agent) -> None:
    target = agent.workspace / "plain-unattended.txt"
    reply, events = agent.run(f"write {target.name}", unattended=True)
    assert reply == "write ok" and target.read_text() == "written\n"
    assert [e.via for e in of(events, "approval_resolved")] == ["mode"]


# -- what is more than a plain edit: asked or refused, in accept-edits too -----------------------

@pytest.mark.parametrize("path", [
    ".git/config", ".git/hooks/pre-commit", ".envrc", ".bashrc", ".husky/pre-commit",
    ".Git/config", ".GIT/config", ".git./config", ".g\u200cit/config", "sub/.git/config",
    "./.git/../.git/config"])
@pytest.mark.parametrize("mode", ["accept-edits", "auto"])
def test_a_file_that_runs_later_still_asks_at_tier_4(agent: _Agent, path: str, mode: str) -> None:
    target = agent.workspace / path
    before = target.read_bytes() if target.is_file() else None
    reply, events = agent.run(f"write {path}", mode=mode)
    (asked,) = of(events, "approval_requested")
    assert asked.tool == "edit" and asked.tier == 4
    assert reply.startswith("write error: the cockpit denied this")
    assert (target.read_bytes() if target.is_file() else None) == before
    assert not [e for e in of(events, "approval_resolved") if e.via == "mode"]


def test_a_path_outside_the_workspace_is_refused(agent: _Agent) -> None:
    (agent.workspace / "link-out").symlink_to(agent.outside)
    for path in ["../outside/secret.txt", str(agent.outside / "secret.txt"),
                 "link-out/secret.txt", "link-out/new.txt", "../escape.txt"]:
        reply, events = agent.run(f"write {path}")
        assert reply.startswith("write error:") and "outside the workspace" in reply, path
        assert not of(events, "approval_resolved") and not of(events, "approval_requested")
    assert (agent.outside / "secret.txt").read_text() == "outside\n"
    assert sorted(os.listdir(agent.outside)) == ["secret.txt"]
    assert not (agent.base / "escape.txt").exists()


def test_a_hard_link_to_an_outside_file_is_refused(agent: _Agent) -> None:
    os.link(agent.outside / "secret.txt", agent.workspace / "hard.txt")
    reply, events = agent.run("write hard.txt")
    assert reply.startswith("write error:") and "hard link" in reply
    assert not of(events, "approval_resolved")
    assert (agent.outside / "secret.txt").read_text() == "outside\n"


def test_content_over_the_size_cap_is_refused(agent: _Agent) -> None:
    lines = MAX_FILE_BYTES // len("line 9999999\n") + 100_000  # "line N\n" each: over the cap
    reply, events = agent.run(f"write huge.txt {lines}")
    assert reply.startswith("write error:") and "over 16 MB" in reply
    assert not of(events, "approval_resolved") and not (agent.workspace / "huge.txt").exists()


# -- a permission for the edit, then its write ---------------------------------------------------

def _answers(*allow: bool) -> Any:
    given = iter(allow)

    def answer(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=next(given))
    return answer


def test_a_permitted_edit_is_asked_once_and_written_as_shown(agent: _Agent) -> None:
    target = agent.workspace / "permitted.txt"
    target.write_text("before\n")
    reply, events = agent.run("permit edit permitted.txt diff", answer=_answers(True))
    assert [e.tool for e in of(events, "approval_requested")] == ["edit"]  # no second prompt
    assert "write ok" in reply and target.read_text() == "via permit\n"
    (start,) = [e for e in of(events, "tool_start") if e.source == "client"]
    assert start.permitted_by == "agent permission"


def test_other_content_than_the_permission_showed_asks(agent: _Agent) -> None:
    target = agent.workspace / "other.txt"
    target.write_text("before\n")
    reply, events = agent.run("permit edit other.txt other", answer=_answers(True, False))
    _permission, write = of(events, "approval_requested")
    assert write.tier == 3 and "other content than it showed" in write.reason
    assert "write error: the cockpit denied this" in reply
    assert target.read_text() == "before\n"


def test_a_denied_edit_permission_is_not_written_unasked(agent: _Agent) -> None:
    target = agent.workspace / "refused.txt"
    target.write_text("before\n")
    reply, events = agent.run("permit edit refused.txt diff", answer=_answers(False, False))
    assert "write error: the cockpit denied this" in reply
    assert len(of(events, "approval_requested")) == 2  # the write asks again: the human's call
    assert not [e for e in of(events, "approval_resolved") if e.via == "mode"]
    assert target.read_text() == "before\n"


def test_a_100_mb_write_ends_the_run_and_writes_nothing(tmp_path: Path) -> None:
    """Over the transport's 64 MB message cap: the message itself is refused, never read whole
    (its own agent: the connection does not survive it)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runner = AcpRunner(agent_argv(), cwd=workspace, sandbox=SandboxSettings(mode="off"))

    async def main() -> tuple[Any, list[Any]]:
        try:
            return await asyncio.wait_for(drive(runner, "write huge.txt 8000000",
                                                tmp_path / "j.jsonl", answer=approve()), 120)
        finally:
            await runner.close()
    state, events = asyncio.run(main())  # 8,000,000 numbered lines: over 100 MB
    assert state.status == "failed" and "a line longer than" in (state.error or "")
    assert not of(events, "approval_resolved") and not (workspace / "huge.txt").exists()
