"""`Earlier`: a conversation the built-in engine continues (`cockpit resume` of a built-in
run): the messages of its tasks so far, put before the new task in what the model reads, and
where they were read from (said in the new run's `agent_start`)."""

from __future__ import annotations

from dataclasses import dataclass

from engine_adapter.engines.builtin.models import ModelReply, TranscriptEntry, UserMessage

__all__ = ["Earlier"]


@dataclass(frozen=True)
class Earlier:
    """The earlier conversation: `entries` (each task as the human wrote it, and what the model
    answered), and `source`, what it was read from (the journal's path)."""

    entries: tuple[TranscriptEntry, ...]
    source: str

    @classmethod
    def of_tasks(cls, tasks: list[tuple[str, str]], source: str) -> Earlier:
        """From (task, what the model said of it) pairs, in order; a task the model said
        nothing of is kept alone."""
        entries: list[TranscriptEntry] = []
        for task, said in tasks:
            entries.append(UserMessage(task))
            if said.strip():
                entries.append(ModelReply(text=said, decision=None))
        return cls(tuple(entries), source)
