"""Journals at a glance, read without folding them: for `cockpit journals`, `cockpit sessions`
and the replay viewer's picker.

- `list_journals` / `summarize`: recent journals, newest first, with task, status, start time and
  length. Only a journal's first and last lines are read (and, for files up to a few MB, its
  newlines counted), so listing a folder of huge journals stays instant.
- `read_facts` / `scan_facts`: what a journal says about its run beyond its first and last lines:
  the agent and its session (id, working directory, title), and the tokens and cost spent. Only
  the few lines that carry these are parsed (`agent_start`, `session_info`, `model_usage`), found
  by a byte search for their start, so a journal of streamed text is skimmed, not folded.
- `remember_journal` / `indexed_journals`: the index of journals written elsewhere (`--journal
  PATH`), kept in the data directory, so listings find them beside the journal folder's own.

Journal contents are untrusted: every value is type-checked here and escaped where shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.paths import data_dir, journal_dir
from engine_adapter.atomic import replace_file
from engine_adapter.events import is_valid_ts
from engine_adapter.journal import ForeignSession, decode_json, detect_foreign_bytes, writer_alive

__all__ = [
    "CRASHED",
    "CRASHED_LEGEND",
    "CRASHED_TEXT",
    "FOREIGN",
    "SCAN_LIMIT",
    "JournalFacts",
    "JournalSummary",
    "describe_length",
    "index_path",
    "indexed_journals",
    "list_journals",
    "looks_live",
    "open_status",
    "read_facts",
    "remember_journal",
    "scan_facts",
    "summarize",
]


SCAN_LIMIT = 64 << 20  # bytes of one journal skimmed; past this the facts are partial
_CHUNK = 4 << 20
_MARKERS = {b'{"type":"agent_start"': "agent_start", b'{"type":"agent_ready"': "agent_ready",
            b'{"type":"session_info"': "session_info", b'{"type":"model_usage"': "model_usage"}


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
    tokens_reported: bool = False  # any token count reported (else the 0s mean "unknown")


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
    if kind in ("agent_start", "agent_ready"):  # an older journal: the session id on the start
        facts.agent = _str(data.get("engine"), 200) or facts.agent
        facts.cwd = _str(data.get("cwd")) or facts.cwd
        facts.acp_session_id = _str(data.get("acp_session_id"), 200) or facts.acp_session_id
    elif kind == "session_info":
        facts.title = _str(data.get("title"), 300)
    else:
        if data.get("scope") != "session":  # an agent's session report carries no tokens
            facts.tokens_reported = True
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
    """Whether the journal's run is an agent (ACP) session — one `cockpit resume` can
    continue: its first event starts an agent, and it, or the `agent_ready` that follows it
    within the first 64 KiB, names the session."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64 << 10)
    except OSError:
        return False
    if not head.startswith(b'{"type":"agent_start"'):
        return False
    facts = scan_facts(head[:head.rfind(b"\n") + 1] or head)  # whole lines only
    return bool(facts.acp_session_id) and (facts.agent or "").startswith("acp:")


# Recent journals at a glance ----------------------------------------------------------------------


_HEAD = 64 << 10  # bytes read for the first event (a task can be long)
_TAIL = 64 << 10  # bytes read for the last event
_STATUSES = ("completed", "failed", "cancelled")
_COUNT_LIMIT = 8 << 20  # count lines exactly below this size; estimate above it
STALE_AFTER = 120.0
"""Seconds without a change after which a journal with no `agent_end` is taken as abandoned,
where whether a run still holds its lock cannot be told (a filesystem without locks)."""
CRASHED = "crashed?"
"""The status of a journal with no `agent_end` that no run is writing any more."""
CRASHED_TEXT = "ended without a final event (crashed?)"
"""What that status means, in words (the replay viewer's bar)."""
FOREIGN = "foreign"
"""The status of another tool's session file (Claude Code's, Codex's, …) among the journals."""
CRASHED_LEGEND = f"{CRASHED} = {CRASHED_TEXT[:-11]}: no run is writing it any more"
"""The note under a listing that shows that status."""


