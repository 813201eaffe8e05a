"""How a tool call looks in the transcript: its head (status, tool, tier, how long it ran and how
long it waited for you, who allowed it, its input on one line), its error, its diff (every edit,
asked about or not: a preview from its first change, whole when expanded, numbered and coloured),
and its output (a file's text numbered and syntax-coloured when expanded).

Collapsed rows stay a few lines tall; expanded ones show up to `EXPANDED_LINES` lines of each
block; the pager (`tool_text`) has everything. Each cut says how many lines it left out.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.widgets.safe_text import styled_line, styled_one_line
from cockpit.widgets.transcript.code_rows import Rows, code_rows, diff_preview, diff_rows
from cockpit.widgets.transcript.rows import lines_note, one, warn_style
from engine_adapter.sandbox import agent_place_label, is_sandboxed, sandbox_label
from engine_adapter.text import cut, line_count, plural
from engine_adapter.view import (
    ToolCallItem,
    approval_verdict,
    call_timing,
    input_changed_text,
    input_line,
    input_text,
)

__all__ = [
    "DIFF_PREVIEW_LINES",
    "EXPANDED_LINES",
    "FILE_TOOLS",
    "PREVIEW_LINES",
    "tool_icon",
    "tool_needs_pager",
    "tool_row_count",
    "tool_rows",
    "tool_text",
]

PREVIEW_LINES = 3  # output lines shown under a collapsed tool call
DIFF_PREVIEW_LINES = 5  # diff lines shown under a collapsed edit, from its first change
EXPANDED_LINES = 200  # lines of each block shown when expanded; more opens the pager
LINE_LIMIT = 1_000  # characters kept of one output line (the pager shows it all)
FILE_TOOLS = frozenset({"read_file", "read"})  # tools whose output is a file's text

_ICONS = {"awaiting": "?", "allowed": "·", "running": "…", "ok": "✓", "failed": "✗",
          "denied": "⊘"}


def tool_icon(status: str) -> str:
    """The one-character icon of a tool call status."""
    return _ICONS.get(status, "·")


def _path(item: ToolCallItem) -> str | None:
    path = item.tool_input.get("path")
    return path if isinstance(path, str) else None


def tool_needs_pager(item: ToolCallItem) -> bool:
    """Whether expanding the call cannot show all of it."""
    text = item.output or ""
    if text.count("\n", 0, 10_000_000) >= EXPANDED_LINES or len(text) > 200_000:
        return True
    diff = item.diff
    return diff is not None and diff.count("\n", 0, 10_000_000) > EXPANDED_LINES


def _badge(item: ToolCallItem, palette: Palette) -> Text | None:
    approval = item.approval
    if approval is None:  # run unasked: say what covered it, when the engine said
        return (styled_line(f"covered by {item.permitted_by}", palette.success, limit=80)
                if item.permitted_by else None)
    words = approval_verdict(approval, full=False)
    if approval.state == "pending":
        return Text(words, palette.status_style("awaiting"))
    badge = Text(words, palette.success if approval.state == "allowed"
                 else palette.status_style("denied"))
    if approval.answer_reason:  # the human's words with the answer, passed on to the agent
        badge.append(": ", palette.dim)
        badge.append_text(styled_one_line(approval.answer_reason, palette.text, limit=200,
                                          marker_style=warn_style(palette)))
    return badge


def _head(item: ToolCallItem, palette: Palette) -> Text:
    warn = warn_style(palette)
    head = Text()
    head.append(f"{tool_icon(item.status)} ", palette.status_style(item.status))
    head.append_text(styled_line(item.tool, palette.primary, limit=80, marker_style=warn))
    head.append(" ")
    head.append(f"T{item.tier}", palette.tier_style(item.tier))
    if item.sandbox:  # a command: in the sandbox (quiet) or not (stands out)
        head.append(f" {sandbox_label(item.sandbox, item.sandbox_network)}",
                    palette.dim if is_sandboxed(item.sandbox) else palette.warning)
    if item.agent_sandbox:  # an external agent's call: where the agent itself runs
        head.append(f" {agent_place_label(item.agent_sandbox)}",
                    palette.dim if is_sandboxed(item.agent_sandbox) else palette.warning)
    timing = call_timing(item)
    if timing:
        head.append(f" {timing}", palette.dim)
    badge = _badge(item, palette)
    if badge is not None:
        head.append(" [", palette.dim)
        head.append_text(badge)
        head.append("]", palette.dim)
    summary = input_line(item.tool_input, limit=400) or item.title or ""
    if summary:
        head.append("  ")
        head.append_text(styled_line(summary, palette.text, limit=400, marker_style=warn))
    return head


def _block(rows: Rows, limit: int, expanded: bool, palette: Palette, console: Console,
           width: int, lead: str = "  ") -> list[Strip]:
    strips = [one(console, Text(lead, palette.dim).append_text(row), width) for row in rows.rows]
    if rows.hidden:
        hint = ("enter opens the pager" if expanded or rows.hidden + limit > EXPANDED_LINES
                else "enter to expand")
        strips.append(one(console, Text("  └ " + lines_note(rows.hidden, hint), palette.dim),
                          width))
    return strips


def _output(item: ToolCallItem, output: str, expanded: bool, palette: Palette,
            console: Console, width: int) -> list[Strip]:
    warn = warn_style(palette)
    path = _path(item)
    if expanded and item.tool in FILE_TOOLS and path and item.status == "ok":
        return _block(code_rows(output, path, limit=EXPANDED_LINES, palette=palette,
                                warn=warn), EXPANDED_LINES, True, palette, console, width)
    limit = EXPANDED_LINES if expanded else PREVIEW_LINES
    piece = cut(output, lines=limit)
    strips = []
    for line in piece.kept.removesuffix("\n").split("\n"):
        row = Text("  │ ", palette.dim)
        row.append_text(styled_line(line, palette.dim, limit=LINE_LIMIT, marker_style=warn))
        strips.append(one(console, row, width))
    if piece.was_cut:
        hint = ("enter opens the pager" if piece.dropped_lines + limit > EXPANDED_LINES
                else "enter to expand")
        strips.append(one(console, Text("  └ " + piece.note(gone=False, hint=hint),
                                        palette.dim), width))
    return strips


def tool_rows(item: ToolCallItem, expanded: bool, palette: Palette, console: Console,
              width: int) -> list[Strip]:
    """The rows of a tool call: head, error, diff, output."""
    warn = warn_style(palette)
    strips = [one(console, _head(item, palette), width)]
    changed = input_changed_text(item.approved_input)
    if changed:  # the approval was for another input: never let the row pass for approved
        strips.append(one(console, Text("  ").append_text(
            styled_line(changed, palette.warning, limit=400, marker_style=warn)), width))
    if item.error:
        row = Text("  error: ", palette.error_line)
        row.append_text(styled_one_line(item.error, palette.error_line, limit=500,
                                        marker_style=warn))
        strips.append(one(console, row, width))
    if item.diff:
        if expanded:
            rows = diff_rows(item.diff, _path(item), limit=EXPANDED_LINES, palette=palette,
                             warn=warn)
            strips += _block(rows, EXPANDED_LINES, True, palette, console, width)
        else:
            rows = diff_preview(item.diff, limit=DIFF_PREVIEW_LINES, palette=palette, warn=warn)
            strips += _block(rows, DIFF_PREVIEW_LINES, False, palette, console, width)
    output = _shown_output(item)
    if output:
        strips += _output(item, output, expanded, palette, console, width)
    return strips


def _shown_output(item: ToolCallItem) -> str:
    output = item.output or ""
    if output and item.error and output.strip() == item.error.strip():
        return ""  # the error line already says it all; don't print it twice
    return output


def tool_row_count(item: ToolCallItem, expanded: bool) -> int | None:
    """How many rows `tool_rows` gives a collapsed call without a diff, counted without
    rendering (None for the others: render them to know). Every row is one line cut to the
    width, so the count does not depend on it. A flood of tool calls lays out many more rows
    than ever reach the screen; the transcript renders only those drawn."""
    if expanded or item.diff:
        return None
    rows = (2 if item.error else 1) + (item.approved_input is not None)
    output = _shown_output(item)
    if output:
        piece = cut(output, lines=PREVIEW_LINES)
        rows += piece.kept.removesuffix("\n").count("\n") + 1 + int(piece.was_cut)
    return rows


def _without_diff(tool_input: Any) -> Any:
    if isinstance(tool_input, dict) and "diff" in tool_input:
        return {k: v for k, v in tool_input.items() if k != "diff"}
    return tool_input


def tool_text(item: ToolCallItem) -> str:
    """The whole call, for the pager: what it was and how it went, its whole input, its error,
    its whole diff, its whole output."""
    approval = item.approval
    about = [item.status, call_timing(item)]
    if approval is not None:
        about.append(approval_verdict(approval))
        if approval.answer_reason:
            about.append(f"reason: {approval.answer_reason}")
    parts = [f"{item.tool} ({' · '.join(p for p in about if p)})",
             input_text(_without_diff(item.tool_input))]
    if item.error:
        parts.append(f"error: {item.error}")
    if item.diff:
        parts += ["", f"diff ({plural(line_count(item.diff), 'line')}):",
                  item.diff.rstrip("\n")]
    parts.append("")
    parts.append(item.output or "")
    return "\n".join(parts)
