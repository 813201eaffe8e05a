"""The files an agent may touch through `fs/*`: only those inside the workspace.

Paths are resolved with symlinks followed (`os.path.realpath`), so `link -> /etc` or
`../../x` inside the workspace cannot reach outside it. Reads and writes are UTF-8 text.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

__all__ = ["MAX_FILE_BYTES", "Workspace", "WorkspaceError"]

MAX_FILE_BYTES = 16 * 1024 * 1024  # a "text file" bigger than this is refused, not read


class WorkspaceError(Exception):
    """A path outside the workspace, or a file that cannot be read or written (the message
    says which and is safe to send to the agent)."""


class Workspace:
    """The directory the agent works in; every `fs/*` path is confined to it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)

    def resolve(self, path: str) -> str:
        """The real path of `path` (relative paths are taken from the root), or
        `WorkspaceError` if it is outside the workspace."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise WorkspaceError("not a valid path")
        full = os.path.realpath(os.path.join(self.root, os.path.expanduser(path)))
        if full != self.root and os.path.commonpath([full, self.root]) != self.root:
            raise WorkspaceError(f"{path} is outside the workspace {self.root}")
        return full

    def display(self, real: str) -> str:
        """A resolved path as shown to the human: relative to the workspace."""
        rel = os.path.relpath(real, self.root)
        return "." if rel == "." else rel

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The text of a file, optionally from 1-based `line` for `limit` lines."""
        real = self.resolve(path)
        try:
            if os.path.getsize(real) > MAX_FILE_BYTES:
                raise WorkspaceError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
            text = Path(real).read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            raise WorkspaceError(f"{path} does not exist") from None
        except IsADirectoryError:
            raise WorkspaceError(f"{path} is a directory") from None
        except OSError as exc:
            raise WorkspaceError(f"cannot read {path}: {exc.strerror or exc}") from None
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    def current(self, real: str) -> str | None:
        """The text a resolved file holds now, or `None` if it does not exist or is unreadable."""
        try:
            if os.path.getsize(real) > MAX_FILE_BYTES:
                return None
            return Path(real).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    def diff(self, real: str, content: str, limit: int = 64 * 1024) -> str:
        """A unified diff from the file's current text to `content` (what a write would do)."""
        old = self.current(real)
        name = self.display(real)
        lines = difflib.unified_diff((old or "").splitlines(keepends=True),
                                     content.splitlines(keepends=True),
                                     "/dev/null" if old is None else f"a/{name}", f"b/{name}")
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        return text if len(text) <= limit else text[:limit] + "\n… [diff cut]\n"

    def write(self, real: str, content: str) -> None:
        """Write `content` to a resolved path (parent directories are created inside the
        workspace). The path is checked again: a symlink swapped in meanwhile cannot escape."""
        if self.resolve(real) != real:
            raise WorkspaceError(f"{real} changed while the write was being approved")
        try:
            os.makedirs(os.path.dirname(real), exist_ok=True)
            Path(real).write_text(content, encoding="utf-8")
        except OSError as exc:
            raise WorkspaceError(f"cannot write {self.display(real)}: "
                                 f"{exc.strerror or exc}") from None
