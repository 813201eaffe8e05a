"""The Session's behaviours, one test each (the seed's semantics, as CONTRACT fixes them)."""

from __future__ import annotations

import asyncio

import pytest
from support.event_loop import run, until
from support.steps import StepRunner

from engine_adapter import (
    ApprovalGrant,
    JsonlEventJournal,
    ModelUpdate,
    Session,
    SessionState,
    TaskState,
    parse_event,
    read_journal,
)


def types(events) -> list[str]:
    return [e.type for e in events]


def resolved(session: Session) -> list:
    return [e for e in session.history if e.type == "approval_resolved"]


async def say(runner: StepRunner, text: str = "hi") -> None:
    runner.emit(ModelUpdate(text=text, turn=1))


# -- observation plane ---------------------------------------------------------------------------

def test_eager_subscription_sees_agent_start() -> None:
    async def main() -> list[str]:
        session = Session(StepRunner(say), TaskState(task="t"))
        stream = session.events()  # created before run(), never iterated until after it
        await session.run()
        return [e.type async for e in stream]

    assert run(main()) == ["agent_start", "model_update", "agent_end"]


def test_independent_streams_each_end_after_agent_end() -> None:
    async def main() -> tuple[list[str], list[str]]:
        session = Session(StepRunner(say, say), TaskState(task="t"))

        async def collect() -> list[str]:
            return [e.type async for e in session.events()]

        first = asyncio.create_task(collect())
        second = asyncio.create_task(collect())
        await session.run()
        return await first, await second

    a, b = run(main())
    assert a == b == ["agent_start", "model_update", "model_update", "agent_end"]


def test_stream_created_after_run_replays_history_and_ends() -> None:
    async def main() -> list[str]:
        session = Session(StepRunner(say), TaskState(task="t"))
        await session.run()
        return [e.type async for e in session.events()]

    assert run(main()) == ["agent_start", "model_update", "agent_end"]


def test_observer_that_never_reads_cannot_block_the_run() -> None:
    async def main() -> Session:
        steps = [say] * 5_000
        session = Session(StepRunner(*steps), TaskState(task="t"))
        idle = [session.events() for _ in range(10)]  # subscribed, never read
        await session.run()
        assert len(idle) == 10
        return session

    session = run(main())
    assert session.history[-1].type == "agent_end"
    assert len(session.history) == 5_002


def test_slow_and_crashing_observers_cost_only_themselves() -> None:
    async def main() -> tuple[Session, list[str]]:
        session = Session(StepRunner(say, say, say), TaskState(task="t"))

        async def crashing() -> None:
            async for _ in session.events():
                raise RuntimeError("widget bug")

        async def slow() -> list[str]:
            seen = []
            async for event in session.events():
                seen.append(event.type)
                await asyncio.sleep(0)
                await asyncio.sleep(0)
            return seen

        crash = asyncio.create_task(crashing())
        lag = asyncio.create_task(slow())
        state = await session.run()
        with pytest.raises(RuntimeError):
            await crash
        assert state.status == "completed"
        return session, await lag

    session, seen = run(main())
    assert seen == types(session.history)


def test_seq_is_gapless_and_stamped_whatever_the_engine_put_there() -> None:
    async def bogus(runner: StepRunner) -> None:
        runner.emit(ModelUpdate(text="x", seq=99, ts=1.0, session_id="forged"))

    async def main() -> Session:
        session = Session(StepRunner(say, bogus, say), TaskState(task="t"), session_id="s1")
        await session.run()
        return session

    session = run(main())
    assert [e.seq for e in session.history] == list(range(len(session.history)))
    assert {e.session_id for e in session.history} == {"s1"}
    assert all(e.ts > 1.0 for e in session.history)


def test_the_engines_event_is_never_changed_by_the_stamp() -> None:
    """The Session stamps a copy: an engine that keeps its event, or emits it twice, sees it as
    it built it, and history holds two events with their own stamps."""
    kept = ModelUpdate(text="same", turn=1)

    async def twice(runner: StepRunner) -> None:
        runner.emit(kept)
        runner.emit(kept)

    session = Session(StepRunner(twice), TaskState(task="t"), session_id="s1")
    run(session.run())
    assert (kept.session_id, kept.seq, kept.ts) == ("", -1, 0.0)
    first, second = [e for e in session.history if e.type == "model_update"]
    assert (first.seq, second.seq) == (1, 2) and first is not second
    assert first.text == second.text == "same" and first.session_id == "s1"


