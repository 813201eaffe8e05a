"""`run_host`: the host process's life — its log, its lock, its loop, and the word to whoever
started it that it listens."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable

from cockpit.host.places import log_path, private_dir
from cockpit.host.runs import Launcher
from cockpit.host.server import KEEP_ENDED_SECONDS, Host, HostBusy, take_lock

__all__ = ["run_host"]


def _log_to_file() -> None:
    path = log_path()
    private_dir(path.parent)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _say(ready_fd: int | None, word: str) -> None:
    """Tell the starter (`client.start_host`) that a host listens, then let go of the pipe."""
    if ready_fd is None:
        return
    with contextlib.suppress(OSError):
        os.write(ready_fd, f"{word}\n".encode())
    with contextlib.suppress(OSError):
        os.close(ready_fd)


def run_host(launch: Launcher, *, ready_fd: int | None = None,
             listening: Callable[[], None] | None = None,
             keep_ended: float = KEEP_ENDED_SECONDS) -> int:
    """Be the host until stopped; the exit code (1: another host runs, it is said on stderr).
    `ready_fd`: a pipe to write `ready` on once clients can connect; `listening`: called then
    too (the foreground command says where); `keep_ended`: seconds an ended run's events stay
    in memory (`Host`)."""
    _log_to_file()
    try:
        lock = take_lock()
    except HostBusy as exc:
        _say(ready_fd, "running")  # one listens: the starter connects to that one
        print(f"cockpit: {exc}", file=sys.stderr)
        return 1

    def ready() -> None:
        _say(ready_fd, "ready")
        if listening is not None:
            listening()

    try:
        asyncio.run(Host(launch, keep_ended=keep_ended).serve(ready))
    finally:
        os.close(lock)
    return 0