def open_status(path: str | os.PathLike[str], *, mtime: float | None = None,
                now: float | None = None) -> str:
    """The status of a journal with no `agent_end` yet: "running" while a live run holds its
    lock (`writer_alive`), `CRASHED` once none does. Where that cannot be told (a filesystem
    without locks), `CRASHED` once it has not changed for `STALE_AFTER` seconds, else
    "running?"."""
    alive = writer_alive(path)
    if alive is not None:
        return "running" if alive else CRASHED
    try:
        mtime = os.stat(path).st_mtime if mtime is None else mtime
    except OSError:
        return "running?"
    stale = (time.time() if now is None else now) - mtime > STALE_AFTER
    return CRASHED if stale else "running?"


@dataclass(frozen=True)
class JournalSummary:
    """What the picker and `cockpit journals` show for one journal."""

    path: Path
    task: str
    status: str  # completed | failed | cancelled | unreadable | empty | foreign (another
    # tool's session file: `foreign` says what), or with no agent_end yet
    # (`open_status`): running | running? | crashed? (nothing writes it any more: CRASHED_TEXT)
    started: float | None  # unix seconds of the first event, else the file's mtime; NaN when
    # the first event's `ts` is not a valid time (shown as "bad time", sorted as oldest)
    events: int
    exact: bool  # whether `events` is a count (else an estimate from the size)
    size: int
    facts: JournalFacts = field(default_factory=lambda: JournalFacts(complete=False))
    """The agent, its session's title, tokens and cost (see `read_facts`)."""
    foreign: ForeignSession | None = None
    """Another tool's session file (status `foreign`): what it is and how to view it."""


def describe_length(summary: JournalSummary) -> str:
    """`1,234`, `~1,234` when estimated from the size, or `?` when the first line is not an
    event (its lines are then not known to be events)."""
    if summary.status == "unreadable":
        return "?"
    return f"{summary.events:,}" if summary.exact else f"~{summary.events:,}"


