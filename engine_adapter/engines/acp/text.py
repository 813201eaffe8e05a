"""The ACP journal boundary's display of an agent's text: unsafe characters escaped, sizes capped.

Everything an agent sends is untrusted: a reply, a tool title, a command, its stderr. Which
characters are unsafe (a terminal escape `\\x1b[2J`, a carriage return that overwrites a line, a
bidi override that reorders what the human reads, a zero-width space) and how a cut says what
it dropped are decided once, in `engine_adapter.text`. At this boundary an unsafe character is
written as its escape (`\\x1b`, `\\u200b`), so the journal holds plain, readable text; a size cap
keeps one message from ballooning the journal or the screen. The text every view shows styled
(a reply, a tool's output, a diff) is the exception, `kept`: capped, its unsafe characters left
for the views to mark, as with the built-in engine's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine_adapter.text import MIN_CAP, escaped, plural
from engine_adapter.text import cap as cap_text

__all__ = ["cap", "clean", "clean_json", "clean_stderr_line", "kept"]

# SGR sequences (colours, bold) that agents print on their stderr: noise in a one-line tail,
# dropped there only. Every other escape sequence (a title, a clipboard write) stays visible.
_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def cap(text: str, limit: int) -> str:
    """`text` within `limit` characters, the note saying how many were dropped included (a
    field too small to hold a note, under `MIN_CAP` characters, ends in `…` instead)."""
    if limit < MIN_CAP:
        return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
    return cap_text(text, chars=limit)


def clean(text: str, limit: int | None = None) -> str:
    """`text` capped to `limit` characters (counted before escaping), every unsafe character
    escaped (`\\x1b`, `\\u200b`), a `\\r\\n` line break written as `\\n`. Cheap when there is
    nothing to escape (the streaming path)."""
    if limit is not None and len(text) > limit:
        text = cap(text, limit)
    text = escaped(text)
    return text.replace("\r\n", "\n") if "\r" in text else text


def kept(text: str, limit: int | None = None) -> str:
    """Text every view shows styled (a reply, a thought, a tool's output, a diff): capped to
    `limit` characters, a `\\r\\n` line break written as `\\n`, and its unsafe characters
    kept as they are, as the built-in engine's text keeps them. Every view marks them (`␛` in
    the cockpit, `⟨U+200B⟩` in the HTML export) or escapes them (headless, Markdown); the
    journal's JSON holds them as `\\u001b`. Escaped here instead, they could not be told from
    an agent's literal backslash text (`print("\\x1b[31m")`) and showed as that literal."""
    if limit is not None and len(text) > limit:
        text = cap(text, limit)
    return text.replace("\r\n", "\n") if "\r" in text else text


def clean_stderr_line(line: str, limit: int = 500) -> str:
    """One line of an agent's stderr: colour codes dropped (noise), anything else escaped."""
    return clean(_SGR.sub("", line.rstrip("\r\n")), limit)


def _dumped(value: Any, limit: int) -> str:
    try:
        return clean(json.dumps(value, default=repr)[:limit])
    except (RecursionError, ValueError):
        return "(nested too deep to keep)"


def clean_json(value: Any, *, string_limit: int = 8192, items: int = 200, depth: int = 8) -> Any:
    """A JSON-like value with every string cleaned and capped, long lists and deep nesting cut.

    Non-JSON values (an object the SDK left in place) become their cleaned `repr`.
    """
    if isinstance(value, str):
        return clean(value, string_limit)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth <= 0:
        return _dumped(value, string_limit)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i >= items:
                out["…"] = plural(len(value) - items, "more key")
                break
            out[clean(str(key), 200)] = clean_json(item, string_limit=string_limit, items=items,
                                                   depth=depth - 1)
        return out
    if isinstance(value, list | tuple):
        kept = [clean_json(item, string_limit=string_limit, items=items, depth=depth - 1)
                for item in value[:items]]
        if len(value) > items:
            kept.append(f"… {plural(len(value) - items, 'more item')}")
        return kept
    try:
        return clean(repr(value), string_limit)
    except RecursionError:
        return "(a value too deep to show)"