def test_journal_holds_each_event_before_any_observer_sees_it(journal_path) -> None:
    async def main() -> list[tuple[int, int]]:
        journal = JsonlEventJournal(journal_path)
        session = Session(StepRunner(say, say), TaskState(task="t"), journal=journal)
        checks = []

        async def observe() -> None:
            async for event in session.events():
                on_disk = journal_path.read_bytes().count(b"\n")
                checks.append((event.seq, on_disk))

        task = asyncio.create_task(observe())
        await session.run()
        await task
        return checks

    for seq, lines_on_disk in run(main()):
        assert lines_on_disk >= seq + 1
    assert types(read_journal(journal_path)) == ["agent_start", "model_update", "model_update",
                                                 "agent_end"]


def test_journal_write_comes_before_history_on_the_fast_path(journal_path, monkeypatch) -> None:
    """Write-ahead, on the Session's own journal (the path that hands it the serialised line):
    when the bytes reach the file, the event is not yet in `history` (so no observer, which reads
    history, can have seen it)."""
    import engine_adapter.journal.jsonl as journal_module

    session: Session | None = None
    seen: list[tuple[int, int]] = []  # (seq in the line written, history length at that moment)
    real_write = journal_module.os.write

    def spy(fd: int, data: bytes) -> int:
        if session is not None and data.startswith(b'{"type"'):
            seen.append((parse_event(data).seq, len(session.history)))
        return real_write(fd, data)

    monkeypatch.setattr(journal_module.os, "write", spy)
    session = Session(StepRunner(say, say), TaskState(task="t"),
                      journal=JsonlEventJournal(journal_path))
    run(session.run())
    assert [seq for seq, _ in seen] == list(range(len(session.history)))
    assert all(length == seq for seq, length in seen), seen


def test_journal_write_comes_before_history_for_a_callers_journal() -> None:
    """The same order for any object with `write(event)`: the event it is handed is stamped and
    absent from `history`, and every event that reaches history was written first."""
    session: Session | None = None
    written: list[int] = []

    class Checking:
        def write(self, event) -> None:
            assert session is not None
            assert len(session.history) == event.seq  # not appended yet
            assert all(e.seq != event.seq for e in session.history)
            written.append(event.seq)

        def close(self) -> None:
            pass

    session = Session(StepRunner(say, say), TaskState(task="t"), journal=Checking())
    state = run(session.run())
    assert session.journal_error is None and state.status == "completed"
    assert written == [e.seq for e in session.history]


def test_a_journal_subclass_that_overrides_write_gets_every_event(journal_path) -> None:
    """CONTRACT documents `journal.write(event)`: a subclass overriding it with that signature
    is called with it (never with the Session's private `line=`), and the run succeeds."""
    class Counting(JsonlEventJournal):
        def __init__(self, path) -> None:
            super().__init__(path)
            self.types: list[str] = []

        def write(self, event) -> None:  # the documented signature, nothing more
            self.types.append(event.type)
            super().write(event)

    journal = Counting(journal_path)
    session = Session(StepRunner(say, say), TaskState(task="t"), journal=journal)
    state = run(session.run())
    assert session.journal_error is None and state.status == "completed"
    assert journal.types == types(session.history)
    assert types(read_journal(journal_path)) == journal.types


def test_a_journal_subclass_that_redacts_is_what_reaches_the_file(journal_path) -> None:
    """An override that changes what is written is honoured: the Session must not bypass it
    with the line it serialised itself."""
    class Redacting(JsonlEventJournal):
        def write(self, event) -> None:
            if event.type == "model_update":
                event = event.model_copy(update={"text": "[redacted]"})
            super().write(event)

    session = Session(StepRunner(say), TaskState(task="t"), journal=Redacting(journal_path))
    run(session.run())
    texts = [e.text for e in read_journal(journal_path) if e.type == "model_update"]
    assert texts == ["[redacted]"]
    assert [e.text for e in session.history if e.type == "model_update"] == ["hi"]


def test_run_closes_the_journal(journal_path) -> None:
    journal = JsonlEventJournal(journal_path)
    run(Session(StepRunner(say), TaskState(task="t"), journal=journal).run())
    assert journal.closed


