"""The cockpit's permission modes with the test ACP agent (a real process speaking ACP): the
gate enforces each mode on the agent's permission requests, writes and terminals, and the
agent's own mode follows the cockpit's where it offers one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, approve, drive
from support.sandboxed import needs_sandbox

from engine_adapter import Session
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.agent import SessionSetup, Wanted, agent_mode_for
from engine_adapter.events import AgentMode
from engine_adapter.sandbox import SandboxSettings

OFF = SandboxSettings(mode="off")


def _run(tmp_path: Path, task: str, *, answer: Any = None, sandbox: SandboxSettings | None = OFF,
         agent_mode: str | None = None, prepare: Any = None, **session: Any
         ) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "input.txt").write_text("in\n")
    if prepare is not None:
        prepare(workspace)
    log = tmp_path / "agent.jsonl"
    runner = AcpRunner(agent_argv("--log", log), cwd=workspace,
                       setup=SessionSetup(wanted=Wanted(mode=agent_mode)),
                       **({"sandbox": sandbox} if sandbox is not None else {}))

    async def main() -> tuple[Any, list[Any]]:
        try:
            return await asyncio.wait_for(drive(runner, task, tmp_path / "j.jsonl",
                                                answer=answer or approve(), **session), 60)
        finally:
            await runner.close()
    state, events = asyncio.run(main())
    return state, events, agent_log(log)


def of(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


# -- the mapping to an agent's own modes ----------------------------------------------------------

CLAUDE = [AgentMode(id="default", name="Default"), AgentMode(id="acceptEdits",
                                                             name="Accept Edits"),
          AgentMode(id="plan", name="Plan Mode"),
          AgentMode(id="bypassPermissions", name="Bypass Permissions")]


@pytest.mark.parametrize(("mode", "expected"), [
    ("ask", "default"), ("accept-edits", "acceptEdits"), ("auto", "acceptEdits"),
    ("plan", "plan")])
def test_the_cockpit_modes_map_to_claude_agent_acps_by_id(mode: str, expected: str) -> None:
    assert agent_mode_for(mode, CLAUDE) == expected


def test_no_mode_ever_maps_to_one_that_bypasses_the_gate() -> None:
    sly = [AgentMode(id="bypassPermissions", name="accept edits"),
           AgentMode(id="full-access", name="plan"), AgentMode(id="yolo", name="default")]
    assert all(agent_mode_for(mode, sly) is None for mode in ("ask", "accept-edits", "auto",
                                                              "plan"))
    codex = [AgentMode(id="read-only", name="Read Only"), AgentMode(id="auto", name="Auto"),
             AgentMode(id="full-access", name="Full Access")]
    assert agent_mode_for("plan", codex) == "read-only"
    assert agent_mode_for("auto", codex) is None  # codex's auto runs commands unasked


# -- the gate, for every mode --------------------------------------------------------------------

def test_plan_mode_denies_the_agents_write_and_command_and_says_why(tmp_path: Path) -> None:
    state, events, _ = _run(tmp_path, "script " + (
        '[{"write": {"path": "out.txt", "content": "x"}},'
        ' {"ask": {"toolCallId": "t1", "kind": "execute", "title": "ls",'
        ' "rawInput": {"command": "ls"}}, "options": ["allow_once", "reject_once"]}]'),
        mode="plan")
    assert not of(events, "approval_requested")
    refused = [e for e in of(events, "approval_resolved") if e.via == "mode"]
    assert [e.tool for e in refused] == ["edit", "execute"]
    assert all(not e.allowed and "plan mode" in (e.rule or "") for e in refused)
    assert not (tmp_path / "ws" / "out.txt").exists()
    assert "plan mode" in (state.result or "") and "reject_once" in (state.result or "")


def test_plan_mode_still_lets_the_agent_read(tmp_path: Path) -> None:
    state, events, _ = _run(tmp_path, "read input.txt", mode="plan")
    assert state.result == "read ok 3" or (state.result or "").startswith("read ok")
    assert not of(events, "approval_resolved")


def test_ask_mode_asks_for_the_write_and_the_agent_follows_into_its_ask_mode(
        tmp_path: Path) -> None:
    _, events, logged = _run(tmp_path, "write out.txt", mode="ask", agent_mode="code")
    (request,) = of(events, "approval_requested")
    assert request.tool == "edit" and "+written" in request.tool_input["diff"]
    assert (tmp_path / "ws" / "out.txt").read_text() == "written\n"
    # The test agent offers modes `ask` and `code`; started in `code` (the agent's own mode,
    # `--mode code`), the cockpit's ask mode then sets its `ask`.
    assert [e["mode"] for e in logged if e.get("event") == "set_mode"] == ["code", "ask"]
    assert [e.phase for e in of(events, "phase_changed")][-1] == "ask"


def test_accept_edits_leaves_the_agents_own_mode_alone(tmp_path: Path) -> None:
    _, events, logged = _run(tmp_path, "write out.txt", agent_mode="code")
    assert [e["mode"] for e in logged if e.get("event") == "set_mode"] == ["code"]
    assert not of(events, "mode_changed")
    assert not of(events, "approval_requested")  # a plain edit: accept-edits runs it
    assert (tmp_path / "ws" / "out.txt").read_text() == "written\n"


def test_auto_without_a_sandbox_asks_for_a_command_and_says_so(tmp_path: Path) -> None:
    _, events, _ = _run(tmp_path, "script " + (
        '[{"write": {"path": "out.txt", "content": "x"}},'
        ' {"ask": {"toolCallId": "t1", "kind": "execute", "title": "ls",'
        ' "rawInput": {"command": "ls"}}, "options": ["allow_once", "reject_once"]}]'),
        mode="auto", answer=approve(False))
    (request,) = of(events, "approval_requested")  # the edit ran as accept-edits runs it
    assert request.tool == "execute"
    assert "auto mode asks (no sandbox is active" in request.reason
    assert (tmp_path / "ws" / "out.txt").read_text() == "x"
    (changed,) = of(events, "mode_changed")
    assert changed.note and "no sandbox" in changed.note


@needs_sandbox
def test_auto_with_the_sandbox_writes_unasked_and_asks_for_the_agents_own_command(
        tmp_path: Path) -> None:
    _, events, _ = _run(tmp_path, "script " + (
        '[{"write": {"path": "out.txt", "content": "x"}},'
        ' {"ask": {"toolCallId": "t1", "kind": "execute", "title": "ls",'
        ' "rawInput": {"command": "ls"}}, "options": ["allow_once", "reject_once"]}]'),
        mode="auto", sandbox=None, answer=approve(False))
    (allowed,) = [e for e in of(events, "approval_resolved") if e.via == "mode"]
    assert allowed.tool == "edit" and allowed.allowed
    assert (tmp_path / "ws" / "out.txt").read_text() == "x"
    (request,) = of(events, "approval_requested")  # the agent runs it itself, unsandboxed
    assert request.tool == "execute" and "outside the sandbox" in request.reason


def test_a_permission_given_before_plan_mode_does_not_let_the_write_through(
        tmp_path: Path) -> None:
    def allow_then_plan(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=True)
            session.set_mode("plan")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("before\n")
    state, events, _ = _run(tmp_path, "permit edit f.txt diff", answer=allow_then_plan)
    assert (tmp_path / "ws" / "f.txt").read_text() == "before\n"
    assert "write error" in (state.result or "")
    assert [e.tool for e in of(events, "approval_resolved") if e.via == "mode"] == ["edit"]


# -- an edit reviewed: the human's own version of a write ----------------------------------------

def test_an_edited_write_is_what_gets_written_and_the_agent_is_told(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = tmp_path / "agent.jsonl"
    runner = AcpRunner(agent_argv("--log", log), cwd=workspace, sandbox=OFF)
    offered: list[Any] = []

    def mine(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            offered.append(session.edit_proposal(event.approval_id))
            session.resolve_approval(event.approval_id, allow=True, edited="mine\n")

    async def main() -> tuple[list[Any], list[Any]]:
        try:
            _, first = await drive(runner, "write out.txt", tmp_path / "1.jsonl", answer=mine,
                                   mode="ask")
            _, second = await drive(runner, "hello", tmp_path / "2.jsonl")
            return first, second
        finally:
            await runner.close()
    first, second = asyncio.run(main())
    assert offered == [("out.txt", "written\n")]
    assert (workspace / "out.txt").read_text() == "mine\n"
    (resolved,) = of(first, "approval_resolved")
    assert resolved.allowed and resolved.edited
    (ended,) = [e for e in of(first, "tool_end") if e.tool == "edit"]
    assert "the human's own version" in ended.output
    (note,) = of(second, "prompt_note")  # with the next prompt: the test agent takes no steering
    assert "differs from what you proposed" in note.text and "+mine" in note.text
    prompts = [e for e in agent_log(log) if e.get("event") == "prompt"]
    assert "-written" in " ".join(prompts[-1]["blocks"])


def test_an_agent_that_writes_itself_offers_no_edit_review(tmp_path: Path) -> None:
    offered: list[Any] = []

    def look(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            offered.append(session.edit_proposal(event.approval_id))
            session.resolve_approval(event.approval_id, allow=False)
    _, events, _ = _run(tmp_path, "permit edit f.txt diff", answer=look, mode="ask",
                        prepare=lambda ws: (ws / "f.txt").write_text("before\n"))
    assert offered[0] is None  # the permission: the agent makes the change itself
    assert offered[1:] == [("f.txt", "via permit\n")]  # its write through the cockpit: offered
    request = of(events, "approval_requested")[0]
    assert "the agent writes this itself: it cannot be edited before it lands" in request.reason
