"""The host's wire: newline-delimited JSON over the host's unix socket (or a command's stdio).

One JSON object a line, UTF-8, at most `MAX_LINE` bytes. A connection opens with the client's
`hello` (`{"hello": PROTOCOL, "version": VERSION, "role": "client"}`), answered by the host's
own (`"role": "host"`, its pid and since when it runs) or an `error`. Then the client sends
requests, each with an `op` and an optional `id` that the host's reply carries back
(`{"id", "ok": true, ...}` or `{"id", "ok": false, "error"}`). `follow` then streams the run's
events from a cursor (the journal's `seq`) as `{"event": {...}}` lines, ending with
`{"end": RUN}` after `agent_end`; control requests may be sent on the same connection
meanwhile. `watch` streams `{"fleet": [...]}` lines: every run's `ps` row with its last
activity, tokens, cost, tasks and open asks (oldest first), pushed when something changed.

Requests and fields are only ever added within a version (`turn`, `watch`, `grants`,
`revoke_grant` and `follow`'s `task` came later in version 1: a host older than them answers
`unknown request`, which a client reports as "update the cockpit on the host"). A new
`VERSION` is a new protocol: a host and a client of different versions refuse each other with
a line saying so.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MAX_LINE",
    "OPS",
    "PROTOCOL",
    "VERSION",
    "WireError",
    "decode",
    "encode",
    "hello",
    "hello_problem",
]

PROTOCOL = "cockpit-host"
VERSION = 1
MAX_LINE = 64 * 1024 * 1024
"""The longest line either side accepts (an event is bounded well below this by the Session)."""

OPS = frozenset({
    "status",  # the host: pid, since, runs
    "ps",  # the runs, as `cockpit ps --json` prints them
    "describe",  # {"run"}: its summary, approval timeout and number of tasks
    "start",  # a run: {"command": "demo"|"run", "params": {...}} -> {"run": ID}
    "stop",  # cancel every live run, then exit
    "follow",  # {"run", "cursor", "task"?}: a task's events (default: the last) from `cursor`
    "turn",  # {"run", "task": TEXT}: the conversation's next task -> {"task": N} (1-based)
    "watch",  # the fleet, pushed as {"fleet": [row, ...]} now and whenever it changes
    "resolve_approval",  # {"run", "approval_id", "allow", "remember", "scope", "reason"}
    "answer_question",  # {"run", "question_id", "action", "values"} -> {"answered": bool}
    "cancel",  # {"run", "reason"}
    "grants",  # {"run"}: its grants and deny rules in force -> {"entries", "store", "problems"}
    "revoke_grant",  # {"run", "grant_id", "kind", "tool", "prefix"}: remove one -> {"revoked"}
})
"""Every request a host answers."""


class WireError(ValueError):
    """A line that is not one JSON object of the protocol (the message says what is wrong)."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as its line (ending with a newline)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line back into its message; `WireError` if it is not one JSON object."""
    if len(line) > MAX_LINE:
        raise WireError(f"a line of {len(line)} bytes is longer than {MAX_LINE}")
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"not a JSON line: {exc}") from None
    if not isinstance(message, dict):
        raise WireError(f"a line must be a JSON object, not {type(message).__name__}")
    return message


def hello(role: str = "client", **extra: Any) -> dict[str, Any]:
    """The greeting each side sends first (`role`: `client` or `host`)."""
    return {"hello": PROTOCOL, "version": VERSION, "role": role, **extra}


def hello_problem(message: dict[str, Any], *, role: str = "host") -> str | None:
    """What is wrong with the other side's greeting, which should come from `role` (None: it
    speaks this protocol; a command that echoes our own greeting back is not a host)."""
    if message.get("hello") != PROTOCOL:
        error = message.get("error")
        return str(error) if error else "the other side does not speak the cockpit host protocol"
    version = message.get("version")
    if version != VERSION:
        return (f"the other side speaks version {version!r} of the host protocol, this cockpit "
                f"version {VERSION}: use the same cockpit on both sides")
    if message.get("role") != role:
        return f"the other side is not a cockpit {role} (it answered as {message.get('role')!r})"
    return None
