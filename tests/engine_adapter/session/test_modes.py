"""The cockpit's permission modes through a real Session and the built-in engine (scripted
model, real tools, the real sandbox where one is active): what asks, what runs unasked, what is
refused, and how a change is journaled."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.builtin_runs import of_type, runner, scenario, tool_ends
from support.sandboxed import needs_sandbox

from engine_adapter import RunFold, Session, TaskState
from engine_adapter.engines.builtin import BuiltinRunner, ScriptedModel, load_scenario
from engine_adapter.engines.builtin.models import ModelRequest
from engine_adapter.events import ModeChanged, mode_label, next_mode, parse_mode
from engine_adapter.sandbox import SandboxSettings
from engine_adapter.shell import ApprovalGrant
from engine_adapter.view import describe

SWITCH = {"tool": "switch_to_editing", "input": {"reason": "the fix needs an edit"}}
DECLARE = {"tool": "declare_verification", "input": {"checks": [
    {"name": "passes", "command": "true"}]}}
EDIT = {"tool": "edit", "input": {"path": "a.txt", "old": "two", "new": "2"}}
SHELL = {"tool": "shell", "input": {"command": "ls"}}
OFF = SandboxSettings(mode="off")
GO_ON = {"on_denied": {"then": "next"}}  # a denied step: the script goes on to the next

Answer = Callable[[Session, Any], None]


class Recording(ScriptedModel):
    """The scripted model, keeping every request it was sent (what the model was told)."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        super().__init__(load_scenario(scenario(steps)), speed=0)
        self.requests: list[ModelRequest] = []

    async def respond(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        async for output in super().respond(request):
            yield output


def recorded(ws: Path, steps: list[dict[str, Any]]) -> tuple[BuiltinRunner, Recording]:
    model = Recording(steps)
    return BuiltinRunner(model, cwd=ws, sandbox=OFF), model


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path


def allow_all(session: Session, event: Any) -> None:
    if event.type == "approval_requested":
        session.resolve_approval(event.approval_id, allow=True)


def attended(ws: Path, steps: list[dict[str, Any]], answer: Answer = allow_all, *,
             engine: dict[str, Any] | None = None, **kwargs: Any) -> Session:
    """Run the steps with a human present: `answer(session, event)` sees every event as it is
    emitted (and resolves the approvals)."""
    session = Session(runner(ws, steps, **(engine or {})), TaskState(task="t"), **kwargs)

    async def main() -> None:
        async def watch() -> None:
            async for event in session.events():
                answer(session, event)
        watcher = asyncio.ensure_future(watch())
        await asyncio.wait_for(session.run(), 30)
        await watcher
    asyncio.run(main())
    return session


def asked(session: Session) -> list[str]:
    return [e.tool for e in of_type(session, "approval_requested")]


def by_mode(session: Session) -> list[Any]:
    return [e for e in of_type(session, "approval_resolved") if e.via == "mode"]


# -- the names -----------------------------------------------------------------------------------

def test_mode_names_parse_in_every_spelling_and_cycle() -> None:
    assert parse_mode("accept_edits") == parse_mode("acceptEdits") == "accept-edits"
    assert parse_mode("PLAN") == "plan" and parse_mode("default") is None
    assert parse_mode("") is None and parse_mode("bypassPermissions") is None
    assert [next_mode(m) for m in ("ask", "accept-edits", "auto", "plan")] == [
        "accept-edits", "auto", "plan", "ask"]
    assert mode_label("accept-edits") == "accept edits"


def test_an_unknown_mode_is_refused_by_the_session(ws: Path) -> None:
    with pytest.raises(ValueError, match="mode must be"):
        Session(runner(ws, [{"finish": "x"}]), TaskState(task="t"), mode="yolo")  # type: ignore[arg-type]


# -- accept edits (the default): edits run, commands ask ---------------------------------------

def test_accept_edits_runs_the_edit_unasked_and_journals_no_mode(ws: Path) -> None:
    session = attended(ws, [SWITCH, DECLARE, EDIT, SHELL, {"finish": "done"}],
                       engine={"sandbox": OFF})
    assert asked(session) == ["switch_to_editing", "declare_verification", "shell"]
    assert (ws / "a.txt").read_text() == "one\n2\n"
    assert not of_type(session, "mode_changed")  # the default is not journaled


# -- ask: every edit and command asks, with its diff; no grant answers ------------------------

def test_ask_mode_asks_for_the_edit_with_its_diff(ws: Path) -> None:
    session = attended(ws, [SWITCH, DECLARE, EDIT, {"finish": "done"}], mode="ask")
    assert asked(session) == ["switch_to_editing", "declare_verification", "edit"]
    (request,) = [e for e in of_type(session, "approval_requested") if e.tool == "edit"]
    assert request.tier == 2 and "-two" in request.tool_input["diff"]
    assert "+2" in request.tool_input["diff"]
    assert (ws / "a.txt").read_text() == "one\n2\n"
    (changed,) = of_type(session, "mode_changed")
    assert (changed.mode, changed.previous, changed.source) == ("ask", None, "start")
    assert session.history[0].type == "agent_start" and session.history[1] is changed


def test_ask_mode_edit_denied_with_a_reason_is_not_written_and_the_model_is_told(
        ws: Path) -> None:
    def answer(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=event.tool != "edit",
                                     reason="keep the word" if event.tool == "edit" else None)
    built, model = recorded(ws, [SWITCH, DECLARE, EDIT, {"finish": "done"}])
    session = Session(built, TaskState(task="t"), mode="ask")

    async def main() -> None:
        async def watch() -> None:
            async for event in session.events():
                answer(session, event)
        watcher = asyncio.ensure_future(watch())
        await session.run()
        await watcher
    asyncio.run(main())
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    (denied,) = [e for e in of_type(session, "approval_resolved") if e.tool == "edit"]
    assert not denied.allowed and denied.reason == "keep the word"
    assert session.denial_reason(denied.approval_id) == "keep the word"
    told = [r for r in model.requests[-1].transcript if getattr(r, "status", "") == "denied"]
    assert told and "keep the word" in (told[-1].error or "")


def test_ask_mode_lets_no_standing_grant_answer(ws: Path) -> None:
    grants = [ApprovalGrant(tool="shell", prefix="ls", tier=3)]
    session = attended(ws, [SHELL, {"finish": "done"}], grants=grants, mode="ask",
                       engine={"sandbox": OFF})
    assert asked(session) == ["shell"]
    same = attended(ws, [SHELL, {"finish": "done"}], grants=grants, engine={"sandbox": OFF})
    assert asked(same) == [] and of_type(same, "approval_resolved")[0].via == "grant"


# -- plan: read-only, refused at the gate, the agent told ---------------------------------------

def test_plan_mode_denies_edits_and_commands_and_reads_run(ws: Path) -> None:
    read = {"tool": "read_file", "input": {"path": "a.txt"}}
    built, model = recorded(ws, [read, {**SHELL, **GO_ON}, {**SWITCH, **GO_ON},
                                 {**DECLARE, **GO_ON}, {"finish": "planned"}])
    session = Session(built, TaskState(task="t"), mode="plan")

    async def main() -> None:
        await session.run()
    asyncio.run(main())
    assert asked(session) == []  # nobody is asked: the mode refuses
    refused = by_mode(session)
    assert [e.tool for e in refused] == ["shell", "switch_to_editing", "declare_verification"]
    assert all(not e.allowed and "plan mode" in (e.rule or "") for e in refused)
    (ended,) = tool_ends(session)  # only the read ran
    assert ended.tool == "read_file" and ended.ok
    assert model.requests[0].mode == "plan"
    told = [r for r in model.requests[-1].transcript if getattr(r, "status", "") == "denied"]
    assert told and "plan mode" in (told[0].error or "")


def test_plan_mode_refuses_an_edit_already_in_the_edit_phase(ws: Path) -> None:
    def plan_after_declaring(session: Session, event: Any) -> None:
        allow_all(session, event)
        if event.type == "verification_plan_frozen":
            session.set_mode("plan")
    session = attended(ws, [SWITCH, DECLARE, EDIT, {"finish": "done"}], plan_after_declaring,
                       engine={"sandbox": OFF})
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    (refused,) = by_mode(session)
    assert refused.tool == "edit" and not refused.allowed
    (changed,) = of_type(session, "mode_changed")
    assert (changed.previous, changed.mode, changed.source) == ("accept-edits", "plan", "human")


# -- auto: what the sandbox contains runs unasked ------------------------------------------------

def test_auto_without_a_sandbox_asks_and_says_so(ws: Path) -> None:
    session = attended(ws, [SHELL, {"finish": "done"}], mode="auto", engine={"sandbox": OFF})
    (request,) = of_type(session, "approval_requested")
    assert "auto mode asks (no sandbox is active" in request.reason
    (changed,) = of_type(session, "mode_changed")
    assert changed.note and "no sandbox" in changed.note
    assert "no sandbox" in describe(changed).line


def test_auto_unattended_widens_nothing(ws: Path) -> None:
    session = Session(runner(ws, [SHELL, {"finish": "done"}]), TaskState(task="t"),
                      mode="auto", unattended=True)
    asyncio.run(session.run())
    (resolved,) = of_type(session, "approval_resolved")
    assert resolved.via == "auto" and not resolved.allowed


@needs_sandbox
def test_auto_with_the_sandbox_runs_contained_commands_unasked_and_tier_4_asks(
        ws: Path) -> None:
    force = {"tool": "shell", "input": {"command": "rm -rf a.txt"}}
    session = attended(ws, [SHELL, {**force, **GO_ON}, {"finish": "done"}],
                       lambda s, e: s.resolve_approval(e.approval_id, allow=False)
                       if e.type == "approval_requested" else None, mode="auto")
    (allowed,) = by_mode(session)
    assert allowed.tool == "shell" and allowed.allowed and "auto" in (allowed.rule or "")
    (request,) = of_type(session, "approval_requested")
    assert request.tier == 4 and "tier 4 always asks" in request.reason
    assert (ws / "a.txt").exists()


def test_a_switch_never_answers_the_approval_already_shown(ws: Path) -> None:
    """Switching to auto while a command waits does not allow it: the human still decides."""
    seen: list[str] = []

    def answer(session: Session, event: Any) -> None:
        if event.type == "approval_requested":
            session.set_mode("auto")
            seen.append(f"pending {len(session.pending_approvals)}")
            session.resolve_approval(event.approval_id, allow=False)
    session = attended(ws, [SHELL, {"finish": "done"}], answer, engine={"sandbox": OFF})
    (resolved,) = of_type(session, "approval_resolved")
    assert resolved.via == "human" and not resolved.allowed
    assert seen == ["pending 1"]


# -- the journal and the fold --------------------------------------------------------------------

def test_the_fold_keeps_the_mode_and_shows_each_change(ws: Path) -> None:
    def toggle(session: Session, event: Any) -> None:
        if event.type == "turn_start" and event.turn == 1:
            session.set_mode("plan")
            session.set_mode("plan")  # the same again: nothing journaled
            session.set_mode("ask")
    session = attended(ws, [{"tool": "list_dir", "input": {}}, {"finish": "done"}], toggle)
    changes = of_type(session, "mode_changed")
    assert [(c.previous, c.mode) for c in changes] == [("accept-edits", "plan"),
                                                       ("plan", "ask")]
    fold = RunFold()
    for event in session.history:
        fold.apply(event)
    assert fold.view.mode == "ask"
    lines = [item.text for item in fold.view.items if getattr(item, "kind", "") == "mode"]
    assert lines == ["◇ permission mode accept edits → plan", "◇ permission mode plan → ask"]
    assert isinstance(changes[0], ModeChanged)


@needs_sandbox
def test_auto_still_asks_to_change_the_frozen_verification_plan(ws: Path) -> None:
    alter = {"tool": "alter_verification", "input": {"add": [
        {"name": "other", "command": "true"}], "reason": "a better check"}}
    session = attended(ws, [SWITCH, DECLARE, {**alter, **GO_ON}, {"finish": "done"}],
                       mode="auto")
    assert [e.tool for e in by_mode(session)] == ["switch_to_editing", "declare_verification"]
    (request,) = of_type(session, "approval_requested")
    assert request.tool == "alter_verification"
    assert "a change to the verification plan always asks" in request.reason


# -- edits offered for review ---------------------------------------------------------------------

def test_a_version_the_human_wrote_never_applies_to_a_later_request_with_the_same_id() -> None:
    """An engine may reuse an approval id: the human's version belongs to the request it was
    written for, and only to one that offered an edit."""
    from support.steps import StepRunner
    seen: list[Any] = []

    async def step(r: StepRunner) -> None:
        r.approval_controller.offer_edit("x", "a.txt", "proposed\n")
        await r.ask("x", "edit", {"path": "a.txt"}, tier=2)
        seen.append(r.approval_controller.edited_content("x"))
        await r.ask("x", "edit", {"path": "a.txt"}, tier=2)  # no offer this time
        seen.append(r.approval_controller.edited_content("x"))

    session = Session(StepRunner(step), TaskState(task="t"), mode="ask")

    def answer(s: Session, event: Any) -> None:
        if event.type == "approval_requested":
            offered = s.edit_proposal(event.approval_id)
            s.resolve_approval(event.approval_id, allow=True,
                               edited="mine\n" if offered else "sneaked\n")

    async def main() -> None:
        async def watch() -> None:
            async for event in session.events():
                answer(session, event)
        watcher = asyncio.ensure_future(watch())
        await session.run()
        await watcher
    asyncio.run(main())
    assert seen == ["mine\n", None]
    first, second = of_type(session, "approval_resolved")
    assert first.edited and not second.edited and second.allowed
