"""How one transcript item looks: `render_item(...) -> list[Strip]`.

Pure with respect to its inputs (the item, the width, whether it is expanded, a palette), so the
transcript can cache the result per item and re-render only what a change touched. Untrusted
text goes through `text.clean` and into Rich `Text` (never markup); outputs are collapsed to a
few lines and cut before any per-character work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from engine_adapter.events import BaseEvent
from engine_adapter.fold import (
    DecisionItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    ToolCallItem,
)
from engine_adapter.text import cut, plural

from ..input_fields import input_line, input_text
from ..styles import Palette
from .question_rows import question_rows, question_text
from .text import clean, styled, styled_line, styled_one_line

__all__ = [
    "EXPANDED_LINES",
    "MARKDOWN_LIMIT",
    "PREVIEW_LINES",
    "STREAM_TAIL",
    "item_text",
    "needs_pager",
    "render_item",
    "tool_icon",
]

GUTTER = 2  # columns left of every item: the selection marker
PREVIEW_LINES = 3  # output lines shown under a collapsed tool call
EXPANDED_LINES = 200  # output lines shown when expanded; more opens the pager
THOUGHT_LINES = 2  # lines of a collapsed thought
MARKDOWN_LIMIT = 20_000  # longer complete messages are shown as plain text (Markdown is slow)
STREAM_TAIL = 8_000  # a message still streaming shows only its last characters
TEXT_LIMIT = 200_000  # any more of a message is left to the pager
LINE_LIMIT = 1_000  # characters kept of one output line (the pager shows it all)

# Text with none of Markdown's syntax renders the same as plain text, ~20x cheaper (a flood
# of short replies would otherwise spend most of each frame parsing Markdown).
_MARKDOWN_RE = re.compile(r"[*_`#>|~]|\[[^\]\n]*\]\(|(?:^|\n)\s*(?:[-+]|\d+[.)])\s|\n\s*\n")

_ICONS = {"awaiting": "?", "allowed": "·", "running": "…", "ok": "✓", "failed": "✗",
          "denied": "⊘"}


def tool_icon(status: str) -> str:
    """The one-character icon of a tool call status."""
    return _ICONS.get(status, "·")


def needs_pager(item: Item) -> bool:
    """Whether expanding `item` cannot show all of it (so `enter` opens a pager)."""
    if isinstance(item, ToolCallItem):
        text = item.output or ""
        return text.count("\n", 0, 10_000_000) >= EXPANDED_LINES or len(text) > 200_000
    if isinstance(item, MessageItem):
        return len(item.text) > TEXT_LIMIT
    return False


def _warn(palette: Palette) -> Style:
    """How an unsafe character's marker stands out (the theme's warning colour, reversed)."""
    return palette.warning + Style(reverse=True, bold=True)


def _one(console: Console, text: Text, width: int) -> Strip:
    """One row: `text` cut to `width` cells (never wrapped)."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    segments = list(text.render(console))
    strip = Strip(segments)
    return strip.crop(0, width) if strip.cell_length > width else strip


def _wrapped(console: Console, renderable: RenderableType, width: int) -> list[Strip]:
    options = console.options.update(width=width, min_width=width, max_width=width,
                                     highlight=False, markup=False)
    lines = console.render_lines(renderable, options, pad=False)
    return [Strip(line) for line in lines]


def _turn_header(item: Item, previous: Item | None, palette: Palette,
                 console: Console, width: int) -> list[Strip]:
    if item.turn is None or item.kind in ("task", "end"):
        return []
    if previous is not None and previous.task == item.task and previous.turn in (None, item.turn):
        return []  # same turn (an item without a turn, a decision say, does not break it)
    label = f"── turn {item.turn} "
    return [_one(console, Text(label + "─" * max(0, width - len(label)), palette.rule), width)]


