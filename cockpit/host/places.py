"""Where the host keeps its files: socket and lock in the runtime dir (0700), log and the record
of its runs in the state dir. All follow `COCKPIT_HOME` (see `cockpit.paths`)."""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.paths import runtime_dir, state_dir

__all__ = [
    "SOCKET_PATH_MAX",
    "HostPlaceError",
    "host_dir",
    "lock_path",
    "log_path",
    "private_dir",
    "record_dir",
    "socket_path",
]

SOCKET_PATH_MAX = 107
"""The longest path a unix socket can be bound to on Linux (`sun_path` is 108 bytes)."""


class HostPlaceError(OSError):
    """A host file cannot be where it must be (the message says what to do)."""


def private_dir(path: Path) -> Path:
    """`path` made (with its parents) and kept mode 0700: the user's alone. Refuses a folder
    another user owns (a planted one would let them read or replace the socket)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise HostPlaceError(f"{path} belongs to uid {info.st_uid}, not to you: remove it or "
                             "set COCKPIT_HOME to a folder of yours")
    if info.st_mode & 0o077:
        path.chmod(0o700)
    return path


def host_dir() -> Path:
    """The runtime folder of the socket and the lock (not created here)."""
    return runtime_dir()


def socket_path() -> Path:
    """The host's socket; `HostPlaceError` if its path is too long to bind."""
    path = host_dir() / "host.sock"
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise HostPlaceError(f"the host's socket path {str(path)!r} is longer than "
                             f"{SOCKET_PATH_MAX} bytes, the most a unix socket allows: set "
                             "COCKPIT_HOME or XDG_RUNTIME_DIR to a shorter folder")
    return path


def lock_path() -> Path:
    """The lock the one running host holds (`flock`), with its pid written in it."""
    return host_dir() / "host.lock"


def log_path() -> Path:
    """The host's log."""
    return state_dir() / "host.log"


def record_dir() -> Path:
    """The host's record of its live runs (one file a run), read by the next host after a
    crash to end their journals."""
    return state_dir() / "host-runs"
