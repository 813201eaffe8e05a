"""`ApprovalGate`: what answers a gated call before anyone is asked, and what `[a] always` keeps.

In order, first answer wins:

1. deny rules (saved, any scope): denied at once (`via="deny-rule"`);
   then plan mode: a call that could write or run is denied at once (`via="mode"`, see
   `grants.modes`);
2. the approval policy, if any: allow / deny (`via="policy"`), or "ask" (the human or the
   unattended rules decide, no grant consulted: an explicit ask is never overridden by a saved
   allow); an exception in it is a deny with the error;
3. grants, when the call's verdict says it is grantable: the session's, then the saved ones
   (this project's, then the user's) (`via="grant"`, with the grant's scope and id);
4. accept-edits and auto mode: a plain edit in the workspace (an edit tool at tier 2, see
   `grants.modes.edit_runs`) is allowed (`via="mode"`); auto mode: a call the run's sandbox
   contains, tier 3 or lower, a human present, is allowed (`via="mode"`);
5. nothing: the Session asks.

In ask mode neither a policy's allow nor a grant answers (3 and 4 are skipped): every call asks.
The mode in force is `mode`, which the Session sets; a call already asked keeps its question
(a mode change never widens what an approval shown to the human allows).

The gate also holds what the grants screen lists and revokes (`entries`, `revoke`). Methods that
touch the disk block; the Session and the app call them in worker threads.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from engine_adapter.events import DEFAULT_MODE, PermissionMode
from engine_adapter.grants.grant_file import GrantFileError
from engine_adapter.grants.modes import EDIT_RULE, edit_runs, mode_refusal, mode_rule
from engine_adapter.grants.policy import ApprovalPolicy, ApprovalRequest, PolicyDecision
from engine_adapter.grants.records import DenyRule, SavedGrant, Scope, now
from engine_adapter.grants.store import GrantStore
from engine_adapter.shell import ApprovalGrant, Grantability
from engine_adapter.shell.grantability import OFFLOAD_CHARS, input_chars

__all__ = ["ApprovalGate", "GrantEntry", "Ruling"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ruling:
    """An answer given without asking: allowed or not, by what (`via`), and which grant, rule or
    policy rule (`scope`, `grant_id`, `rule`), or the policy's `error`."""

    allowed: bool
    via: Literal["grant", "deny-rule", "policy", "mode"]
    scope: Scope | None = None
    grant_id: str | None = None
    rule: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class GrantEntry:
    """One line of the grants screen: a grant or deny rule in force, in any scope. `key` is
    the saved id, or `session-N` for the N-th session grant."""

    key: str
    scope: Scope
    kind: Literal["allow", "deny"]
    tool: str
    prefix: str
    max_tier: int | None
    created: datetime | None
    last_used: datetime | None
    note: str = ""


def describe_rule(entry: SavedGrant | DenyRule) -> str:
    """How the journal names a grant or deny rule: `shell `git push``."""
    return f"{entry.tool} `{entry.prefix}`"