def test_engine_that_raises_ends_failed_with_the_error() -> None:
    async def boom(runner: StepRunner) -> None:
        raise ValueError("model exploded")

    session = Session(StepRunner(say, boom), TaskState(task="t"))
    state = run(session.run())
    end = session.history[-1]
    assert end.type == "agent_end" and end.status == "failed"
    assert "model exploded" in end.error
    assert state.status == "failed" and "model exploded" in state.error


def test_engine_that_forgets_agent_end_gets_one() -> None:
    session = Session(StepRunner(say, end=False), TaskState(task="t"))
    state = run(session.run())
    assert types(session.history)[-1] == "agent_end"
    assert state.status == "failed"


def test_a_session_runs_once() -> None:
    session = Session(StepRunner(), TaskState(task="t"))
    run(session.run())
    with pytest.raises(RuntimeError, match="runs once"):
        run(session.run())


# -- approvals -----------------------------------------------------------------------------------

def ask(approval_id: str, tool: str = "shell", command: str = "git status", tier: int = 3):
    async def step(runner: StepRunner) -> None:
        await runner.ask(approval_id, tool, {"command": command}, tier=tier)
    return step


def test_unattended_auto_denies_with_via_auto() -> None:
    runner = StepRunner(ask("a1"))
    session = Session(runner, TaskState(task="t"), unattended=True)
    run(session.run())
    assert runner.answers == [False]
    assert types(session.history)[1:3] == ["approval_requested", "approval_resolved"]
    (event,) = resolved(session)
    assert event.via == "auto" and not event.allowed


@pytest.mark.parametrize(
    ("amendment", "escalation", "expect_alter", "expect_switch", "expect_shell"),
    [
        ("approve", "deny", True, False, False),
        ("deny", "approve", False, True, False),
        ("approve", "approve", True, True, False),
        ("deny", "deny", False, False, False),
    ],
)
def test_each_policy_covers_only_its_own_tool(amendment, escalation, expect_alter,
                                              expect_switch, expect_shell) -> None:
    runner = StepRunner(ask("a", "alter_verification", ""), ask("s", "switch_to_editing", ""),
                        ask("x", "shell", "ls"))
    session = Session(runner, TaskState(task="t"), unattended=True,
                      amendment_policy=amendment, escalation_policy=escalation)
    run(session.run())
    assert runner.answers == [expect_alter, expect_switch, expect_shell]
    assert {e.via for e in resolved(session)} == {"auto"}


def test_policies_do_not_apply_when_attended() -> None:
    async def main() -> list[bool]:
        runner = StepRunner(ask("a", "alter_verification", ""))
        session = Session(runner, TaskState(task="t"), amendment_policy="approve")
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("a", allow=False)
        await task
        return runner.answers

    assert run(main()) == [False]


def test_auto_approve_allows_up_to_tier_3_when_unattended() -> None:
    runner = StepRunner(ask("a", tier=1), ask("b", tier=3), ask("c", "shell", "rm -rf x", tier=4),
                        ask("d", "switch_to_editing", ""), ask("e", "alter_verification", ""))
    session = Session(runner, TaskState(task="t"), unattended=True, auto_approve=True)
    run(session.run())
    assert runner.answers == [True, True, False, True, True]
    assert {e.via for e in resolved(session)} == {"auto"}
    assert not any(e.remember for e in resolved(session))
    assert session.grants == []  # an automatic yes is never an `[a] always`


def test_auto_approve_does_not_answer_for_a_human() -> None:
    async def main() -> list[bool]:
        runner = StepRunner(ask("a"))
        session = Session(runner, TaskState(task="t"), auto_approve=True)
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("a", allow=False)
        await task
        return runner.answers

    assert run(main()) == [False]


def test_approval_timeout_denies_with_via_auto() -> None:
    runner = StepRunner(ask("a1"))
    session = Session(runner, TaskState(task="t"), approval_timeout=0)
    run(session.run())
    assert runner.answers == [False]
    (event,) = resolved(session)
    assert event.via == "auto" and not event.allowed
    assert not session.pending_approvals


