"""The benchmarks' busy machine: a separate process spinning on one core while a block runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["burner"]

# Spins, and stops by itself once the benchmark that started it is gone (killed, it runs no
# `finally`): a burner left behind skews every figure measured after it, on both cores.
SPIN = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


@contextmanager
def burner(on: bool) -> Iterator[None]:
    """A busy machine: while on, a process spins on one core (the first, where it can be
    pinned), as another job on a shared box would."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        if hasattr(os, "sched_setaffinity"):
            # Where pinning is not allowed it spins wherever the scheduler puts it.
            with suppress(OSError):
                os.sched_setaffinity(proc.pid, {min(os.sched_getaffinity(0))})
        yield
    finally:
        proc.kill()
        proc.wait()
