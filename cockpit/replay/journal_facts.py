"""What a journal says about its run beyond its first and last lines: the agent and its session
(id, working directory, title), and the tokens and cost spent — for `cockpit journals` and
`cockpit sessions`.

Only the few lines that carry these are parsed (`agent_start`, `session_info`, `model_usage`),
found by a byte search for their start, so a journal of streamed text is skimmed, not folded.
Journal contents are untrusted: every value is type-checked here and escaped where shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SCAN_LIMIT", "JournalFacts", "read_facts", "scan_facts"]

SCAN_LIMIT = 64 << 20  # bytes of one journal skimmed; past this the facts are partial
_CHUNK = 4 << 20
_MARKERS = {b'{"type":"agent_start"': "agent_start", b'{"type":"session_info"': "session_info",
            b'{"type":"model_usage"': "model_usage"}


@dataclass
class JournalFacts:
    """`agent`: the engine's name for it ("acp:codex"), `acp_session_id` and `cwd` of the last
    task, the session's last `title`, token totals and cost (None: none reported);
    `complete`: the whole journal was skimmed."""

    agent: str | None = None
    acp_session_id: str | None = None
    cwd: str | None = None
    title: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    complete: bool = True


def _str(value: object, limit: int = 2000) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _take(facts: JournalFacts, kind: str, line: bytes) -> None:
    try:
        data = json.loads(line)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    if kind == "agent_start":
        facts.agent = _str(data.get("engine"), 200) or facts.agent
        facts.cwd = _str(data.get("cwd")) or facts.cwd
        facts.acp_session_id = _str(data.get("acp_session_id"), 200) or facts.acp_session_id
    elif kind == "session_info":
        facts.title = _str(data.get("title"), 300)
    else:
        facts.input_tokens += _int(data.get("input_tokens"))
        facts.output_tokens += _int(data.get("output_tokens"))
        cost = data.get("cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost < 1e9:
            facts.cost_usd = (facts.cost_usd or 0.0) + cost


def scan_facts(data: bytes, facts: JournalFacts | None = None) -> JournalFacts:
    """The facts in `data` (whole lines of a journal), added to `facts` in the order the lines
    come."""
    facts = facts if facts is not None else JournalFacts()
    found: list[tuple[int, str, bytes]] = []
    for marker, kind in _MARKERS.items():
        pos = data.find(marker)
        while pos != -1:
            end = data.find(b"\n", pos)
            end = len(data) if end == -1 else end
            if pos == 0 or data[pos - 1] == 0x0A:  # only at the start of a line
                found.append((pos, kind, data[pos:end]))
            pos = data.find(marker, end)
    for _pos, kind, line in sorted(found, key=lambda item: item[0]):
        _take(facts, kind, line)
    return facts


def read_facts(path: Path, data: bytes | None = None) -> JournalFacts:
    """The facts of the journal at `path` (`data`: its whole content, when already read); reads
    at most `SCAN_LIMIT` bytes. Never raises for a bad file."""
    if data is not None:
        return scan_facts(data)
    facts = JournalFacts()
    try:
        with open(path, "rb") as handle:
            read, rest = 0, b""
            while read < SCAN_LIMIT:
                chunk = handle.read(_CHUNK)
                if not chunk:
                    scan_facts(rest, facts)
                    return facts
                read += len(chunk)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                scan_facts(data[:cut], facts)
                rest = data[cut:]
            facts.complete = False
    except OSError:
        facts.complete = False
    return facts


def runs_an_agent_session(path: Path) -> bool:
    """Whether the journal's first event starts an agent (ACP) session — one `cockpit resume`
    can continue. Reads only the first line."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64 << 10)
    except OSError:
        return False
    facts = scan_facts(head.split(b"\n", 1)[0])
    return bool(facts.acp_session_id) and (facts.agent or "").startswith("acp:")
