"""Scripted runs for the live cockpit's tests and snapshots: `StepRunner` steps that play the
moments worth seeing — a shell approval, an edit with its diff, a tier-4 prompt, verification
passing or failing, a reply, a question — and helpers to drive a `CockpitApp` to them (or to an
event of its session)."""

from __future__ import annotations

from typing import Any

from cockpit.live import CockpitApp
from engine_adapter import (
    AgentEnd,
    ModelDecisionEvent,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    QuestionField,
    QuestionOption,
    Session,
    SessionState,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationCheck,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
)
from engine_adapter.context import RunContext
from support.pilot import until_shown
from support.steps import StepRunner

DIFF = "\n".join([
    "--- a/app.py",
    "+++ b/app.py",
    "@@ -1,4 +1,4 @@",
    " def greet(name):",
    '-    return "hello " + name',
    '+    return f"hello {name}"',
    " ",
    ' print(greet("world"))',
])


def turn(n: int, text: str = ""):
    """A turn start with some streamed text and usage."""
    async def step(r: StepRunner) -> None:
        r.emit(TurnStart(turn=n))
        if text:
            r.emit(ModelUpdate(turn=n, text=text))
        r.emit(ModelUsage(model="scripted", input_tokens=1200, output_tokens=80, cost_usd=0.0021))
    return step


def end_turn(n: int):
    async def step(r: StepRunner) -> None:
        r.emit(TurnEnd(turn=n, stop_reason="tool_use"))
    return step


def gated(call_id: str, tool: str, tool_input: dict[str, Any], *, tier: int = 3,
          output: str = "ok", rationale: str = "need to look", reason: str | None = None):
    """A decision, then a gated call that runs (or not) on the human's answer (`reason`: the
    request's, as an engine words it; default "<tool> needs approval")."""
    async def step(r: StepRunner) -> None:
        r.emit(ModelDecisionEvent(action="call_tool", tool=tool, tool_input=tool_input,
                                  rationale=rationale))
        allowed = await r.ask(call_id, tool, tool_input, tier=tier, reason=reason)
        if allowed:
            r.emit(ToolStart(call_id=call_id, tool=tool, tool_input=tool_input, tier=tier))
            r.emit(ToolEnd(call_id=call_id, tool=tool, ok=True, output=output, duration_ms=12.0))
    return step


def plain(call_id: str, tool: str, tool_input: dict[str, Any], output: str, *, tier: int = 1,
          ok: bool = True):
    """An ungated call (tier 1) with its output."""
    async def step(r: StepRunner) -> None:
        r.emit(ToolStart(call_id=call_id, tool=tool, tool_input=tool_input, tier=tier))
        r.emit(ToolEnd(call_id=call_id, tool=tool, ok=ok, output=output,
                       error=None if ok else "exit status 1", duration_ms=4.0))
    return step


def verify(passed: bool):
    async def step(r: StepRunner) -> None:
        r.emit(VerificationPlanFrozen(checks=[
            VerificationCheck(id="tests", name="pytest", command="pytest -q"),
            VerificationCheck(id="lint", name="ruff", command="ruff check")]))
        for check_id, name in (("tests", "pytest"), ("lint", "ruff")):
            r.emit(VerificationStart(check_id=check_id, name=name))
            ok = passed or check_id == "lint"
            r.emit(VerificationEnd(check_id=check_id, name=name, passed=ok,
                                   output="1 passed" if ok else "FAILED test_app.py::test_greet",
                                   duration_ms=830.0 if check_id == "tests" else 120.0))
    return step


def phase(name: str, previous: str | None):
    async def step(r: StepRunner) -> None:
        r.emit(PhaseChanged(phase=name, previous=previous))
    return step


def finish(status: str = "completed", result: str = "greet() now uses an f-string"):
    async def step(r: StepRunner) -> None:
        r.emit(AgentEnd(status=status, result=result if status == "completed" else None,
                        error=None if status == "completed" else result))
    return step