def _message(item: MessageItem, expanded: bool, palette: Palette, console: Console,
             width: int) -> list[Strip]:
    text = item.text
    warn = _warn(palette)
    if item.channel == "thought":
        # Collapsed, only the first rows show: wrap no more of a long line than they hold.
        room = TEXT_LIMIT if expanded else min(TEXT_LIMIT, (THOUGHT_LINES + 1) * max(width, 20))
        piece = cut(text, lines=None if expanded else THOUGHT_LINES, chars=room)
        body = Text("∴ ", palette.thought)
        body.append_text(styled(piece.kept, palette.thought, marker_style=warn))
        strips = _wrapped(console, body, width)
        if not expanded and (piece.was_cut or len(strips) > THOUGHT_LINES):
            strips = strips[:THOUGHT_LINES]
            note = piece.note(gone=False, hint="enter to expand") or "… enter to expand"
            strips.append(_one(console, Text(f"  {note}", palette.dim), width))
        return strips
    if not item.complete:
        piece = cut(text, chars=STREAM_TAIL, keep="tail")
        body = Text()
        if piece.was_cut:
            body.append(piece.note(gone=False) + "\n", palette.dim)
        body.append_text(styled(piece.kept, palette.text, marker_style=warn))
        body.append("▍", palette.primary)
        return _wrapped(console, body, width)
    if len(text) <= MARKDOWN_LIMIT and _MARKDOWN_RE.search(text):
        return _wrapped(console, Markdown(clean(text), hyperlinks=False), width)
    piece = cut(text, chars=TEXT_LIMIT)
    body = styled(piece.kept, palette.text, marker_style=warn)
    if piece.was_cut:
        body.append("\n" + piece.note(gone=False, hint="enter opens the pager"), palette.dim)
    return _wrapped(console, body, width)


def _approval_badge(item: ToolCallItem, palette: Palette) -> Text | None:
    approval = item.approval
    if approval is None:  # run unasked: say what covered it, when the engine said
        return (styled_line(f"covered by {item.permitted_by}", palette.success, limit=80)
                if item.permitted_by else None)
    if approval.state == "pending":
        return Text("awaiting approval", palette.status_style("awaiting"))
    if approval.state == "allowed":
        who = {"grant": "allowed by grant", "human": "allowed by you",
               "auto": "allowed by policy"}.get(approval.via or "", "allowed")
        if approval.remember:
            who = "always allowed by you"
        return Text(who, palette.success)
    who = {"human": "denied by you", "auto": "denied (no answer)"}.get(approval.via or "",
                                                                       "denied")
    badge = Text(who, palette.status_style("denied"))
    if approval.answer_reason:  # the human's words, passed on to the agent
        badge.append(": ", palette.status_style("denied"))
        badge.append_text(styled_one_line(approval.answer_reason, palette.text, limit=200,
                                          marker_style=_warn(palette)))
    return badge


def _tool(item: ToolCallItem, expanded: bool, palette: Palette, console: Console,
          width: int) -> list[Strip]:
    warn = _warn(palette)
    head = Text()
    head.append(f"{tool_icon(item.status)} ", palette.status_style(item.status))
    head.append_text(styled_line(item.tool, palette.primary, limit=80, marker_style=warn))
    head.append(" ")
    head.append(f"T{item.tier}", palette.tier_style(item.tier))
    if item.duration_ms is not None:
        head.append(f" {item.duration_ms:,.0f}ms", palette.dim)
    badge = _approval_badge(item, palette)
    if badge is not None:
        head.append(" [", palette.dim)
        head.append_text(badge)
        head.append("]", palette.dim)
    summary = input_line(item.tool_input, limit=400) or item.title or ""
    if summary:
        head.append("  ")
        head.append_text(styled_line(summary, palette.text, limit=400, marker_style=warn))
    strips = [_one(console, head, width)]
    if item.error:
        row = Text("  error: ", palette.error_line)
        row.append_text(styled_one_line(item.error, palette.error_line, limit=500,
                                        marker_style=warn))
        strips.append(_one(console, row, width))
    output = item.output
    if output and item.error and output.strip() == item.error.strip():
        output = ""  # the error line already says it all; don't print it twice
    if output:
        limit = EXPANDED_LINES if expanded else PREVIEW_LINES
        piece = cut(output, lines=limit)
        for line in piece.kept.removesuffix("\n").split("\n"):
            row = Text("  │ ", palette.dim)
            row.append_text(styled_line(line, palette.dim, limit=LINE_LIMIT, marker_style=warn))
            strips.append(_one(console, row, width))
        if piece.was_cut:
            hint = ("enter opens the pager" if piece.dropped_lines + limit > EXPANDED_LINES
                    else "enter to expand")
            strips.append(_one(console, Text("  └ " + piece.note(gone=False, hint=hint),
                                             palette.dim), width))
    return strips


