"""The built-in agent loop, end to end through a Session: tiers, phases, the verification plan,
malformed decisions, and how each path ends."""

from __future__ import annotations

import asyncio
import sys

import pytest
from support.builtin_runs import end, of_type, run_steps, runner, tool_ends
from support.event_loop import run

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin import BuiltinRunner, RawDecision, TextDelta, Usage

PY = sys.executable
SWITCH = {"tool": "switch_to_editing", "input": {"reason": "the fix needs an edit"}}
PASSING = {"name": "passes", "command": "true"}
DECLARE = {"tool": "declare_verification", "input": {"checks": [PASSING]}}


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path


def edit(old: str = "two", new: str = "2") -> dict:
    return {"tool": "edit", "input": {"path": "a.txt", "old": old, "new": new}}


def types(session) -> list[str]:
    return [e.type for e in session.history]


# -- tiers and phases ----------------------------------------------------------------------------

def test_read_only_tools_run_without_asking(ws) -> None:
    session = run_steps(ws, [{"tool": "read_file", "input": {"path": "a.txt"}},
                             {"tool": "list_dir", "input": {}},
                             {"tool": "search", "input": {"pattern": "tw"}},
                             {"finish": "looked"}])
    assert not of_type(session, "approval_requested")
    starts = of_type(session, "tool_start")
    assert [s.tier for s in starts] == [1, 1, 1]
    read, listing, found = tool_ends(session)
    assert read.output == "one\ntwo\n" and "a.txt" in listing.output
    assert found.output == "a.txt:2: two"
    assert end(session).status == "completed" and end(session).result == "looked"


def test_an_edit_before_switching_is_refused(ws) -> None:
    session = run_steps(ws, [edit(), {"finish": "gave up", "success": False}])
    (refused,) = tool_ends(session)
    assert not refused.ok and "edit phase" in refused.error
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    assert end(session).status == "failed" and end(session).error == "gave up"


def test_switching_escalates_then_changes_phase(ws) -> None:
    session = run_steps(ws, [SWITCH, {"finish": "ok"}], auto_approve=True)
    kinds = types(session)
    escalated = kinds.index("task_escalated")
    assert kinds[escalated + 1] == "phase_changed"
    (event,) = of_type(session, "task_escalated")
    assert event.reason == "the fix needs an edit" and event.target == "edit"
    phases = [(e.previous, e.phase) for e in of_type(session, "phase_changed")]
    assert phases == [(None, "investigate"), ("investigate", "edit")]


def test_a_denied_switch_keeps_investigating(ws) -> None:
    session = run_steps(ws, [SWITCH, {"finish": "x"}])  # unattended: denied; scenario gives up
    assert not of_type(session, "task_escalated")
    assert [e.phase for e in of_type(session, "phase_changed")] == ["investigate"]
    assert end(session).status == "failed"


def test_an_edit_needs_a_declared_plan_first(ws) -> None:
    session = run_steps(ws, [SWITCH, edit(), DECLARE, edit(), {"finish": "fixed"}],
                        auto_approve=True)
    (required,) = of_type(session, "declaration_required")
    assert required.turn == 2 and "verification plan" in required.reason
    edits = [e for e in of_type(session, "tool_start") if e.tool == "edit"]
    assert len(edits) == 1  # the early one never started
    assert edits[0].tier == 2
    assert edits[0].tool_input["diff"].splitlines()[-2:] == ["-two", "+2"]
    assert (ws / "a.txt").read_text() == "one\n2\n"
    assert end(session).status == "completed"


def test_write_file_shows_a_diff_and_creates_the_file(ws) -> None:
    write = {"tool": "write_file", "input": {"path": "new/b.txt", "content": "hi\n"}}
    session = run_steps(ws, [SWITCH, DECLARE, write, {"finish": "ok"}], auto_approve=True)
    (start,) = [e for e in of_type(session, "tool_start") if e.tool == "write_file"]
    assert "+hi" in start.tool_input["diff"]
    assert (ws / "new" / "b.txt").read_text() == "hi\n"


def test_an_edit_whose_text_is_not_unique_fails_cleanly(ws) -> None:
    session = run_steps(ws, [SWITCH, DECLARE, edit(old="o"), {"finish": "ok"}],
                        auto_approve=True)
    failed = [e for e in tool_ends(session) if e.tool == "edit"]
    assert len(failed) == 1 and not failed[0].ok and "found 2 times" in failed[0].error


# -- asks ----------------------------------------------------------------------------------------

