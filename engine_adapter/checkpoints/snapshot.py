"""Taking a checkpoint: the workspace's files into the store, and a manifest naming them.

`Snapshotter` belongs to one run and one workspace and keeps the run's last checkpoint in
memory: a file whose size, mtime, ctime, inode and mode are what they were is not read again
(its hash is the previous one), so a checkpoint after ten changes in ten thousand files costs a
listing, ten thousand `lstat`s and ten reads. A file changed too close to the previous
checkpoint for its timestamps to tell (git's "racily clean" case) is read again anyway.

Files are opened below the workspace with `O_NOFOLLOW` at every step (`Beneath`); a link is
recorded as a link (its target text), never followed; FIFOs, sockets and devices are skipped;
a file over `large_bytes` is hashed as it streams and recorded by size and hash only.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine_adapter.checkpoints.beneath import Beneath
from engine_adapter.checkpoints.entries import Entry, same_content
from engine_adapter.checkpoints.listing import DEFAULT_IGNORE, list_paths
from engine_adapter.checkpoints.manifest import Manifest
from engine_adapter.checkpoints.store import CheckpointStore, new_id

__all__ = ["LARGE_BYTES", "RACY_NS", "Snapshotter", "Taken", "changes"]

LARGE_BYTES = 16 << 20
"""Files bigger than this are recorded by size and hash, not copied."""

RACY_NS = 2_000_000_000
"""A file whose mtime is this close to (or after) the previous checkpoint's start is read again:
a write within the same timestamp tick would not show in its stat."""

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Taken:
    """A checkpoint just taken: its manifest, its entries, and what it cost."""

    manifest: Manifest
    entries: dict[str, Entry]
    read: int  # files read (the rest came from the stat cache)
    seconds: float
    changed: tuple[int, int, int] = (0, 0, 0)  # added, modified, deleted since the previous


@dataclass
class Snapshotter:
    """Takes the checkpoints of one run in `workspace` into `store`."""

    store: CheckpointStore
    workspace: str
    run: str
    large_bytes: int = LARGE_BYTES
    ignore: Iterable[str] = DEFAULT_IGNORE
    previous: dict[str, Entry] = field(default_factory=dict)
    previous_start_ns: int = 0
    _trees: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    _record: bool = True

    def take(self, *, turn: int | None = None, kind: str = "turn", record: bool = True) -> Taken:
        """Record the workspace as it is now; `OSError` when the workspace cannot be read.
        `record=False` stores nothing (a dry run: only the entries are wanted)."""
        self._record = record
        started = time.perf_counter()
        start_ns = time.time_ns()
        with self.store.locked():
            listing = list_paths(self.workspace, self.ignore)
            entries: dict[str, Entry] = {}
            stored = read = 0
            large: list[str] = []
            with Beneath(self.workspace) as below:
                for path in listing.paths:
                    got = self._entry(below, path)
                    if got is None:
                        continue
                    entry, was_read, written = got
                    entries[path] = entry
                    read += was_read
                    stored += written
                    if entry.kind == "f" and not entry.stored:
                        large.append(path)
            root, written = self._tree_of(entries)
            stored += written
            manifest = Manifest(id=new_id(), run=self.run, workspace=self.workspace, root=root,
                                created=time.time(), turn=turn, kind=kind,
                                source=listing.source, files=len(entries),
                                stored_bytes=stored, large=large)
            if record:
                self.store.write_manifest(manifest)
        changed = changes(self.previous, entries)
        if record:
            self.previous, self.previous_start_ns = entries, start_ns
        return Taken(manifest, entries, read, time.perf_counter() - started,
                     (len(changed[0]), len(changed[1]), len(changed[2])))

    def _entry(self, below: Beneath, path: str) -> tuple[Entry, int, int] | None:
        """One path's entry, whether it was read, and the bytes stored (None: not recorded)."""
        try:
            folder, name = below.split(path)
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            return None  # deleted since listed (a tracked file gone), or under a link
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(name, dir_fd=folder)
            except OSError:
                return None
            return Entry("l", 0o777, len(target), target, True), 0, 0
        if not stat.S_ISREG(st.st_mode):
            return None
        old = self.previous.get(path)
        if (old is not None and old.kind == "f" and old.size == st.st_size
                and old.mtime_ns == st.st_mtime_ns and old.ctime_ns == st.st_ctime_ns
                and old.ino == st.st_ino and old.mode == stat.S_IMODE(st.st_mode)
                and st.st_mtime_ns < self.previous_start_ns - RACY_NS
                and (not old.stored or self.store.has(old.digest))):
            return old, 0, 0
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=folder)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            hasher = hashlib.sha256()
            if st.st_size > self.large_bytes:
                while chunk := handle.read(_CHUNK):
                    hasher.update(chunk)
                size, written, stored = st.st_size, 0, False
            else:
                data = handle.read()
                hasher.update(data)
                size, stored = len(data), True
                written = self.store.put(hasher.hexdigest(), data) if self._record else 0
        entry = Entry("f", stat.S_IMODE(st.st_mode), size, hasher.hexdigest(), stored,
                      st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        return entry, 1, written

    def _tree_of(self, entries: dict[str, Entry]) -> tuple[str, int]:
        """Store the folders' trees, deepest first (an unchanged folder reuses its digest);
        the root's digest and the bytes written."""
        folders: dict[str, dict[str, Any]] = {"": {}}
        for path, entry in entries.items():
            parent, _, name = path.rpartition("/")
            tree = folders.get(parent)
            if tree is None:
                tree = folders[parent] = {}
                # every folder above it exists too, so that it is linked in below
                up = parent
                while up:
                    up = up.rpartition("/")[0]
                    folders.setdefault(up, {})
            tree[name] = entry.to_list()
        children: dict[str, list[str]] = {}
        for folder in folders:
            if folder:
                children.setdefault(folder.rpartition("/")[0], []).append(folder)
        written = 0
        digests: dict[str, str] = {}
        trees: dict[str, tuple[dict[str, Any], str]] = {}
        for folder in sorted(folders, key=lambda f: f.count("/") + bool(f), reverse=True):
            tree = folders[folder]
            for child in children.get(folder, ()):
                tree[child.rpartition("/")[2]] = ["d", digests[child]]
            known = self._trees.get(folder)
            if known is not None and known[0] == tree and self.store.has(known[1]):
                digest = known[1]
            elif not self._record:
                digest = hashlib.sha256(repr(sorted(tree.items())).encode()).hexdigest()
            else:
                digest, size = self.store.put_tree(tree)
                written += size
            trees[folder] = (tree, digest)
            digests[folder] = digest
        if self._record:
            self._trees = trees
        return digests[""], written


def changes(before: dict[str, Entry],
            after: dict[str, Entry]) -> tuple[list[str], list[str], list[str]]:
    """The paths added, modified and deleted from `before` to `after`."""
    added = [p for p in after if p not in before]
    deleted = [p for p in before if p not in after]
    modified = [p for p, e in after.items() if p in before and not same_content(before[p], e)]
    return added, modified, deleted
