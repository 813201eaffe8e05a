"""What a task of the built-in engine carries on from the conversation before it.

Each task keeps its transcript in its `TaskState.data` (`TRANSCRIPT`), the conversation before
it included, and where each of its turns began (`TURN_STARTS`). The next task starts from the
previous task's transcript (`carried`), cut at the start of turn N when the conversation was
rewound there (`TaskState.rewound_to`): the later turns are no longer the model's to see. A
tool call the model made that was never answered (the task's finishing call, a call cut off by
a cancel) is answered as ended, so every call in the messages has its answer.

A resumed run (`cockpit resume` of a built-in run) starts the same way: `seed` gives the last
of the journal's tasks the transcript read back from it (each task as the human wrote it, what
the model said), and the source it was read from (`resumed_from`), named in `agent_start`.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine_adapter.engines.builtin.models import (
    DecisionFeedback,
    ModelReply,
    ToolResult,
    TranscriptEntry,
    UserMessage,
)
from engine_adapter.state import TaskState

__all__ = ["RESUMES", "TRANSCRIPT", "TURN_STARTS", "carried", "resumed_from", "seed"]

TRANSCRIPT = "builtin.transcript"
"""`TaskState.data` key: the task's transcript (a list of entries), earlier tasks' first."""
TURN_STARTS = "builtin.turn_starts"
"""`TaskState.data` key: for each turn of the task, the transcript's length when it began."""

RESUMES = "builtin.resumes"
"""`TaskState.data` key: the journal a resumed conversation was read from."""

_ENDED = "(this call ended the task; the conversation went on)"


def _tool(value: object) -> str:
    tool = value.get("tool") if isinstance(value, dict) else None
    return tool if isinstance(tool, str) and tool else "finish"


def _answered(entries: Sequence[TranscriptEntry]) -> list[TranscriptEntry]:
    """`entries` with an answer after each reply's calls that have none."""
    answered = {e.model_call_id for e in entries
                if isinstance(e, ToolResult | DecisionFeedback) and e.model_call_id}
    out: list[TranscriptEntry] = []
    for entry in entries:
        out.append(entry)
        if isinstance(entry, ModelReply):
            out += [ToolResult("", _tool(raw.value), "ok", _ENDED, model_call_id=raw.call_id)
                    for raw in entry.calls if raw.call_id and raw.call_id not in answered]
    return out


def carried(earlier: Sequence[TaskState]) -> list[TranscriptEntry]:
    """The transcript the next task starts from: the last earlier task's (the ones before it
    are in it), cut at its `rewound_to` turn; empty when that task kept none (another
    engine's, or none at all)."""
    if not earlier:
        return []
    last = earlier[-1]
    transcript = last.data.get(TRANSCRIPT)
    if not isinstance(transcript, list):
        return []
    entries: list[TranscriptEntry] = list(transcript)
    starts = last.data.get(TURN_STARTS)
    turn = last.rewound_to
    if turn is not None and isinstance(starts, list) and 1 <= turn <= len(starts):
        entries = entries[:starts[turn - 1]]
    return _answered(entries)


def seed(tasks: Sequence[TaskState], exchanges: Sequence[tuple[str, str]], source: str) -> None:
    """Make `tasks` (a resumed journal's, oldest first) the conversation the next task carries
    on: the last one holds the transcript of `exchanges` ((task, what the model said) pairs; a
    task the model said nothing of is kept alone) and `source`, the journal they came from."""
    if not tasks:
        return
    entries: list[TranscriptEntry] = []
    for task, said in exchanges:
        entries.append(UserMessage(task))
        if said.strip():
            entries.append(ModelReply(text=said, decision=None))
    tasks[-1].data.update({TRANSCRIPT: entries, TURN_STARTS: [], RESUMES: source})


def resumed_from(earlier: Sequence[TaskState]) -> str | None:
    """The journal the conversation before this task was resumed from, if it was."""
    for task in earlier:
        source = task.data.get(RESUMES)
        if isinstance(source, str):
            return source
    return None
