"""How every view words who decided a gated call: the transcript, headless, replay and export.

One function, so "allowed by a project grant (g-3f9a2c1b)" reads the same everywhere. It takes
the fields of an `approval_resolved` event (or of the fold's `ApprovalView`), all of which may be
missing in an older journal.
"""

from __future__ import annotations

__all__ = ["decided_by", "scope_phrase"]

_SCOPE_WORDS = {"session": "session", "project": "project", "user": "user (every project)"}


def scope_phrase(scope: str | None) -> str:
    """`session`, `project`, `user (every project)`; `""` for no scope."""
    return _SCOPE_WORDS.get(scope or "", scope or "")


def decided_by(*, allowed: bool, via: str | None, remember: bool = False,
               scope: str | None = None, grant_id: str | None = None,
               rule: str | None = None, error: str | None = None) -> str:
    """One phrase: "allowed by a project grant g-3f9a2c1b (shell `git status`)", "denied by a
    deny rule …", "allowed by the policy (ci.toml rule 2 …)", "allowed by you, always (user)",
    "denied: the policy failed (ValueError: …)". Text only: callers escape and style it."""
    verb = "allowed" if allowed else "denied"
    ident = f" {grant_id}" if grant_id else ""
    what = f" ({rule})" if rule else ""
    if via == "grant":
        kind = f"a {scope} grant" if scope in ("project", "user") else (
            "a session grant" if scope == "session" else "a standing grant")
        return f"{verb} by {kind}{ident}{what}"
    if via == "deny-rule":
        where = f" ({scope})" if scope else ""
        return f"{verb} by a deny rule{ident}{where}" + (f": {rule}" if rule else "")
    if via == "policy":
        if error:
            return f"{verb}: the approval policy failed ({error})"
        return f"{verb} by the policy{what}"
    if via == "human":
        if remember:
            where = f", {scope_phrase(scope)}" if scope else ""
            return f"{verb} by you, always{where}{ident}"
        return f"{verb} by you"
    if via == "auto":
        return f"{verb} automatically"
    return verb if via is None else f"{verb} ({via})"