class ApprovalGate:
    """The deny rules, policy and grants one Session consults (see the module docstring).

    Args:
        session_grants: The session's grants, by reference (`SessionState.grants`).
        store: Saved grants and deny rules, or None (session grants only).
        policy: An approval policy, or None.
    """

    def __init__(self, session_grants: list[ApprovalGrant], store: GrantStore | None = None,
                 policy: ApprovalPolicy | None = None) -> None:
        self.session_grants = session_grants
        self.store = store
        self.policy = policy
        self.mode: PermissionMode = DEFAULT_MODE  # the permission mode in force (the Session's)
        self.problems: list[str] = []  # one line each: saves that failed, usage not written
        self._problem_listeners: list[Callable[[str], Any]] = []
        self._session_used: dict[ApprovalGrant, datetime] = {}
        self._session_made: dict[ApprovalGrant, datetime] = {}
        self._lock = threading.Lock()

    # deciding ----------------------------------------------------------------------------------
    async def rule(self, request: ApprovalRequest, verdict: Grantability, *,
                   contained: bool = False) -> Ruling | None:
        """The answer to `request` without asking, or None (ask). Never raises.
        `contained`: the run's sandbox contains the call and a human is present (what auto mode
        allows unasked; see `grants.modes.auto_refusal`)."""
        store = self.store
        mode = self.mode
        if store is not None and store.stale():
            await asyncio.to_thread(store.refresh)  # another cockpit wrote: read it again
        deny = await self._deny_rule(request)
        if deny is not None:
            return deny
        refused = mode_refusal(mode, request.tool)
        if refused is not None:
            return Ruling(False, "mode", rule=refused)
        decided = await self._policy(request)
        if decided == "ask":
            return None  # an explicit ask: the human (or the unattended rules), not a grant
        if decided is not None:
            return None if mode == "ask" and decided.allowed else decided
        if mode == "ask":
            return None  # every call asks: no grant answers for the human
        granted = self._granted(request.tool, verdict, request.tier)
        if granted is None and edit_runs(mode, request.tool, request.tier):
            return Ruling(True, "mode", rule=mode_rule(mode, EDIT_RULE))
        if granted is None and mode == "auto" and contained and request.tier < 4:
            return Ruling(True, "mode", rule=mode_rule(mode, "the sandbox contains it"))
        return granted

    async def _deny_rule(self, request: ApprovalRequest) -> Ruling | None:
        store = self.store
        if store is None or not store.denies():
            return None
        if input_chars(request.tool_input) > OFFLOAD_CHARS:
            rule = await asyncio.to_thread(store.deny_for, request.tool, request.tool_input)
        else:
            rule = store.deny_for(request.tool, request.tool_input)
        if rule is None:
            return None
        store.record_use(rule)
        return Ruling(False, "deny-rule", rule.scope, rule.id, describe_rule(rule))

    async def _policy(self, request: ApprovalRequest) -> Ruling | Literal["ask"] | None:
        """The policy's answer: a Ruling, "ask" (no grant may answer then), or None (no
        opinion)."""
        if self.policy is None:
            return None
        try:
            result: Any = self.policy(request)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # the policy failed: nothing it meant to allow goes ahead
            return Ruling(False, "policy", error=f"{type(exc).__name__}: {exc}"[:2_000])
        rule: str | None = None
        if isinstance(result, PolicyDecision):
            result, rule = result.decision, result.rule
        if result is None:
            return None
        if result == "deny":
            return Ruling(False, "policy", rule=rule)
        if result == "allow":
            if request.tier > 3:  # tier 4 is never allowed by a policy: the human decides
                return "ask"
            return Ruling(True, "policy", rule=rule)
        if result == "ask":
            return "ask"
        return Ruling(False, "policy", error=f"the policy answered {str(result)[:100]!r} "
                      "(allow, deny, ask or None)")

    def _granted(self, tool: str, verdict: Grantability, tier: int) -> Ruling | None:
        if not verdict.grantable:
            return None
        for grant in self.session_grants:
            if grant.matches(tool, verdict.prefix, tier):
                with self._lock:
                    self._session_used[grant] = now()
                return Ruling(True, "grant", "session")
        store = self.store
        saved = store.match(tool, verdict.prefix, tier) if store is not None else None
        if saved is None:
            return None
        assert store is not None
        store.record_use(saved)
        return Ruling(True, "grant", saved.scope, saved.id, describe_rule(saved))

    def covered(self, tool: str, tool_input: Mapping[str, Any], verdict: Grantability,
                tier: int) -> bool:
        """Whether a standing grant covers this call and no deny rule stops it (nothing is
        recorded: this only answers the question). With a policy, never: the policy may say
        "ask" or "deny" for it, so every such call must come back through the gate (an ACP
        agent is not told "allow always"); nor in ask or plan mode, for the same reason."""
        if not verdict.grantable or self.policy is not None or self.mode in ("ask", "plan"):
            return False
        store = self.store
        if store is not None and store.deny_for(tool, tool_input) is not None:
            return False
        if any(g.matches(tool, verdict.prefix, tier) for g in self.session_grants):
            return True
        return store is not None and store.match(tool, verdict.prefix, tier) is not None

    def describe(self) -> str:
        """Who answers before anyone is asked, in words ("" when nothing does): "2 deny rules,
        the policy ci.toml, 3 saved grants"."""
        parts = []
        store = self.store
        denies = len(store.denies()) if store is not None else 0
        if denies:
            parts.append(f"{denies} deny rule{'s' if denies != 1 else ''}")
        if self.policy is not None:
            source = getattr(self.policy, "source", None)
            parts.append(f"the policy {source}" if source else "the approval policy")
        granted = len(self.session_grants) + (len(store.grants()) if store is not None else 0)
        if granted:
            parts.append(f"{granted} grant{'s' if granted != 1 else ''}")
        return ", ".join(parts)

    # remembering -------------------------------------------------------------------------------
    def unavailable(self, scope: Scope) -> str | None:
        """Why `[a] always` cannot keep a grant in `scope` for this run, or None."""
        if scope == "session":
            return None
        if self.store is None:
            return "this cockpit keeps no saved grants (no grant store was given)"
        return self.store.unavailable(scope)

    def remember_session(self, tool: str, prefix: str, tier: int) -> None:
        """Keep a session grant (in memory, for the rest of the conversation)."""
        grant = ApprovalGrant(tool=tool, prefix=prefix, tier=tier)
        if grant not in self.session_grants:
            self.session_grants.append(grant)
            with self._lock:
                self._session_made[grant] = now()

    def save_grant(self, scope: Scope, tool: str, prefix: str, tier: int,
                   note: str = "") -> tuple[Scope, str | None]:
        """Save a grant in `scope` (blocking: call it in a thread). When it cannot be saved, it
        is kept for the session instead and the reason joins `problems`. Returns the scope it
        was kept in and its id (None for a session grant)."""
        why = self.unavailable(scope)
        if why is None and self.store is not None and scope != "session":
            try:
                saved = self.store.add_grant(scope, tool, prefix, tier, note)
                return saved.scope, saved.id
            except GrantFileError as exc:
                why = str(exc)
        if why is not None:
            self._problem(f"kept for this session only: {why}")
        self.remember_session(tool, prefix, tier)
        return "session", None

    def used_saved(self) -> bool:
        """Whether a saved grant or deny rule was used and its last use is not written yet."""
        return self.store is not None and self.store.has_unsaved_usage()

    def save_usage(self) -> None:
        """Write saved grants' last uses (blocking); a failure joins `problems`."""
        if self.store is None:
            return
        try:
            self.store.save_usage()
        except GrantFileError as exc:
            self._problem(f"last use not recorded: {exc}")

    # reviewing ---------------------------------------------------------------------------------
    def entries(self) -> list[GrantEntry]:
        """Every grant and deny rule in force: deny rules first, then the session's grants,
        this project's and the user's."""
        found: list[GrantEntry] = []
        store = self.store
        if store is not None:
            found += [GrantEntry(d.id, d.scope, "deny", d.tool, d.prefix, None, d.created,
                                 d.last_used, d.note) for d in store.denies()]
        with self._lock:
            made, used = dict(self._session_made), dict(self._session_used)
        found += [GrantEntry(f"session-{n}", "session", "allow", g.tool, g.prefix, g.tier,
                             made.get(g), used.get(g))
                  for n, g in enumerate(self.session_grants, 1)]
        if store is not None:
            found += [GrantEntry(g.id, g.scope, "allow", g.tool, g.prefix, g.max_tier,
                                 g.created, g.last_used, g.note) for g in store.grants()]
        return found

    def revoke(self, entry: GrantEntry) -> GrantEntry:
        """Revoke a grant or deny rule the grants screen listed (blocking for saved ones).
        A session grant is found by what it allows, not by its place in the list (the list may
        have changed since). Raises `GrantFileError` saying why not."""
        if entry.scope == "session":
            grant = ApprovalGrant(tool=entry.tool, prefix=entry.prefix, tier=entry.max_tier or 0)
            if grant not in self.session_grants:
                raise GrantFileError("that session grant was already revoked")
            self.session_grants.remove(grant)
            return entry
        if self.store is None:
            raise GrantFileError(f"no saved grant {entry.key}")
        gone = self.store.revoke(entry.key)
        kind: Literal["allow", "deny"] = "allow" if isinstance(gone, SavedGrant) else "deny"
        return GrantEntry(gone.id, gone.scope, kind, gone.tool, gone.prefix,
                          gone.max_tier if isinstance(gone, SavedGrant) else None,
                          gone.created, gone.last_used, gone.note)

    def on_problem(self, listener: Callable[[str], Any]) -> None:
        """Call `listener(line)` when a problem joins `problems` (from any thread): a grant the
        human chose to save was kept for the session only, say."""
        self._problem_listeners.append(listener)

    def _problem(self, line: str) -> None:
        self.problems.append(line)
        for listener in list(self._problem_listeners):
            try:
                listener(line)
            except Exception:  # a listener's failure is its own
                log.exception("grant problem listener failed")

    def on_change(self, listener: Callable[[], Any]) -> None:
        """Call `listener()` when saved grants change on disk or by this cockpit (from any
        thread)."""
        if self.store is not None:
            self.store.on_change(listener)
