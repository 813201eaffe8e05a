"""Making untrusted text safe to show: agent output, tool output, journal contents.

Everything here returns plain `str` or Rich `Text` built without markup, so `[bold]` in a tool's
output stays the six characters it is. Escape sequences and other control characters are shown
as visible symbols (`␛[31m`), never passed to the terminal; sizes are capped before any
per-character work so a 10 MB output costs a slice, not a scan.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.text import Text

__all__ = ["clean", "clean_line", "input_summary", "one_line", "pretty_input", "split_lines"]

# C0 controls except tab and newline, DEL, and C1 controls: all made visible.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidi overrides and isolates can reorder what the human reads: made visible too.
_BIDI_RE = re.compile(r"[\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}"


def _bidi(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def clean(text: str, limit: int | None = None) -> str:
    """`text` with control characters made visible and tabs expanded; cut to `limit` chars."""
    if limit is not None and len(text) > limit:
        text = text[:limit]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    text = _CONTROL_RE.sub(_visible, text)
    if "\t" in text:
        text = text.expandtabs(4)
    return _BIDI_RE.sub(_bidi, text)


def clean_line(line: str, limit: int = 1000) -> str:
    """One line cleaned for a one-row display (newlines shown as ⏎)."""
    return clean(line[:limit], None).replace("\n", "⏎")


def split_lines(text: str, max_lines: int | None = None) -> tuple[list[str], int]:
    """The first `max_lines` lines of `text` and how many lines it has in all.

    Counting uses `str.count`, so a 10 MB output with a million lines costs milliseconds.
    """
    total = text.count("\n") + 1 if text else 0
    if text.endswith("\n"):
        total -= 1
    if max_lines is None:
        return text.splitlines(), total
    lines: list[str] = []
    start = 0
    while len(lines) < max_lines:
        end = text.find("\n", start)
        if end < 0:
            if start < len(text):
                lines.append(text[start:])
            break
        lines.append(text[start:end])
        start = end + 1
    return lines, total


def one_line(text: str | None, limit: int = 200) -> str:
    """The first line of `text`, cleaned, with `…` when something was left out."""
    if not text:
        return ""
    first = text[: limit + 1].split("\n", 1)[0]
    more = len(first) > limit or len(first) < len(text.rstrip("\n"))
    return clean_line(first[:limit]) + (" …" if more else "")


def input_summary(tool_input: dict[str, Any] | None, limit: int = 200) -> str:
    """A one-line summary of a tool's input: the command, the path, or compact JSON."""
    if not tool_input:
        return ""
    for key in ("command", "path", "file", "url", "query", "pattern"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return one_line(value, limit)
    argv = tool_input.get("argv")
    if isinstance(argv, list):
        return one_line(" ".join(str(a) for a in argv), limit)
    try:
        raw = json.dumps(tool_input, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        raw = repr(tool_input)
    return one_line(raw, limit)


def pretty_input(tool_input: dict[str, Any] | None, limit: int = 20_000) -> Text:
    """A tool input as indented JSON, cleaned, as plain `Text`."""
    try:
        raw = json.dumps(tool_input or {}, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        raw = repr(tool_input)
    more = len(raw) > limit
    text = Text(clean(raw, limit))
    if more:
        text.append(f"\n… {len(raw) - limit:,} more characters", style="italic")
    return text
