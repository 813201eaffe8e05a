"""How each event reads to a human: one `Description` per event type, shared by the fold's
transcript notices, the headless lines and the export.

Adding an event type touches its model (`events`), its fold handler and its describer —
in `describe_steps.py` (a task's steps) or `describe_agent.py` (an external agent's session),
joined in `DESCRIBERS` here — nothing else has to restate how it reads. Texts are raw: the parts
an agent or a tool chose are untrusted, and each view displays them through
`engine_adapter.text` its own way.

The small wording helpers every view shares (`wording.py`: durations, the wait for a human, an
approval's verdict, and how a run's end reads) are importable from here too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engine_adapter.describe_agent import (
    AGENT_SESSION_DESCRIBERS,
    COMMAND_SIGILS,
    command_token,
    option_value_name,
    options_text,
)
from engine_adapter.describe_steps import STEP_DESCRIBERS, sandbox_warning
from engine_adapter.describe_steps import (
    SUMMARY_LIMIT as SUMMARY_LIMIT,  # re-exported: named here before
)
from engine_adapter.description import Description, Tone
from engine_adapter.wording import (
    approval_verdict,
    call_timing,
    duration_text,
    end_lines,
    timing_text,
    verdict_text,
)

__all__ = [
    "COMMAND_SIGILS",
    "DESCRIBERS",
    "Description",
    "Tone",
    "approval_verdict",
    "call_timing",
    "command_token",
    "describe",
    "duration_text",
    "end_lines",
    "option_value_name",
    "options_text",
    "sandbox_warning",
    "timing_text",
    "verdict_text",
]

DESCRIBERS: dict[str, Callable[[Any], Description]] = {**STEP_DESCRIBERS,
                                                        **AGENT_SESSION_DESCRIBERS}
"""Each event type's describer (a test checks every type in `EVENT_TYPES` has one)."""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def describe(event: Any) -> Description:
    """How `event` reads. An event type without a describer (a newer writer's) reads as its
    type and its fields."""
    describer = DESCRIBERS.get(event.type)
    if describer is not None:
        return describer(event)
    fields = event.model_dump(exclude={"type", "session_id", "seq", "ts"})
    return Description(event.type, _compact(fields), "plain")
