"""How one transcript item looks: `render_item(...) -> list[Strip]`.

Pure with respect to its inputs (the item, the items before it, the width, whether it is
expanded, a palette), so the transcript can cache the result per item and re-render only what a
change touched. Untrusted text goes through `text.clean` and into Rich `Text` (never markup);
outputs are collapsed to a few lines and cut before any per-character work. Tool calls are drawn
by `tool_rows`; a notice reads as its event's one description (`engine_adapter.view.describe`); a
task's end reads as `engine_adapter.view.task_end` tells it: the error first, the reply once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.widgets.safe_text import styled, styled_line, styled_one_line
from cockpit.widgets.transcript.history_rows import (
    history_needs_pager,
    history_text,
    render_history,
)
from cockpit.widgets.transcript.question_rows import question_rows, question_text
from cockpit.widgets.transcript.rows import markdown, one, warn_style, wrapped
from cockpit.widgets.transcript.stream_rows import streaming_line_rows
from cockpit.widgets.transcript.tool_rows import (
    tool_needs_pager,
    tool_row_count,
    tool_rows,
    tool_text,
)
from engine_adapter.events import BaseEvent
from engine_adapter.text import Cut, cap, cut, plural
from engine_adapter.view import (
    DecisionItem,
    EndItem,
    HistoryItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    ToolCallItem,
    input_text,
    task_changes,
    task_end_of,
)

__all__ = [
    "MARKDOWN_LIMIT",
    "STREAM_STEP",
    "STREAM_TAIL",
    "estimate_rows",
    "item_text",
    "needs_pager",
    "render_item",
    "row_count",
    "starts_turn",
    "stream_tail",
]

GUTTER = 2  # columns left of every item: the selection marker
THOUGHT_LINES = 2  # lines of a collapsed thought
MARKDOWN_LIMIT = 20_000  # longer complete messages are shown as plain text (Markdown is slow)
STREAM_TAIL = 8_000  # a message still streaming shows only its last characters (at least)
# ... and its cut moves in steps this long (it keeps 8,000 to 9,999): between two steps the
# reply only grows at its end, so its last line is wrapped incrementally (`stream_rows`). A cut
# that moved with every delta re-wrapped a long line whole each frame: ~4 ms a delivery for a
# reply with no line breaks past 8,000 characters (bench_model's key run).
STREAM_STEP = 2_000
TEXT_LIMIT = 200_000  # any more of a message is left to the pager
END_LINES = 20  # lines of an end's error (and stderr tail) shown in its row
END_CHARS = 4_000  # characters of its first line
CHANGED_NAMED = 5  # files named in an end's "changed:" row (the end panel lists them all)

# Text with none of Markdown's syntax renders the same as plain text, ~20x cheaper (a flood
# of short replies would otherwise spend most of each frame parsing Markdown).
_MARKDOWN_RE = re.compile(r"[*_`#>|~]|\[[^\]\n]*\]\(|(?:^|\n)\s*(?:[-+]|\d+[.)])\s|\n\s*\n")


def needs_pager(item: Item) -> bool:
    """Whether expanding `item` cannot show all of it (so `enter` opens a pager)."""
    if isinstance(item, ToolCallItem):
        return tool_needs_pager(item)
    if isinstance(item, MessageItem):
        return len(item.text) > TEXT_LIMIT
    if isinstance(item, HistoryItem):
        return history_needs_pager(item)
    if isinstance(item, EndItem):
        return len(item.result or "") > TEXT_LIMIT or len(item.error or "") > 20_000
    return False


def starts_turn(item: Item, previous: Item | None) -> bool:
    """Whether `item` opens its turn (and so is drawn under the turn's rule, its header: the
    item selected when the turn's header is)."""
    if item.turn is None or item.kind in ("task", "end"):
        return False
    # Same turn: an item without a turn (a decision, say) does not break it.
    return previous is None or previous.task != item.task \
        or previous.turn not in (None, item.turn)


def _turn_header(item: Item, previous: Item | None, palette: Palette,
                 console: Console, width: int) -> list[Strip]:
    if not starts_turn(item, previous):
        return []
    label = f"── turn {item.turn} "
    return [one(console, Text(label + "─" * max(0, width - len(label)), palette.rule), width)]


def _reply(text: str, palette: Palette, console: Console, width: int) -> list[Strip]:
    """A complete reply, in full: Markdown (line breaks kept) when it uses any, else as it is;
    past `TEXT_LIMIT` characters the pager has the rest."""
    if len(text) <= MARKDOWN_LIMIT and _MARKDOWN_RE.search(text):
        return wrapped(console, markdown(text, palette), width)
    piece = cut(text, chars=TEXT_LIMIT)
    body = styled(piece.kept, palette.text, marker_style=warn_style(palette))
    if piece.was_cut:
        body.append("\n" + piece.note(gone=False, hint="enter opens the pager"), palette.dim)
    return wrapped(console, body, width)


def _message(item: MessageItem, expanded: bool, palette: Palette, console: Console,
             width: int) -> list[Strip]:
    text = item.text
    warn = warn_style(palette)
    if item.channel == "thought":
        # Collapsed, only the first rows show: wrap no more of a long line than they hold.
        room = TEXT_LIMIT if expanded else min(TEXT_LIMIT, (THOUGHT_LINES + 1) * max(width, 20))
        piece = cut(text, lines=None if expanded else THOUGHT_LINES, chars=room)
        body = Text("∴ ", palette.thought)
        body.append_text(styled(piece.kept, palette.thought, marker_style=warn))
        strips = wrapped(console, body, width)
        if not expanded and (piece.was_cut or len(strips) > THOUGHT_LINES):
            strips = strips[:THOUGHT_LINES]
            note = piece.note(gone=False, hint="enter to expand") or "… enter to expand"
            strips.append(one(console, Text(f"  {note}", palette.dim), width))
        return strips
    return _reply(text, palette, console, width)


def _streaming(text: str, palette: Palette, console: Console, width: int) -> list[Strip]:
    """The tail of a reply still streaming, with a cursor, as rows with their gutter. It is
    drawn again every frame while it grows, so its complete lines come from a cache (wrapping
    8,000 characters anew cost tens of ms a frame): only the first line (where the tail is cut
    moves) and the last are wrapped, the last one incrementally (`stream_rows`)."""
    warn = warn_style(palette)
    piece = stream_tail(text)
    kept = piece.kept
    rows = []
    if piece.was_cut:
        rows += wrapped(console, Text(piece.note(gone=False), palette.dim), width)
    if "\r" in kept:  # `\r\n` is one line break to `styled`: keep the text whole
        lines, last = [], kept
    else:
        *lines, last = kept.split("\n")
    strips = _guttered(rows)
    for line in lines:
        strips += _stream_line(line, width, palette.text, warn, console)
    return strips + _guttered_kept(streaming_line_rows(last, width, palette.text, warn,
                                                       palette.primary, console))


def stream_tail(text: str) -> Cut:
    """What a reply still streaming shows of `text`: its last `STREAM_TAIL` characters and up
    to `STREAM_STEP` more, cut where the cut stays until the text grows a step further."""
    over = len(text) - STREAM_TAIL
    return cut(text, chars=STREAM_TAIL + over % STREAM_STEP if over > 0 else None,
               keep="tail")


@lru_cache(maxsize=1_024)
def _stream_line(line: str, width: int, style: Style, warn: Style,
                 console: Console) -> tuple[Strip, ...]:
    """One complete line of a streaming reply, wrapped, with the gutter (cached: it is drawn
    every frame until the reply ends)."""
    return tuple(_guttered(wrapped(console, styled(line, style, marker_style=warn), width)))


# The last line's rows with their gutter, by the row without it (its id: the row, kept alive so
# the id is not reused; the row with the gutter). `streaming_line_rows` hands back the same rows
# while the line grows, all but its last ones: guttered once, they stay the same objects, as
# the transcript keeps what it drew by the row (guttering them all anew cost ~1 ms a delivery
# of a 9,000-character line at 160x48, and each new row was then compared with the one drawn).
_GUTTERED_KEPT = 2_048
_guttered_rows: dict[int, tuple[Strip, Strip]] = {}


def _guttered_kept(strips: list[Strip]) -> list[Strip]:
    """`_guttered(strips)`, each row guttered once while it is handed back (see above)."""
    kept = _guttered_rows
    out = []
    for strip in strips:
        known = kept.get(id(strip))
        if known is None or known[0] is not strip:
            if len(kept) >= _GUTTERED_KEPT:
                kept.clear()
            known = (strip, _guttered([strip])[0])
            kept[id(strip)] = known
        out.append(known[1])
    return out


def _guttered(strips: list[Strip]) -> list[Strip]:
    """`strips` moved right past the gutter (the selection marker's column)."""
    gutter = [Segment(" " * GUTTER)]
    return [Strip(gutter + list(strip), strip.cell_length + GUTTER) for strip in strips]


def _end(item: EndItem, items: Sequence[Item], palette: Palette, console: Console,
         width: int) -> list[Strip]:
    """A task's end: its status and error first (and the agent's stderr tail), then the reply
    in full unless the messages above hold it, then the files it changed."""
    warn = warn_style(palette)
    told = task_end_of(items, item)
    head, *rest = told.lines
    style = palette.status_style(told.status)
    body = Text("■ ", style)
    status, _, error = head.partition(": ")
    body.append(status, style)
    if error:
        body.append(": ", style)
        body.append_text(styled(cap(error, chars=END_CHARS, gone=False,
                                    hint="enter opens the pager"),
                                palette.error_line if told.status == "failed"
                                else palette.warning, marker_style=warn))
    if rest:
        piece = cut("\n".join(rest), lines=END_LINES, chars=20_000)
        body.append("\n")
        body.append_text(styled("\n".join("  " + line for line in piece.kept.split("\n")),
                                palette.dim, marker_style=warn))
        if piece.was_cut:
            body.append("\n" + piece.note(gone=False, hint="enter opens the pager"), palette.dim)
    strips = wrapped(console, body, width)
    if told.reply_note:
        strips.append(one(console, Text(f"  ↑ {told.reply_note}", palette.dim), width))
    elif told.reply:
        if told.partial:
            strips.append(one(console, Text("  partial reply:", palette.dim), width))
        strips += [Strip([Segment("  "), *strip], strip.cell_length + 2)
                   for strip in _reply(told.reply, palette, console, max(1, width - 2))]
    changes = task_changes(items, item.task) if items else []
    if changes:
        named = " · ".join(f"{c.path} +{c.added:,} −{c.removed:,}" for c in changes[:CHANGED_NAMED])
        more = (f" · {plural(len(changes) - CHANGED_NAMED, 'more file')}"
                if len(changes) > CHANGED_NAMED else "")
        row = Text("  changed: ", palette.dim)
        row.append_text(styled_line(named + more, palette.dim, limit=2_000,
                                    marker_style=warn))
        strips.append(one(console, row, width))
    return strips


def _notice(item: NoticeItem, palette: Palette, console: Console, width: int) -> list[Strip]:
    style = palette.level.get(item.level, palette.text)
    if item.kind == "task":
        piece = cut(item.text, lines=20, chars=20_000)
        body = styled(piece.kept, palette.primary, marker_style=warn_style(palette))
        if piece.was_cut:
            body.append("\n" + piece.note(gone=False, hint="enter opens the pager"),
                        palette.dim)
        return [Strip([]), *wrapped(console, body, width)]
    body = styled_one_line(item.text, style, limit=2_000, marker_style=warn_style(palette))
    return wrapped(console, body, width)[:6]


def _decision(item: DecisionItem, palette: Palette, console: Console,
              width: int) -> list[Strip]:
    warn = warn_style(palette)
    body = Text("→ ", palette.accent)
    body.append_text(styled_line(item.action, palette.accent, limit=80, marker_style=warn))
    if item.tool:
        body.append(" ")
        body.append_text(styled_line(item.tool, palette.accent, limit=80, marker_style=warn))
    if item.rationale:
        body.append(" — ", palette.dim)
        body.append_text(styled_one_line(item.rationale, palette.dim, limit=1_000,
                                         marker_style=warn))
    # A finish's rationale is often the reply itself, shown in full by the end: one row here.
    return wrapped(console, body, width)[:1 if item.action == "finish" else 3]


def render_item(item: Item, previous: Item | None, *, width: int, expanded: bool,
                palette: Palette, console: Console, items: Sequence[Item] = ()) -> list[Strip]:
    """The rows of one transcript item at `width` cells (gutter included). Never empty.
    `items` (the view's, `item` among them) lets a task's end see what came before it."""
    inner = max(1, width - GUTTER)
    strips = _turn_header(item, previous, palette, console, inner)
    if isinstance(item, MessageItem) and not item.complete and item.channel != "thought":
        return _guttered(strips) + _streaming(item.text, palette, console, inner)
    if isinstance(item, ToolCallItem):
        strips += tool_rows(item, expanded, palette, console, inner)
    elif isinstance(item, MessageItem):
        strips += _message(item, expanded, palette, console, inner)
    elif isinstance(item, DecisionItem):
        strips += _decision(item, palette, console, inner)
    elif isinstance(item, QuestionItem):
        strips += question_rows(item, expanded, palette, console, inner)
    elif isinstance(item, EndItem):
        strips += _end(item, items, palette, console, inner)
    elif isinstance(item, NoticeItem):
        strips += _notice(item, palette, console, inner)
    elif isinstance(item, HistoryItem):
        strips += render_history(item, expanded, palette, console, inner)
    else:
        strips.append(one(console, Text("· ").append_text(styled_line(item.kind, palette.dim,
                                                                      limit=80)), inner))
    return _guttered(strips) or [Strip([Segment(" " * GUTTER)])]


def row_count(item: Item, previous: Item | None, *, width: int, expanded: bool) -> int | None:
    """How many rows `render_item` gives `item`, when that can be known without rendering it
    (a collapsed tool call, a complete one-line reply that fits); None otherwise. The transcript
    lays out with it what a flood scrolls past before it is ever drawn."""
    inner = max(1, width - GUTTER)
    if isinstance(item, ToolCallItem):
        rows = tool_row_count(item, expanded)
    elif isinstance(item, MessageItem) and item.complete and item.channel != "thought":
        text = item.text
        # Printable ASCII is one cell a character, with no marker, tab or line break.
        fits = 0 < len(text) <= inner and text.isascii() and text.isprintable() \
            and not _MARKDOWN_RE.search(text)
        rows = 1 if fits else None
    else:
        rows = None
    if rows is None:
        return None
    return rows + int(starts_turn(item, previous))


def estimate_rows(item: Item, width: int) -> int:
    """A cheap guess at an item's height (rows), for items not drawn yet."""
    if isinstance(item, MessageItem):  # its size, without reading text still in a journal
        chars, newlines = item.size_hint()
        return 1 + min(40, newlines + min(chars, 20_000) // max(20, width))
    return 2 if item.kind == "tool" else 1


def item_text(item: Item) -> str:
    """The full text behind an item, for the pager."""
    if isinstance(item, ToolCallItem):
        return tool_text(item)
    if isinstance(item, MessageItem):
        return item.text
    if isinstance(item, DecisionItem):
        return f"{item.action} {item.tool or ''}\n\n{item.rationale or ''}"
    if isinstance(item, EndItem):
        told = task_end_of((), item)
        reply = f"\n\n{'partial reply' if told.partial else 'reply'}:\n{item.result}" \
            if item.result else ""
        return "\n".join(told.lines) + reply
    if isinstance(item, NoticeItem):
        return item.text
    if isinstance(item, HistoryItem):
        return history_text(item)
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
        why = item.approval.reason if item.approval else ""
        odd = item.approval.lookalikes if item.approval else ""
        blocks[:0] = ["whole input:", input_text(tool_input), "",
                      *([f"⚠ {odd}", ""] if odd else []),
                      *(["the model's reason:", why, ""] if why else []), "raw events:"]
    return "\n".join(blocks)
