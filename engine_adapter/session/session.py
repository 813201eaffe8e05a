"""`Session`: one run of an engine, with two planes.

Observation flows out: every event the engine emits is stamped, written to the journal, appended
to `history`, and only then seen by `events()` streams. Control flows in: `resolve_approval()`
answers a gated call (a denial may carry the human's reason), `answer_question()` answers an
agent's question, `cancel()` stops the run. An event may announce that approval or an answer is
needed; only the control methods decide it.

The control plane's two desks are the Session's own collaborators: its approvals
(`approvals.ApprovalDesk`) and its questions (`question_desk.QuestionDesk`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol, cast

from engine_adapter.checkpoints import Checkpointer
from engine_adapter.events import (
    DEFAULT_MODE,
    EVENT_ADAPTER,
    AgentEnd,
    Answer,
    AnswerAction,
    BaseEvent,
    CancellationObserved,
    CheckpointTaken,
    HarnessEvent,
    ModeChanged,
    PermissionMode,
    bounded_line,
    parse_mode,
    redacted_line,
    stamped,
)
from engine_adapter.grants import ApprovalGate, ApprovalPolicy, GrantStore, Scope
from engine_adapter.journal import JsonlEventJournal
from engine_adapter.runner import AgentRunner
from engine_adapter.sandbox import is_sandboxed
from engine_adapter.session.approvals import ApprovalDesk, PendingApproval, Policy
from engine_adapter.session.cancel import SessionCancelToken
from engine_adapter.session.history import EventLog
from engine_adapter.session.question_desk import PendingQuestion, QuestionDesk
from engine_adapter.shell import ApprovalGrant
from engine_adapter.state import TaskState

__all__ = ["Session"]

log = logging.getLogger(__name__)

_AFTER_CHECKPOINT = frozenset({"tool_start", "approval_requested", "verification_start",
                               "turn_start", "turn_end", "agent_end"})
"""Events that may not precede the pending checkpoint of their turn: what runs something, and
the turn's boundaries. One of them waits for the checkpoint (the engine should have awaited
`checkpoint_ready()` first, as the built-in and ACP engines do, so the loop never waits)."""

_JOURNAL_WRITE = JsonlEventJournal.write
"""The journal write that also takes the line the Session already serialised (`line=`)."""


class EventJournal(Protocol):
    """Where the Session writes each event before anyone sees it (`JsonlEventJournal`, or a
    caller's own)."""

    def write(self, event: BaseEvent) -> None: ...

    def close(self) -> None: ...


def _is_agent_end(event: BaseEvent) -> bool:
    return event.type == "agent_end"


def _after_journal_failure(event: BaseEvent, journal_error: str) -> BaseEvent | None:
    """What an engine's event becomes once the journal failed and the run was stopped for it:
    that is a failure, not a cancellation. The engine's `cancellation_observed` of that stop is
    dropped; its `agent_end` becomes `failed`, the journal's error first, the engine's own error
    after it, every other field (a partial result, say) kept. Anything else is unchanged."""
    if event.type == "cancellation_observed" and getattr(event, "reason", None) == journal_error:
        return None
    if event.type != "agent_end":
        return event
    own = getattr(event, "error", None)
    error = journal_error if not own or journal_error in own else f"{journal_error}; {own}"
    return event.model_copy(update={"status": "failed", "error": error})


class Session:
    """A live, interruptible run of one task by one engine.

    Args:
        runner: The engine. Its `event_sink`, `approval_controller` and `cancel_token` are set
            to this session's for the duration of `run()`.
        state: The task to run.
        session_id: Stamped on every event; generated when omitted. Reuse one id across the
            tasks of a conversation.
        journal: The write-ahead journal; each event is written (and flushed) before it enters
            `history` or any observer sees it. `run()` closes it.
        grants: Standing approvals to consult and add to. Pass `SessionState.grants` (by
            reference) so an `[a] always` outlives this run.
        unattended: No human is present: every approval is denied at once (`via="auto"`),
            except the two policy tools below.
        approval_timeout: Seconds an attended approval may wait before it is denied
            (`via="auto"`); `None` waits for the human.
        amendment_policy: Unattended disposition of `alter_verification` ("deny" or "approve").
        escalation_policy: Unattended disposition of `switch_to_editing` ("deny" or "approve").
        auto_approve: Unattended: allow every call of tier 3 or lower at once (`via="auto"`);
            tier 4 is still denied. No effect when a human is present (attended).
        grant_store: Saved grants and deny rules (`engine_adapter.grants.GrantStore`): its deny
            rules deny at once, its grants allow like session grants, and `[a] always` may
            keep a grant in the `project` or `user` scope.
        approval_policy: Consulted before anyone is asked: gets an `ApprovalRequest` (tool,
            input, tier, prefix) and returns "allow", "deny", "ask" or None (see
            `engine_adapter.grants.policy`); an exception in it is a deny, journaled with it.
        checkpoints: Takes a checkpoint of the workspace at each `turn_start` and at the run's
            end (`engine_adapter.checkpoints.Checkpointer`), in its own thread; each is
            journaled as `checkpoint_taken` after its `turn_start` and before anything of that
            turn runs (a `tool_start`, an approval, a check), and the end's before `agent_end`.
        mode: The permission mode the run starts in (`engine_adapter.events.modes`: "ask",
            "accept-edits", "auto", "plan"); `set_mode` changes it. A mode other than the
            default is journaled (`mode_changed`, `source="start"`) right after `agent_start`.

    Who answers, in order: deny rules, the policy, grants, then the human (or, unattended,
    the rules above). `gate` holds all of them (the grants screen lists and revokes there).
    """

    def __init__(
        self,
        runner: AgentRunner,
        state: TaskState,
        *,
        session_id: str | None = None,
        journal: EventJournal | None = None,
        grants: list[ApprovalGrant] | None = None,
        unattended: bool = False,
        approval_timeout: float | None = None,
        amendment_policy: Policy = "deny",
        escalation_policy: Policy = "deny",
        auto_approve: bool = False,
        grant_store: GrantStore | None = None,
        approval_policy: ApprovalPolicy | None = None,
        checkpoints: Checkpointer | None = None,
        mode: PermissionMode = DEFAULT_MODE,
    ) -> None:
        for name, policy in (("amendment_policy", amendment_policy),
                             ("escalation_policy", escalation_policy)):
            if policy not in ("deny", "approve"):
                raise ValueError(f"{name} must be 'deny' or 'approve', not {policy!r}")
        if parse_mode(mode) != mode:
            raise ValueError(f"mode must be ask, accept-edits, auto or plan, not {mode!r}")
        if approval_timeout is not None and approval_timeout < 0:
            raise ValueError("approval_timeout must be a number of seconds >= 0, or None")
        self.runner = runner
        self.state = state
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._journal: EventJournal | None = None
        self._line_journal: JsonlEventJournal | None = None
        self.journal = journal
        self.grants: list[ApprovalGrant] = grants if grants is not None else []
        self.gate = ApprovalGate(self.grants, grant_store, approval_policy)
        self.gate.mode = mode
        self._mode_listeners: list[Callable[[PermissionMode], Any]] = []
        self._run_started = False  # `agent_start` emitted: a mode change is journaled now
        self._ready = False  # the run's start (and its sandbox) known: `agent_start`/`agent_ready`
        self.cancel_token = SessionCancelToken()
        self.journal_error: str | None = None
        # History holds each event as its journal line (bytes: compact, and never walked by the
        # garbage collector); the recent ones stay decoded for readers that keep up.
        self._log: EventLog[HarnessEvent] = EventLog(EVENT_ADAPTER.validate_json, pack=True)
        self._lock = threading.Lock()
        self._emitted = 0  # events emitted so far: the next one's `seq`
        self._approvals = ApprovalDesk(
            self.emit, self.gate, self.cancel_token, session_id=self.session_id,
            unattended=unattended, approval_timeout=approval_timeout,
            amendment_policy=amendment_policy, escalation_policy=escalation_policy,
            auto_approve=auto_approve, ended=lambda: self._ended)
        self._questions = QuestionDesk(
            self.emit, lambda: self.cancel_token.cancelled or self._ended)
        self._started = False
        self._ended = False
        self._cancellation_seen = False
        self.checkpoints = checkpoints
        # The checkpoint being taken (its turn and the worker's future), the engine's
        # `agent_end` held until the end's checkpoint is journaled, and whether it has been.
        self._checkpoint: tuple[int | None, concurrent.futures.Future[CheckpointTaken]] | None
        self._checkpoint = None
        self._held_end: BaseEvent | None = None
        self._end_checkpointed = checkpoints is None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def journal(self) -> EventJournal | None:
        """The write-ahead journal (any object with `write(event)` and `close()`), or None."""
        return self._journal

    @journal.setter
    def journal(self, journal: EventJournal | None) -> None:
        self._journal = journal
        # Our own journal, its `write` not overridden, also takes the line emit has already
        # serialised; anything else gets the documented `write(event)`.
        write = getattr(journal, "write", None)
        self._line_journal = journal if isinstance(journal, JsonlEventJournal) and getattr(
            write, "__func__", None) is _JOURNAL_WRITE else None

    # Observation plane ---------------------------------------------------------------------
    @property
    def history(self) -> Sequence[HarnessEvent]:
        """Every event of the run so far, in `seq` order."""
        return self._log

    def events(self, start: int = 0) -> AsyncIterator[HarnessEvent]:
        """A new, independent stream of this run's events, from the first (or from `seq`
        `start`: a client that reconnects with its cursor), ending after `agent_end`. It
        subscribes now, at call time: create it before `run()` and it misses nothing. A stream
        that is never read costs the run nothing."""
        return self._log.cursor(max(start, 0), _is_agent_end)

    def shed(self) -> None:
        """Once the run has ended: keep only the compact form of its history (its journal
        lines, packed), not the recent events decoded for observers that keep up. A host holds
        many ended runs; each would keep thousands of decoded events it no longer streams.
        `history` reads the same after, decoding on demand. Nothing while the run is going."""
        if self._ended:
            self._log.shed()

    @property
    def unattended(self) -> bool:
        """No human is present: approvals are answered by rules, questions declined."""
        return self._approvals.unattended

    @property
    def approval_timeout(self) -> float | None:
        """Seconds an attended approval (or question) waits before it is denied (declined)."""
        return self._approvals.approval_timeout

    @property
    def auto_approve(self) -> bool:
        """Unattended: calls of tier 3 or lower are allowed at once (tier 4 never)."""
        return self._approvals.auto_approve

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Approvals waiting for a human, oldest first."""
        return self._approvals.pending

    @property
    def pending_questions(self) -> list[PendingQuestion]:
        """The agent's questions waiting for the human, oldest first."""
        return self._questions.pending

    @property
    def done(self) -> bool:
        """Whether the run has ended (`agent_end` emitted)."""
        return self._ended

    # The engine's sink -----------------------------------------------------------------------
    def emit(self, event: BaseEvent) -> None:
        """Stamp `session_id`, `seq` and `ts`, write the event to the journal, then publish it.

        Never blocks or awaits. A journal that fails to write stops the run (an action that
        cannot be recorded must not go ahead) and makes it `failed` with the journal's error, but
        the event still reaches observers.
        """
        if self.journal_error is not None:
            after = _after_journal_failure(event, self.journal_error)
            if after is None:
                return
            event = after
        if self._checkpoint is not None and event.type != "checkpoint_taken" and (
                event.type in _AFTER_CHECKPOINT or self._checkpoint[1].done()):
            self._settle_checkpoint()
        if event.type == "agent_end" and not self._end_checkpointed:
            if self._held_end is None:  # journaled once the end's checkpoint is (`run`)
                self._held_end = event
            return
        with self._lock:
            seq = self._emitted
            self._emitted = seq + 1
            # A stamped copy: the engine's own object stays as it built it.
            event = stamped(event, self.session_id, seq, time.time())
            # Serialised once: the journal line is also the compact form history keeps. Deep or
            # huge parts are cut (visibly) so that every line reads back.
            event, line = bounded_line(event)
            # Secrets (a key pasted in a task, printed by a tool) never reach the journal or
            # anyone watching: redacted by their shape, after a one-scan pre-check of the line.
            event, line = redacted_line(event, line)
            journal, line_journal = self._journal, self._line_journal
            if journal is not None and self.journal_error is None:
                try:
                    if line_journal is not None:  # ours, `write` as it is: take the line
                        line_journal.write(event, line=line)
                    else:  # a caller's journal, or a subclass: the documented signature only
                        journal.write(event)
                except Exception as exc:  # any journal, ours or a caller's: record, then stop
                    self.journal_error = f"journal write failed: {str(exc) or type(exc).__name__}"
                    log.info("%s", self.journal_error)  # the run's end says it, once
            # Every event class is one of the union's (a line of any other would not read back).
            self._log.append(line, cast(HarnessEvent, event))
            etype = event.type
        if etype == "agent_start" and not self._run_started:
            self._run_started = True
            self._approvals.run_sandboxed = is_sandboxed(getattr(event, "sandbox", None))
            if getattr(event, "ready", None) is not False:  # else: at `agent_ready`
                self._journal_start_mode()
        elif etype == "agent_ready":
            # An external agent's sandbox is known once it started (`agent_start.ready` false).
            if getattr(event, "sandbox", None) is not None:
                self._approvals.run_sandboxed = is_sandboxed(getattr(event, "sandbox", None))
            if not self._ready:
                self._journal_start_mode()
        elif etype == "agent_end":
            self._ended = True
        elif etype == "turn_start" and self.checkpoints is not None:
            self._begin_checkpoint(getattr(event, "turn", None))
        elif etype == "cancellation_observed":
            self._cancellation_seen = True
        if self.journal_error is not None and not self.cancel_token.cancelled:
            self.cancel(self.journal_error)  # the engine stops; the run ends `failed`, see above

    def record(self, event: BaseEvent) -> HarnessEvent:
        """Journal and publish an event about the run after it has ended (a rewind of its
        workspace from the live cockpit), in order with the run's events: stamped with the next
        `seq`, appended to the journal (our own journal is opened again by its path, so its
        hash chain continues; a caller's gets `write(event)`) and to `history`, where a reader
        folding by position (the live cockpit's pump) finds it. Safe from a worker thread.
        `RuntimeError` while the run is going; `JournalError` (and nothing recorded) when the
        journal cannot take it."""
        if not self._ended:
            raise RuntimeError("the run is still going: an event about it is recorded once it "
                               "has ended")
        with self._lock:
            seq = self._emitted
            event = stamped(event, self.session_id, seq, time.time())
            event, line = bounded_line(event)
            event, line = redacted_line(event, line)
            journal = self._journal
            if isinstance(journal, JsonlEventJournal):
                again = JsonlEventJournal(journal.path, fsync=journal.fsync)
                try:
                    again.write(event, line=line)
                finally:
                    again.close()
            elif journal is not None:
                journal.write(event)
            self._emitted = seq + 1
            self._log.append(line, cast(HarnessEvent, event))
        return cast(HarnessEvent, event)

    # Checkpoints -----------------------------------------------------------------------------
    def _begin_checkpoint(self, turn: int | None) -> None:
        checkpoints = self.checkpoints
        if checkpoints is None or self.journal_error is not None:
            return
        future = checkpoints.begin(turn)
        pending = self._checkpoint = (turn, future)
        loop = self._loop
        if loop is not None:  # journaled as soon as it is taken, on the loop
            def taken(_: object) -> None:
                with contextlib.suppress(RuntimeError):  # the loop closed: `run` settles it
                    loop.call_soon_threadsafe(self._settle_if, pending)
            future.add_done_callback(taken)

    def _settle_if(self, pending: object) -> None:
        if self._checkpoint is pending and not self._ended:
            self._settle_checkpoint()

    def _settle_checkpoint(self) -> None:
        """Journal the pending checkpoint, waiting for it if it is still being taken."""
        pending, self._checkpoint = self._checkpoint, None
        if pending is None:
            return
        turn, future = pending
        try:
            event = future.result()
        except BaseException as exc:  # the worker died or was stopped: say so, never raise
            event = CheckpointTaken(turn=turn, error=f"no checkpoint taken: {exc!r}")
        self.emit(event)

    async def checkpoint_ready(self) -> None:
        """Return once the checkpoint the last `turn_start` began is taken and journaled (at
        once when there is none). An engine awaits this before its turn's first tool, so that
        the loop never waits for a checkpoint; `request_approval` does it too."""
        pending = self._checkpoint
        if pending is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wrap_future(pending[1]))
        if self._checkpoint is pending:
            self._settle_checkpoint()

    async def _checkpoint_end(self) -> None:
        """The run's last checkpoint, journaled before its `agent_end` (held until then)."""
        try:
            if self._end_checkpointed:
                return
            await self.checkpoint_ready()
            checkpoints = self.checkpoints
            if checkpoints is not None and self.journal_error is None:
                future = checkpoints.begin(None)
                try:
                    event = await asyncio.shield(asyncio.wrap_future(future))
                except Exception as exc:
                    event = CheckpointTaken(kind="end", error=f"no checkpoint taken: {exc!r}")
                self.emit(event)
        finally:
            self._release_end()

    def _release_end(self) -> None:
        self._end_checkpointed = True
        held, self._held_end = self._held_end, None
        if held is not None:
            self.emit(held)

    # Approvals -------------------------------------------------------------------------------
    async def request_approval(self, approval_id: str, tool: str, reason: str,
                               tool_input: dict[str, Any], *, tier: int = 3,
                               sandboxed: bool | None = None,
                               auto_max_tier: int | None = None) -> bool:
        """Announce a gated call and wait for its decision: True iff it may go ahead (see
        `ApprovalDesk.request`: deny rules, the policy and grants answer first; unattended, the
        rules of `unattended`, `auto_approve` and the two policies; attended, the human's
        `resolve_approval`, or a deny after `approval_timeout`). Makes the Session an
        `ApprovalController`; `sandboxed=False` (a `SandboxAwareController`) says the call's
        commands would have run in a sandbox but will not; `auto_max_tier` caps what
        `auto_approve` may allow for this call."""
        await self.checkpoint_ready()  # nothing of a turn is decided before its checkpoint
        return await self._approvals.request(approval_id, tool, reason, tool_input, tier=tier,
                                             sandboxed=sandboxed, auto_max_tier=auto_max_tier)

    def resolve_approval(self, approval_id: str, *, allow: bool, remember: bool = False,
                         scope: Scope = "session", reason: str | None = None,
                         edited: str | None = None) -> None:
        """Answer a pending approval by the id its events carry (see `ApprovalDesk.resolve`):
        `allow and remember` keeps a grant in `scope` when the call is grantable; `reason` is
        the human's words; `edited`, with `allow`, the human's own version of an edit the
        engine offered for review (`edit_proposal`): that text is written instead, once, and
        the engine tells its agent. A stale or unknown id with nothing (or several) pending
        does nothing."""
        self._approvals.resolve(approval_id, allow=allow, remember=remember, scope=scope,
                                reason=reason, edited=edited)

    def offer_edit(self, approval_id: str, path: str, proposed: str) -> None:
        """The engine's next `request_approval(approval_id, …)` is an edit of `path` whose
        whole new text is `proposed`: the human may edit it before accepting. Makes the Session
        an `EditReviewController` (with `edited_content`)."""
        self._approvals.offer_edit(approval_id, path, proposed)

    def edit_proposal(self, approval_id: str) -> tuple[str, str] | None:
        """A pending edit's (path, proposed text) that the human may edit, or None."""
        return self._approvals.proposal(approval_id)

    def edited_content(self, approval_id: str) -> str | None:
        """The human's own version accepted for `approval_id`, or None (as proposed)."""
        return self._approvals.edited_content(approval_id)

    def is_granted(self, tool: str, tool_input: dict[str, Any], tier: int) -> bool:
        """Whether a standing grant covers this call and no deny rule stops it, asking nobody.
        Makes the Session a `GrantAwareController`."""
        return self._approvals.is_granted(tool, tool_input, tier)

    def denial_reason(self, approval_id: str) -> str | None:
        """The human's words given with the answer to `approval_id`, or `None`. Makes the
        Session a `ReasonAwareController`."""
        return self._approvals.denial_reason(approval_id)

    # The permission mode ----------------------------------------------------------------------
    @property
    def mode(self) -> PermissionMode:
        """The permission mode in force (see `engine_adapter.grants.modes`)."""
        return self.gate.mode

    def set_mode(self, mode: PermissionMode, *, source: str = "human") -> None:
        """Switch the permission mode (the mode key): journaled as `mode_changed`, then each
        `on_mode_change` listener is told (an ACP engine maps it to the agent's own modes).
        Calls decided from now on follow it; an approval already shown keeps its question (a
        change never widens what it allows). The same mode again, or an unknown one
        (`ValueError`), changes nothing."""
        if parse_mode(mode) != mode:
            raise ValueError(f"mode must be ask, accept-edits, auto or plan, not {mode!r}")
        previous = self.gate.mode
        if mode == previous:
            return
        self.gate.mode = mode
        if self._run_started and not self._ended:
            self._journal_mode(mode, previous, source)
        for listener in list(self._mode_listeners):
            try:
                listener(mode)
            except Exception:  # a listener's failure is its own
                log.exception("mode listener failed")

    def on_mode_change(self, listener: Callable[[PermissionMode], Any]) -> Callable[[], None]:
        """Call `listener(mode)` after each change of mode; returns a function that stops it.
        Makes the Session a `ModeAwareController`."""
        self._mode_listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._mode_listeners.remove(listener)
        return remove

    def _journal_start_mode(self) -> None:
        """A run that starts in a mode other than the default says so, once, as soon as the
        sandbox it runs in is known (auto depends on it)."""
        self._ready = True
        if self.gate.mode != DEFAULT_MODE:
            self._journal_mode(self.gate.mode, None, "start")

    def _journal_mode(self, mode: PermissionMode, previous: PermissionMode | None,
                      source: str) -> None:
        note = None
        if mode == "auto" and not self._approvals.run_sandboxed:
            note = "no sandbox is active: auto asks as accept edits does"
        elif mode == "auto" and self.unattended:
            note = "nobody is watching: the unattended rules decide"
        self.emit(ModeChanged(mode=mode, previous=previous, source=source, note=note))

    # Questions -------------------------------------------------------------------------------
    async def ask_question(self, question_id: str, message: str, fields: list[Any], *,
                           call_id: str | None = None, url: str | None = None) -> Answer:
        """Put an agent's question to the human; returns the `Answer` (see `QuestionDesk`).
        `url`: a link the agent asks the human to open (journaled with the question).

        `question_asked` is emitted; then: cancelled -> `cancel`; unattended -> `decline` at
        once (`via="auto"`); attended -> the human's `answer_question`, or `decline` after
        `approval_timeout`. Makes the Session a `QuestionController`."""
        return await self._questions.ask(
            question_id, message, fields, call_id=call_id, url=url, attended=not self.unattended,
            timeout=self.approval_timeout)

    def answer_question(self, question_id: str, action: AnswerAction = "accept",
                        values: dict[str, Any] | None = None) -> bool:
        """Answer an open question: `accept` with `values` (field name -> answer, checked
        against its fields: `questions.AnswerError` if they do not fit, and nothing is
        answered), or `decline`. Returns False, doing nothing, for a question not open (already
        answered, or never asked): a stale key press must not answer another question."""
        return self._questions.answer(question_id, action, values)

    def cancel(self, reason: str = "cancelled") -> None:
        """Trip the cancel token, deny every pending approval and cancel every open question.
        The engine stops at its next boundary; the run ends with `cancellation_observed` and
        `agent_end(status="cancelled")`. Idempotent; a no-op once the run has ended."""
        if self._ended:
            return
        self.cancel_token.trip(reason)
        self._questions.cancel_all()
        self._approvals.deny_all()

    # Running -------------------------------------------------------------------------------
    async def run(self) -> TaskState:
        """Drive the engine to the end of the task; returns the terminal `TaskState`.

        Whatever the engine does — return, raise, forget `agent_end` — the run ends with exactly
        one `agent_end`, the journal closed and every stream ended.
        """
        if self._started:
            raise RuntimeError("a Session runs once; create a new Session for the next task")
        self._started = True
        runner, state = self.runner, self.state
        runner.event_sink, runner.approval_controller = self, self
        runner.cancel_token = self.cancel_token
        state.status = "running"
        self._loop = asyncio.get_running_loop()
        try:
            returned = await runner.run(state)
            if isinstance(returned, TaskState):
                state = self.state = returned
            await self._checkpoint_end()
            self._end_if_needed(None)
        except asyncio.CancelledError:
            self.cancel_token.trip("the run's task was cancelled")
            self._release_end()  # no waiting now: the run's end checkpoint is skipped
            self._end_if_needed(None)
            raise
        except Exception as exc:  # the engine crashed: the run fails, the session does not
            log.debug("engine raised", exc_info=True)
            await self._checkpoint_end()
            self._end_if_needed(f"{type(exc).__name__}: {exc}")
        finally:
            self._checkpoint = None
            if self.checkpoints is not None:
                self.checkpoints.close()
            self._approvals.release()
            self._questions.release()
            self._close_journal()
            self._log.close()
            runner.event_sink = runner.approval_controller = runner.cancel_token = None
        end = next((e for e in reversed(self._log) if e.type == "agent_end"), None)
        if isinstance(end, AgentEnd):
            state.status, state.result, state.error = end.status, end.result, end.error
        await self._approvals.settle()  # `[a] always` grants still being written land
        if self.gate.used_saved():  # when saved grants were last used, into their files
            await asyncio.to_thread(self.gate.save_usage)
        return state

    def _end_if_needed(self, error: str | None) -> None:
        if self._ended:
            return
        token = self.cancel_token
        if self.journal_error is not None:  # stopped because it could not be recorded
            self.emit(AgentEnd(status="failed", error=error))
        elif token.cancelled:
            if not self._cancellation_seen:
                self.emit(CancellationObserved(reason=token.reason or "cancelled"))
            self.emit(AgentEnd(status="cancelled", error=error))
        elif error is not None:
            self.emit(AgentEnd(status="failed", error=error))
        elif self.state.status in ("completed", "failed", "cancelled"):
            self.emit(AgentEnd(status=self.state.status, result=self.state.result,
                               error=self.state.error))
        else:
            self.emit(AgentEnd(status="failed", error="the engine stopped without ending the run"))

    def _close_journal(self) -> None:
        if self.journal is None:
            return
        try:
            self.journal.close()
        except OSError as exc:
            if self.journal_error is None:  # (a write that failed already said it)
                self.journal_error = f"closing the journal failed: {exc}"
                log.warning("%s", self.journal_error)
