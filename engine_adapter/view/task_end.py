"""How a task ended, as every view tells it: the error first (never the reply in its place), the
agent's stderr tail, the reply once, and the files the task changed (`+added −removed` each).

The transcript's `■` row, the end panel, the headless `end` line and the export all read a task's
end through `task_end_of`, so they agree on what it says. The reply is shown in full in one place:
where the model's streamed messages already hold it, the end refers to them; otherwise (an engine
whose result is not streamed, the built-in one) the `■` row shows it, and the end panel refers to
that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from engine_adapter.text import plural
from engine_adapter.view.diff_summary import FileChange, changed_files, merge_changes
from engine_adapter.view.items import EndItem, Item, MessageItem, ToolCallItem
from engine_adapter.view.wording import end_lines

__all__ = [
    "TaskEnd",
    "changes_lines",
    "reply_in_messages",
    "reply_in_text",
    "task_changes",
    "task_end_of",
]

PROBE = 200  # characters of a reply looked for in the streamed messages
SCAN_ITEMS = 2_000  # items looked back through for the last turn's messages


class TaskEnd(NamedTuple):
    """How one task ended, ready to show.

    `lines`: the end's headline (`failed: <error>`) and the rest of the error and stderr tail;
    `reply`: the reply to show in full here (None when the messages above already hold it, or
    there is none); `reply_note`: what to say instead (`the reply is above`), or None;
    `partial`: whether the reply is what a failed or cancelled run had said so far."""

    status: str
    lines: list[str]
    reply: str | None
    reply_note: str | None
    partial: bool


def reply_in_text(reply: str, said: str) -> bool:
    """Whether `said` (a turn's streamed messages) already holds `reply` (an ACP agent's reply
    is its streamed text; a reply cut to a size still starts as the text did)."""
    probe = reply.strip()[:PROBE]
    return bool(probe) and probe in said


def reply_in_messages(items: Sequence[Item], end: EndItem) -> bool:
    """Whether the model's streamed messages of the task's last turn already hold the reply
    `end` carries."""
    if not (end.result or "").strip() or not 0 < end.index <= len(items):
        return False
    parts: list[str] = []
    for index in range(end.index - 1, max(-1, end.index - 1 - SCAN_ITEMS), -1):
        item = items[index]
        if item.task != end.task or item.kind == "task":
            break
        if end.turn is not None and item.turn is not None and item.turn != end.turn:
            break
        if isinstance(item, MessageItem) and item.channel == "message":
            parts.append(item.text)
    return bool(parts) and reply_in_text(end.result or "", "".join(reversed(parts)))


def task_end_of(items: Sequence[Item], end: EndItem) -> TaskEnd:
    """How the task `end` closes ended, error first, the reply once."""
    lines = end_lines(end.status, end.error, end.stderr)
    partial = end.status != "completed"
    reply, note = (end.result or None), None
    if reply is not None and not reply.strip():
        reply = None
    if reply is not None and reply_in_messages(items, end):
        reply, note = None, ("the partial reply is above" if partial else "the reply is above")
    return TaskEnd(end.status, lines, reply, note, partial and (reply is not None or
                                                                note is not None))


def task_changes(items: Sequence[Item], task: int | None = None) -> list[FileChange]:
    """The files changed by the calls that ran well (of task `task`, or of every task), each
    with its lines added and removed, in the order first changed."""
    changes: list[FileChange] = []
    for item in items:
        if (type(item) is ToolCallItem and item.diff and item.status == "ok"
                and (task is None or item.task == task)):
            path = item.tool_input.get("path")
            changes += changed_files(item.diff, path if isinstance(path, str) else None)
    return merge_changes(changes)


def changes_lines(changes: Sequence[FileChange]) -> list[str]:
    """`app.py  +3 −1` a file (names aligned), then the total when there are several."""
    if not changes:
        return []
    width = min(60, max(len(c.path) for c in changes))
    lines = [f"{c.path.ljust(width)}  +{c.added:,} −{c.removed:,}" for c in changes]
    if len(changes) > 1:
        added, removed = sum(c.added for c in changes), sum(c.removed for c in changes)
        lines.append(f"{plural(len(changes), 'file')} changed  +{added:,} −{removed:,}")
    return lines
