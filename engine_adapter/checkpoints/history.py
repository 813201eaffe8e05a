"""`RunCheckpoints`: what a run's events say of its checkpoints and rewinds.

From a journal's events (or a live Session's history): the workspace, each turn's checkpoint
(the first taken for that turn: `--to N` always means the run's own, whatever rewinds came
after), the run's end checkpoint, and the rewinds in order. The `baseline` is the workspace as
the cockpit last left it: the latest rewind's result, else the run's end, else its latest turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engine_adapter.events import BaseEvent, CheckpointTaken, WorkspaceRewound

__all__ = ["RunCheckpoints"]


@dataclass
class RunCheckpoints:
    """A run's checkpoints and rewinds, read from its events."""

    session_id: str = ""
    workspace: str | None = None
    turns: dict[int, CheckpointTaken] = field(default_factory=dict)
    end: CheckpointTaken | None = None
    failed: list[CheckpointTaken] = field(default_factory=list)
    rewinds: list[WorkspaceRewound] = field(default_factory=list)
    last_seq: int = -1
    ended: bool = False

    @classmethod
    def of(cls, events: Iterable[BaseEvent]) -> RunCheckpoints:
        """Read `events` (in order)."""
        found = cls()
        for event in events:
            found.session_id = event.session_id or found.session_id
            found.last_seq = max(found.last_seq, event.seq)
            if event.type == "agent_start":
                cwd = getattr(event, "cwd", None)
                found.workspace = cwd if isinstance(cwd, str) else found.workspace
            elif event.type == "agent_end":
                found.ended = True
            elif isinstance(event, CheckpointTaken):
                if event.checkpoint is None:
                    found.failed.append(event)
                elif event.turn is None:
                    found.end = event
                elif event.turn not in found.turns:
                    found.turns[event.turn] = event
            elif isinstance(event, WorkspaceRewound):
                found.rewinds.append(event)
        return found

    @classmethod
    def of_conversation(cls, tasks: Sequence[Iterable[BaseEvent]], task: int) -> RunCheckpoints:
        """Task `task`'s (1-based) checkpoints in a conversation of several tasks (`tasks`: each
        task's events, in order), one workspace: its turns, and the baseline of the whole
        conversation (the latest rewind or task end of any task: a later task's changes are
        the conversation's own, not someone else's). `last_seq` and `session_id` are the
        latest task's, where a rewind is recorded."""
        found = cls.of(tasks[task - 1])
        every = [cls.of(events) for events in tasks]
        found.rewinds = []
        for each in every:  # a task's end comes before its rewinds (done once it has ended)
            if each.end is not None:
                found.end, found.rewinds = each.end, []  # what a later task left supersedes
            found.rewinds += each.rewinds
        found.last_seq, found.session_id = every[-1].last_seq, every[-1].session_id
        found.ended = every[-1].ended
        return found

    @property
    def any(self) -> bool:
        """Whether the run took any checkpoint."""
        return bool(self.turns) or self.end is not None

    def baseline(self) -> str | None:
        """The checkpoint of the workspace as the cockpit last left it (None: there is none)."""
        if self.rewinds:
            return self.rewinds[-1].after
        if self.end is not None:
            return self.end.checkpoint
        if self.turns:
            return self.turns[max(self.turns)].checkpoint
        return None
