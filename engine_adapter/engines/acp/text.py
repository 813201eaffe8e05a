"""Making an agent's text safe to journal and show: control sequences escaped, sizes capped.

Everything an agent sends is untrusted: a reply, a tool title, a command, its stderr. A terminal
escape (`\\x1b[2J`), a carriage return that overwrites a line, or a bidi override that reorders
what the human reads could make an approval say something other than what runs. These helpers
turn such characters into visible escapes (`\\x1b`), so the text stays plain and readable, and
cap sizes so one message cannot balloon the journal or the screen.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["cap", "clean", "clean_json", "clean_stderr_line"]

# C0 controls except tab and newline, DEL, C1 controls, and the bidi embedding/override/isolate
# characters (a "Trojan Source" reorders what the human reads).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# ANSI escape sequences (CSI ... final byte, OSC ... BEL/ST) that agents print on stderr for colour.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?)")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cap(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def clean(text: str, limit: int | None = None) -> str:
    """`text` with control and bidi characters made visible (`\\x1b`), optionally capped.

    A lone `\\r\\n` becomes `\\n`. Cheap when there is nothing to escape (the streaming path).
    """
    if limit is not None and len(text) > limit:
        text = cap(text, limit)
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))


def clean_stderr_line(line: str, limit: int = 500) -> str:
    """One line of an agent's stderr: colour codes dropped (noise), other controls escaped."""
    return clean(_ANSI.sub("", line.rstrip("\r\n")), limit)


def clean_json(value: Any, *, string_limit: int = 8192, items: int = 200, depth: int = 8) -> Any:
    """A JSON-like value with every string cleaned and capped, long lists and deep nesting cut.

    Non-JSON values (an object the SDK left in place) become their cleaned `repr`.
    """
    if isinstance(value, str):
        return clean(value, string_limit)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth <= 0:
        return clean(json.dumps(value, default=repr)[:string_limit])
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i >= items:
                out["…"] = f"{len(value) - items} more keys"
                break
            out[clean(str(key), 200)] = clean_json(item, string_limit=string_limit, items=items,
                                                   depth=depth - 1)
        return out
    if isinstance(value, list | tuple):
        cut = [clean_json(item, string_limit=string_limit, items=items, depth=depth - 1)
               for item in value[:items]]
        if len(value) > items:
            cut.append(f"… {len(value) - items} more items")
        return cut
    return clean(repr(value), string_limit)
