"""A journal whose disk fills up at the event a test picks (its descriptor becomes /dev/full)."""

from __future__ import annotations

import os
from pathlib import Path

from engine_adapter import JsonlEventJournal

ENOSPC = "No space left on device"


class DiskFillsUp(JsonlEventJournal):
    """A real journal file whose disk fills up at the first event `fails_at(event)` picks: from
    then on its descriptor is /dev/full, so `os.write` itself fails with ENOSPC."""

    def __init__(self, path: Path, fails_at, on_full=lambda: None) -> None:
        super().__init__(path)
        self.fails_at, self.on_full = fails_at, on_full
        self.failed_event = None

    def write(self, event, *, line=None) -> None:
        if self.failed_event is None and self.fails_at(event):
            self.failed_event = event
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, self._fd)
            os.close(full)
            self.on_full()
        super().write(event, line=line)


def first_of(kind: str):
    return lambda event: event.type == kind

