"""Replacing a file all or nothing: the one atomic write that grants, checkpoints and the
config share.

A crash (or a full disk) mid-write must leave either the old file or the new one, never half of
either: the text goes to a temporary file beside the target (same file system, so the rename is
atomic), is forced to disk, gets its mode, and is renamed over the target; the directory is then
synced so that the rename itself survives a power cut. A failure removes the temporary file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replace_file"]


def replace_file(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Make `data` (text is written as UTF-8) the content of `path`, atomically and durably.

    `mode` is the file's permission bits; `None` keeps an existing file's mode and gives a new one
    `0o600` (readable by its owner only: these files hold grants, settings, a workspace's index).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o600
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # a directory that cannot be synced still got the rename
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
