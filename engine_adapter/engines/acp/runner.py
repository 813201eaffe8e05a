"""`AcpRunner`: an `AgentRunner` that drives an Agent Client Protocol agent.

One runner is one agent process and one ACP session. The first `run()` starts the agent
(`initialize`, then `opening`: a new session or the earlier one `setup.resume` names, logging in
when the agent asks and a method can be satisfied, and the settings the human asked for); each
`run()` sends the task as one `session/prompt`; later `run()`s reuse the process and the session,
so a conversation's tasks share the agent's context. `await runner.close()` (or `async with`)
stops the agent's whole process group. A run that ends with the agent dead (crash, garbage,
killed after a cancel) leaves the runner ready to start a fresh agent on the next `run()`, which
reopens the same conversation when the agent can (else says it is gone). A task of "" only
opens the session (and shows the history a `session/load` replays).

Events of a run: `agent_start` as it starts (the task, the command), then `agent_ready` once the
agent answered (its name, version, modes, session id, how the session was reopened), the
replayed history (`history_*`), notices, `agent_config` and `phase_changed` (the session's
settings and mode, when it opened), `turn_start`, the mapped updates (see `mapping`), approvals,
`model_usage`, `turn_end` (with the stop reason), `cancellation_observed` when cancelled,
`agent_end`. Failures end the run `failed` with the agent's own words and the last lines of its
stderr.

Besides sending tasks, the human can list the agent's sessions (`list_sessions`) and read and
change the session's settings (`settings`, `set_option`, `set_mode`), between or during tasks. A
change is sent to the agent at once and announced as an event (into the live run, else at the
start of the next one); it is also kept in the runner's `setup`, so an agent that restarts gets
it again.

The runner owns one `agent.AgentConnection` (the agent's process, its ACP connection and the
client answering it): it asks it to start the agent, opens the session on it
(`agent.SessionOpener`) and sends the prompts over it; the connection knows nothing of runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import acp
from acp import RequestError
from acp.schema import PromptResponse, TextContentBlock, Usage

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.agent import (
    AgentBox,
    AgentConnection,
    ListedSession,
    Opened,
    SessionOpener,
    SessionSetup,
    SettingError,
    Step,
    WaitCancelled,
    Wanted,
    agent_mode_for,
    apply_step,
    plan_settings,
)
from engine_adapter.engines.acp.catalogue import AgentSpec
from engine_adapter.engines.acp.client import AcpClient
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.engines.acp.mentions import MentionBlock, mention_blocks, takes_embedded
from engine_adapter.engines.acp.text import cap
from engine_adapter.engines.mentions import attach_mentions
from engine_adapter.events import (
    DEFAULT_MODE,
    AgentEnd,
    AgentMode,
    AgentNotice,
    AgentOption,
    AgentReady,
    AgentStart,
    BaseEvent,
    CancellationObserved,
    ModelUsage,
    ToolStart,
    TurnEnd,
    TurnStart,
)
from engine_adapter.runner import ApprovalController, CancelToken, EventSink
from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.state import TaskState

PromptBlock = TextContentBlock | MentionBlock  # what a prompt of the cockpit's holds

__all__ = ["AcpRunner"]

RESULT_LIMIT = 4000
_STOP_REASONS = {
    "max_tokens": "the agent stopped: it reached its token limit (max_tokens)",
    "max_turn_requests": "the agent stopped: it reached its limit of model requests in one turn "
                         "(max_turn_requests)",
    "refusal": "the agent refused to continue (refusal)",
}


HURRIED_GRACE = 0.2
"""Seconds an agent gets to answer a cancel, and then SIGTERM, once the runner is hurried (the
terminal closed: no one waits for it, and the cockpit must be gone within 2 s)."""


class _Answer(NamedTuple):
    """How a prompt ended: its response, or the failure, or the agent killed after a cancel it
    did not answer within `waited` seconds (`recoverable`: the agent refused the prompt but
    still runs)."""

    response: PromptResponse | None = None
    error: AgentFailure | None = None
    killed: bool = False
    recoverable: bool = False
    waited: float | None = None  # the cancel grace it had (None: none, it was hurried)


class _PlaceStamp:
    """The run's event sink, stamping every `tool_start` with where the agent process runs
    (`agent_sandbox`), so each row says whether what the agent ran of its own was contained."""

    def __init__(self, sink: EventSink, connection: AgentConnection) -> None:
        self.sink = sink
        self.connection = connection

    def emit(self, event: BaseEvent) -> None:
        place = self.connection.agent_place
        if isinstance(event, ToolStart) and event.agent_sandbox is None and place is not None:
            event = event.model_copy(update={"agent_sandbox": place})
        self.sink.emit(event)


class AcpRunner:
    """Drives an ACP agent as a cockpit engine (see the module docstring).

    Args:
        agent: The agent to start: an `AgentSpec` (see `resolve_agent`) or an argv list.
        cwd: The workspace: the agent's working directory and the only place `fs/*` and
            `terminal/*` may touch. Defaults to the first task's `cwd`, else the current dir.
        env: Extra environment for the agent (on top of `agent_env(spec)`).
        cancel_grace: Seconds to wait for the agent to answer a cancel with the `cancelled`
            stop reason before its process group is killed (then SIGTERM, and SIGKILL half a
            second later: a cancel takes at most about `cancel_grace` + 0.5 s).
        startup_timeout: Seconds the agent may take to answer `initialize` and `session/new`.
        stop_grace: Seconds a stopped agent may take to exit on its own, and then to end after
            SIGTERM (see `close`).
        forward_always: Answer `allow_always` when the human grants "always" (off: the cockpit
            keeps the grant and answers later requests itself).
        setup: Which session to open (`resume`: an earlier one), the MCP servers to give the
            agent, and the settings to start with (see `SessionSetup`). With `load_only` the
            runner is read-only: each run loads the session (its history as events) and ends,
            whatever the task; no prompt is ever sent.
        sandbox: Where the commands the agent runs through `terminal/create` run: a `Sandbox`,
            or settings for one over the workspace (default: `workspace-write`, no network).
        box: Whether the agent process itself runs in that sandbox, and its state folders
            (`AgentBox`; default: outside, as a plain process — `cockpit run --agent` contains
            it). `agent_start` and every `tool_start` of the run say where it runs
            (`agent_sandbox`), and only a contained agent's own execute and edit may be
            auto-approved.
    """

    def __init__(self, agent: AgentSpec | Sequence[str], *, cwd: str | os.PathLike[str] | None
                 = None, env: Mapping[str, str] | None = None, cancel_grace: float = 2.5,
                 startup_timeout: float = 60.0, stop_grace: float = 1.0,
                 forward_always: bool = False, setup: SessionSetup | None = None,
                 sandbox: Sandbox | SandboxSettings | None = None,
                 box: AgentBox | None = None) -> None:
        if isinstance(agent, AgentSpec):
            self.spec = agent
        else:
            argv = list(agent)
            if not argv:
                raise ValueError("agent needs a command to start")
            self.spec = AgentSpec(name=os.path.basename(argv[0]), command=argv[0],
                                  args=tuple(argv[1:]), known=False)
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.cancel_grace = cancel_grace
        self.connection = AgentConnection(self.spec, extra_env=env or {},
                                          startup_timeout=startup_timeout,
                                          stop_grace=stop_grace, forward_always=forward_always,
                                          sandbox=sandbox, box=box)
        self.event_sink: EventSink | None = None
        self.approval_controller: ApprovalController | None = None
        self.cancel_token: CancelToken | None = None
        self.modes: list[AgentMode] = []
        self.turn = 0
        self.setup = setup or SessionSetup()
        # Reading a past session (`setup.load_only`): the runner loads it and never prompts.
        self.read_only = self.setup.load_only
        self.conversation: str | None = None  # the ACP session id, kept across agent restarts
        self._opened: Opened | None = None  # the session just opened, to announce
        self._usage_totals: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._hurry = asyncio.Event()  # set by `hurry`: cancels and stops are short from now
        self._following: set[asyncio.Future[None]] = set()  # the agent's mode being set
        self._renew = False  # `new_conversation`: the next run opens a new session

    # the agent's lifetime --------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        """Whether the agent process and its ACP session are up and usable."""
        return self.connection.alive

    async def close(self, *, grace: float | None = None, let_exit: bool = True) -> None:
        """Stop the agent: its commands, its connection, its whole process group (see
        `AgentConnection.close` for `grace` and `let_exit`; once hurried, at once)."""
        if self._hurry.is_set():
            grace, let_exit = min(grace if grace is not None else HURRIED_GRACE,
                                  HURRIED_GRACE), False
        await self.connection.close(grace=grace, let_exit=let_exit)

    def hurry(self) -> None:
        """No one waits for the agent any more (the cockpit's terminal closed): from now on a
        cancel it does not answer within `HURRIED_GRACE` seconds kills it, and `close` stops it
        at once (SIGTERM, then SIGKILL after `HURRIED_GRACE`), instead of `cancel_grace` and
        `stop_grace`. Call it before or while cancelling the run."""
        self._hurry.set()

    async def __aenter__(self) -> AcpRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def new_conversation(self) -> None:
        """The next run starts a new conversation: a new session (`session/new`) on the same
        agent process while it runs (else on a fresh one), with the settings the human chose;
        the earlier session is neither resumed nor reopened by a restart."""
        self.conversation = None
        self.setup = SessionSetup(resume=None, mcp_servers=self.setup.mcp_servers,
                                  wanted=self.setup.wanted)
        self._renew = True

    async def _start(self, workspace: str, cancel: asyncio.Event, *,
                     connect: bool = True) -> None:
        """Start the agent (unless `connect` is False: it runs) and open its ACP session
        (raises AgentFailure or WaitCancelled)."""
        connection = self.connection
        if connect:
            await connection.connect(workspace, cancel, model=self.setup.wanted.model)
        previous = self.conversation  # set: the agent died; reopen its conversation if it can
        setup = self.setup
        try:
            opened = await SessionOpener(connection, cancel).open(workspace, setup, previous)
        except (WaitCancelled, AgentFailure):
            raise
        except Exception as exc:
            raise await connection.failure(exc, "opening the session") from None
        self.setup = SessionSetup(resume=None, mcp_servers=setup.mcp_servers,
                                  wanted=setup.wanted)  # reopened once: later, by `conversation`
        self.conversation = opened.session_id
        connection.opened(opened, agent_name=self._agent_name(title=True))
        self.turn = 0
        self._usage_totals = {}
        self.modes = list(opened.modes)
        self._opened = opened

    # the session's controls: its list, its settings ----------------------------------------------
    async def list_sessions(self, cwd: str | None = None) -> list[ListedSession]:
        """The agent's own list of its sessions (`session/list`, in `cwd` when given), starting
        the agent if it is not running. Raises `SessionsNotOffered` when it has no list, and
        `AgentFailure` saying why when the agent cannot be asked."""
        workspace = os.path.realpath(self.cwd or os.getcwd())
        cancel = asyncio.Event()
        connection = self.connection
        async with self._lock:
            try:
                if connection.process is None or connection.init is None:
                    await self.close(let_exit=False)
                    await connection.connect(workspace, cancel, model=self.setup.wanted.model)
                return await SessionOpener(connection, cancel).list_sessions(cwd)
            except AgentFailure as exc:
                raise AgentFailure(connection.with_stderr(str(exc))) from None

    @property
    def settings(self) -> tuple[list[AgentOption], list[AgentMode], str | None]:
        """The open session's settings, its modes and the current mode."""
        session, client = self.connection.session, self.connection.client
        if session is None or client is None or not self.alive:
            return [], [], None
        return list(session.options), list(session.modes), client.mapper.mode

    async def set_option(self, option_id: str, value: str | bool) -> None:
        """Set one of the session's settings now (kept for a restarted agent too). Raises
        `SettingError` listing the valid values, or `AgentFailure` if the agent refused."""
        text = value if isinstance(value, str) else ("true" if value else "false")
        options, modes, _mode = self.settings
        steps = plan_settings(Wanted(options=((option_id, text),)), options, modes)
        await self._apply(steps[0])
        self.setup = SessionSetup(self.setup.resume, self.setup.mcp_servers,
                                  self.setup.wanted.with_option(steps[0].id, text))

    async def set_mode(self, mode_id: str) -> None:
        """Switch the session's mode now (its mode setting where it has one, else
        `session/set_mode`); errors as for `set_option`."""
        options, modes, _mode = self.settings
        wanted = self.setup.wanted
        steps = plan_settings(Wanted(mode=mode_id), options, modes)
        await self._apply(steps[0])
        step = steps[0]  # kept as the value it set, for a restarted agent
        mode = step.id if step.kind == "mode" else str(step.value)
        self.setup = SessionSetup(self.setup.resume, self.setup.mcp_servers,
                                  Wanted(wanted.model, mode, wanted.options))

    async def _apply(self, step: Step) -> None:
        connection = self.connection
        session, conn, sid = connection.session, connection.conn, connection.session_id
        if session is None or conn is None or sid is None:
            raise SettingError("the agent is not running: settings apply once a task started it")
        try:
            options = await asyncio.wait_for(apply_step(conn, sid, step),
                                             connection.startup_timeout)
        except Exception as exc:
            raise await connection.failure(exc, f"the setting ({step.asked})") from None
        if options is not None:
            session.set_options(options)
        if step.kind == "mode" or step.mode is not None:
            session.set_mode(step.mode or step.id)

    # running a task --------------------------------------------------------------------------
    async def run(self, state: TaskState) -> TaskState:
        """Send `state.task` to the agent as one prompt and report it as events."""
        context = RunContext.of(self)
        context.sink = _PlaceStamp(context.sink, self.connection)
        async with self._lock:
            return await self._run(state, context)

    def _agent_name(self, *, title: bool = False) -> str:
        """How the agent calls itself (its title first, with `title`), else the spec's name."""
        info = self.connection.agent_info
        if info is None:
            return self.spec.name
        return (title and info.title) or info.name or self.spec.name

    def _agent_start(self, context: RunContext, state: TaskState, workspace: str) -> str:
        """`agent_start` as the run starts, before the agent answers anything: the task, the
        workspace and the command (what the agent tells comes with `agent_ready`); returns the
        engine name it gave."""
        engine = self._engine_name()
        context.emit(AgentStart(task=state.task, engine=engine, model=None, cwd=workspace,
                                command=self.spec.display, ready=False))
        return engine

    def _engine_name(self) -> str:
        """The run's engine: the catalogue's name, else the agent's own once it said it (the
        command's name until then)."""
        return f"acp:{self.spec.name if self.spec.known else self._agent_name()}"

    def _agent_ready(self, context: RunContext, *, fresh: bool, started_as: str) -> None:
        """`agent_ready` with what is known of the agent and its session (`engine` when its
        own name changes the one `agent_start` gave, `started_as`); after a fresh start, what
        came with the session: its history, notices, settings."""
        opened, self._opened = (self._opened, None) if fresh else (None, self._opened)
        connection = self.connection
        session, client, sandbox = connection.session, connection.client, connection.sandbox
        mode = opened.mode if opened is not None else (
            client.mapper.mode if client is not None else None)
        engine = self._engine_name()
        context.emit(AgentReady(
            engine=engine if engine != started_as else None,
            agent=connection.agent_info, modes=list(self.modes),
            acp_session_id=connection.session_id,
            new_session=fresh and (opened is None or opened.resumed is None),
            resumed=opened.resumed if opened is not None else None, mode=mode,
            agent_sandbox=connection.agent_place,
            **(sandbox.start_fields() if isinstance(sandbox, Sandbox) else {})))
        if session is None or client is None:
            return
        if opened is not None:
            session.announce_opened(context, opened)
        else:
            session.restate(context)  # each task's journal says how the session stands
        session.flush(context)

    async def _run(self, state: TaskState, context: RunContext) -> TaskState:
        workspace = os.path.realpath(self.cwd or state.cwd or os.getcwd())
        self.cwd = context.cwd = workspace
        cancel = asyncio.Event()
        unwatch = context.on_cancel(cancel.set)
        # The human switches the cockpit's mode during the task: the agent's follows.
        unfollow = context.on_mode_change(lambda mode: self._mode_changed(context, mode))
        try:
            fresh = not self.alive or self._renew
            # At once, before the agent answers: a slow agent is seen (and journaled) starting.
            started_as = self._agent_start(context, state, workspace)
            if fresh and not await self._started(context, workspace, cancel):
                return state
            client = self.connection.client
            assert client is not None
            client.run = context
            self._agent_ready(context, fresh=fresh, started_as=started_as)
            client.commands.announce(again=True)
            if context.mode != DEFAULT_MODE:  # chosen: the agent's own mode follows it
                await self._follow_mode(context, context.mode)
            if self.read_only:  # a past session read: its history, never a prompt
                context.end(AgentEnd(status="completed", result=(
                    f"the agent's session {self.connection.session_id} as it replayed it "
                    "(session/load); nothing was sent to it")))
                return state
            if not state.task.strip():  # open the session only (`cockpit resume` with no task)
                context.end(AgentEnd(status="completed", result=(
                    f"the agent's session {self.connection.session_id} is open: send a task "
                    "to continue the conversation")))
                return state
            if context.cancelled:
                context.close()
                return state
            mentioned = await self._mentioned(context, workspace, state)
            self.turn += 1
            turn = self.turn
            client.start_turn(turn)
            context.emit(TurnStart(turn=turn))
            # The agent runs its own tools once prompted: the checkpoint comes first.
            await context.checkpoint_ready()
            await self._turn(state, client, context, cancel, turn, mentioned)
            return state
        except asyncio.CancelledError:
            self.connection.kill_now()
            raise
        finally:
            unwatch()
            unfollow()
            context.close()
            if self.connection.client is not None:
                self.connection.client.run = None

    def _mode_changed(self, context: RunContext, mode: str) -> None:
        """The cockpit's mode changed during the task: set the agent's (in a task of its own:
        the Session calls listeners synchronously)."""
        task = asyncio.ensure_future(self._follow_mode(context, mode))
        self._following.add(task)
        task.add_done_callback(self._following.discard)

    async def _follow_mode(self, context: RunContext, mode: str) -> None:
        """Set the agent's own mode that matches the cockpit's `mode`, where it offers one
        (`agent_mode_for`: never one that bypasses the cockpit's gate). The gate enforces the
        cockpit's mode either way; what could not be mapped is said once, as a notice."""
        _options, modes, current = self.settings
        if not modes and not _options:
            return  # the agent has no modes: the gate alone enforces it
        target = agent_mode_for(mode, modes)
        if target is None:
            context.emit(AgentNotice(level="info", text=(
                f"the agent offers no mode like the cockpit's {mode!r}: its own mode stays "
                f"{current or 'as it is'}; the cockpit's gate enforces {mode!r}")))
            return
        if target == current:
            return
        try:
            await self.set_mode(target)
        except (SettingError, AgentFailure) as exc:
            context.emit(AgentNotice(level="warning", text=cap(
                f"the agent's mode could not follow the cockpit's {mode!r}: {exc}; the "
                "cockpit's gate enforces it", 1_000)))

    async def _started(self, context: RunContext, workspace: str,
                       cancel: asyncio.Event) -> bool:
        """Start a fresh agent for this run (or, after `new_conversation`, open a new session
        on the running one); False (the run ended, failed or cancelled) if it
        could not be started."""
        connection = self.connection
        reuse, self._renew = self._renew and self.alive, False  # a new session, same process
        if not reuse:
            await self.close(let_exit=False)  # whatever is left of a dead agent
        try:
            await self._start(workspace, cancel, connect=not reuse)
        except (WaitCancelled, AgentFailure) as exc:
            message = connection.with_stderr(str(exc)) if isinstance(exc, AgentFailure) \
                else None
            stderr = connection.stderr_tail()
            await self.close(let_exit=False)
            if message is not None:
                context.end(AgentEnd(status="failed", error=message, stderr=stderr))
            return False  # cancelled: the Session reports it
        return True

    async def _mentioned(self, context: RunContext, workspace: str,
                         state: TaskState) -> list[MentionBlock]:
        """The files the task mentions, as blocks after its text (journaled as they go)."""
        embedded = takes_embedded(self.connection.init)
        reads = await attach_mentions(context, workspace, state.task,
                                      lambda _: "embedded" if embedded else "link")
        return mention_blocks(reads, embedded=embedded)

    async def _prompt(self, client: AcpClient, blocks: Sequence[PromptBlock],
                      cancel: asyncio.Event) -> _Answer:
        """Send the prompt and wait for its answer, or for a cancel: then ask the agent to
        stop, and kill it when it does not within `cancel_grace` seconds."""
        connection = self.connection
        conn, session_id = connection.conn, connection.session_id
        assert conn is not None and session_id is not None
        prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=list(blocks)))
        waiter = asyncio.ensure_future(cancel.wait())
        try:
            await asyncio.wait({prompt, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            prompt.cancel()
            raise
        finally:
            waiter.cancel()
        if not prompt.done():  # cancelled by the cockpit while the agent works
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.cancel(session_id=session_id), 1.0)
            waited = await self._await_cancel(prompt)
            if not prompt.done():
                prompt.cancel()
                await client.terminal_calls.stop_all("cancelled")
                # It already ignored the cancel: a short SIGTERM grace, then SIGKILL, so the
                # whole cancel stays within a few seconds.
                await self.close(grace=min(connection.stop_grace, 0.5), let_exit=False)
                return _Answer(killed=True, waited=waited)
        try:
            return _Answer(response=prompt.result())
        except asyncio.CancelledError:
            return _Answer(killed=True)
        except Exception as exc:
            # A RequestError: the agent said no, but lives.
            return _Answer(error=await connection.prompt_failure(exc),
                           recoverable=isinstance(exc, RequestError))

    async def _await_cancel(self, prompt: asyncio.Future[Any]) -> float | None:
        """Wait for the agent to end the cancelled prompt: up to `cancel_grace` seconds, or
        `HURRIED_GRACE` once hurried (also when that comes during the wait); the grace it had
        (None: it was hurried)."""
        if not self._hurry.is_set():
            hurried: asyncio.Future[Any] = asyncio.ensure_future(self._hurry.wait())
            try:
                await asyncio.wait({prompt, hurried}, timeout=self.cancel_grace,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                hurried.cancel()
        if not self._hurry.is_set():
            return self.cancel_grace
        if not prompt.done():
            await asyncio.wait({prompt}, timeout=HURRIED_GRACE)
        return None

    async def _turn(self, state: TaskState, client: AcpClient, context: RunContext,
                    cancel: asyncio.Event, turn: int,
                    mentioned: Sequence[MentionBlock] = ()) -> None:
        blocks = await client.notes.for_prompt(context)  # a denial's reason, still to pass on
        process = self.connection.process  # kept: its stderr outlives a kill
        mark = process.stderr_count if process is not None else 0
        answer = await self._prompt(client, [*blocks, acp.text_block(state.task), *mentioned],
                                    cancel)
        response, error = answer.response, answer.error
        reply = cap("".join(client.mapper.reply), RESULT_LIMIT)
        if context.cancelled or (response is not None and response.stop_reason == "cancelled"):
            # What the agent wrote to stderr during this turn: why it would not stop, often.
            stderr = process.stderr_since(mark) if process is not None else []
            await self._cancelled(client, context, turn, answer, reply, stderr)
            return
        if error is not None or response is None:
            message = self.connection.with_stderr(str(error or "the agent stopped answering"))
            stderr = self.connection.stderr_tail()
            client.mapper.close_open_calls("the agent failed")
            await client.terminal_calls.stop_all("the agent failed")
            context.emit(TurnEnd(turn=turn, stop_reason=None))
            context.end(AgentEnd(status="failed", error=message, stderr=stderr,
                                 result=reply or None))
            if not (answer.recoverable and self.alive):
                await self.close(let_exit=False)
            return
        stop = response.stop_reason
        client.mapper.close_open_calls(f"the turn ended ({stop})")
        await client.terminal_calls.stop_all("the turn ended")
        usage = self._usage_event(response.usage)
        if usage is not None:
            context.emit(usage)
        context.emit(TurnEnd(turn=turn, stop_reason=stop))
        if stop == "end_turn":
            context.end(AgentEnd(status="completed", result=reply))
        else:
            context.end(AgentEnd(status="failed", result=reply or None,
                                 error=_STOP_REASONS.get(stop, f"the agent stopped: {stop}")))

    async def _cancelled(self, client: AcpClient, context: RunContext, turn: int,
                         answer: _Answer, reply: str, stderr: list[str]) -> None:
        """End a turn the cockpit (or the agent itself) cancelled."""
        client.mapper.close_open_calls("the turn was cancelled")
        if not answer.killed:
            await client.terminal_calls.stop_all("the turn was cancelled")
        reason = context.cancel_reason if context.cancelled else "the agent cancelled the turn"
        if answer.killed and answer.waited is None:  # hurried: nobody left to wait
            reason = (f"{reason}; the agent did not stop at once and no one is left to wait "
                      "for it, so its processes were killed")
        elif answer.killed:
            reason = (f"{reason}; the agent did not stop within {answer.waited:g} s, so "
                      "its processes were killed")
        context.emit(TurnEnd(turn=turn, stop_reason="killed" if answer.killed else "cancelled"))
        context.emit(CancellationObserved(reason=reason or "cancelled", turn=turn))
        context.end(AgentEnd(status="cancelled", result=reply or None, stderr=stderr or None))
        if answer.error is not None and self.connection.process is not None:
            await self.close(let_exit=False)  # it died on the way out: start afresh next time

    def _usage_event(self, usage: Usage | None) -> ModelUsage | None:
        """This turn's tokens: the prompt response reports session totals, we report deltas."""
        if usage is None:
            return None
        now = {"input": usage.input_tokens, "output": usage.output_tokens,
               "thought": usage.thought_tokens or 0, "cached_read": usage.cached_read_tokens or 0,
               "cached_write": usage.cached_write_tokens or 0}
        before = self._usage_totals
        delta = {key: value - before.get(key, 0) for key, value in now.items()}
        if delta["input"] < 0 or delta["output"] < 0:  # the agent reports per turn after all
            delta = now
        self._usage_totals = now
        return ModelUsage(model=None, input_tokens=delta["input"], output_tokens=delta["output"],
                          cost_usd=None, thought_tokens=delta["thought"],
                          cached_read_tokens=delta["cached_read"],
                          cached_write_tokens=delta["cached_write"])
