"""`Checkpointer`: the checkpoints of one run, taken off the event loop, one at a time.

The Session asks for one at each `turn_start` and at the run's end (`begin`); the work runs in
the checkpointer's own worker thread and the answer is a `concurrent.futures.Future` of the
`CheckpointTaken` event to journal (with `error` set, never raised, when it could not be
taken). A store over its cap is pruned (oldest runs first) at the run's end, in that thread too.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os

from engine_adapter.checkpoints.settings import CheckpointSettings
from engine_adapter.checkpoints.snapshot import Snapshotter
from engine_adapter.checkpoints.store import CheckpointStore
from engine_adapter.events import CheckpointTaken

__all__ = ["LARGE_LISTED", "Checkpointer"]

log = logging.getLogger(__name__)

LARGE_LISTED = 50
"""At most this many paths over the size cap are named in one event (the count is exact)."""


class Checkpointer:
    """Takes the checkpoints of run `run` in `workspace` into `store`."""

    def __init__(self, store: CheckpointStore, workspace: str | os.PathLike[str], *, run: str,
                 settings: CheckpointSettings | None = None) -> None:
        self.store = store
        self.workspace = os.path.realpath(workspace)
        self.run = run
        self.settings = settings or CheckpointSettings()
        self.snapshotter = Snapshotter(store, self.workspace, run=run,
                                       large_bytes=self.settings.large_bytes,
                                       ignore=self.settings.ignore)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="cockpit-checkpoint")
        self.full = False  # over the cap with pruning off: no more checkpoints this run

    def begin(self, turn: int | None) -> concurrent.futures.Future[CheckpointTaken]:
        """Start the checkpoint of `turn` (None: the run's end) in the worker thread."""
        return self._pool.submit(self._take, turn)

    def _take(self, turn: int | None) -> CheckpointTaken:
        kind = "turn" if turn is not None else "end"
        if self.full:
            return CheckpointTaken(turn=turn, kind=kind, error=(
                "the checkpoint store is over its cap ([checkpoints] max_store_mb) and pruning "
                "is off: no checkpoint taken"))
        try:
            taken = self.snapshotter.take(turn=turn, kind=kind)
        except Exception as exc:  # a workspace gone or unreadable, a full disk: journaled
            log.debug("checkpoint failed", exc_info=True)
            return CheckpointTaken(turn=turn, kind=kind,
                                   error=f"no checkpoint taken: {type(exc).__name__}: {exc}")
        manifest = taken.manifest
        added, modified, deleted = taken.changed
        if turn is None:
            self._keep_under_cap()
        return CheckpointTaken(
            turn=turn, kind=kind, checkpoint=manifest.id, files=manifest.files,
            source=manifest.source, added=added, modified=modified, deleted=deleted,
            stored_bytes=manifest.stored_bytes, large=manifest.large[:LARGE_LISTED],
            large_count=len(manifest.large), duration_ms=round(taken.seconds * 1000, 1))

    def _keep_under_cap(self) -> None:
        cap = self.settings.max_store_bytes
        if cap is None:
            return
        try:
            if self.settings.prune:
                self.store.prune(cap, keep_run=self.run)
            elif self.store.size() > cap:
                self.full = True
        except OSError:
            log.info("pruning the checkpoint store failed", exc_info=True)

    def close(self) -> None:
        """Stop the worker thread once what it was given is done."""
        self._pool.shutdown(wait=False)
