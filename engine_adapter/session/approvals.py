"""`ApprovalDesk`: the approval half of a Session's control plane. Gated calls announced,
answered (by rules, grants, policies, a human, or automatically) and journaled, with what is
still pending and the human's reasons. The Session owns one and answers through it, as it does
its questions through a `QuestionDesk`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from engine_adapter.events import ApprovalRequested, ApprovalResolved, BaseEvent
from engine_adapter.grants import ApprovalGate, ApprovalRequest, Ruling, Scope
from engine_adapter.grants.modes import auto_refusal
from engine_adapter.lookalikes import lookalike_marks, marks_line
from engine_adapter.session.cancel import SessionCancelToken
from engine_adapter.session.question_desk import unique_id
from engine_adapter.shell import grantability, grantability_off_loop
from engine_adapter.text import cap

__all__ = ["AUTO_APPROVE_MAX_TIER", "REASON_LIMIT", "UNSANDBOXED_AUTO_APPROVE_MAX_TIER",
           "ApprovalDesk", "PendingApproval", "Policy"]

Policy = Literal["deny", "approve"]

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
    proposal: tuple[str, str] | None = None  # an edit's (path, proposed text): editable


class ApprovalDesk:
    """The approvals of one Session: it announces a gated call, waits for its answer and
    journals it (through `emit`, the Session's sink).

    Args:
        emit: The Session's `emit`.
        gate: What answers before anyone is asked (deny rules, the policy, grants).
        cancel_token: The run's token: once tripped, nothing is asked and grants are not used.
        session_id: Named in the note of a grant saved from the approval bar.
        unattended, approval_timeout, amendment_policy, escalation_policy, auto_approve: as
            `Session` takes them.
        ended: Whether the run has ended (a grant written after it answers nothing).
    """

    def __init__(self, emit: Callable[[BaseEvent], None], gate: ApprovalGate,
                 cancel_token: SessionCancelToken, *, session_id: str, unattended: bool,
                 approval_timeout: float | None, amendment_policy: Policy,
                 escalation_policy: Policy, auto_approve: bool,
                 ended: Callable[[], bool]) -> None:
        self.emit, self.gate, self.cancel_token = emit, gate, cancel_token
        self.session_id = session_id
        self.unattended, self.approval_timeout = unattended, approval_timeout
        self.amendment_policy, self.escalation_policy = amendment_policy, escalation_policy
        self.auto_approve = auto_approve
        # Whether the run's commands run in a sandbox (its `agent_start` said so): what auto
        # mode allows unasked depends on it.
        self.run_sandboxed = False
        self._ended = ended
        self._pending: dict[str, PendingApproval] = {}
        self._saving: set[asyncio.Task[None]] = set()  # `[a] always` grants being written
        self._answered: set[str] = set()
        self._ids: set[str] = set()  # every approval id this session's events have used
        self._reasons: dict[str, str] = {}  # approval id -> the human's words with the answer
        self._offers: dict[str, tuple[str, str]] = {}  # engine's id -> an edit's (path, text)
        self._edited: dict[str, str] = {}  # approval id -> the text the human accepted instead

    @property
    def pending(self) -> list[PendingApproval]:
        """Approvals waiting for a human, oldest first."""
        return list(self._pending.values())

    async def request(
        self,
        approval_id: str,
        tool: str,
        reason: str,
        tool_input: dict[str, Any],
        *,
        tier: int = 3,
        sandboxed: bool | None = None,
        auto_max_tier: int | None = None,
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
        nothing. `auto_max_tier` lowers the tier `auto_approve` stops at for this call (an ACP
        agent's own tool while the agent runs outside the sandbox: reads only).
        """
        asked_as, approval_id = approval_id, unique_id(approval_id, self._ids)
        # An edit offered for review goes with this request only (answered unasked: dropped);
        # a version the human wrote for an earlier request under the same id never applies.
        proposal = self._offers.pop(asked_as, None)
        self._edited.pop(asked_as, None)
        verdict = await grantability_off_loop(tool, tool_input, tier)
        prefix = verdict.prefix
        # Auto mode: allowed unasked only what the sandbox contains; otherwise it asks and the
        # question says why (never a silent fallback).
        uncontained = auto_refusal(
            tool=tool, tier=tier, run_sandboxed=self.run_sandboxed, sandboxed=sandboxed,
            auto_max_tier=auto_max_tier, attended=not self.unattended) \
            if self.gate.mode == "auto" else None
        if not self.cancel_token.cancelled:
            request = ApprovalRequest(tool, tool_input, tier, prefix, verdict.grantable,
                                      approval_id, reason)
            ruling = await self.gate.rule(request, verdict, contained=self.gate.mode == "auto"
                                          and uncontained is None)
            # Without its sandbox only a refusal answers unasked: a grant or a policy's allow
            # was given for commands that run sandboxed (never a silent downgrade).
            if ruling is not None and sandboxed is False and ruling.allowed:
                ruling = None
            if ruling is not None and not self.cancel_token.cancelled:
                if ruling.via == "mode" and not ruling.allowed and ruling.rule:
                    self._reasons[approval_id] = self._reasons[asked_as] = ruling.rule
                return self._decide_unasked(approval_id, tool, tool_input, tier, ruling)
        if uncontained is not None and self.gate.mode == "auto" and not self.unattended:
            reason = f"auto mode asks ({uncontained}): {reason}"
        self.emit(ApprovalRequested(approval_id=approval_id, tool=tool, reason=reason,
                                    tool_input=tool_input, tier=tier, prefix=prefix,
                                    grantable=verdict.grantable,
                                    ungrantable_reason=verdict.reason))
        if self.cancel_token.cancelled:
            return self._decide_auto(approval_id, tool, False)
        if self.unattended:
            most = AUTO_APPROVE_MAX_TIER if sandboxed is not False else \
                UNSANDBOXED_AUTO_APPROVE_MAX_TIER
            if auto_max_tier is not None:
                most = min(most, auto_max_tier)
            allowed = ((self.auto_approve and tier <= most)
                       or (tool == "alter_verification" and self.amendment_policy == "approve")
                       or (tool == "switch_to_editing" and self.escalation_policy == "approve"))
            return self._decide_auto(approval_id, tool, allowed)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = PendingApproval(approval_id, tool, tier, prefix, future,
                                                     grantable=verdict.grantable,
                                                     asked_as=asked_as,
                                                     proposal=proposal)
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
        `request` would find (here nothing is emitted and nobody is asked)."""
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

    def offer_edit(self, approval_id: str, path: str, proposed: str) -> None:
        """The engine's next request under `approval_id` is an edit whose whole new text is
        `proposed` (the file `path`, as shown): the human may accept it in a version of their
        own (`resolve(edited=…)`). Kept in memory only, until that request is answered."""
        self._offers[approval_id] = (path, proposed)

    def proposal(self, approval_id: str) -> tuple[str, str] | None:
        """A pending edit's (path, proposed text), when its engine offered it, else None."""
        pending = self._pending.get(approval_id)
        return pending.proposal if pending is not None else None

    def edited_content(self, approval_id: str) -> str | None:
        """The text the human accepted instead of the proposal for `approval_id` (the events'
        id or the engine's), or None (accepted as proposed, or not an edit)."""
        return self._edited.get(approval_id)

    def resolve(self, approval_id: str, *, allow: bool, remember: bool = False,
                scope: Scope = "session", reason: str | None = None,
                edited: str | None = None) -> None:
        """Answer a pending approval (for an id never seen, the only pending one, if exactly one).

        `approval_id` is the id the session's events carry (see `request`).
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
        if edited is not None and allow and pending.proposal is not None:
            # Their own version: allowed once, for exactly that text (never a grant).
            self._edited[pending.approval_id] = self._edited[pending.asked_as] = edited
            remember = False
        else:
            edited = None
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
        self._resolved(pending, allow, stored, "session" if stored else None, None, words,
                       edited=edited is not None)

    async def _save_then_resolve(self, pending: PendingApproval, scope: Scope) -> None:
        note = f"allowed from the approval bar (session {self.session_id})"
        # A grant for a look-alike program (`gіt`) says so where the grants are reviewed.
        odd = marks_line(lookalike_marks(pending.tool) + lookalike_marks(pending.prefix))
        if odd:
            note = f"{note}; ⚠ {cap(odd, chars=700)}"
        kept, grant_id = await asyncio.to_thread(self.gate.save_grant, scope, pending.tool,
                                                 pending.prefix, pending.tier, note)
        if self._ended():
            return  # the run ended while the grant was written: nothing waits for the answer
        self._resolved(pending, True, True, kept, grant_id)

    def _resolved(self, pending: PendingApproval, allow: bool, stored: bool,
                  scope: Scope | None, grant_id: str | None, reason: str | None = None, *,
                  edited: bool = False) -> None:
        # Journal the decision before the engine can act on it.
        self.emit(ApprovalResolved(approval_id=pending.approval_id, tool=pending.tool,
                                   allowed=allow, via="human", remember=stored, scope=scope,
                                   grant_id=grant_id, reason=reason, edited=edited or None))
        if not pending.future.done():
            pending.future.set_result(allow)

    def denial_reason(self, approval_id: str) -> str | None:
        """The human's words given with the answer to `approval_id` (the events' id, or the id
        the engine asked with: its latest answer), or `None`."""
        return self._reasons.get(approval_id)

    def deny_all(self) -> None:
        """Deny every pending approval, journaled (the run is being cancelled)."""
        for pending in list(self._pending.values()):
            self._pending.pop(pending.approval_id, None)
            self._decide_auto(pending.approval_id, pending.tool, False)
            if not pending.future.done():
                pending.future.set_result(False)

    def release(self) -> None:
        """The run is over: whoever still waits for an answer gets a denial (nothing more is
        journaled)."""
        for pending in list(self._pending.values()):
            self._pending.pop(pending.approval_id, None)
            if not pending.future.done():
                pending.future.set_result(False)

    async def settle(self) -> None:
        """Let the `[a] always` grants still being written land."""
        if self._saving:
            await asyncio.gather(*self._saving, return_exceptions=True)
