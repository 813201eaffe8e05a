"""The host's record of its runs on disk (one JSON file a run, in `places.record_dir()`), and
what the next host does with the record a dead one left: each journal with no end is ended
(`agent_end` failed: the host died) and its run listed as lost."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine_adapter.atomic import replace_file

__all__ = ["HOST_DIED", "RunRecord", "end_journal", "forget", "recover", "remember"]

log = logging.getLogger(__name__)

HOST_DIED = "the host died"
"""The error a run's journal ends with when its host died under it."""


@dataclass
class RunRecord:
    """What `cockpit ps` says of a run, and what a later host needs to discharge it."""

    id: str
    task: str
    engine: str
    started: float
    journal: str
    status: str = "running"
    host_pid: int = field(default_factory=os.getpid)

    def summary(self, *, approvals: int = 0, questions: int = 0) -> dict[str, Any]:
        """The run as `cockpit ps --json` lists it."""
        return {"id": self.id, "task": self.task, "engine": self.engine,
                "status": self.status,
                "waiting": {"approvals": approvals, "questions": questions},
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "journal": self.journal}


def _file(folder: Path, run_id: str) -> Path:
    return folder / f"{run_id}.json"


def remember(folder: Path, record: RunRecord) -> None:
    """Write (or rewrite) a run's record, atomically."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_file(_file(folder, record.id), json.dumps(asdict(record)), mode=0o600)


def forget(folder: Path, run_id: str) -> None:
    """Drop a run's record (its run ended and its journal says so)."""
    with contextlib.suppress(FileNotFoundError):
        _file(folder, run_id).unlink()


def _load(path: Path) -> RunRecord | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunRecord(**{k: data[k] for k in RunRecord.__dataclass_fields__ if k in data})
    except (OSError, ValueError, TypeError, KeyError):
        log.warning("unreadable run record %s: left alone", path)
        return None


def end_journal(path: str, error: str = HOST_DIED) -> bool:
    """End a journal that has no `agent_end` with one (`failed`, `error`), continuing its seq;
    True if it was ended here. A journal already ended, missing, or still being written by a
    live process is left as it is."""
    from engine_adapter import AgentEnd, JsonlEventJournal, read_journal
    from engine_adapter.journal.jsonl import writer_alive

    if not os.path.isfile(path) or writer_alive(path):
        return False
    last: Any = None
    for event in read_journal(path, strict=False):
        last = event
        if event.type == "agent_end":
            return False
    seq = last.seq + 1 if last is not None else 0
    session_id = last.session_id if last is not None else Path(path).stem
    journal = JsonlEventJournal(path)
    try:
        journal.write(AgentEnd(status="failed", error=error, session_id=session_id, seq=seq,
                               ts=time.time()))
    finally:
        journal.close()
    return True


def recover(folder: Path) -> list[RunRecord]:
    """The runs a dead host left: their journals ended, their records dropped; returned marked
    `lost` (ended ones are simply forgotten). Their agents and commands are gone already: each
    ran in a process scope (`engine_adapter.processes`) whose holder the kernel signals when the
    host dies (`PR_SET_PDEATHSIG`), and which then ends everything below it."""
    lost: list[RunRecord] = []
    if not folder.is_dir():
        return lost
    for path in sorted(folder.glob("*.json")):
        record = _load(path)
        if record is None:
            continue
        try:
            ended = end_journal(record.journal)
        except Exception as exc:  # a broken journal must not stop the host from starting
            log.warning("could not end the journal %s: %s", record.journal, exc)
            ended = True
        if ended or record.status == "running":
            record.status = "lost"
            lost.append(record)
            log.info("run %s was lost with its host; its journal %s is ended",
                     record.id, record.journal)
        forget(folder, record.id)
    return lost
