"""The immutable records of a view: an approval, a verification check, a grant, a turn, a
command the agent offers. The fold replaces them (`_replace`) rather than changes them, so a
view's copy may share them (see `run_view`).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

__all__ = ["ApprovalView", "CheckView", "CommandView", "GrantView", "PlanRow", "TurnView"]


class ApprovalView(NamedTuple):
    """A gated call's approval: pending, then allowed or denied, by whom. `grantable` and
    `ungrantable_reason` are the verdict its `approval_requested` event carried (what `[a]
    always` would do), shown as they are: views never decide it again."""

    approval_id: str
    tool: str
    reason: str
    tool_input: dict[str, Any]
    tier: int
    prefix: str
    grantable: bool = False
    ungrantable_reason: str | None = None
    state: str = "pending"  # pending | allowed | denied
    via: str | None = None  # human | grant | auto | deny-rule | policy
    remember: bool = False
    # What decided it, when the journal says: a grant's or deny rule's scope and id, the rule
    # in words (or the policy rule), the policy's error.
    scope: str | None = None
    grant_id: str | None = None
    rule: str | None = None
    error: str | None = None
    answer_reason: str | None = None  # the human's words with the answer
    asked_ts: float | None = None  # when it was asked (None: a grant allowed it)
    answered_ts: float | None = None
    # Look-alike characters in the input, in one line ("" for none; `input_lookalikes`).
    lookalikes: str = ""
    edited: bool = False  # allowed in the human's own version (edited in $EDITOR)

    @property
    def waited_ms(self) -> float | None:
        """How long the call waited for its answer (None when nobody was asked)."""
        if self.asked_ts is None or self.answered_ts is None:
            return None
        return max(0.0, (self.answered_ts - self.asked_ts) * 1000.0)


class CheckView(NamedTuple):
    """One verification check: "pending", "running", "passed" or "failed"."""

    check_id: str
    name: str
    command: str | None
    added_in: int  # plan version that added or changed it (1 = original plan)
    status: str = "pending"
    output: str = ""
    duration_ms: float | None = None


class GrantLike(Protocol):
    """What every kind of grant has: a session grant (`ApprovalGrant`), a saved grant or deny
    rule, a gate's `GrantEntry`; `GrantView.of` reads the rest where there is one."""

    @property
    def tool(self) -> str: ...
    @property
    def prefix(self) -> str: ...


class GrantView(NamedTuple):
    """A standing grant in force (or, `deny`, a deny rule), in its scope: `session`, or a saved
    one (`project`, `user`, with its id)."""

    tool: str
    prefix: str
    tier: int
    scope: str = "session"
    grant_id: str | None = None
    deny: bool = False

    @classmethod
    def of(cls, grant: GrantLike) -> GrantView:
        """The view of a session grant (`ApprovalGrant`), a saved grant or deny rule, or a
        grants-screen entry."""
        tier = getattr(grant, "max_tier", None)
        if tier is None:
            tier = getattr(grant, "tier", 0) or 0
        return cls(grant.tool, grant.prefix, tier, getattr(grant, "scope", "session"),
                   getattr(grant, "id", None) or getattr(grant, "key", None),
                   getattr(grant, "kind", "allow") == "deny")


class TurnView(NamedTuple):
    """One turn: where it starts in the transcript and how it stopped."""

    task: int
    turn: int
    first_item: int
    stop_reason: str | None = None


class CommandView(NamedTuple):
    """A command the agent offers: `name` (typed as `/name`), what it does, its input's hint."""

    name: str
    description: str
    hint: str | None


class PlanRow(NamedTuple):
    """One entry of the agent's plan: what (as the agent wrote it: untrusted, shown through the
    views' safe text), its status and priority (the agent's words, cut to a word)."""

    content: str
    status: str
    priority: str
