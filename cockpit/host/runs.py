"""`HostRun`: one run the host owns, from its launch to its end (every task of its
conversation), and `Launched`, what a launcher hands the host for it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.host.activity import RunActivity
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
exception whose message is one line for the user when it cannot. It may block (it is called
in a thread, never on the host's loop)."""


def _journal_of(session: Any) -> str:
    path = getattr(session.journal, "path", None)
    return str(path) if path is not None else ""


class HostRun:
    """A run in the host: the Session of its current task running in a task of the host's
    loop, its record on disk while it runs (what the next host reads if this one dies), and its
    activity (what the fleet view shows). Once it has ended and `release()` was called, its
    events are no longer held: a client follows it from its journals.

    Args:
        launched: What the launcher built.
        records: Where run records live (`places.record_dir()`).
        changed: Called on every event of the run, and when it starts or ends (the host pushes
            the fleet to its watchers then).
        ended: Called when a task of the run has ended (the host lets go of it later).
    """

    def __init__(self, launched: Launched, *, records: Path,
                 changed: Callable[[], None] = lambda: None,
                 ended: Callable[[HostRun], None] = lambda run: None) -> None:
        self.launched = launched
        self.sessions: list[Any] = [launched.session]
        self._records = records
        self._changed = changed
        self._ended = ended
        session = launched.session
        self.record = RunRecord(id=session.session_id, task=session.state.task,
                                engine=launched.engine, started=time.time(),
                                journal=_journal_of(session))
        self.journals: list[str] = [self.record.journal]
        self.activity = RunActivity()
        self.task: asyncio.Task[Any] | None = None
        self.ended_at: float | None = None  # (monotonic) when its last task ended
        self.released = False
        self.approval_timeout: float | None = launched.session.approval_timeout
        self._watcher: asyncio.Task[None] | None = None

    @property
    def id(self) -> str:
        """The run's id (its session id: the one every journal line carries)."""
        return self.record.id

    @property
    def session(self) -> Any:
        """The Session of its current (last) task (`LookupError` once the run was let go)."""
        if not self.sessions:
            raise LookupError(f"the run {self.id} has ended and was let go")
        return self.sessions[-1]

    @property
    def live(self) -> bool:
        """Whether its current task has not ended yet."""
        return not self.released and not self.session.done

    def start(self) -> None:
        """Start the Session in the running loop; its record is written first."""
        remember(self._records, self.record)
        self._start(self.session)

    def _start(self, session: Any) -> None:
        self.ended_at = None
        self.task = asyncio.create_task(self._run(session), name=f"run {self.id}")
        self._watcher = asyncio.create_task(self._watch(session.events()),
                                            name=f"watch {self.id}")
        self._changed()

    async def _watch(self, stream: Any) -> None:
        async for event in stream:
            self.activity.apply(event)
            self._changed()

    async def _run(self, session: Any) -> None:
        try:
            await session.run()
        except Exception:  # (the Session ends its run itself; this is the host's own guard)
            log.exception("run %s raised", self.id)
        finally:
            # Its events stay readable (a client may follow the ended task), but only in their
            # compact form: the decoded ones kept for readers that keep up are let go now.
            session.shed()
            self.record.status = str(session.state.status)
            forget(self._records, self.id)  # its journal has its end: nothing to recover
            self.ended_at = time.monotonic()
            log.info("run %s ended %s", self.id, self.record.status)
            self._changed()
            self._ended(self)

    async def next_task(self, text: str) -> int:
        """Start the conversation's next task with `text`, as the embedded cockpit does (the
        factory's next Session: same grants, same id, its own journal); its number (1-based).
        `RuntimeError` while the current task runs or once the run was let go."""
        if self.released:
            raise RuntimeError(f"the run {self.id} has ended and the host let it go: "
                               "resume it from its journal (`cockpit resume`)")
        if not self.session.done or self.task is None or not self.task.done():
            raise RuntimeError(f"the run {self.id} is still on its task: wait for its end "
                               "(or cancel it) before sending the next one")
        if not text.strip():
            raise ValueError("the next task is empty: say what to do")
        factory = self.launched.factory
        session = await asyncio.to_thread(factory, text)  # (it opens a journal: a file)
        self.sessions.append(session)
        self.record.status = "running"
        self.record.journal = _journal_of(session)
        self.journals.append(self.record.journal)
        remember(self._records, self.record)
        self._start(session)
        return len(self.sessions)

    def summary(self) -> dict[str, Any]:
        """The run as `cockpit ps --json` lists it."""
        if self.live:
            self.record.status = "running"
        if self.released:
            return self.record.summary()
        session = self.session
        return self.record.summary(approvals=len(session.pending_approvals),
                                   questions=len(session.pending_questions))

    def fleet_row(self) -> dict[str, Any]:
        """The run as the fleet view shows it: its summary, its activity, its tasks, and
        whether the host still holds its events (`held`; else its journals serve them)."""
        return {**self.summary(), **self.activity.facts(), "tasks": len(self.journals),
                "held": not self.released}

    async def close(self) -> None:
        """The run's agents closed and its leftovers cleaned up (the run has ended)."""
        with contextlib.suppress(Exception):
            await self.launched.factory.aclose()
        cleanup = self.launched.cleanup
        if cleanup is not None:
            with contextlib.suppress(Exception):
                cleanup()

    async def release(self) -> None:
        """Let go of an ended run's events and agents (what the host holds of it is its record
        and activity; a client follows it from its journals). Idempotent."""
        if self.released or self.live or (self.task is not None and not self.task.done()):
            return
        self.released = True
        await self.close()
        if self._watcher is not None:
            self._watcher.cancel()
        self.launched = Launched(factory=None, session=None, engine=self.launched.engine)
        self.sessions = []  # (their histories: what a long run holds most of)
        log.info("run %s let go (ended %s)", self.id, self.record.status)
        self._changed()

