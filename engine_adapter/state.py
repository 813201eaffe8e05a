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

    Engines may keep their own working data in `data` (it is not journaled). `earlier` is the
    conversation before this task, oldest first (an engine that carries a conversation's
    messages on, as the built-in one does, reads them there); `rewound_to` is set once the
    conversation was rewound to the start of this task's turn N: what came after it is no
    longer the conversation's.
    """

    task: str
    status: TaskStatus = "pending"
    result: str | None = None
    error: str | None = None
    cwd: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    earlier: tuple[TaskState, ...] = field(default=(), repr=False, compare=False)
    rewound_to: int | None = None

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

    def rewind_to(self, task: TaskState, turn: int) -> None:
        """The conversation goes back to the start of `task`'s turn `turn`: it is again what it
        was when `task` began (`task.earlier`), then `task`, marked (`TaskState.rewound_to`);
        the tasks after it leave it."""
        self.tasks[:] = [*task.earlier, task]
        task.rewound_to = turn