def _first_event(head: bytes) -> dict[str, object] | None:
    line = head.split(b"\n", 1)[0]
    try:
        data = decode_json(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _last_event(tail: bytes) -> dict[str, object] | None:
    for line in reversed(tail.split(b"\n")):
        if not line.strip():
            continue
        try:
            data = decode_json(line)
        except ValueError:
            continue  # a torn last line: look at the one before
        if isinstance(data, dict):
            return data
    return None


def summarize(path: str | os.PathLike[str]) -> JournalSummary:
    """Summarize one journal from its first and last lines. Never raises for a bad file."""
    path = Path(path)
    try:
        stat = path.stat()
        with open(path, "rb") as f:
            head = f.read(_HEAD)
            f.seek(max(0, stat.st_size - _TAIL))
            tail = f.read(_TAIL)
            data: bytes | None = None
            if stat.st_size <= _COUNT_LIMIT:
                f.seek(0)
                data = f.read()
                events, exact = sum(1 for line in data.split(b"\n") if line.strip()), True
            else:
                lines = head.count(b"\n") or 1
                events, exact = int(stat.st_size / (len(head) / lines)), False
        facts = read_facts(path, data)
    except OSError:
        return JournalSummary(path, "", "unreadable", None, 0, True, 0)
    first = _first_event(head) or {}
    if "seq" not in first or "session_id" not in first:  # not ours: perhaps another tool's
        foreign = detect_foreign_bytes(head, path.name)
        if foreign is not None:
            return JournalSummary(path, foreign.what, FOREIGN, stat.st_mtime, events, exact,
                                  stat.st_size, JournalFacts(), foreign)
    last = _last_event(tail) or {}
    task = first.get("task") if first.get("type") == "agent_start" else None
    ended = last.get("status") if last.get("type") == "agent_end" else None
    if not first:
        status = "unreadable" if stat.st_size else "empty"
    elif ended is None:
        status = open_status(path, mtime=stat.st_mtime)
    else:  # journal text is untrusted
        status = ended if isinstance(ended, str) and ended in _STATUSES else "unknown"
    started = first.get("ts", stat.st_mtime)
    return JournalSummary(
        path=path,
        task=task if isinstance(task, str) else "",
        status=status,
        started=float(started) if is_valid_ts(started) else float("nan"),
        events=events,
        exact=exact,
        size=stat.st_size,
        facts=facts,
    )


_INDEX_KEEP = 1000  # journals written elsewhere that the index remembers (the newest)
_INDEX_READ = 1 << 20  # bytes of the index read: its tail, the newest entries


def index_path() -> Path:
    """The index of journals written outside `journal_dir()`: one JSON string (a path) a line."""
    return data_dir() / "journal-index.jsonl"


def _index_entries() -> list[str]:
    """The index's paths, oldest first, each once (the last mention counts)."""
    try:
        with open(index_path(), "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - _INDEX_READ))
            data = f.read()
    except OSError:
        return []
    lines = data.split(b"\n")
    if size > _INDEX_READ:
        lines = lines[1:]  # the first may be cut
    seen: dict[str, None] = {}
    for line in lines:
        try:
            value = json.loads(line) if line.strip() else None
        except ValueError:
            continue  # a torn or damaged line: the others still count
        if isinstance(value, str) and value:
            seen.pop(value, None)
            seen[value] = None
    return list(seen)


def remember_journal(path: str | os.PathLike[str]) -> None:
    """Add a journal written outside `journal_dir()` to the index (when its run starts), so
    `cockpit journals`, the replay picker and `cockpit sessions` list it. Best effort: an index
    that cannot be written never stops a run."""
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        return  # a stream (/dev/stdout): nothing to list later
    entries = _index_entries()
    if entries and entries[-1] == full:
        return
    line = json.dumps(full, ensure_ascii=False) + "\n"
    with contextlib.suppress(OSError):
        index = index_path()
        index.parent.mkdir(parents=True, exist_ok=True)
        if len(entries) >= 2 * _INDEX_KEEP:  # compact: the newest that still exist
            kept = [e for e in entries if e != full and os.path.isfile(e)][-_INDEX_KEEP:]
            replace_file(index, "".join(json.dumps(e, ensure_ascii=False) + "\n"
                                        for e in [*kept, full]), mode=0o600)
            return
        with open(index, "a", encoding="utf-8") as f:
            f.write(line)


def indexed_journals() -> list[Path]:
    """The journals the index names that still exist, newest mention first."""
    return [Path(e) for e in reversed(_index_entries()) if os.path.isfile(e)]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0  # gone since it was listed: summarized as unreadable


def list_journals(directory: str | os.PathLike[str] | None = None, *,
                  limit: int = 200) -> list[JournalSummary]:
    """The journals in `directory`, newest first; without one, the user's journals: those
    where runs write them and those written elsewhere (`--journal PATH`, the index)."""
    folder = Path(directory) if directory is not None else journal_dir()
    try:
        paths = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        paths = []
    if directory is None:
        known = {os.path.abspath(p) for p in paths}
        paths += [p for p in indexed_journals() if str(p) not in known]
    if not paths:
        return []
    paths.sort(key=_mtime, reverse=True)
    summaries = [summarize(p) for p in paths[:limit]]
    summaries.sort(key=lambda s: s.started if is_valid_ts(s.started) else 0.0, reverse=True)
    return summaries


def looks_live(path: str | os.PathLike[str]) -> bool:
    """Whether a journal's last event is not an `agent_end` (a run still writing it)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - _TAIL))
            tail = f.read()
    except OSError:
        return False
    lines = tail.split(b"\n")
    torn = lines.pop() if lines and lines[-1].strip() else b""  # unterminated: maybe torn
    for line in reversed(lines):
        if line.strip():
            try:
                data = decode_json(line)
            except ValueError:
                return True  # damaged: keep watching rather than guess
            return not (isinstance(data, dict) and data.get("type") == "agent_end")
    if torn:
        return True  # a first line still being written
    return size == 0  # an empty file: a run that is just starting, perhaps