def test_approval_ids_are_the_call_ids(ws) -> None:
    session = run_steps(ws, [{"tool": "shell", "input": {"command": "ls"}}, SWITCH, DECLARE,
                             {"finish": "ok"}], auto_approve=True)
    asked = [e.approval_id for e in of_type(session, "approval_requested")]
    started = [e.call_id for e in of_type(session, "tool_start")]
    assert len(asked) == 3 and asked == started
    assert len(set(asked)) == 3


def test_a_destructive_command_asks_every_time_and_is_never_granted(ws) -> None:
    async def main() -> Session:
        rm = {"tool": "shell", "input": {"command": "rm -rf gone"},
              "on_denied": {"then": "next"}}
        session = Session(runner(ws, [rm, rm, {"finish": "ok"}]), TaskState(task="t"))

        async def human() -> None:
            async for event in session.events():
                if event.type == "approval_requested":
                    session.resolve_approval(event.approval_id, allow=True, remember=True)

        watcher = asyncio.create_task(human())
        await asyncio.wait_for(session.run(), 30)
        await watcher
        return session

    session = run(main())
    asked = of_type(session, "approval_requested")
    assert [e.tier for e in asked] == [4, 4]
    assert not session.grants
    assert [e.via for e in of_type(session, "approval_resolved")] == ["human", "human"]


def test_model_usage_once_per_model_call(ws) -> None:
    session = run_steps(ws, [{"tool": "list_dir", "input": {}}, {"raw": "nonsense"},
                             {"finish": "ok"}])
    assert len(of_type(session, "model_usage")) == len(of_type(session, "turn_start")) == 3


# -- the verification plan -----------------------------------------------------------------------

def test_the_plan_is_frozen_and_verified_for_real(ws) -> None:
    (ws / "answer.py").write_text("print(42)\n")  # a script: inline code (-c) is tier 4
    checks = [{"id": "t", "name": "tests", "command": f"{PY} answer.py"},
              {"name": "lint", "command": "true"}]
    steps = [{"tool": "declare_verification", "input": {"checks": checks}},
             {"tool": "declare_verification", "input": {"checks": [PASSING]}},
             {"finish": "verified"}]
    session = run_steps(ws, steps, auto_approve=True)
    (frozen,) = of_type(session, "verification_plan_frozen")
    assert [(c.id, c.name) for c in frozen.checks] == [("t", "tests"), ("lint", "lint")]
    second = tool_ends(session)[1]
    assert not second.ok and "frozen" in second.error
    ends = of_type(session, "verification_end")
    assert [(e.check_id, e.passed) for e in ends] == [("t", True), ("lint", True)]
    assert ends[0].output.strip() == "42"
    assert of_type(session, "phase_changed")[-1].phase == "verify"
    assert end(session).status == "completed"


def test_a_failing_check_fails_the_run_with_the_reason(ws) -> None:
    checks = [PASSING, {"name": "broken", "command": "exit 3"}]
    session = run_steps(ws, [{"tool": "declare_verification", "input": {"checks": checks}},
                             {"finish": "done"}], auto_approve=True)
    assert [e.passed for e in of_type(session, "verification_end")] == [True, False]
    assert end(session).status == "failed"
    assert end(session).error == "verification failed: broken (exit 3)"


def test_a_destructive_check_is_refused(ws) -> None:
    bad = {"tool": "declare_verification",
           "input": {"checks": [{"name": "clean", "command": "rm -rf ."}]}}
    session = run_steps(ws, [bad, {"finish": "no", "success": False}], auto_approve=True)
    (refused,) = tool_ends(session)
    assert not refused.ok and "may not be destructive" in refused.error
    assert not of_type(session, "approval_requested")


def test_altering_the_plan_needs_approval(ws) -> None:
    alter = {"tool": "alter_verification",
             "input": {"reason": "one more", "add": [{"name": "more", "command": "true"}],
                       "remove": ["passes"]},
             "on_denied": {"then": "next"}}
    approved = run_steps(ws, [DECLARE, alter, {"finish": "ok"}], auto_approve=True)
    plans = of_type(approved, "verification_plan_frozen")
    assert [[c.id for c in p.checks] for p in plans] == [["passes"], ["more"]]
    assert [e.check_id for e in of_type(approved, "verification_start")] == ["more"]

    # Unattended without --auto-approve the amendment is denied (and a declaration too).
    denied = run_steps(ws, [DECLARE, alter, {"finish": "ok"}], amendment_policy="approve")
    assert not of_type(denied, "verification_plan_frozen")
    resolved = of_type(denied, "approval_resolved")
    assert [(e.tool, e.allowed) for e in resolved] == [("declare_verification", False)]