def _notice(item: NoticeItem, palette: Palette, console: Console, width: int) -> list[Strip]:
    style = palette.level.get(item.level, palette.text)
    prefix = {"task": "▶ task: ", "end": "■ ", "phase": "◆ phase ", "plan": "☰ ",
              "cancel": "⊘ ", "escalation": "⇧ ", "declaration": "! ",
              "decision_error": "✗ decision error: ", "retry": "↻ ", "note": "✎ "}.get(
                  item.kind, "· ")
    if item.kind == "task":
        style = palette.primary
    body = Text(prefix, style)
    text = item.text
    if item.kind in ("task", "end"):
        piece = cut(text, lines=20, chars=20_000)
        body.append_text(styled(piece.kept, style, marker_style=_warn(palette)))
        if piece.was_cut:
            body.append("\n" + piece.note(gone=False, hint="enter opens the pager"),
                        palette.dim)
        strips = _wrapped(console, body, width)
        if item.kind == "task":
            strips.insert(0, Strip([]))
        return strips
    body.append_text(styled_one_line(text, style, limit=2_000, marker_style=_warn(palette)))
    return _wrapped(console, body, width)[:6]


def _decision(item: DecisionItem, palette: Palette, console: Console,
              width: int) -> list[Strip]:
    warn = _warn(palette)
    body = Text("→ ", palette.accent)
    body.append_text(styled_line(item.action, palette.accent, limit=80, marker_style=warn))
    if item.tool:
        body.append(" ")
        body.append_text(styled_line(item.tool, palette.accent, limit=80, marker_style=warn))
    if item.rationale:
        body.append(" — ", palette.dim)
        body.append_text(styled_one_line(item.rationale, palette.dim, limit=1_000,
                                         marker_style=warn))
    return _wrapped(console, body, width)[:3]


def render_item(item: Item, previous: Item | None, *, width: int, expanded: bool,
                palette: Palette, console: Console) -> list[Strip]:
    """The rows of one transcript item at `width` cells (gutter included). Never empty."""
    inner = max(1, width - GUTTER)
    strips = _turn_header(item, previous, palette, console, inner)
    if isinstance(item, ToolCallItem):
        strips += _tool(item, expanded, palette, console, inner)
    elif isinstance(item, MessageItem):
        strips += _message(item, expanded, palette, console, inner)
    elif isinstance(item, DecisionItem):
        strips += _decision(item, palette, console, inner)
    elif isinstance(item, QuestionItem):
        strips += question_rows(item, expanded, palette, console, inner, _wrapped)
    elif isinstance(item, NoticeItem):
        strips += _notice(item, palette, console, inner)
    else:
        strips.append(_one(console, Text("· ").append_text(styled_line(item.kind, palette.dim,
                                                                       limit=80)), inner))
    gutter = [Segment(" " * GUTTER)]
    return [Strip(gutter + list(strip), strip.cell_length + GUTTER) for strip in strips] \
        or [Strip(gutter)]


def item_text(item: Item) -> str:
    """The full text behind an item, for the pager."""
    if isinstance(item, ToolCallItem):
        parts = [f"{item.tool} ({item.status})", input_text(item.tool_input)]
        if item.error:
            parts.append(f"error: {item.error}")
        parts.append("")
        parts.append(item.output or "")
        return "\n".join(parts)
    if isinstance(item, MessageItem):
        return item.text
    if isinstance(item, DecisionItem):
        return f"{item.action} {item.tool or ''}\n\n{item.rationale or ''}"
    if isinstance(item, NoticeItem):
        return item.text
    if isinstance(item, QuestionItem):
        return question_text(item)
    return item.kind


RAW_EVENTS_LIMIT = 2_000  # raw events shown for one item (a long message has one per delta)
PRETTY_UP_TO = 20  # this many events or fewer are indented, one field a line; more, one a line


def raw_events_text(item: Item, event_at: Callable[[int], BaseEvent | None]) -> str:
    """The events behind `item` as JSON, for the inspector (`i`), live and in replay alike.

    `event_at(seq)` returns the event with that `seq`, or None when it cannot be had. A few
    events are indented to be read; many (a long streamed message) are one a line."""
    seqs = item.seqs[:RAW_EVENTS_LIMIT]
    indent = 1 if len(seqs) <= PRETTY_UP_TO else None
    blocks = []
    for seq in seqs:
        event = event_at(seq)
        if event is not None:
            blocks.append(json.dumps(event.model_dump(mode="json"), ensure_ascii=False,
                                     indent=indent))
    if not blocks:
        blocks.append("(the events behind this item are not available)")
    elif len(item.seqs) > RAW_EVENTS_LIMIT:
        blocks.append(f"… {plural(len(item.seqs) - RAW_EVENTS_LIMIT, 'more event')}")
    if isinstance(item, ToolCallItem) and (item.tool_input or item.approval):
        # The whole input first: what the approval bar shows cut, and a call's input is
        # what a human most often opens this for.
        tool_input = (item.approval.tool_input if item.approval and item.approval.tool_input
                      else item.tool_input)
        blocks[:0] = ["whole input:", input_text(tool_input), "", "raw events:"]
    return "\n".join(blocks)
