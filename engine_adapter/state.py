"""What a run works on (`TaskState`) and what a conversation keeps between runs (`SessionState`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from engine_adapter.shell import ApprovalGrant

__all__ = ["SessionState", "TaskState", "TaskStatus"]

TaskStatus = Literal["pending", "running", "completed", "failed", "cancelled"]


@dataclass
class TaskState:
    """One task: its text, and, once run, how it ended.

    Engines may keep their own working data in `data` (it is not journaled).
    """

    task: str
    status: TaskStatus = "pending"
    result: str | None = None
    error: str | None = None
    cwd: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the task has reached a terminal status."""
        return self.status in ("completed", "failed", "cancelled")


@dataclass
class SessionState:
    """A conversation of several tasks. Pass `grants` to each `Session` (by reference) so a
    grant given during one task holds for the later ones."""

    grants: list[ApprovalGrant] = field(default_factory=list)
    tasks: list[TaskState] = field(default_factory=list)
    session_id: str | None = None