def test_altering_checks_it_does_not_know_is_refused(ws) -> None:
    alter = {"tool": "alter_verification", "input": {"reason": "x", "remove": ["nope"]}}
    session = run_steps(ws, [DECLARE, alter, {"finish": "ok"}], auto_approve=True)
    refused = tool_ends(session)[-1]
    assert not refused.ok and "nope" in refused.error
    assert len(of_type(session, "verification_plan_frozen")) == 1


# -- decisions -----------------------------------------------------------------------------------

def test_one_malformed_decision_is_recovered_from(ws) -> None:
    session = run_steps(ws, [{"raw": '{"action": "tool", "tool": "read_file"'},
                             {"tool": "read_file", "input": {"path": "a.txt"}},
                             {"finish": "ok"}])
    (error,) = of_type(session, "decision_error")
    assert error.turn == 1 and "not valid JSON" in error.error
    assert error.raw == '{"action": "tool", "tool": "read_file"'
    assert end(session).status == "completed"


@pytest.mark.parametrize(("raw", "message"), [
    ('{"action": "tool", "tool": "read_fle", "input": {}}', "unknown tool 'read_fle'"),
    ('{"action": "tool", "tool": "read_file", "input": {}}', "read_file needs 'path'"),
    ('{"action": "tool", "tool": "read_file", "input": {"path": 3}}', "must be a string"),
    ('{"action": "tool", "tool": "list_dir", "input": {"x": 1}}', "list_dir takes no 'x'"),
    ('{"action": "dance"}', "'action' must be"),
    ('{"action": "finish"}', "needs a 'result'"),
    ("[1, 2]", "must be a JSON object"),
])
def test_malformed_decisions_say_what_is_wrong(ws, raw, message) -> None:
    session = run_steps(ws, [{"raw": raw}, {"finish": "ok"}])
    (error,) = of_type(session, "decision_error")
    assert message in error.error


def test_repeated_malformed_decisions_fail_the_run(ws) -> None:
    session = run_steps(ws, [{"raw": "a"}, {"raw": "b"}, {"raw": "c"}, {"finish": "never"}])
    assert len(of_type(session, "decision_error")) == 3
    assert end(session).status == "failed"
    assert "3 malformed decisions" in end(session).error


class OddModel:
    """A model that misbehaves in a chosen way."""

    name = "odd"

    def __init__(self, how: str) -> None:
        self.how = how
        self.calls = 0

    async def respond(self, request):
        self.calls += 1
        yield TextDelta("hmm")
        yield Usage(10, 2)
        if self.how == "raise":
            raise ConnectionError("the network is down")
        if self.how == "two" and self.calls == 1:
            yield RawDecision({"action": "finish", "result": "a"})
            yield RawDecision({"action": "finish", "result": "b"})
        elif self.how == "none" and self.calls == 1:
            return
        else:
            yield RawDecision({"action": "finish", "result": "done"})


@pytest.mark.parametrize(("how", "status", "detail"), [
    ("raise", "failed", "the model failed: ConnectionError: the network is down"),
    ("two", "completed", "one decision a turn"),
    ("none", "completed", "without a decision"),
])
def test_models_that_misbehave(ws, how, status, detail) -> None:
    session = Session(BuiltinRunner(OddModel(how), cwd=ws), TaskState(task="t"))
    state = run(asyncio.wait_for(session.run(), 30))
    assert state.status == status
    errors = [e.error for e in of_type(session, "decision_error")] + [end(session).error or ""]
    assert any(detail in text for text in errors)
    assert of_type(session, "model_usage")[0].input_tokens == 10


def test_too_many_turns_fail_the_run(ws) -> None:
    looking = [{"tool": "list_dir", "input": {}}] * 5
    session = run_steps(ws, looking, engine={"max_turns": 3})
    assert len(of_type(session, "turn_start")) == 3
    assert end(session).status == "failed" and "3 turns" in end(session).error


def test_cancel_while_the_model_streams(ws) -> None:
    async def main() -> Session:
        slow = {"name": "slow", "step": [{"say": "word " * 200, "finish": "x"}],
                "pacing": {"think": 0, "chunk_delay": 0.01, "chunk_words": 1}}
        from engine_adapter.engines.builtin import ScriptedModel, load_scenario

        model = ScriptedModel(load_scenario(slow))
        session = Session(BuiltinRunner(model, cwd=ws), TaskState(task="t"))
        task = asyncio.create_task(session.run())
        while not of_type(session, "model_update"):
            await asyncio.sleep(0.01)
        session.cancel("enough")
        await asyncio.wait_for(task, 10)
        return session

    session = run(main())
    assert of_type(session, "turn_end")[-1].stop_reason == "cancelled"
    assert of_type(session, "cancellation_observed")[0].reason == "enough"
    assert end(session).status == "cancelled"
    assert len(of_type(session, "model_update")) < 200
