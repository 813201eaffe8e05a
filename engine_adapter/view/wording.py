"""The wording every view shares: durations, the wait for a human, an approval's verdict, and
how a run's end reads (the error first, never the reply in its place)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.view.input_fields import input_line

if TYPE_CHECKING:  # (annotations only: the wording loads no event model)
    from engine_adapter.events import ApprovalResolved
    from engine_adapter.view.items import ToolCallItem
    from engine_adapter.view.records import ApprovalView

__all__ = ["INPUT_CHANGED", "approval_verdict", "call_timing", "duration_text", "end_lines",
           "input_changed_text", "timing_text", "verdict_text"]

INPUT_CHANGED = "⚠ input changed after you approved it"
"""What a row says when the engine reported another input after the call was approved
(`ToolStart.approved_input`): the approval (a human's, a grant's, …) was for the other one."""


def duration_text(ms: float) -> str:
    """`12 ms`, `1.4 s`, `3 min 5 s`."""
    if ms < 1_000:
        return f"{ms:.0f} ms"
    seconds = ms / 1_000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def timing_text(duration_ms: float | None, waited_ms: float | None = None,
                waited_for: str = "you") -> str:
    """How long a call ran and, apart, how long it waited for an answer: `0.4 s · waited 12 s
    for you`. `duration_ms` excludes the wait (see `ToolCallItem.work_ms`)."""
    parts = [] if duration_ms is None else [duration_text(max(0.0, duration_ms))]
    if waited_ms is not None and waited_ms >= 1:
        parts.append(f"waited {duration_text(waited_ms)} for {waited_for}")
    return " · ".join(parts)


def call_timing(call: ToolCallItem, human: str = "you") -> str:
    """A tool call's timing (a fold `ToolCallItem`): how long it ran, the wait for an answer
    left out, and the wait apart when a human was asked (or nobody answered for a second or
    more): `0.4 s · waited 12 s for you`."""
    approval = call.approval
    waited = approval.waited_ms if approval is not None else None
    if approval is not None and waited is not None and not (
            approval.via == "human" or (approval.via == "auto" and waited >= 1_000)):
        waited = None  # answered by a rule at once: nobody waited
    return timing_text(call.work_ms, waited, human)


def verdict_text(state: str, via: str | None, remember: bool = False, *,
                 human: str = "you", scope: str | None = None, grant_id: str | None = None,
                 rule: str | None = None, error: str | None = None) -> str:
    """An approval's verdict in the words every view uses: `allowed by you`, `always allowed
    by you`, `allowed by a standing grant`, `denied automatically`, `awaiting approval`
    (`human` names who answered: a report read later says `a human`).

    What decided it, when the journal says (`approval_resolved`'s optional fields): a saved
    grant's scope and id (`allowed by a project grant g-3f9a2c1b (shell `git status`)`), a
    deny rule (`denied by a deny rule d-81b2c3e4 (user): shell `git push``), the policy rule
    (`allowed by the policy (ci.toml rule 2: …)`) or its error, and where a human's `[a]
    always` kept the grant (`always allowed by you (project g-…)`). Leave `grant_id` and
    `rule` out for a short badge."""
    if state == "pending":
        return "awaiting approval"
    verdict = "allowed" if state == "allowed" else "denied"
    ident = f" {grant_id}" if grant_id else ""
    if via == "grant":
        kind = f"a {scope} grant" if scope in ("project", "user") else "a standing grant"
        return f"{verdict} by {kind}{ident}" + (f" ({rule})" if rule else "")
    if via == "deny-rule":
        return (f"{verdict} by a deny rule{ident}" + (f" ({scope})" if scope else "")
                + (f": {rule}" if rule else ""))
    if via == "mode":  # the permission mode decided (plan refuses, auto allows)
        return f"{verdict} by the permission mode" + (f" ({rule})" if rule else "")
    if via == "policy":
        if error:
            return f"{verdict}: the approval policy failed ({error})"
        return f"{verdict} by the policy" + (f" ({rule})" if rule else "")
    who = {"human": f"by {human}", "auto": "automatically"}.get(via or "",
                                                                f"({via})" if via else "")
    if remember and state == "allowed":
        verdict = "always allowed"
        if scope in ("project", "user"):
            who += f" ({scope}{ident})"
    return f"{verdict} {who}".strip()


def approval_verdict(approval: ApprovalView | ApprovalResolved, *, human: str = "you",
                     full: bool = True) -> str:
    """`verdict_text` of a fold `ApprovalView` (or an `approval_resolved` event, `allowed`
    for its state), with whatever it records of what decided; `full=False` leaves out the id
    and the rule (a row's badge)."""
    state = getattr(approval, "state", None) or (
        "allowed" if getattr(approval, "allowed", False) else "denied")
    said = verdict_text(state, approval.via, approval.remember, human=human,
                        scope=getattr(approval, "scope", None),
                        grant_id=getattr(approval, "grant_id", None) if full else None,
                        rule=getattr(approval, "rule", None) if full else None,
                        error=getattr(approval, "error", None))
    return f"{said}, in {'your' if human == 'you' else 'their'} version" \
        if getattr(approval, "edited", False) else said


def input_changed_text(approved: dict[str, object] | None, *, limit: int = 300) -> str | None:
    """`⚠ input changed after you approved it (approved: ls)` for a call whose input changed
    after it was approved (`approved` is the input the approval was given for), else None."""
    if approved is None:
        return None
    was = input_line(approved, limit=limit) or "an empty input"
    return f"{INPUT_CHANGED} (approved: {was})"


def _lines(text: str | None) -> list[str]:
    return [line.rstrip("\r") for line in (text or "").rstrip("\n").split("\n")] if text else []


def end_lines(status: str, error: str | None, stderr: list[str] | None = None) -> list[str]:
    """How a run's end reads, error first: `failed: <error>` (`completed` alone), then the rest
    of a multi-line error, then the agent's stderr tail unless the error already quotes it.
    The reply is never put in the error's place (see `engine_adapter.view.task_end`)."""
    error_lines = _lines(error)
    head = f"{status}: {error_lines[0]}" if error_lines else status
    rest = error_lines[1:]
    tail = [line for line in (stderr or []) if line.strip()]
    if tail and not (error and tail[-1].strip() in error):
        rest += ["last lines the agent wrote to stderr:", *(f"  {line}" for line in tail)]
    return [head, *rest]
