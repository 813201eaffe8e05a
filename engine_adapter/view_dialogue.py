"""The transcript rows and view parts of what an agent says besides its work: its questions
(`QuestionItem`), the conversation it replayed when opened again (`HistoryItem`), and the
commands it offers (`CommandView`). Rows follow `view`'s ownership rules: the fold changes a row
only through `RunView.own_row`, so lists hold immutable values and a dict is replaced, not changed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from engine_adapter.view import Item

__all__ = ["CommandView", "HistoryItem", "QuestionItem"]


class HistoryItem(Item):
    """An earlier part of the conversation, as the agent replayed it when it was opened again
    (`history_*` events): shown apart, as history, never as activity of this task.

    `entries` are `(role, text)` in order: role "user", "agent", "thought", or "tool" (text:
    the call's title and status); `tools` maps a replayed call's id to its entry."""

    __slots__ = ("entries", "messages", "tools")

    def __init__(self, task: int, seq: int) -> None:
        super().__init__("history", task, None, seq)
        self.entries: list[tuple[str, str]] = []
        self.tools: dict[str, int] = {}
        self.messages = 0

    @property
    def text(self) -> str:
        """The replayed conversation as plain text, one entry a paragraph."""
        labels = {"user": "you", "agent": "agent", "thought": "agent (thinking)",
                  "tool": "tool"}
        return "\n".join(f"{labels.get(role, role)}: {text}" for role, text in self.entries)

    def add_text(self, role: str, text: str) -> None:
        """A delta of a replayed message: continues the last entry if it has the same role."""
        entries = self.entries
        if entries and entries[-1][0] == role:
            entries[-1] = (role, entries[-1][1] + text)
        else:
            entries.append((role, text))
            self.messages += 1

    def set_tool(self, call_id: str, line: str) -> None:
        """A replayed tool call's line, added or brought up to date."""
        index = self.tools.get(call_id)
        if index is None:
            self.tools = {**self.tools, call_id: len(self.entries)}  # (replaced: a copy shares it)
            self.entries.append(("tool", line))
        else:
            self.entries[index] = ("tool", line)


class QuestionItem(Item):
    """An agent's question and, once given, its answer: one transcript row.

    `state`: "pending", then "accept", "decline" or "cancel"; `values`: the answer's values by
    field name; `via`: "human" or "auto"; `reason`: why an automatic answer was given. `fields`
    are the question's `QuestionField` models (immutable, shared)."""

    __slots__ = ("call_id", "fields", "message", "question_id", "reason", "state", "values",
                 "via")

    def __init__(self, task: int, turn: int | None, seq: int, question_id: str, message: str,
                 fields: list[Any], call_id: str | None) -> None:
        super().__init__("question", task, turn, seq)
        self.question_id, self.message, self.fields = question_id, message, fields
        self.call_id = call_id
        self.state = "pending"
        self.values: dict[str, Any] | None = None
        self.via: str | None = None
        self.reason: str | None = None


class CommandView(NamedTuple):
    """A command the agent offers: `name` (typed as `/name`), what it does, its input's hint."""

    name: str
    description: str
    hint: str | None
