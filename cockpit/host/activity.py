"""`RunActivity`: what the fleet view shows of a run, folded from its events as they come —
its last activity, its tokens and cost, and its open asks (approvals and questions, oldest
first), each with the run's own words about it capped (they are untrusted: the client escapes
them, this only bounds their size)."""

from __future__ import annotations

from typing import Any

from engine_adapter.view import input_line

__all__ = ["ASK_TEXT_LIMIT", "RunActivity"]

ASK_TEXT_LIMIT = 400
"""Characters of an ask's command or reason sent to the fleet (the run's view shows it whole)."""


class RunActivity:
    """A run's activity so far (every task of it): `apply` each event in order."""

    __slots__ = ("_asks", "cost", "last", "tokens")

    def __init__(self) -> None:
        self.last: float | None = None  # the last event's time
        self.tokens = 0
        self.cost: float | None = None  # None until some call reported one
        self._asks: dict[str, dict[str, Any]] = {}  # by id, in the order they were asked

    def apply(self, event: Any) -> None:
        """Fold one event in."""
        self.last = event.ts
        kind = event.type
        if kind == "model_usage":
            self.tokens += event.input_tokens + event.output_tokens
            if event.cost_usd is not None:
                self.cost = (self.cost or 0.0) + event.cost_usd
        elif kind == "approval_requested":
            grantable, why = event.grant_verdict
            self._asks[f"a:{event.approval_id}"] = {
                "kind": "approval", "id": event.approval_id, "tool": event.tool,
                "command": input_line(event.tool_input, limit=ASK_TEXT_LIMIT),
                "reason": event.reason[:ASK_TEXT_LIMIT], "tier": event.tier,
                "prefix": event.prefix[:ASK_TEXT_LIMIT] if grantable else "",
                "why": (why or "")[:ASK_TEXT_LIMIT], "asked": event.ts}
        elif kind == "approval_resolved":
            self._asks.pop(f"a:{event.approval_id}", None)
        elif kind == "question_asked":
            self._asks[f"q:{event.question_id}"] = {
                "kind": "question", "id": event.question_id, "tool": "question",
                "command": event.message[:ASK_TEXT_LIMIT], "reason": "", "tier": 0,
                "prefix": "", "why": "", "asked": event.ts}
        elif kind == "question_answered":
            self._asks.pop(f"q:{event.question_id}", None)
        elif kind == "agent_end":
            self._asks.clear()  # (a run's end answers whatever it still asked)

    def asks(self) -> list[dict[str, Any]]:
        """The open asks, oldest first."""
        return list(self._asks.values())

    def facts(self) -> dict[str, Any]:
        """The fleet's fields of the run (added to its `ps` summary)."""
        return {"activity": self.last, "tokens": self.tokens, "cost": self.cost,
                "asks": self.asks()}
