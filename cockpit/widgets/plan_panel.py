"""`PlanPanel`: the agent's plan, pinned above the side column's other panels — each entry with
its status and priority — while the agent has one (hidden otherwise, so runs without a plan look
as they always did). It renders from a `RunView` (`show(view)`), the same in the live cockpit and
the replay viewer; the entries are the agent's words, untrusted, shown through the safe text.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from cockpit.styles import palette_for
from cockpit.widgets.safe_text import styled_line
from engine_adapter.text import plural
from engine_adapter.view import RunView

__all__ = ["PLAN_SHOWN", "PlanPanel"]

PLAN_SHOWN = 30  # entries drawn; the rest are counted
ENTRY_LIMIT = 200  # characters of one entry drawn (the row is cut to the panel's width anyway)

_STATUS_ICONS = {"completed": "✓", "in_progress": "▶", "pending": "○"}
_PRIORITY_WORDS = {"high": "high", "low": "low"}  # medium, the usual, says nothing


class PlanPanel(Static):
    """The agent's plan (see the module docstring)."""

    DEFAULT_CSS = """
    PlanPanel {
        display: none;
        height: auto;
        max-height: 45%;
        padding: 0 1;
        border-bottom: solid $panel;
    }
    PlanPanel.-shown { display: block; }
    """

    def show(self, view: RunView) -> None:
        """Redraw from `view` (hidden while it has no plan)."""
        shown = bool(view.plan) or view.plan_dropped > 0
        self.set_class(shown, "-shown")
        if not shown:
            return
        palette = palette_for(self.app)
        entries = view.plan
        total = len(entries) + view.plan_dropped
        done = sum(1 for entry in entries if entry.status == "completed")
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("Plan", palette.primary)
        text.append(f"  {done:,} of {total:,} done", palette.dim)
        for entry in entries[:PLAN_SHOWN]:
            known = entry.status in _STATUS_ICONS
            style = (palette.dim if entry.status == "completed" else
                     palette.accent if entry.status == "in_progress" else palette.text)
            text.append("\n" + (_STATUS_ICONS[entry.status] if known else "?") + " ",
                        style if known else palette.warning)
            text.append_text(styled_line(entry.content, style, limit=ENTRY_LIMIT))
            priority = _PRIORITY_WORDS.get(entry.priority)
            if priority == "high":
                text.append(" ! high", palette.warning)
            elif priority is not None:
                text.append(f" {priority}", palette.dim)
            elif entry.priority != "medium":  # a word ACP v1 does not have: shown as a word
                text.append_text(styled_line(f" {entry.priority}", palette.dim, limit=20))
            if not known:
                text.append_text(styled_line(f" ({entry.status})", palette.warning, limit=22))
        more = total - min(len(entries), PLAN_SHOWN)
        if more > 0:
            text.append(f"\n… {plural(more, 'more entry', 'more entries')}", palette.dim)
        self.update(text)
