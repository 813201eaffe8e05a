"""The typed engine boundary: the minimal protocols, the richer ones the Session offers, and
`RunContext`, through which both engines (built-in and ACP) see a run. An engine given objects
that meet only the minimum (CONTRACT) must still run, and degrade to the safe answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, approve, drive
from support.builtin_runs import runner
from support.event_loop import run

from engine_adapter import (
    ApprovalController,
    CancelToken,
    EventSink,
    Session,
    SessionState,
    TaskState,
)
from engine_adapter.context import RunContext, on_cancel, wait_cancelled
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.runner import GrantAwareController, WatchableCancelToken
from engine_adapter.session.cancel import SessionCancelToken


class ListSink:
    """A third-party sink: `emit` and nothing else."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


class YesController:
    """A third-party controller: `request_approval` and nothing else; says yes to all."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    async def request_approval(self, approval_id: str, tool: str, reason: str,
                               tool_input: dict[str, Any], *, tier: int = 3) -> bool:
        self.asked.append((tool, tier))
        return True


class FlagToken:
    """A third-party token: two plain attributes, no way to wait or call back."""

    def __init__(self) -> None:
        self.cancelled = False
        self.reason: str | None = None

    def trip(self, reason: str) -> None:
        self.cancelled, self.reason = True, reason


def test_the_session_offers_the_richer_protocols_and_third_parties_need_not() -> None:
    session = Session(runner(Path("."), [{"finish": "x"}]), TaskState(task="t"))
    assert isinstance(session, EventSink) and isinstance(session, GrantAwareController)
    assert isinstance(session.cancel_token, WatchableCancelToken)
    assert isinstance(ListSink(), EventSink)
    assert isinstance(YesController(), ApprovalController)
    assert not isinstance(YesController(), GrantAwareController)
    assert isinstance(FlagToken(), CancelToken)
    assert not isinstance(FlagToken(), WatchableCancelToken)


def test_is_granted_asks_the_session_and_a_minimal_controller_grants_nothing() -> None:
    state = SessionState()
    session = Session(runner(Path("."), [{"finish": "x"}]), TaskState(task="t"),
                      grants=state.grants)
    context = RunContext(ListSink(), session, FlagToken())
    assert not context.is_granted("execute", {"command": "git status"}, 3)
    from engine_adapter import ApprovalGrant
    state.grants.append(ApprovalGrant(tool="execute", prefix="git status", tier=3))
    assert context.is_granted("execute", {"command": "git status --short"}, 3)
    assert not context.is_granted("execute", {"command": "git push"}, 3)
    assert not context.is_granted("execute", {"command": "git status"}, 4)
    assert session.is_granted("execute", {"command": "git status"}, 3)
    minimal = RunContext(ListSink(), YesController(), FlagToken())
    assert not minimal.is_granted("execute", {"command": "git status"}, 3)


def test_run_context_needs_a_session_to_have_wired_the_runner() -> None:
    engine = runner(Path("."), [{"finish": "x"}])
    with pytest.raises(RuntimeError, match="driven by a Session"):
        RunContext.of(engine)


@pytest.mark.parametrize("token_kind", ["session", "flag"])
def test_waiting_and_callbacks_work_for_both_kinds_of_token(token_kind: str) -> None:
    async def main() -> tuple[list[str], bool]:
        token: Any = SessionCancelToken() if token_kind == "session" else FlagToken()
        fired: list[str] = []
        on_cancel(token, lambda: fired.append("kept"))
        remove = on_cancel(token, lambda: fired.append("removed"))
        remove()
        waiter = asyncio.ensure_future(wait_cancelled(token))
        await asyncio.sleep(0)
        assert not waiter.done()
        token.trip("stop")
        await asyncio.wait_for(waiter, 5)  # a bound against a hang, not a timing
        for _ in range(1000):  # the flag token is polled: let the poller see it
            if fired:
                break
            await asyncio.sleep(0.01)
        late: list[str] = []
        on_cancel(token, lambda: late.append("at once"))
        return fired + late, waiter.done()

    fired, waited = run(main())
    assert waited and fired == ["kept", "at once"]


def test_run_context_drops_events_once_the_run_is_ended() -> None:
    from engine_adapter import AgentEnd, ModelUpdate

    sink = ListSink()
    context = RunContext(sink, YesController(), FlagToken())
    context.emit(ModelUpdate(text="a"))
    context.end(AgentEnd(status="completed"))
    context.emit(ModelUpdate(text="late"))
    assert [e.type for e in sink.events] == ["model_update", "agent_end"]


# -- the built-in engine with third-party objects -----------------------------------------------

def _wire(engine: Any, sink: Any, controller: Any, token: Any) -> None:
    engine.event_sink, engine.approval_controller, engine.cancel_token = sink, controller, token


def test_builtin_engine_runs_with_minimal_sink_controller_and_token(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    steps = [{"tool": "shell", "input": {"command": "cat a.txt"}},
             {"tool": "switch_to_editing", "input": {"reason": "fix"}},
             {"finish": "done"}]
    engine = runner(tmp_path, steps)
    sink, controller = ListSink(), YesController()
    _wire(engine, sink, controller, FlagToken())
    state = run(engine.run(TaskState(task="t")))
    assert state.status == "completed"
    assert [tool for tool, _ in controller.asked] == ["shell", "switch_to_editing"]
    ends = [e for e in sink.events if e.type == "tool_end"]
    assert ends[0].ok and ends[0].output == "one\n"
    assert sink.events[-1].type == "agent_end"


def test_builtin_engine_stops_a_command_on_a_token_it_must_poll(tmp_path) -> None:
    """A token without `wait`/`on_cancel` still kills a running command (it is polled)."""
    async def main() -> tuple[TaskState, ListSink]:
        steps = [{"tool": "shell", "input": {"command": "echo started > s.txt; exec sleep 100"}},
                 {"finish": "never"}]
        engine = runner(tmp_path, steps)
        sink, token = ListSink(), FlagToken()
        _wire(engine, sink, YesController(), token)
        task = asyncio.ensure_future(engine.run(TaskState(task="t")))
        for _ in range(1000):  # the command has started: its file exists
            if (tmp_path / "s.txt").exists():
                break
            await asyncio.sleep(0.01)
        token.trip("stop it")
        return await asyncio.wait_for(task, 10), sink

    state, sink = run(main())
    assert state.status == "cancelled"
    (ended,) = [e for e in sink.events if e.type == "tool_end"]
    assert not ended.ok and "cancelled" in (ended.error or "")
    assert [e.reason for e in sink.events if e.type == "cancellation_observed"] == ["stop it"]


# -- the ACP engine with third-party objects ----------------------------------------------------

ALL_KINDS = "allow_once,allow_always,reject_once,reject_always"


@pytest.fixture
def acp(tmp_path):
    log = tmp_path / "agent.jsonl"
    engine = AcpRunner(agent_argv("--log", log), cwd=tmp_path)
    loop = asyncio.new_event_loop()
    yield engine, loop, log
    loop.run_until_complete(engine.close())
    loop.close()


def test_acp_engine_with_a_minimal_controller_answers_allow_once(acp) -> None:
    """No grant can be known: an allowed permission is answered "once", never "always"."""
    engine, loop, log = acp
    sink, controller = ListSink(), YesController()
    _wire(engine, sink, controller, FlagToken())
    state = loop.run_until_complete(engine.run(TaskState(task=f"permission {ALL_KINDS} ls")))
    assert state is not None and sink.events[-1].status == "completed"
    assert controller.asked == [("execute", 3)]
    assert sink.events[-1].result == "selected allow_once"
    chosen = [e["chosen"] for e in agent_log(log) if e.get("event") == "permission"]
    assert chosen == ["allow_once"]


def test_acp_engine_cancels_on_a_token_it_must_poll(acp) -> None:
    engine, loop, _log = acp
    token = FlagToken()

    class CancellingSink(ListSink):
        def emit(self, event: Any) -> None:
            super().emit(event)
            if event.type == "model_update":
                token.trip("enough")

    sink = CancellingSink()
    _wire(engine, sink, YesController(), token)
    loop.run_until_complete(asyncio.wait_for(engine.run(TaskState(task="slow 1000 0.01")), 30))
    types = [e.type for e in sink.events]
    assert types[-3:] == ["turn_end", "cancellation_observed", "agent_end"]
    assert sink.events[-1].status == "cancelled" and sink.events[-2].reason == "enough"


# -- every field an engine writes is declared ---------------------------------------------------

def _undeclared(events: list[Any]) -> list[tuple[str, dict]]:
    return [(e.type, e.model_extra) for e in events if e.model_extra]


def test_the_acp_engine_writes_only_declared_fields(tmp_path) -> None:
    (tmp_path / "input.txt").write_text("first line\nsecond line\n")
    engine = AcpRunner(agent_argv(), cwd=tmp_path)

    async def main() -> list[Any]:
        seen: list[Any] = []
        for task in ("everything", "fs", "terminal printf hi", "terminal sh -c exit_3",
                     f"permission {ALL_KINDS} git status", "error"):
            _, events = await drive(engine, task, tmp_path / "j.jsonl", answer=approve())
            seen += events
            (tmp_path / "j.jsonl").unlink()
        await engine.close()
        crashed = AcpRunner(agent_argv(), cwd=tmp_path)
        _, events = await drive(crashed, "crash", tmp_path / "j.jsonl")
        await crashed.close()
        return seen + events

    events = run(main())
    kinds = {e.type for e in events}
    assert {"agent_start", "tool_start", "tool_end", "model_usage", "agent_end"} <= kinds
    assert any(e.type == "agent_end" and e.stderr for e in events)  # the crash's stderr
    assert any(e.type == "tool_start" and e.source == "client" for e in events)
    assert any(e.type == "model_usage" and e.context_size for e in events)
    assert _undeclared(events) == []


def test_the_builtin_engine_writes_only_declared_fields(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    steps = [{"tool": "read_file", "input": {"path": "a.txt"}},
             {"tool": "switch_to_editing", "input": {"reason": "fix"}},
             {"tool": "declare_verification",
              "input": {"checks": [{"name": "ok", "command": "true"}]}},
             {"tool": "edit", "input": {"path": "a.txt", "old": "two", "new": "2"}},
             {"tool": "shell", "input": {"command": "false"}},
             {"finish": "done"}]
    session = Session(runner(tmp_path, steps), TaskState(task="t"), unattended=True,
                      auto_approve=True, amendment_policy="approve",
                      escalation_policy="approve")
    run(session.run())
    assert session.history[-1].status == "completed"
    assert _undeclared(list(session.history)) == []


# -- the declared fields are shown ----------------------------------------------------------------

def _acp_like_events() -> list[Any]:
    from engine_adapter import AgentInfo, AgentStart, ModelUsage, ToolEnd, ToolStart

    return [
        AgentStart(task="t", engine="acp:x", agent=AgentInfo(name="x", title="X Agent",
                                                             version="2.1"),
                   command="x --acp", acp_session_id="s1", new_session=True),
        ToolStart(call_id="w1", tool="edit", tool_input={"path": "a.txt"}, tier=3,
                  title="write a.txt", source="client", permitted_by="agent permission"),
        ToolEnd(call_id="w1", tool="edit", ok=True, output="wrote 3 characters"),
        ToolStart(call_id="t1", tool="execute", tool_input={"argv": ["make"]}, tier=3,
                  title="run make", source="client", terminal_id="term-1"),
        ToolEnd(call_id="t1", tool="execute", ok=False, output="", error="exit code 2",
                exit_code=2, title="run make (failed)"),
        ModelUsage(input_tokens=100, output_tokens=5, cached_read_tokens=80,
                   thought_tokens=7),
        ModelUsage(cost_usd=0.01, cost=0.01, currency="USD", context_used=50_000,
                   context_size=200_000),
    ]


def test_the_fold_reads_the_declared_fields() -> None:
    from engine_adapter.view import fold_events

    view = fold_events(_acp_like_events())
    assert view.agent == "X Agent 2.1" and view.agent_command == "x --acp"
    assert (view.cached_tokens, view.thought_tokens) == (80, 7)
    assert view.context == (50_000, 200_000)
    write, command = view.tool_calls["w1"], view.tool_calls["t1"]
    assert write.permitted_by == "agent permission" and write.exit_code is None
    assert command.exit_code == 2 and command.title == "run make (failed)"


def test_status_line_row_headless_and_export_show_them(tmp_path) -> None:
    from textual.app import App

    from cockpit.export import export_journal
    from cockpit.headless import format_event
    from cockpit.widgets import StatusLine, Transcript
    from engine_adapter import JsonlEventJournal
    from engine_adapter.events import stamped
    from engine_adapter.view import describe, fold_events

    events = [stamped(e, "s", i, 1000.0 + i) for i, e in enumerate(_acp_like_events())]
    view = fold_events(events)

    class Host(App):
        def compose(self):
            yield StatusLine(id="status")
            yield Transcript(id="transcript")

    async def shown() -> tuple[str, str]:
        app = Host()
        async with app.run_test(size=(160, 20)) as pilot:
            line = app.query_one(StatusLine)
            line.show(view)
            transcript = app.query_one(Transcript)
            transcript.show(view)
            await pilot.pause()
            row = "".join(seg.text for strip in transcript._strips(
                view.tool_calls["w1"].index) for seg in strip)
            return line.render().plain, row

    status, row = run(shown())
    assert "X Agent 2.1" in status and "(80 cached)" in status
    assert "context 25% of 200,000" in status
    assert "covered by agent permission" in row
    assert "X Agent 2.1" in describe(events[0]).details[0]  # the headless line under `start`
    assert "(80 cached)" in format_event(events[5])[1]
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path) as journal:
        for event in events:
            journal.write(event)
    report = export_journal(path, "markdown").text
    assert "agent X Agent 2.1" in export_journal(path, "html").text
    assert "agent X Agent 2.1" in report and "started with x --acp" in report
    assert "(80 from cache)" in report and "context window 50,000 of 200,000" in report
    assert "Approval: covered by agent permission" in report


# -- a new event type: its class, its fold handler, its description --------------------------

def test_every_event_type_has_a_fold_handler_and_a_description() -> None:
    """Adding an event type to `HarnessEvent` is three places: the model, its fold handler and
    its one line for headless output. This fails until the other two exist."""
    from support.event_samples import MINIMAL

    from cockpit.headless import format_event
    from engine_adapter import parse_event
    from engine_adapter.events import EVENT_TYPES
    from engine_adapter.view import NOTHING, RunFold

    assert set(MINIMAL) == set(EVENT_TYPES)  # test_events knows every type too
    fold = RunFold()
    fold.apply(parse_event({"type": "agent_start", **MINIMAL["agent_start"]}))
    for event_type in EVENT_TYPES:
        event = parse_event({"type": event_type, **MINIMAL[event_type]})
        assert fold.apply(event) != NOTHING, f"no fold handler for {event_type}"
        if event_type == "model_update":
            continue  # streamed text: the line printer continues one line with the deltas
        label, _text, _colour = format_event(event)
        assert label != event_type, f"no headless description for {event_type}"
