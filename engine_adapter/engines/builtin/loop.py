"""`BuiltinRunner`: the built-in agent loop.

Each turn the model is called once (its text streams out as `model_update`, its tokens as
`model_usage`) and makes a decision: call a tool (or several, run in order), or finish. The loop
gates each call by tier and phase, asks the Session when it must (the tool call's id is the
approval's id), runs the tool for real inside the workspace, and feeds the result back to the
model. After a denied call the reply's later calls do not run (the model is told).

Phases: `investigate` (tiers 1 and 3 only) -> `edit` after an approved `switch_to_editing`
(`task_escalated`) -> `verify` after `finish`, which runs each check of the frozen plan for real.
Before its first edit the model must declare the plan (`declaration_required` otherwise); the
plan changes only through an approved `alter_verification`. The run ends `completed` only if
every check passed. A malformed decision is a `decision_error` the model is told about; several
in a row end the run `failed`. Cancel closes the model's stream at once (see `reply`), is seen at
every turn boundary and before every tool, and kills a running command at once.

The verification plan and its checks are `verification.VerificationSteps`, which the run
(`_Run`) owns: it says what a plan call proposes and runs the checks; the run gates the calls.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine_adapter.context import RunContext
from engine_adapter.engines.builtin.calls import Call, Failed, ms_since
from engine_adapter.engines.builtin.commands import blocked_hint, shell_request
from engine_adapter.engines.builtin.conversation import (
    TRANSCRIPT,
    TURN_STARTS,
    carried,
    resumed_from,
)
from engine_adapter.engines.builtin.instructions import Instructions, read_instructions
from engine_adapter.engines.builtin.models import (
    Decision,
    Model,
    ModelError,
    ModelRequest,
    ToolResult,
    TranscriptEntry,
    UserMessage,
)
from engine_adapter.engines.builtin.process import run_process
from engine_adapter.engines.builtin.reply import Reply, raw_text, read_reply, sort_decisions
from engine_adapter.engines.builtin.tools import (
    EDIT_TOOLS,
    TOOLS,
    PreparedWrite,
    ToolError,
    cap_text,
    list_dir,
    prepare_write,
    read_file,
    search,
)
from engine_adapter.engines.builtin.verification import PlanChange, VerificationSteps
from engine_adapter.engines.builtin.workspace import Workspace
from engine_adapter.engines.mentions import attach_mentions
from engine_adapter.events import (
    AgentEnd,
    AgentNotice,
    AgentStart,
    CancellationObserved,
    DecisionError,
    DeclarationRequired,
    ModelDecisionEvent,
    PhaseChanged,
    RunStatus,
    TaskEscalated,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
)
from engine_adapter.files import FileRefused, off_loop, unified_diff
from engine_adapter.files.mentions import context_text
from engine_adapter.runner import ApprovalController, CancelToken, EventSink
from engine_adapter.sandbox import NO_SANDBOX, UNAVAILABLE, Sandbox, SandboxSettings
from engine_adapter.shell import DESTRUCTIVE
from engine_adapter.state import TaskState

__all__ = ["BuiltinRunner"]

EDITED_DIFF_LIMIT = 8_000
"""Characters of the diff between an edit as proposed and as the human wrote it, told to the
model."""

_READERS: dict[str, Callable[[Workspace, Mapping[str, Any]], str]] = {
    "read_file": read_file, "list_dir": list_dir, "search": search,
}


class BuiltinRunner:
    """The built-in engine: an `AgentRunner` driving `model` in the workspace `cwd`.

    Args:
        model: Any `Model` (the scripted one plays a scenario file).
        cwd: The workspace; every tool is confined to it.
        shell_timeout: Default and maximum seconds a `shell` call may run.
        check_timeout: Seconds a verification check may run.
        output_cap: Characters of a tool's output kept (events and what the model sees).
        max_turns: Turns before the run gives up (`failed`).
        max_decision_errors: Malformed decisions in a row before the run gives up (`failed`).
        sandbox: Where `shell` calls and checks run: a `Sandbox`, or settings for one over
            `cwd` (default: `workspace-write`, no network; see `engine_adapter.sandbox`).
    """

    engine = "builtin"

    def __init__(self, model: Model, *, cwd: str | Path, shell_timeout: float = 120.0,
                 check_timeout: float = 600.0, output_cap: int = 32_000, max_turns: int = 50,
                 max_decision_errors: int = 3,
                 sandbox: Sandbox | SandboxSettings | None = None) -> None:
        self.model = model
        self.workspace = Workspace(cwd)
        self.sandbox = sandbox if isinstance(sandbox, Sandbox) else Sandbox(
            sandbox, workspace=self.workspace.root)
        self.workspace.guard = self.sandbox.write_refusal
        self.shell_timeout = shell_timeout
        self.check_timeout = check_timeout
        self.output_cap = output_cap
        self.max_turns = max_turns
        self.max_decision_errors = max_decision_errors
        self.event_sink: EventSink | None = None
        self.approval_controller: ApprovalController | None = None
        self.cancel_token: CancelToken | None = None

    async def run(self, state: TaskState) -> TaskState:
        """Drive one task to its end (the Session has wired the three attributes in)."""
        return await _Run(self, state).run()

    async def close(self) -> None:
        """Release what the model holds (a real model's connections); idempotent."""
        aclose = getattr(self.model, "aclose", None)
        if aclose is not None:
            await aclose()


@dataclass
class _TurnResult:
    """How a turn of the loop ended: its stop reason, and the finish decision or failure that
    ends the run."""

    stop: str
    finish: Decision | None = None
    failure: str | None = None


class _Run:
    """One run's mutable state: phase, transcript, turn; its verification plan is
    `verification`, a collaborator with its own state; `ctx` is the shared context (events,
    approvals, cancel)."""

    def __init__(self, engine: BuiltinRunner, state: TaskState) -> None:
        self.engine = engine
        self.state = state
        self.workspace = engine.workspace
        self.sandbox: Sandbox = engine.sandbox
        self.ctx = RunContext.of(engine, cwd=str(engine.workspace.root), sandbox=engine.sandbox)
        self.verification = VerificationSteps(self.ctx, self.workspace, self.sandbox,
                                              check_timeout=engine.check_timeout,
                                              output_cap=engine.output_cap)
        self.nonce = uuid.uuid4().hex[:4]  # call ids stay unique across a conversation's tasks
        self.phase: str | None = None
        # The conversation so far (the last task's, cut where it was rewound; a resumed run's
        # journal seeds it), then this task; kept in the task's state, so that the next task
        # carries it on (`conversation`).
        self.transcript: list[TranscriptEntry] = [*carried(state.earlier),
                                                  UserMessage(state.task)]
        self.turn_starts: list[int] = []
        state.data[TRANSCRIPT], state.data[TURN_STARTS] = self.transcript, self.turn_starts
        self.turn = 0
        self.errors_in_a_row = 0
        self.instructions: Instructions | None = None  # the project's AGENTS.md, once read

    # -- the loop ------------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self.ctx.cancelled

    async def run(self) -> TaskState:
        engine = self.engine
        self.state.cwd = str(self.workspace.root)
        sandbox = await self.sandbox.acheck()
        resumes = resumed_from(self.state.earlier)
        self.ctx.emit(AgentStart(task=self.state.task, engine=engine.engine,
                                  model=engine.model.name, cwd=str(self.workspace.root),
                                  resumed="journal" if resumes is not None else None,
                                  resumes=resumes, **sandbox.start_fields()))
        if resumes is not None and not self.state.task.strip():  # opened, no task yet
            self.transcript.pop()  # the empty message is not the conversation's to carry on
            return self._end("completed", result=f"the conversation of {resumes} is "
                             "open: send a task to continue it")
        await self._read_instructions()
        await self._attach_mentions()
        self._set_phase("investigate")
        while True:
            if self.cancelled:
                return self._end_cancelled()
            if self.turn >= engine.max_turns:
                return self._end("failed", error=f"no finish after {engine.max_turns} turns")
            self.turn += 1
            self.turn_starts.append(len(self.transcript))
            self.ctx.emit(TurnStart(turn=self.turn))
            await self.ctx.checkpoint_ready()  # the workspace as it was before this turn
            outcome = await self._take_turn()
            self.ctx.emit(TurnEnd(turn=self.turn, stop_reason=outcome.stop))
            if outcome.failure is not None:
                return self._end("failed", error=outcome.failure)
            if outcome.finish is not None:
                return await self._conclude(outcome.finish)
            if self.errors_in_a_row >= engine.max_decision_errors:
                return self._end("failed", error=f"the model made {self.errors_in_a_row} "
                                 "malformed decisions in a row")

    async def _read_instructions(self) -> None:
        """The project's AGENTS.md (else CLAUDE.md) into the system prompt, said in the
        transcript (read off the loop; one that cannot be read is said and left out)."""
        root = self.workspace.root
        try:
            found = await off_loop(lambda: read_instructions(root), seconds=10.0,
                                   what="reading the project's instructions")
        except FileRefused as exc:
            self.ctx.emit(AgentNotice(level="warning", text=f"instructions not read: {exc}"))
            return
        if found is None:
            return
        self.instructions = found
        self.ctx.emit(AgentNotice(level="warning" if found.refused else "info",
                                  text=found.note()))

    async def _attach_mentions(self) -> None:
        """The files the task mentions (`@path`): their text follows the task in the model's
        first message, each fenced and named (the task itself stays as the human wrote it)."""
        reads = await attach_mentions(self.ctx, self.workspace.root, self.state.task,
                                      lambda _: "context")
        context = context_text(reads)
        if context:
            self.transcript[0] = UserMessage(f"{self.state.task}\n\n{context}")

    async def _take_turn(self) -> _TurnResult:
        found = self.instructions
        request = ModelRequest(
            task=self.state.task, turn=self.turn, phase=self.phase or "", mode=self.ctx.mode,
            transcript=tuple(
                self.transcript), tools=tuple(TOOLS.values()),
            plan=tuple(c.model_dump() for c in self.verification.plan or ()),
            instructions=found.text if found is not None else "",
            instructions_from=found.name if found is not None else "")
        try:
            reply = await read_reply(self.engine.model, request, self.ctx, self.ctx.token)
        except ModelError as exc:  # said in the model's words: the server's message, a hint
            return _TurnResult("error", failure=str(exc))
        except Exception as exc:  # a real model's network error, say: the run fails cleanly
            return _TurnResult("error", failure=f"the model failed: {type(exc).__name__}: {exc}")
        if self.cancelled:
            return _TurnResult("cancelled")
        return await self._act_on(reply)

    async def _act_on(self, reply: Reply) -> _TurnResult:
        """Record the model's reply and run its decisions, in order, until one is denied or the
        run is cancelled (the later ones are answered as not run)."""
        found = sort_decisions(reply.raws, TOOLS)
        self.transcript.append(reply.entry())
        if found.errors:
            self.errors_in_a_row += 1
            for raw, error in found.errors:
                self.ctx.emit(DecisionError(turn=self.turn, error=error, raw=raw_text(
                    [raw] if raw is not None else reply.raws)))
            self.transcript += found.feedback
            return _TurnResult("decision_error")
        self.errors_in_a_row = 0
        stopped: str | None = None  # why the reply's later calls do not run
        for index, (raw, decision) in enumerate(zip(reply.raws, found.decisions, strict=True)):
            if stopped is not None:
                self.transcript.append(ToolResult("", decision.tool or "", "failed",
                                                  error=stopped, model_call_id=raw.call_id))
                continue
            self.ctx.emit(ModelDecisionEvent(
                turn=self.turn, action=decision.action, tool=decision.tool,
                tool_input=dict(decision.tool_input) if decision.action == "tool" else None,
                rationale=decision.rationale or decision.result))
            if decision.action == "finish":
                return _TurnResult("finish", finish=decision)
            result = await self._call_tool(decision, index)
            self.transcript.append(replace(result, model_call_id=raw.call_id))
            if self.cancelled:
                stopped = "not run: the run was cancelled"
            elif result.status == "denied":
                stopped = (f"not run: the {result.tool} call before it was denied; decide "
                           "again with that answer in mind")
        return _TurnResult("cancelled" if self.cancelled else "tool_use")

    # -- tools ---------------------------------------------------------------------------------
    async def _call_tool(self, decision: Decision, index: int = 0) -> ToolResult:
        tool, tool_input = decision.tool or "", dict(decision.tool_input)
        number = f"{self.turn}" if index == 0 else f"{self.turn}.{index + 1}"  # several a reply
        call = Call(f"c{number}-{self.nonce}", tool, tool_input, TOOLS[tool].tier,
                     decision.rationale)
        if tool in _READERS:
            reader, cap = _READERS[tool], self.engine.output_cap

            def read() -> str:
                return cap_text(reader(self.workspace, tool_input), cap)
            return await self._run_tool(call, lambda: off_loop(read, what=tool))
        if tool in EDIT_TOOLS:
            return await self._edit(call)
        handler: Callable[[Call], Awaitable[ToolResult]] = getattr(self, f"_{tool}")
        return await handler(call)

    async def _run_tool(self, call: Call, work: Callable[[], Awaitable[str | Failed]], *,
                        shown_input: Mapping[str, Any] | None = None,
                        sandbox: str | None = None) -> ToolResult:
        """Start the call, run `work` (its output, already capped, or a `ToolError`), end it;
        never raises. `sandbox`: the state a command runs in."""
        if self.cancelled:
            return call.result("failed", error="cancelled before it started")
        network = self.sandbox.network if sandbox else None
        self.ctx.emit(ToolStart(call_id=call.id, tool=call.tool, tier=call.tier,
                                 tool_input=dict(shown_input or call.input), title=call.title,
                                 sandbox=sandbox, sandbox_network=network))
        started = asyncio.get_running_loop().time()
        done: str | Failed
        try:
            if self.cancelled:  # e.g. the journal could not record the start: do not act
                raise ToolError("cancelled before it started")
            done = await work()
        except (ToolError, FileRefused) as exc:
            done = Failed("", str(exc))
        except Exception as exc:  # an OSError from the file system, say
            done = Failed("", f"{type(exc).__name__}: {exc}")
        output, error, blocked = ((done.output, done.error, done.blocked)
                                  if isinstance(done, Failed) else (done, None, None))
        self.ctx.emit(ToolEnd(call_id=call.id, tool=call.tool, ok=error is None, output=output,
                               error=error, duration_ms=ms_since(started), sandbox=sandbox,
                               sandbox_blocked=blocked))
        if blocked:  # the model learns how to ask for a run outside the sandbox
            error = f"{error}\n{blocked_hint(blocked, self.sandbox)}"
        return call.result("ok" if error is None else "failed", output=output, error=error)

    def _refuse(self, call: Call, error: str) -> Awaitable[ToolResult]:
        """A call refused before it runs: it still shows, as a failed call, with the reason."""
        async def refuse() -> str:
            raise ToolError(error)
        return self._run_tool(call, refuse)

    async def _ask(self, call: Call, reason: str, *, outside: bool = False,
                   commands: bool = False, shown_input: Mapping[str, Any] | None = None) -> bool:
        """Ask for `call`; `commands`: it runs commands (in the sandbox, unless `outside`);
        `shown_input`: what the human sees of the input (the call's own, by default)."""
        sandbox = self.sandbox
        flag = sandbox.approval_flag(bypass=outside) if commands else None
        if commands and sandbox.state == UNAVAILABLE:
            reason += NO_SANDBOX
        why = f"{reason}. The model says: {call.rationale}" if call.rationale else reason
        allowed = await self.ctx.request_approval(call.id, call.tool, why,
                                                   dict(shown_input or call.input),
                                                   tier=call.tier, sandboxed=flag)
        return bool(allowed) and not self.cancelled

    def _denied(self, call: Call) -> ToolResult:
        """A denied call's result: the model reads why (the human's words, or the mode's)."""
        said = self.ctx.denial_reason(call.id)
        return call.result("denied", error=f"denied: {said}" if said else "denied")

    async def _edit(self, call: Call) -> ToolResult:
        if self.phase != "edit":
            return await self._refuse(call, f"{call.tool} is allowed only in the edit phase; "
                                      "ask with switch_to_editing first")
        if self.verification.plan is None:
            reason = ("declare the verification plan (declare_verification) before the first "
                      "edit")
            self.ctx.emit(DeclarationRequired(turn=self.turn, reason=reason))
            return call.result("failed", error=f"refused: {reason}")
        try:  # reads the file and diffs it: in a worker thread, never on the loop
            prepared = await off_loop(
                lambda: prepare_write(self.workspace, call.tool, call.input), what=call.tool)
        except (ToolError, FileRefused) as exc:
            return await self._refuse(call, str(exc))

        shown_input = {**call.input, "diff": prepared.diff}
        asks = prepared.runs_later is not None or self.ctx.edits_ask
        if prepared.runs_later is not None:  # a file that runs by itself: ask, every time
            call.tier = DESTRUCTIVE
        if asks:  # (ask and plan mode: every edit goes to the gate, with its diff)
            why = f"{call.tool} {prepared.shown}" + (
                f": {prepared.runs_later}" if prepared.runs_later is not None else "")
            self.ctx.offer_edit(call.id, prepared.shown, prepared.content)  # the human may edit
            if not await self._ask(call, why, shown_input=shown_input):
                return self._denied(call)
        edited = self.ctx.edited_content(call.id) if asks else None
        if edited is not None:
            return await self._write_edited(call, prepared, edited, shown_input)

        async def write() -> str:
            return await off_loop(prepared.apply, what=call.tool)
        return await self._run_tool(call, write, shown_input=shown_input)

    async def _write_edited(self, call: Call, prepared: PreparedWrite, edited: str,
                            shown_input: Mapping[str, Any]) -> ToolResult:
        """Write the human's own version of a proposed edit, and tell the model how it differs
        from what it proposed (the diff, off the loop and capped)."""
        mine = replace(prepared, content=edited)

        async def write() -> str:
            done = await off_loop(mine.apply, what=call.tool)
            changes = await off_loop(lambda: unified_diff(
                prepared.content, edited, prepared.shown,
                limit=EDITED_DIFF_LIMIT), what="diffing the human's version")
            return (f"{done}: the human edited your proposal before it was written, so the "
                    f"file differs from what you proposed:\n{changes}")
        return await self._run_tool(call, write, shown_input=shown_input)

    async def _shell(self, call: Call) -> ToolResult:
        sandbox = self.sandbox
        try:
            request = shell_request(call.input, self.workspace.root, sandbox)
        except ToolError as exc:
            return await self._refuse(call, str(exc))
        call.tier = request.tier
        if not await self._ask(call, request.reason, outside=request.outside, commands=True):
            return self._denied(call)
        timeout = min(float(call.input.get("timeout") or self.engine.shell_timeout),
                      self.engine.shell_timeout)
        args = request.argv

        async def execute() -> str | Failed:
            try:
                done = await run_process(args, cwd=self.workspace.root, timeout=timeout,
                                         output_cap=self.engine.output_cap,
                                         cancel_token=self.ctx.token, sandbox=sandbox,
                                         outside=request.outside)
            except OSError as exc:
                raise ToolError(f"cannot run {args[0]}: {exc.strerror or exc}") from None
            output = done.text()
            return output if done.ok else Failed(output, done.describe(), done.blocked)
        state = sandbox.state_of(request.outside)
        return await self._run_tool(call, execute, sandbox=state)

    async def _declare_verification(self, call: Call) -> ToolResult:
        return await self._change_plan(call, self.verification.declaration)

    async def _alter_verification(self, call: Call) -> ToolResult:
        return await self._change_plan(call, self.verification.alteration)

    async def _change_plan(self, call: Call,
                           propose: Callable[[Mapping[str, Any]], PlanChange]) -> ToolResult:
        """Ask the human about the plan `call` proposes (refused if it cannot be one) and,
        allowed, freeze it."""
        try:
            change = propose(call.input)
        except ToolError as exc:
            return await self._refuse(call, str(exc))
        if not await self._ask(call, change.question, commands=True):
            return self._denied(call)
        return await self._run_tool(call, lambda: self.verification.freeze(change.checks))

    async def _switch_to_editing(self, call: Call) -> ToolResult:
        if self.phase == "edit":
            return await self._refuse(call, "already in the edit phase")
        reason = call.input["reason"]
        if not await self._ask(call, f"switch from investigating to editing: {reason}"):
            return self._denied(call)

        async def escalate() -> str:
            self.ctx.emit(TaskEscalated(reason=reason, target="edit"))
            self._set_phase("edit")
            return "now in the edit phase: write_file and edit are allowed"
        return await self._run_tool(call, escalate)

    # -- ending --------------------------------------------------------------------------------
    def _set_phase(self, phase: str) -> None:
        previous, self.phase = self.phase, phase
        self.ctx.emit(PhaseChanged(phase=phase, previous=previous))

    async def _conclude(self, decision: Decision) -> TaskState:
        if not decision.success:
            return self._end("failed", error=decision.result)
        plan = self.verification.plan
        if plan is None:
            return self._end("completed", result=decision.result)
        self._set_phase("verify")
        failed = []
        for check in plan:
            if self.cancelled:
                return self._end_cancelled()
            passed, detail = await self.verification.verify(check)
            if not passed:
                failed.append(f"{check.name} ({detail})")
        if self.cancelled:
            return self._end_cancelled()
        if failed:
            return self._end("failed", error="verification failed: " + ", ".join(failed))
        return self._end("completed", result=decision.result)

    def _end(self, status: RunStatus, *, result: str | None = None,
             error: str | None = None) -> TaskState:
        self.ctx.emit(AgentEnd(status=status, result=result, error=error))
        state = self.state
        state.status, state.result, state.error = status, result, error
        return state

    def _end_cancelled(self) -> TaskState:
        reason = self.ctx.cancel_reason
        self.ctx.emit(CancellationObserved(reason=reason, turn=self.turn or None))
        return self._end("cancelled", error=reason)