def test_human_allows_and_the_run_waits_for_the_human() -> None:
    async def main() -> tuple[StepRunner, Session]:
        runner = StepRunner(ask("a1"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        for _ in range(50):
            await asyncio.sleep(0)
        assert not task.done()  # blocked on the gate, not on the clock
        session.resolve_approval("a1", allow=True)
        await task
        return runner, session

    runner, session = run(main())
    assert runner.answers == [True]
    (event,) = resolved(session)
    assert event.via == "human" and event.allowed and not event.remember


async def _answer_each(session: Session, task: asyncio.Task,
                       answers: list[tuple[bool, bool]]) -> None:
    for allow, remember in answers:
        await until(lambda: bool(session.pending_approvals) or task.done())
        if task.done():
            return
        session.resolve_approval(session.pending_approvals[0].approval_id, allow=allow,
                                 remember=remember)
    await task


def test_grant_short_circuits_with_via_grant_and_no_request() -> None:
    async def main() -> tuple[StepRunner, Session]:
        runner = StepRunner(ask("a1", command="git status"),
                            ask("a2", command="git status --short"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True)])
        return runner, session

    runner, session = run(main())
    assert runner.answers == [True, True]
    assert types(session.history).count("approval_requested") == 1
    first, second = resolved(session)
    assert first.via == "human" and first.remember
    assert second.via == "grant" and second.allowed and second.approval_id == "a2"
    assert session.grants == [ApprovalGrant(tool="shell", prefix="git status", tier=3)]


def test_grant_does_not_cover_another_subcommand_or_program() -> None:
    async def main() -> Session:
        runner = StepRunner(ask("a1", command="git status"), ask("a2", command="git push"),
                            ask("a3", command="./git status"))
        session = Session(runner, TaskState(task="t"), approval_timeout=None)
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True), (False, False), (False, False)])
        return session

    session = run(main())
    assert types(session.history).count("approval_requested") == 3


def test_tier_4_always_re_prompts() -> None:
    async def main() -> Session:
        runner = StepRunner(ask("a1", command="git status", tier=4),
                            ask("a2", command="git status", tier=4))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True), (True, True)])
        return session

    session = run(main())
    assert types(session.history).count("approval_requested") == 2
    assert session.grants == []
    assert all(not e.remember for e in resolved(session))


def test_alter_verification_is_never_granted() -> None:
    async def main() -> Session:
        tool_input = {"command": "pytest"}

        async def amend(runner: StepRunner) -> None:
            await runner.ask("v", "alter_verification", tool_input)

        async def amend_again(runner: StepRunner) -> None:
            await runner.ask("v2", "alter_verification", tool_input)

        runner = StepRunner(amend, amend_again)
        # A grant smuggled in by hand must not match either.
        session = Session(runner, TaskState(task="t"),
                          grants=[ApprovalGrant(tool="alter_verification", prefix="pytest",
                                                tier=3)])
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True), (True, True)])
        return session

    session = run(main())
    assert types(session.history).count("approval_requested") == 2
    assert len(session.grants) == 1  # only the smuggled one; nothing stored
    assert all(e.via == "human" and not e.remember for e in resolved(session))


def test_remember_on_a_deny_stores_nothing() -> None:
    async def main() -> Session:
        runner = StepRunner(ask("a1"), ask("a2"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(False, True), (False, False)])
        return session

    session = run(main())
    assert session.grants == []
    assert types(session.history).count("approval_requested") == 2
    assert not resolved(session)[0].remember


def test_remember_on_a_blank_prefix_stores_nothing() -> None:
    async def main() -> Session:
        runner = StepRunner(ask("a1", command="git status && rm -rf /"), ask("a2", command="ls"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True), (False, False)])
        return session

    session = run(main())
    assert session.grants == []
    assert types(session.history).count("approval_requested") == 2


