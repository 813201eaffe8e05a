"""What counts as a failed outcome: the one table the fold, the journal index and the timeline read.

Four event types say how something went. `FAILED_OUTCOMES` names, for each, the field that says it
and the values that mean it went badly; `went_badly(event)` applies it. The fold derives a tool
row's, a check's and an approval's state from it, the journal index derives its "went badly" flag
(`BAD_OUTCOME`) from it, and the replay timeline derives its failure, denial and error markers
from `marker`. A new outcome is one line here.
"""

from __future__ import annotations

from typing import NamedTuple

from engine_adapter.events.base import BaseEvent

__all__ = ["FAILED_OUTCOMES", "FailureRule", "went_badly"]


class FailureRule(NamedTuple):
    """How one event type says it went badly."""

    field: str  # the field that says how it went
    failed: tuple[object, ...]  # values of that field that mean it went badly
    marker: str  # the timeline's marker kind for it: "error", "failure" or "denial"


FAILED_OUTCOMES: dict[str, FailureRule] = {
    "tool_end": FailureRule("ok", (False,), "failure"),
    "verification_end": FailureRule("passed", (False,), "failure"),
    "approval_resolved": FailureRule("allowed", (False,), "denial"),
    "agent_end": FailureRule("status", ("failed", "cancelled"), "error"),
}
"""Each event type that reports an outcome, and what a failed one looks like."""


def went_badly(event: BaseEvent) -> bool:
    """Whether `event` reports a failed outcome (a failed tool or check, a denial, a run that
    failed or was cancelled). Any other event did not go badly."""
    outcome = FAILED_OUTCOMES.get(event.type)
    return outcome is not None and getattr(event, outcome.field, None) in outcome.failed
