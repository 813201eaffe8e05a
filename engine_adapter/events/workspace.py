"""The events of the workspace's checkpoints: one taken (at a turn's start or the run's end),
and a rewind to one (`cockpit rewind`, or the rewind key)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engine_adapter.events.base import BaseEvent


class CheckpointTaken(BaseEvent):
    """The workspace was checkpointed before turn `turn`'s first tool ran (`turn` None,
    `kind` "end": at the run's end). `checkpoint` is the store's id for it; None with `error`
    saying why when it could not be taken. `added`/`modified`/`deleted` count the paths changed
    since the run's previous checkpoint; `large` names (at most 50 of `large_count`) files over
    the size cap, recorded by size and hash only (a rewind cannot write them back)."""

    type: Literal["checkpoint_taken"] = "checkpoint_taken"
    turn: int | None = None
    kind: str = "turn"
    checkpoint: str | None = None
    files: int = 0
    source: str | None = None  # "git" (what git lists) or "folder" (a walk)
    added: int = 0
    modified: int = 0
    deleted: int = 0
    stored_bytes: int = 0
    large: list[str] = Field(default_factory=list)
    large_count: int = 0
    duration_ms: float | None = None
    error: str | None = None


class WorkspaceRewound(BaseEvent):
    """The workspace was rewound to turn `to_turn`'s checkpoint (`undo`: the latest rewind was
    undone instead). `before`/`after` are the checkpoints of the workspace around it (`--undo`
    goes back to `before`); `restored` were written back, `removed` deleted (the run made them),
    `left_alone` changed by someone else and kept (each "path: why"). `conversation`, from the
    live cockpit: what the rewind means for the conversation (the next task continues from that
    turn; an agent's own conversation still holds the later turns)."""

    type: Literal["workspace_rewound"] = "workspace_rewound"
    to_turn: int | None = None
    undo: bool = False
    checkpoint: str
    before: str
    after: str
    restored: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    left_alone: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    conversation: str | None = None
