"""What the replay screen's timeline says, and the small lookups behind its keys: where the cursor
is, problems with the journal, search matches, the type filter, playback speeds and jumps, and the
raw event's page."""

from __future__ import annotations

import bisect
import json

from cockpit.journals import CRASHED_TEXT
from cockpit.replay.timeline import MARKER_KINDS
from cockpit.widgets import clean_line
from engine_adapter.events import format_ts
from engine_adapter.journal import (
    CODE_NAMES,
    CORRUPT,
    TYPE_CODES,
    TYPE_MASK,
    ChainVerdict,
    JournalIndex,
    decode_json,
)
from engine_adapter.replay import Navigator, code_class
from engine_adapter.text import plural

__all__ = ["JUMPS", "SPEEDS", "chain_text", "filter_text", "match_after", "position_fields",
           "problems_text", "raw_event_page", "search_text", "type_counts"]

INSPECT_LIMIT = 200_000  # characters of one raw event shown by the inspector

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0)
"""Playback speeds, slowest first."""
JUMPS = {
    "tool": (code_class({TYPE_CODES["tool_start"]}), "tool call"),
    "approval": (code_class({TYPE_CODES["approval_requested"]}), "approval"),
    "error": (code_class({c for k in ("error", "failure", "denial") for c in MARKER_KINDS[k][1]}),
              "error or failure"),
}
"""What each jump key looks for: a pattern over the index's codes, and its name."""


def chain_text(verdict: ChainVerdict | None) -> str:
    """What the journal's chain says, for the timeline: a changed journal, where; a journal
    only partly chained; nothing while unchecked, for an intact one or one written before."""
    if verdict is None:
        return ""
    if verdict.tampered:
        return f"⚠ CHANGED after the run at line {verdict.line}"
    if verdict.status == "partly-unchained":
        return f"lines 1-{verdict.unchained_lines} unchained"
    return ""


def problems_text(index: JournalIndex, *, crashed: bool, complete: bool) -> str:
    """What is wrong with the journal, as far as it has been read."""
    problems = []
    if index.corrupt:
        lines = sorted(index.corrupt.values())
        shown = ", ".join(str(n) for n in lines[:3]) + (" …" if len(lines) > 3 else "")
        problems.append(f"⚠ {plural(len(lines), 'corrupt line')} skipped (line {shown})")
    if index.unknown:
        problems.append(f"⚠ {plural(index.unknown, 'event')} of an unknown type "
                        "(newer cockpit?)")
    if index.torn_tail:
        problems.append("⚠ torn last line skipped")
    if crashed and complete and len(index):
        problems.append(f"⚠ {CRASHED_TEXT}")
    if complete and not len(index):
        problems.append("the journal is empty" if not index.size else
                        "nothing in this file is a journal event")
    return "  ".join(problems)


def search_text(term: str, matches: list[int], shown: int) -> str:
    """The search's place in the timeline: the term, and which match is shown of how many."""
    if not term:
        return ""
    term = clean_line(term, 30)
    if not matches:
        return f"/{term}: no match"
    i = bisect.bisect_left(matches, shown)
    here = i + 1 if i < len(matches) and matches[i] == shown else None
    where = f"{here}/" if here else ""
    return f"/{term}: {where}{len(matches):,} match{'es' if len(matches) > 1 else ''}"


def match_after(matches: list[int], cursor: int, step: int, from_current: bool) -> int:
    """The match to show next from `cursor` (`step` > 0: after it, or at it `from_current`;
    else before it), wrapping around. `matches` is not empty."""
    if step > 0:
        i = bisect.bisect_left(matches, cursor if from_current else cursor + 1)
        return matches[i if i < len(matches) else 0]
    i = bisect.bisect_left(matches, cursor) - 1
    return matches[i if i >= 0 else len(matches) - 1]


def filter_text(type_filter: set[int] | None) -> str:
    """The type filter in the timeline ("" without one)."""
    if type_filter is None:
        return ""
    names = sorted(CODE_NAMES[c] for c in type_filter)
    return "filter: " + ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")


def type_counts(index: JournalIndex, total: int) -> dict[int, int]:
    """How many of the first `total` events are of each type code."""
    counts: dict[int, int] = {}
    data = index.codes[:total].tobytes()
    for code in set(data):
        counts[code & TYPE_MASK] = counts.get(code & TYPE_MASK, 0) + data.count(bytes([code]))
    return counts


def position_fields(navigator: Navigator) -> dict[str, object]:
    """The timeline's fields about the event shown: its position, type and time, and what the
    viewer is busy with (a provisional end has no position yet: its last event's type)."""
    cursor, view, tail = navigator.shown, navigator.view, navigator.provisional
    kind = when = ""
    if tail is not None:
        kind = tail.last_type
        when = format_ts(view.last_ts, millis=True) if view and view.last_ts else ""
    elif cursor >= 0:
        code = navigator.replay.index.codes[cursor]
        kind = CODE_NAMES.get(code & TYPE_MASK, "?") if code != CORRUPT else "corrupt line"
        if code != CORRUPT and view is not None and view.last_ts:
            when = format_ts(view.last_ts, millis=True)
    busy = "finding the end…" if navigator.want_end and tail is None else ""
    if navigator.cursor != navigator.shown and tail is None:
        busy = "seeking…"
    return {"cursor": cursor, "kind": kind, "when": when, "busy": busy,
            "provisional": tail is not None}


def raw_event_page(index: JournalIndex, position: int) -> tuple[str, str]:
    """The inspector's title and text for the line at `position`: the event pretty-printed, or
    the bytes of a corrupt line, cut at `INSPECT_LIMIT` characters."""
    raw = index.raw(position)
    line = index.line_number(position)
    try:
        text = json.dumps(decode_json(raw), indent=2, ensure_ascii=False)
        title = f"event {position + 1:,} (journal line {line:,})"
    except ValueError:
        text = repr(raw[:INSPECT_LIMIT])
        title = f"journal line {line:,} is corrupt: not an event (shown as bytes)"
    if len(text) > INSPECT_LIMIT:
        text = text[:INSPECT_LIMIT] + f"\n… {len(text) - INSPECT_LIMIT:,} more characters"
    return title, text
