"""Recent journals at a glance: task, status, start time and length, newest first.

Shared by `cockpit journals` and the replay viewer's picker. Only a journal's first and last
lines are read (and, for files up to a few MB, its newlines counted), so listing a folder of huge
journals stays instant.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.paths import journal_dir
from cockpit.replay.journal_facts import JournalFacts, read_facts
from engine_adapter.events import is_valid_ts
from engine_adapter.journal import decode_json, writer_alive

__all__ = ["CRASHED", "CRASHED_LEGEND", "CRASHED_TEXT", "JournalSummary", "describe_length",
           "list_journals",
           "looks_live", "open_status", "summarize"]

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
    status: str  # completed | failed | cancelled | unreadable | empty, or with no agent_end yet
    # (`open_status`): running | running? | crashed? (nothing writes it any more: CRASHED_TEXT)
    started: float | None  # unix seconds of the first event, else the file's mtime; NaN when
    # the first event's `ts` is not a valid time (shown as "bad time", sorted as oldest)
    events: int
    exact: bool  # whether `events` is a count (else an estimate from the size)
    size: int
    facts: JournalFacts = field(default_factory=lambda: JournalFacts(complete=False))
    """The agent, its session's title, tokens and cost (see `journal_facts`)."""


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
    last = _last_event(tail) or {}
    task = first.get("task") if first.get("type") == "agent_start" else None
    status = last.get("status") if last.get("type") == "agent_end" else None
    if status is not None and status not in _STATUSES:  # journal text is untrusted
        status = "unknown"
    if not first:
        status = "unreadable" if stat.st_size else "empty"
    elif status is None:
        status = open_status(path, mtime=stat.st_mtime)
    started = first.get("ts", stat.st_mtime)
    return JournalSummary(
        path=path,
        task=task if isinstance(task, str) else "",
        status=status if isinstance(status, str) else "unknown",
        started=float(started) if is_valid_ts(started) else float("nan"),
        events=events,
        exact=exact,
        size=stat.st_size,
        facts=facts,
    )


def list_journals(directory: str | os.PathLike[str] | None = None, *,
                  limit: int = 200) -> list[JournalSummary]:
    """The journals in `directory` (default: where runs write them), newest first."""
    folder = Path(directory) if directory is not None else journal_dir()
    try:
        paths = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        return []
    paths.sort(key=lambda p: p.stat().st_mtime, reverse=True)
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
