"""How replayed history looks in the transcript: one item, set apart from the task's activity.

An agent that reopens a conversation (`session/load`) replays it; the fold keeps it as one
`HistoryItem`. Collapsed it is a header and the last few lines; expanded, up to
`EXPANDED_LINES` lines (the pager has the rest). Every line is dimmed and led by who spoke, so
nothing in it reads as this task's reply or tool call.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.widgets.safe_text import styled_line
from cockpit.widgets.transcript.rows import one
from engine_adapter.text import plural
from engine_adapter.view import HistoryItem

__all__ = ["COLLAPSED_LINES", "history_lines", "history_needs_pager", "history_text",
           "render_history"]

COLLAPSED_LINES = 4  # entries shown of collapsed history (its last ones)
EXPANDED_LINES = 200  # entries shown expanded; the pager shows every one
LINE_LIMIT = 400  # characters of one entry on its row
_LABELS = {"user": "you", "agent": "agent", "thought": "agent thinking", "tool": "tool"}


def history_needs_pager(item: HistoryItem) -> bool:
    """Whether expanding the history cannot show all of it."""
    return len(item.entries) > EXPANDED_LINES


def history_text(item: HistoryItem) -> str:
    """The whole replayed conversation, for the pager."""
    return "earlier conversation, replayed by the agent\n\n" + item.text


def history_lines(item: HistoryItem) -> str:
    """The header: what the history holds."""
    tools = len(item.tools)
    return (f"⟲ earlier conversation, replayed by the agent: {plural(item.messages, 'message')}"
            + (f", {plural(tools, 'tool call')}" if tools else ""))


def render_history(item: HistoryItem, expanded: bool, palette: Palette, console: Console,
                   width: int) -> list[Strip]:
    """The rows of a history item at `width` cells."""
    row = one
    strips = [row(console, Text(history_lines(item), palette.accent), width)]
    entries = item.entries
    shown = entries[:EXPANDED_LINES] if expanded else entries[-COLLAPSED_LINES:]
    if not expanded and len(entries) > COLLAPSED_LINES:
        earlier = plural(len(entries) - COLLAPSED_LINES, "earlier entry")
        strips.append(row(console, Text(f"  … {earlier}", palette.dim), width))
    for role, text in shown:
        line = Text("  │ ", palette.dim)
        line.append(f"{_LABELS.get(role, role)}: ", palette.primary if role == "user"
                    else palette.dim)
        line.append_text(styled_line(text or "…", palette.dim, limit=LINE_LIMIT))
        strips.append(row(console, line, width))
    if expanded and len(entries) > EXPANDED_LINES:
        more = plural(len(entries) - EXPANDED_LINES, "more entry")
        strips.append(row(console, Text(f"  └ {more}: enter opens the pager", palette.dim),
                          width))
    elif not expanded and entries:
        strips.append(row(console, Text("  └ enter to expand", palette.dim), width))
    return strips