def test_unknown_id_resolves_the_sole_pending_request() -> None:
    async def main() -> tuple[StepRunner, Session]:
        runner = StepRunner(ask("real-id"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("some-other-id", allow=True)
        await task
        return runner, session

    runner, session = run(main())
    assert runner.answers == [True]
    assert resolved(session)[0].approval_id == "real-id"


def test_unknown_id_with_several_pending_is_a_no_op() -> None:
    async def main() -> list[bool]:
        runner_a = StepRunner()
        session = Session(runner_a, TaskState(task="t"))

        async def two_at_once(runner: StepRunner) -> None:
            await asyncio.gather(runner.ask("a", "shell", {"command": "ls"}),
                                 runner.ask("b", "shell", {"command": "pwd"}))

        runner_a.steps = (two_at_once,)
        task = asyncio.create_task(session.run())
        await until(lambda: len(session.pending_approvals) == 2)
        session.resolve_approval("nope", allow=True)
        assert len(session.pending_approvals) == 2
        session.resolve_approval("a", allow=False)
        session.resolve_approval("b", allow=True)
        await task
        return runner_a.answers

    assert sorted(run(main())) == [False, True]


def test_resolving_with_nothing_pending_is_a_no_op() -> None:
    session = Session(StepRunner(), TaskState(task="t"))
    session.resolve_approval("whatever", allow=True, remember=True)
    run(session.run())
    session.resolve_approval("whatever", allow=True, remember=True)
    assert resolved(session) == [] and session.grants == []


def test_stale_double_press_does_not_answer_the_next_request() -> None:
    async def main() -> tuple[StepRunner, Session]:
        runner = StepRunner(ask("first"), ask("second"))
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("first", allow=True)
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("first", allow=True)  # the stale second press
        assert [p.approval_id for p in session.pending_approvals] == ["second"]
        session.resolve_approval("second", allow=False)
        await task
        return runner, session

    runner, _ = run(main())
    assert runner.answers == [True, False]


def test_cancel_denies_pending_approvals_and_the_run_ends_cancelled() -> None:
    async def main() -> tuple[StepRunner, Session, TaskState]:
        runner = StepRunner(ask("a1"), say)
        session = Session(runner, TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.cancel("user pressed escape")
        return runner, session, await task

    runner, session, state = run(main())
    assert runner.answers == [False]
    (event,) = resolved(session)
    assert not event.allowed and event.via == "auto"
    assert types(session.history)[-2:] == ["cancellation_observed", "agent_end"]
    assert session.history[-2].reason == "user pressed escape"
    assert session.history[-1].status == "cancelled"
    assert state.status == "cancelled"
    assert "model_update" not in types(session.history)  # the step after cancel never ran


def test_an_approval_asked_after_cancel_is_denied_without_waiting() -> None:
    async def cancel_then_ask(runner: StepRunner) -> None:
        session.cancel()
        await runner.ask("late", "shell", {"command": "ls"})

    runner = StepRunner(cancel_then_ask)
    session = Session(runner, TaskState(task="t"))  # attended, no timeout: would wait forever
    run(session.run())
    assert runner.answers == [False]
    assert session.history[-1].status == "cancelled"


def test_grants_passed_by_reference_outlive_the_run() -> None:
    conversation = SessionState()

    async def first_task() -> None:
        session = Session(StepRunner(ask("a1", command="npm test")), TaskState(task="one"),
                          grants=conversation.grants)
        task = asyncio.create_task(session.run())
        await _answer_each(session, task, [(True, True)])

    run(first_task())
    assert conversation.grants == [ApprovalGrant(tool="shell", prefix="npm test", tier=3)]

    runner = StepRunner(ask("b1", command="npm test -- --watch=false"))
    second = Session(runner, TaskState(task="two"), grants=conversation.grants, unattended=True)
    run(second.run())
    assert runner.answers == [True]
    assert resolved(second)[0].via == "grant"


def test_journal_write_failure_fails_the_run(journal_path) -> None:
    journal = JsonlEventJournal(journal_path)

    async def break_disk(runner: StepRunner) -> None:
        import os
        os.close(journal._fd)  # the disk goes away under the run
        journal._fd = os.open(os.devnull, os.O_RDONLY)

    session = Session(StepRunner(break_disk, say, say), TaskState(task="t"), journal=journal)
    state = run(session.run())
    assert session.journal_error and "cannot write journal" in session.journal_error
    assert session.journal_error.startswith("journal write failed: ")
    assert state.status == "failed" and state.error == session.journal_error
    assert types(session.history)[-1] == "agent_end"  # observers still see every event


def test_a_custom_journal_that_raises_fails_the_run_without_crashing_the_engine() -> None:
    class Broken:
        def write(self, event) -> None:
            if event.type == "model_update":
                raise OSError("disk on fire")

        def close(self) -> None:
            pass

    session = Session(StepRunner(say, say), TaskState(task="t"), journal=Broken())
    state = run(session.run())
    assert session.journal_error == "journal write failed: disk on fire"
    assert state.status == "failed" and state.error == "journal write failed: disk on fire"
    assert types(session.history)[-1] == "agent_end"
