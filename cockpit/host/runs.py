"""`HostRun`: one run the host owns, from its launch to its end, and `Launched`, what a
launcher hands the host for it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.host.record import RunRecord, forget, remember

__all__ = ["HostRun", "Launched", "Launcher"]

log = logging.getLogger(__name__)


@dataclass
class Launched:
    """A run ready to start: its conversation's factory, its first Session, what drives it (as
    `cockpit ps` names it), and what to clean up when the host lets it go (a demo's
    workspace)."""

    factory: Any
    session: Any
    engine: str
    cleanup: Callable[[], None] | None = None


Launcher = Callable[[str, dict[str, Any]], Launched]
"""Builds a run from a `start` request's command (`demo`, `run`) and parameters; raises an
exception whose message is one line for the user when it cannot."""


class HostRun:
    """A run in the host: its Session running in a task of the host's loop, its record on disk
    while it runs (what the next host reads if this one dies)."""

    def __init__(self, launched: Launched, *, records: Path) -> None:
        self.launched = launched
        self.session = launched.session
        self._records = records
        journal = getattr(self.session.journal, "path", None)
        self.record = RunRecord(id=self.session.session_id, task=self.session.state.task,
                                engine=launched.engine, started=time.time(),
                                journal=str(journal) if journal is not None else "")
        self.task: asyncio.Task[Any] | None = None

    @property
    def id(self) -> str:
        """The run's id (its session id: the one every journal line carries)."""
        return self.record.id

    @property
    def live(self) -> bool:
        """Whether the run has not ended yet."""
        return not self.session.done

    def start(self) -> None:
        """Start the Session in the running loop; its record is written first."""
        remember(self._records, self.record)
        self.task = asyncio.create_task(self._run(), name=f"run {self.id}")

    async def _run(self) -> None:
        try:
            await self.session.run()
        except Exception:  # (the Session ends its run itself; this is the host's own guard)
            log.exception("run %s raised", self.id)
        finally:
            self.record.status = str(self.session.state.status)
            forget(self._records, self.id)  # its journal has its end: nothing to recover
            log.info("run %s ended %s", self.id, self.record.status)

    def summary(self) -> dict[str, Any]:
        """The run as `cockpit ps --json` lists it."""
        if self.live:
            self.record.status = "running"
        session = self.session
        return self.record.summary(approvals=len(session.pending_approvals),
                                   questions=len(session.pending_questions))

    async def close(self) -> None:
        """The run's agents closed and its leftovers cleaned up (the run has ended)."""
        with contextlib.suppress(Exception):
            await self.launched.factory.aclose()
        cleanup = self.launched.cleanup
        if cleanup is not None:
            with contextlib.suppress(Exception):
                cleanup()
