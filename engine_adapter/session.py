"""`Session`: one run of an engine, with two planes.

Observation flows out: every event the engine emits is stamped, written to the journal, appended
to `history`, and only then seen by `events()` streams. Control flows in: `resolve_approval()`
answers a gated call (a denial may carry the human's reason), `answer_question()` answers an
agent's question, `cancel()` stops the run. An event may announce that approval or an answer is
needed; only the control methods decide it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .bus import EventLog
from .cancel import SessionCancelToken
from .event_caps import bounded_line
from .events import (
    EVENT_ADAPTER,
    AgentEnd,
    ApprovalRequested,
    ApprovalResolved,
    BaseEvent,
    CancellationObserved,
    HarnessEvent,
    stamped,
)
from .grants import ApprovalGate, ApprovalPolicy, ApprovalRequest, GrantStore, Ruling, Scope
from .journal import JsonlEventJournal
from .question_desk import PendingQuestion, QuestionDesk, unique_id
from .questions import Answer, AnswerAction
from .runner import AgentRunner
from .shell import ApprovalGrant, grantability, grantability_off_loop
from .state import TaskState
from .text import cap

__all__ = ["REASON_LIMIT", "PendingApproval", "PendingQuestion", "Session",
           "SessionCancelToken"]

log = logging.getLogger(__name__)

Policy = Literal["deny", "approve"]

_JOURNAL_WRITE = JsonlEventJournal.write
"""The journal write that also takes the line the Session already serialised (`line=`)."""

AUTO_APPROVE_MAX_TIER = 3
"""`auto_approve` allows calls up to this tier; tier 4 (destructive) is never auto-approved."""

UNSANDBOXED_AUTO_APPROVE_MAX_TIER = 2
"""...and up to this tier for a command that would have run in a sandbox but will not
(`request_approval(sandboxed=False)`): no command, in practice."""

REASON_LIMIT = 4_000
"""Characters of a human's reason kept with an answer (and passed on to the agent)."""


