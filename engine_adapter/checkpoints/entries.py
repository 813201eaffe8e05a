"""What a checkpoint records of one path, and the checks every stored path must pass.

An `Entry` is a regular file (`kind == "f"`: its mode bits, size, SHA-256 and whether its bytes
are in the store) or a symbolic link (`kind == "l"`: its target as text, never followed). The
stat fields (`mtime_ns`, `ctime_ns`, `ino`) are only the stat cache's key: two entries hold the
same content when `same_content` says so, whatever their stat fields, and a tree keeps no stat
field.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Entry", "bad_path", "same_content"]


class Entry(NamedTuple):
    """One path of a checkpoint: a file (`"f"`) or a symbolic link (`"l"`, `digest` = target)."""

    kind: str
    mode: int
    size: int
    digest: str
    stored: bool
    mtime_ns: int = 0
    ctime_ns: int = 0
    ino: int = 0

    def to_list(self) -> list[object]:
        """The compact form a tree keeps: the content, not the stat fields (those are the
        running checkpointer's cache, kept in memory; a `touch` changes no tree)."""
        return [self.kind, self.mode, self.size, self.digest, int(self.stored)]

    @classmethod
    def from_list(cls, data: object) -> Entry:
        """An entry read back from a tree; `ValueError` for anything else."""
        if not isinstance(data, list) or len(data) != 5:
            raise ValueError("an entry is a list of five values")
        kind, mode, size, digest, stored = data
        if kind not in ("f", "l") or not isinstance(digest, str) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in (mode, size, stored)):
            raise ValueError("an entry's values have the wrong types")
        return cls(kind, mode, size, digest, bool(stored))


def same_content(a: Entry | None, b: Entry | None) -> bool:
    """Whether two entries (None: the path is absent) hold the same thing: kind, content and the
    executable bits (a rewind restores a mode change too)."""
    if a is None or b is None:
        return a is b
    return (a.kind, a.digest, a.size) == (b.kind, b.digest, b.size) and (
        a.kind == "l" or (a.mode & 0o111) == (b.mode & 0o111))


def bad_path(path: str) -> str | None:
    """Why `path` may not be in a checkpoint (None: it may): it must be relative, with no empty,
    `.` or `..` part, no NUL, and no `.git` part (a rewind never writes a git dir)."""
    if not path or "\0" in path or path.startswith("/"):
        return "not a relative path"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return "a path with an empty, '.' or '..' part"
        if part == ".git":
            return "a path inside a .git"
    return None