def make_app(*steps, end: bool = True, task: str = "make greet() use an f-string",
             state: SessionState | None = None, next_steps=None, cwd: str | None = None,
             approval_timeout: float | None = None, **app_kwargs) -> CockpitApp:
    """A CockpitApp over a StepRunner session; `next_steps(task)` builds the next task's steps."""
    state = state or SessionState()
    session = Session(StepRunner(*steps, end=end, cwd=cwd), TaskState(task=task),
                      grants=state.grants, session_id="s1", approval_timeout=approval_timeout)
    next_session = None
    if next_steps is not None:
        def next_session(text: str) -> Session:
            return Session(StepRunner(*next_steps(text)), TaskState(task=text),
                           grants=state.grants, session_id="s1")
    # Keys answer at once once the request is drawn: the arming delay has its own tests
    # (tests/cockpit/live/test_approval_arming.py), which drive it by a fake clock.
    app_kwargs.setdefault("arm_seconds", 0.0)
    app_kwargs.setdefault("remember_theme", False)
    app_kwargs.setdefault("theme", "cockpit-dark")
    return CockpitApp(session, next_session=next_session, **app_kwargs)


async def settle(pilot, predicate, limit: int = 200) -> None:
    """Let the app run until `predicate()` holds (a condition, not a clock)."""
    for _ in range(limit):
        if predicate():
            await pilot.pause()
            return
        await pilot.pause()
    raise AssertionError("condition never became true")


def pending(app: CockpitApp) -> list[str]:
    return list(app.view.pending)


def answerable(app: CockpitApp, approval_id: str | None = None) -> bool:
    """Whether an approval key answers now: a request (`approval_id`, or any) is drawn on
    screen and its keys are armed. What a test waits for before pressing `y`."""
    arming = app.display_widget.approval_bar.arming
    return arming.armed() and approval_id in (None, arming.drawn_id)


def hold():
    """A step that keeps the run live until it is cancelled."""
    async def step(r: StepRunner) -> None:
        await r.cancel_token.wait()
    return step


LONG_REPLY = ("This reply is long and has many lines. " * 5 + "\n") * 22  # ~4.3 KB


def reply(text: str, status: str = "completed", error: str | None = None):
    """The agent's reply, then the end of the run."""
    async def step(r) -> None:
        r.emit(ModelUpdate(turn=1, text=text))
        r.emit(AgentEnd(status=status, result=text if status == "completed" else None,
                        error=error))
    return step


FORM_FIELDS = [  # a form with a field of every kind
    QuestionField(name="name", kind="text", title="Your name", required=True,
                  description="as it should appear in the changelog"),
    QuestionField(name="budget", kind="number", title="Budget", minimum=0),
    QuestionField(name="tests", kind="boolean", title="Run the tests", default=True),
    QuestionField(name="db", kind="choice", title="Database", required=True,
                  options=[QuestionOption(value="dev", label="Development"),
                           QuestionOption(value="staging", label="Staging")]),
    QuestionField(name="targets", kind="multi", title="Targets",
                  options=[QuestionOption(value="linux", label="Linux"),
                           QuestionOption(value="mac", label="macOS")]),
]


def asks(fields=FORM_FIELDS, answers=None, message="Which database should I use?"):
    """A step that asks the human a question and records the answer."""
    async def step(r: StepRunner) -> None:
        answer = await RunContext.of(r).ask_question("q-1", message, fields)
        if answers is not None:
            answers.append(answer)
    return step


async def until_event(session: Session, kind: str, stream=None) -> None:
    """Wait for the session to emit an event of `kind` (on the event itself, not a clock)."""
    async for event in stream if stream is not None else session.events():
        if event.type == kind:
            return
    raise AssertionError(f"the run ended without {kind}")


async def next_task(app: CockpitApp, pilot, task: str) -> Session:
    """Once the run is done, type `task` in the next-task box and send it; the new Session."""
    await until_shown(pilot, lambda: app.session.done and app.query_one("#next-task").display)
    box = app.query_one("#next-task")
    box.focus()
    box.value = task
    before = len(app.sessions)
    await pilot.press("enter")
    await until_shown(pilot, lambda: len(app.sessions) > before)
    return app.session

