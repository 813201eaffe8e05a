"""`PromptQueue`: messages the human typed while the agent worked, and when each is sent.

The rules (the live cockpit applies them; this class holds no Textual and is tested alone):

- A message typed while a task runs is queued; queued messages are sent one at a time, each as
  the next task, oldest first, once the running task has ended.
- "Send now" puts the message first and stops the running task (`Session.cancel`); when it has
  ended, that message is sent at once, however the task ended.
- A task that ended otherwise than `completed` (failed, or cancelled by the human) holds the
  queue: nothing is sent behind the human's back into a failed or stopped conversation. An empty
  enter sends the next one; a new message the human sends goes first, and the queue moves on
  again once a task completes.
- Any queued message can be taken back before it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.widgets import MESSAGE_LIMIT

__all__ = ["PromptQueue"]


class PromptQueue:
    """The queued messages of one conversation, oldest first, and the send-now flag."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self.interrupting = False  # the head was sent "now": send it however the task ends
        self.held = False  # the last task did not complete: wait for the human

    @property
    def items(self) -> Sequence[str]:
        """The queued messages, oldest first."""
        return tuple(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, text: str) -> None:
        """Queue `text` (cut to `MESSAGE_LIMIT` characters) behind the others."""
        self._items.append(text[:MESSAGE_LIMIT])

    def send_now(self, text: str) -> None:
        """Put `text` first; the running task is being stopped for it."""
        self._items.insert(0, text[:MESSAGE_LIMIT])
        self.interrupting = True

    def remove(self, index: int) -> str | None:
        """Take back the message at `index` (None: no such message)."""
        if not 0 <= index < len(self._items):
            return None
        if index == 0:
            self.interrupting = False
        return self._items.pop(index)

    def after_task(self, status: str) -> str | None:
        """The task ended with `status`: the message to send now, or None (queue empty, or
        held because the task did not complete)."""
        if not self._items:
            self.interrupting = self.held = False
            return None
        if status == "completed" or self.interrupting:
            self.interrupting = self.held = False
            return self._items.pop(0)
        self.held = True
        return None

    def release(self) -> str | None:
        """The human asked for the next message of a held queue (an empty enter)."""
        self.held = self.interrupting = False
        return self._items.pop(0) if self._items else None
