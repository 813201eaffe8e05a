"""The benchmarks' busy machine: a separate process spinning on one core while a block runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["burner"]


@contextmanager
def burner(on: bool) -> Iterator[None]:
    """A busy machine: while on, a process spins on one core (the first, where it can be
    pinned), as another job on a shared box would."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        if hasattr(os, "sched_setaffinity"):
            # Where pinning is not allowed it spins wherever the scheduler puts it.
            with suppress(OSError):
                os.sched_setaffinity(proc.pid, {min(os.sched_getaffinity(0))})
        yield
    finally:
        proc.kill()
        proc.wait()
