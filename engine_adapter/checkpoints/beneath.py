"""Opening paths beneath a root folder without ever following a symbolic link out of it.

Every folder on the way is opened with `O_DIRECTORY | O_NOFOLLOW` relative to the one above it
(`dir_fd`), so a folder swapped for a link between listing and reading is refused, not followed.
`Beneath` caches the folders it opened (one open per folder, not per file) and closes them all.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["DIR_FLAGS", "Beneath"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Beneath:
    """Folder descriptors under `root` by relative path (`""` is the root itself)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._fds: dict[str, int] = {"": os.open(root, DIR_FLAGS)}

    def folder(self, rel: str, *, create: bool = False) -> int:
        """The descriptor of folder `rel` (made, mode 0o755, when `create`); `OSError` when a
        part of it is missing (and not `create`), a link or not a folder."""
        known = self._fds.get(rel)
        if known is not None:
            return known
        parent, _, name = rel.rpartition("/")
        up = self.folder(parent, create=create)
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=up)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=up)
            fd = os.open(name, DIR_FLAGS, dir_fd=up)
        self._fds[rel] = fd
        return fd

    def split(self, path: str, *, create: bool = False) -> tuple[int, str]:
        """The folder descriptor and the last name of `path`."""
        parent, _, name = path.rpartition("/")
        return self.folder(parent, create=create), name

    def forget(self, rel: str) -> None:
        """Close `rel` and every folder below it (it is about to be removed)."""
        prefix = rel + "/"
        for key in [k for k in self._fds if k == rel or k.startswith(prefix)]:
            os.close(self._fds.pop(key))

    def close(self) -> None:
        """Close every descriptor."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
