"""The files an agent may touch through `fs/*`: only regular files inside the workspace.

Paths are resolved with symlinks followed (`os.path.realpath`), so `link -> /etc` or
`../../x` inside the workspace cannot reach outside it. Reads and writes are UTF-8 text, through
`engine_adapter.files.safe_io`: a FIFO, socket, device or directory is refused (checked on the
opened file, never blocking), and a file with a second hard link is never written through. These
methods do file I/O and may diff a big file: the client calls them in a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from engine_adapter.files import (
    FileRefused,
    check_writable,
    describe_error,
    read_regular,
    unified_diff,
    write_regular,
)

__all__ = ["MAX_FILE_BYTES", "Workspace", "WorkspaceError", "shown_path"]

MAX_FILE_BYTES = 16 * 1024 * 1024  # a "text file" bigger than this is refused, not read


def _inside(full: str, root: str) -> bool:
    return full == root or full.startswith(root.rstrip(os.sep) + os.sep)


def shown_path(path: str, root: str) -> str:
    """A path an agent names (a location, a diff's file), as the human sees it: as given when
    it lies in the workspace `root`, else absolute (`~` expanded, `..` folded), so that
    `../../etc/x` never reads like a file of the workspace. No file system access (it runs on
    the event loop): links are not followed here (`Workspace.display_any` does)."""
    if not path or "\x00" in path:
        return path
    try:
        full = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
    except (ValueError, OSError):
        return path
    return path if _inside(full, root) else full


class WorkspaceError(Exception):
    """A path outside the workspace, or a file that cannot be read or written (the message
    says which and is safe to send to the agent)."""


class Workspace:
    """The directory the agent works in; every `fs/*` path is confined to it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)
        # Why a resolved path may not be written (`Sandbox.write_refusal`), or None.
        self.guard: Callable[[str], str | None] | None = None

    def check_write(self, real: str) -> None:
        """Refuse (`WorkspaceError`) a write to a path the sandbox keeps read-only."""
        why = self.guard(real) if self.guard is not None else None
        if why:
            raise WorkspaceError(f"{self.display(real)}: {why}")

    def resolve(self, path: str) -> str:
        """The real path of `path` (relative paths are taken from the root), or
        `WorkspaceError` if it is outside the workspace."""
        if not path or "\x00" in path:
            raise WorkspaceError("not a valid path")
        try:
            full = os.path.realpath(os.path.join(self.root, os.path.expanduser(path)))
        except (OSError, ValueError) as exc:
            raise WorkspaceError(f"{path} cannot be resolved: {exc}") from None
        if full != self.root and os.path.commonpath([full, self.root]) != self.root:
            raise WorkspaceError(f"{path} is outside the workspace {self.root}")
        return full

    def display(self, real: str) -> str:
        """A resolved path as shown to the human: relative to the workspace."""
        rel = os.path.relpath(real, self.root)
        return "." if rel == "." else rel

    def display_any(self, path: str) -> str:
        """Any path an agent names, as shown: relative to the workspace when it resolves inside
        it, else absolute with links followed (`link/x` where `link -> /etc` reads `/etc/x`),
        never a relative `../` path."""
        try:
            return self.display(self.resolve(path))
        except WorkspaceError:
            pass
        try:
            full = os.path.realpath(os.path.join(self.root, os.path.expanduser(path)))
        except (OSError, ValueError):
            return shown_path(path, self.root)
        return full if not _inside(full, self.root) else shown_path(path, self.root)

    def located(self, path: str) -> str:
        """A location an agent names, as shown: as given when it resolves inside the
        workspace (as today), else absolute with links followed (see `display_any`)."""
        shown = self.display_any(path)
        return shown if os.path.isabs(shown) else path

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The text of a file, optionally from 1-based `line` for `limit` lines."""
        real = self.resolve(path)
        try:
            data = read_regular(real, path, max_bytes=MAX_FILE_BYTES)
        except FileRefused as exc:
            raise WorkspaceError(str(exc)) from None
        text = (data or b"").decode("utf-8", "replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    def prepare_write(self, real: str, content: str) -> str:
        """Check that `content` may be written to the resolved path (refused like `write`
        would be) and return the unified diff of that write, for the human to see."""
        shown = self.display(real)
        self.check_write(real)
        # The new text is capped as a read is: a write bigger than any text file read here is
        # refused, whatever the mode (the agent's message is in memory already; its UTF-8 is
        # at least as long as its characters, so the costly count is for what may fit).
        if len(content) > MAX_FILE_BYTES or len(content.encode("utf-8", "surrogatepass")) > \
                MAX_FILE_BYTES:
            raise WorkspaceError(f"{shown}: the new content is over {MAX_FILE_BYTES >> 20} MB, "
                                 "more than a text file may hold here")
        try:
            check_writable(real, shown)
            data = read_regular(real, shown, max_bytes=MAX_FILE_BYTES, missing_ok=True)
        except FileRefused as exc:
            raise WorkspaceError(str(exc)) from None
        old = None if data is None else data.decode("utf-8", "replace")
        return unified_diff(old, content, shown.lstrip("/"))

    def write(self, real: str, content: str) -> None:
        """Write `content` to a resolved path (parent directories are created inside the
        workspace). The path is checked again: a symlink swapped in meanwhile cannot escape."""
        if self.resolve(real) != real:
            raise WorkspaceError(f"{real} changed while the write was being approved")
        self.check_write(real)
        shown = self.display(real)
        try:
            os.makedirs(os.path.dirname(real), exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(describe_error(exc, shown, "write")) from None
        try:
            write_regular(real, shown, content.encode("utf-8"))
        except FileRefused as exc:
            raise WorkspaceError(str(exc)) from None