@dataclass
class PendingApproval:
    """A gated call waiting for a human. `approval_id` is the id in the session's events (the
    engine's own id, made unique: see `Session.request_approval`); `grantable` is the verdict
    the `approval_requested` event carried; `asked_as` the id the engine asked with."""

    approval_id: str
    tool: str
    tier: int
    prefix: str
    future: asyncio.Future[bool]
    grantable: bool = False
    asked_as: str = ""


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

    Who answers, in order: deny rules, the policy, grants, then the human (or, unattended,
    the rules above). `gate` holds all of them (the grants screen lists and revokes there).
    """

    def __init__(
        self,
        runner: AgentRunner,
        state: TaskState,
        *,
        session_id: str | None = None,
        journal: JsonlEventJournal | None = None,
        grants: list[ApprovalGrant] | None = None,
        unattended: bool = False,
        approval_timeout: float | None = None,
        amendment_policy: Policy = "deny",
        escalation_policy: Policy = "deny",
        auto_approve: bool = False,
        grant_store: GrantStore | None = None,
        approval_policy: ApprovalPolicy | None = None,
    ) -> None:
        for name, policy in (("amendment_policy", amendment_policy),
                             ("escalation_policy", escalation_policy)):
            if policy not in ("deny", "approve"):
                raise ValueError(f"{name} must be 'deny' or 'approve', not {policy!r}")
        if approval_timeout is not None and approval_timeout < 0:
            raise ValueError("approval_timeout must be a number of seconds >= 0, or None")
        self.runner = runner
        self.state = state
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._journal: Any = None
        self._line_journal: JsonlEventJournal | None = None
        self.journal = journal
        self.grants: list[ApprovalGrant] = grants if grants is not None else []
        self.gate = ApprovalGate(self.grants, grant_store, approval_policy)
        self.unattended = unattended
        self.approval_timeout = approval_timeout
        self.amendment_policy = amendment_policy
        self.escalation_policy = escalation_policy
        self.auto_approve = auto_approve
        self.cancel_token = SessionCancelToken()
        self.journal_error: str | None = None
        # History holds each event as its journal line (bytes: compact, and never walked by the
        # garbage collector); the recent ones stay decoded for readers that keep up.
        self._log: EventLog[HarnessEvent] = EventLog(EVENT_ADAPTER.validate_json)
        self._lock = threading.Lock()
        self._emitted = 0  # events emitted so far: the next one's `seq`
        self._pending: dict[str, PendingApproval] = {}
        self._saving: set[asyncio.Task[None]] = set()  # `[a] always` grants being written
        self._answered: set[str] = set()
        self._ids: set[str] = set()  # every approval id this session's events have used
        self._reasons: dict[str, str] = {}  # approval id -> the human's words with the answer
        self._questions = QuestionDesk(
            self.emit, lambda: self.cancel_token.cancelled or self._ended)
        self._started = False
        self._ended = False
        self._cancellation_seen = False

    @property
    def journal(self) -> Any:
        """The write-ahead journal (any object with `write(event)` and `close()`), or None."""
        return self._journal

    @journal.setter
    def journal(self, journal: Any) -> None:
        self._journal = journal
        # Our own journal, its `write` not overridden, also takes the line emit has already
        # serialised; anything else gets the documented `write(event)`.
        write = getattr(journal, "write", None)
        self._line_journal = journal if getattr(write, "__func__", None) is _JOURNAL_WRITE \
            else None

    # Observation plane ---------------------------------------------------------------------
    @property
    def history(self) -> Sequence[HarnessEvent]:
        """Every event of the run so far, in `seq` order."""
        return self._log

    def events(self) -> AsyncIterator[HarnessEvent]:
        """A new, independent stream of this run's events, from the first, ending after
        `agent_end`. It subscribes now, at call time: create it before `run()` and it misses
        nothing. A stream that is never read costs the run nothing."""
        return self._log.cursor(0, _is_agent_end)

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Approvals waiting for a human, oldest first."""
        return list(self._pending.values())

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
            event = _after_journal_failure(event, self.journal_error)
            if event is None:
                return
        with self._lock:
            seq = self._emitted
            self._emitted = seq + 1
            # A stamped copy: the engine's own object stays as it built it.
            event = stamped(event, self.session_id, seq, time.time())
            # Serialised once: the journal line is also the compact form history keeps. Deep or
            # huge parts are cut (visibly) so that every line reads back.
            event, line = bounded_line(event)
            journal = self._journal
            if journal is not None and self.journal_error is None:
                try:
                    if journal is self._line_journal:  # ours, `write` as it is: take the line
                        journal.write(event, line=line)  # type: ignore[call-arg]
                    else:  # a caller's journal, or a subclass: the documented signature only
                        journal.write(event)
                except Exception as exc:  # any journal, ours or a caller's: record, then stop
                    self.journal_error = f"journal write failed: {str(exc) or type(exc).__name__}"
                    log.info("%s", self.journal_error)  # the run's end says it, once
            self._log.append(line, event)
            etype = event.type
        if etype == "agent_end":
            self._ended = True
        elif etype == "cancellation_observed":
            self._cancellation_seen = True
        if self.journal_error is not None and not self.cancel_token.cancelled:
            self.cancel(self.journal_error)  # the engine stops; the run ends `failed`, see above

    # Control plane -------------------------------------------------------------------------
    async def request_approval(
        self,
        approval_id: str,
        tool: str,
        reason: str,
        tool_input: dict[str, Any],
        *,
        tier: int = 3,
        sandboxed: bool | None = None,
    ) -> bool:
        """Announce a gated call and wait for its decision. True iff it may go ahead.

        A deny rule, the approval policy or a matching standing grant may answer at once
        (`approval_resolved` with `via` "deny-rule", "policy" or "grant", naming what decided,
        and no `approval_requested`: see `grants.gate`). Otherwise `approval_requested` is
        emitted, carrying the verdict
        of `grantability` (whether `[a] always` may grant it, and why not), then: unattended ->
        denied at once (`via="auto"`) unless `auto_approve` (tier <= 3) or a policy approves
        the tool; attended -> the human's `resolve_approval`, or a deny after
        `approval_timeout`.

        Engines (and the agents behind them) choose their own ids, and may reuse one. The
        session's events never do: an id already used in this session becomes `ID~2` (`~3`, …)
        in the events, and `resolve_approval` answers by that id, so an answer always reaches
        the request the human was shown.

        `sandboxed=False` says the call runs commands that would have run in a sandbox but
        will not (none on this machine, or one run outside it): no grant and no policy's allow
        covers it (a deny rule or a policy's deny still answers) and `auto_approve` stops at
        tier 2, so a human decides — never a silent downgrade. True
        (in the sandbox) and None (no sandbox in play, or a call that runs no command) change
        nothing.
        """
        asked_as, approval_id = approval_id, unique_id(approval_id, self._ids)
        verdict = await grantability_off_loop(tool, tool_input, tier)
        prefix = verdict.prefix
        if not self.cancel_token.cancelled:
            request = ApprovalRequest(tool, tool_input, tier, prefix, verdict.grantable,
                                      approval_id, reason)
            ruling = await self.gate.rule(request, verdict)
            # Without its sandbox only a refusal answers unasked: a grant or a policy's allow
            # was given for commands that run sandboxed (never a silent downgrade).
            if ruling is not None and sandboxed is False and ruling.allowed:
                ruling = None
            if ruling is not None and not self.cancel_token.cancelled:
                return self._decide_unasked(approval_id, tool, tool_input, tier, ruling)
        self.emit(ApprovalRequested(approval_id=approval_id, tool=tool, reason=reason,
                                    tool_input=tool_input, tier=tier, prefix=prefix,
                                    grantable=verdict.grantable,
                                    ungrantable_reason=verdict.reason))
        if self.cancel_token.cancelled:
            return self._decide_auto(approval_id, tool, False)
        if self.unattended:
            most = AUTO_APPROVE_MAX_TIER if sandboxed is not False else \
                UNSANDBOXED_AUTO_APPROVE_MAX_TIER
            allowed = ((self.auto_approve and tier <= most)
                       or (tool == "alter_verification" and self.amendment_policy == "approve")
                       or (tool == "switch_to_editing" and self.escalation_policy == "approve"))
            return self._decide_auto(approval_id, tool, allowed)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = PendingApproval(approval_id, tool, tier, prefix, future,
                                                     grantable=verdict.grantable,
                                                     asked_as=asked_as)
        try:
            if self.approval_timeout is None:
                return await asyncio.shield(future)
            return await asyncio.wait_for(asyncio.shield(future), self.approval_timeout)
        except TimeoutError:
            if future.done():
                return future.result()
            self._pending.pop(approval_id, None)
            return self._decide_auto(approval_id, tool, False)
        finally:
            # The engine's task was cancelled mid-wait: nobody waits for an answer any more.
            pending = self._pending.get(approval_id)
            if pending is not None and pending.future is future and not future.done():
                self._pending.pop(approval_id, None)
                self._decide_auto(approval_id, tool, False)

    def is_granted(self, tool: str, tool_input: dict[str, Any], tier: int) -> bool:
        """Whether a standing grant covers this call and no deny rule stops it: what
        `request_approval` would find (here nothing is emitted and nobody is asked). Makes
        the Session a `GrantAwareController`."""
        return self.gate.covered(tool, tool_input, grantability(tool, tool_input, tier), tier)

    def _decide_unasked(self, approval_id: str, tool: str, tool_input: dict[str, Any],
                        tier: int, ruling: Ruling) -> bool:
        """Journal an answer given without asking (it carries the input the views show)."""
        self._answered.add(approval_id)
        self.emit(ApprovalResolved(approval_id=approval_id, tool=tool, allowed=ruling.allowed,
                                   via=ruling.via, remember=False, scope=ruling.scope,
                                   grant_id=ruling.grant_id, rule=ruling.rule,
                                   error=ruling.error, tool_input=tool_input, tier=tier))
        return ruling.allowed

    def _decide_auto(self, approval_id: str, tool: str, allowed: bool) -> bool:
        self._answered.add(approval_id)
        self.emit(ApprovalResolved(approval_id=approval_id, tool=tool, allowed=allowed,
                                   via="auto", remember=False))
        return allowed

    def resolve_approval(self, approval_id: str, *, allow: bool, remember: bool = False,
                         scope: Scope = "session", reason: str | None = None) -> None:
        """Answer a pending approval (for an id never seen, the only pending one, if exactly one).

        `approval_id` is the id the session's events carry (see `request_approval`).
        `allow and remember` keeps a standing grant for the call's prefix when the request's
        verdict said it is grantable (otherwise it is allow-once), in `scope`: "session" (in
        memory, for the conversation), "project" or "user" (saved by the grant store; the
        answer is journaled once the grant is written, and a grant that cannot be saved is
        kept for the session, the reason in `gate.problems`).
        `reason`: the human's words with the answer (journaled in `approval_resolved`, cut to
        `REASON_LIMIT` characters; the engine reads it with `denial_reason` and may pass it on to
        its agent). Answering an already-answered id, or an unknown id with nothing (or several)
        pending, does nothing: a stale double key-press must not answer a different request.
        """
        pending = self._pending.get(approval_id)
        if pending is None:
            if approval_id in self._answered or len(self._pending) != 1:
                return
            pending = next(iter(self._pending.values()))
        del self._pending[pending.approval_id]
        self._answered.add(pending.approval_id)
        stored = bool(allow and remember and pending.grantable)
        if stored and scope != "session":
            task = asyncio.get_running_loop().create_task(self._save_then_resolve(
                pending, scope))
            self._saving.add(task)
            task.add_done_callback(self._saving.discard)
            return
        if stored:
            self.gate.remember_session(pending.tool, pending.prefix, pending.tier)
        words = cap(reason.strip(), chars=REASON_LIMIT) if reason and reason.strip() else None
        if words is not None:
            self._reasons[pending.approval_id] = words
            self._reasons[pending.asked_as or pending.approval_id] = words
        self._resolved(pending, allow, stored, "session" if stored else None, None, words)

    async def _save_then_resolve(self, pending: PendingApproval, scope: Scope) -> None:
        note = f"allowed from the approval bar (session {self.session_id})"
        kept, grant_id = await asyncio.to_thread(self.gate.save_grant, scope, pending.tool,
                                                 pending.prefix, pending.tier, note)
        if self._ended:
            return  # the run ended while the grant was written: nothing waits for the answer
        self._resolved(pending, True, True, kept, grant_id)

    def _resolved(self, pending: PendingApproval, allow: bool, stored: bool,
                  scope: Scope | None, grant_id: str | None, reason: str | None = None) -> None:
        # Journal the decision before the engine can act on it.
        self.emit(ApprovalResolved(approval_id=pending.approval_id, tool=pending.tool,
                                   allowed=allow, via="human", remember=stored, scope=scope,
                                   grant_id=grant_id, reason=reason))
        if not pending.future.done():
            pending.future.set_result(allow)

    def denial_reason(self, approval_id: str) -> str | None:
        """The human's words given with the answer to `approval_id` (the events' id, or the id
        the engine asked with: its latest answer), or `None`. Makes the Session a
        `ReasonAwareController`."""
        return self._reasons.get(approval_id)

    # Questions -------------------------------------------------------------------------------
    async def ask_question(self, question_id: str, message: str, fields: list[Any], *,
                           call_id: str | None = None) -> Answer:
        """Put an agent's question to the human; returns the `Answer` (see `QuestionDesk`).

        `question_asked` is emitted; then: cancelled -> `cancel`; unattended -> `decline` at
        once (`via="auto"`); attended -> the human's `answer_question`, or `decline` after
        `approval_timeout`. Makes the Session a `QuestionController`."""
        return await self._questions.ask(
            question_id, message, fields, call_id=call_id, attended=not self.unattended,
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
        for pending in list(self._pending.values()):
            self._pending.pop(pending.approval_id, None)
            self._decide_auto(pending.approval_id, pending.tool, False)
            if not pending.future.done():
                pending.future.set_result(False)

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
        try:
            returned = await runner.run(state)
            if isinstance(returned, TaskState):
                state = self.state = returned
            self._end_if_needed(None)
        except asyncio.CancelledError:
            self.cancel_token.trip("the run's task was cancelled")
            self._end_if_needed(None)
            raise
        except Exception as exc:  # the engine crashed: the run fails, the session does not
            log.debug("engine raised", exc_info=True)
            self._end_if_needed(f"{type(exc).__name__}: {exc}")
        finally:
            for pending in list(self._pending.values()):
                self._pending.pop(pending.approval_id, None)
                if not pending.future.done():
                    pending.future.set_result(False)
            self._questions.release()
            self._close_journal()
            self._log.close()
            runner.event_sink = runner.approval_controller = runner.cancel_token = None
        end = next((e for e in reversed(self._log) if e.type == "agent_end"), None)
        if isinstance(end, AgentEnd):
            state.status, state.result, state.error = end.status, end.result, end.error
        if self._saving:  # `[a] always` grants still being written: let them land
            await asyncio.gather(*self._saving, return_exceptions=True)
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
