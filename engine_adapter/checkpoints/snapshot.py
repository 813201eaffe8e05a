"""Taking a checkpoint: the workspace's files into the store, and a manifest naming them.

`Snapshotter` belongs to one run and one workspace and keeps the run's last checkpoint in
memory: a file whose size, mtime, ctime, inode and mode are what they were is not read again
(its hash is the previous one), so a checkpoint after ten changes in ten thousand files costs a
listing, ten thousand `lstat`s and ten reads. A file changed too close to the previous
checkpoint for its timestamps to tell (git's "racily clean" case) is read again anyway. The
first checkpoint reads every file; a file's kind (file, link, other) then comes from its
folder's listing, one `scandir` a folder rather than an `lstat` a file, and what is opened is
checked again (`fstat`).

In a git repository even the `lstat` is skipped for a tracked file git vouches for: the same
`git ls-files` run that lists the files says which tracked ones are unchanged against the index
(git compares every stat field, ctime included, and re-reads a racily clean one). A file is
kept without a look when git found it unchanged at the previous checkpoint and now, against the
same index record (mode and object id), and its entry's own mtime and ctime were well before
the previous checkpoint began (so git's look then saw the file we recorded). A change then
shows in its ctime, which nothing can set back, so git reports it and the file is looked at.
From the third checkpoint on, the paths git still vouches for against the same records, whose
entries were settled (old enough) at the previous one, are decided together in a few dict and
set operations rather than one by one (`_quick`). Not vouched for: untracked files, a
repository with attributes (line endings, filters: different bytes can look unchanged to git),
a worktree's or submodule's `.git` file. What this misses, as git does: a change of permission
bits other than the executable ones (644 to 600) of a file git vouches for; the entry keeps the
mode last looked at. (A rewind compares only the executable bits anyway; it writes that mode
when it restores the file's content.)

Files are opened below the workspace with `O_NOFOLLOW` at every step (`Beneath`); a link is
recorded as a link (its target text), never followed; FIFOs, sockets and devices are skipped;
a file over `large_bytes` is hashed as it streams and recorded by size and hash only. The
store's own folder and the cockpit's others (`CheckpointStore.keep_out`) are never recorded.
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
from engine_adapter.checkpoints.listing import DEFAULT_IGNORE, kept_out, scan
from engine_adapter.checkpoints.manifest import Manifest
from engine_adapter.checkpoints.store import CheckpointStore, PackWriter, new_id

__all__ = ["LARGE_BYTES", "RACY_NS", "Snapshotter", "Taken", "changes"]

LARGE_BYTES = 16 << 20
"""Files bigger than this are recorded by size and hash, not copied."""

RACY_NS = 2_000_000_000
"""A file whose mtime is this close to (or after) the previous checkpoint's start is read again:
a write within the same timestamp tick would not show in its stat."""

_REGULAR = stat.S_IFREG
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


def _kinds(folder: int) -> dict[str, int]:
    """The regular files and links of the open `folder` by name (`S_IFREG`, `S_IFLNK`), from its
    listing's file types: no `lstat` (one only where the file system gives no type)."""
    found: dict[str, int] = {}
    with os.scandir(folder) as items:
        for item in items:
            try:
                if item.is_symlink():
                    found[item.name] = stat.S_IFLNK
                elif item.is_file(follow_symlinks=False):
                    found[item.name] = _REGULAR
            except OSError:
                continue
    return found


def _read_all(fd: int, size: int) -> bytes:
    """Every byte of the open file (it may have grown or shrunk since its stat)."""
    data = os.read(fd, size + 1)
    if len(data) <= size:
        return data
    parts = [data]
    while chunk := os.read(fd, _CHUNK):
        parts.append(chunk)
    return b"".join(parts)


@dataclass(frozen=True)
class Taken:
    """A checkpoint just taken: its manifest, its entries, and what it cost."""

    manifest: Manifest
    entries: dict[str, Entry]
    read: int  # files read (the rest came from the stat cache)
    seconds: float
    changed: tuple[int, int, int] = (0, 0, 0)  # added, modified, deleted since the previous
    looked: int = 0  # files whose lstat was looked at (the rest git vouched for)


@dataclass(frozen=True)
class _Done:
    """What one checkpoint's pass over the workspace found, beside its entries."""

    touched: list[str]  # paths whose entry is new or not the previous one
    deleted: list[str]  # paths of the previous checkpoint no longer there
    clean: dict[str, str]  # what git vouched for (see `scan`)
    large: list[str]  # paths over the size cap
    looked: int
    settled: set[str]  # the paths git vouched for whose entry was settled before `limit`
    limit: int


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
    _clean: dict[str, str] = field(default_factory=dict)  # what git vouched for last time
    _large: list[str] | None = None  # the paths of `previous` over the size cap
    # (entries, paths, limit): which paths of those entries git vouched for, settled before
    # that limit (see `_quick`)
    _settled: tuple[dict[str, Entry] | None, set[str], int] = (None, set(), 0)
    _done: _Done | None = None  # what the checkpoint being taken found
    _record: bool = True
    _writer: PackWriter | None = None
    _generation: bytes = b""

    def take(self, *, turn: int | None = None, kind: str = "turn", record: bool = True) -> Taken:
        """Record the workspace as it is now; `OSError` when the workspace cannot be read.
        `record=False` stores nothing (a dry run: only the entries are wanted)."""
        self._record = record
        started = time.perf_counter()
        start_ns = time.time_ns()
        with self.store.locked():
            self._writer = self.store.writer() if record else None
            if self.store.generation != self._generation:
                # A prune moved or removed blobs since: trust no cached hash to be stored.
                self.previous, self._trees, self._clean, self._large = {}, {}, {}, None
                self._settled = (None, set(), 0)
                self._generation = self.store.generation
            try:
                taken = self._take(turn, kind)
            except BaseException:
                if self._writer is not None:
                    self._writer.abort()
                raise
        entries, manifest, read = taken
        done = self._done
        assert done is not None
        previous = self.previous
        added = sum(1 for p in done.touched if p not in previous)
        modified = sum(1 for p in done.touched
                       if (old := previous.get(p)) is not None and not same_content(old,
                                                                                  entries[p]))
        if record:
            self.previous, self.previous_start_ns = entries, start_ns
            self._clean, self._large = done.clean, done.large
            self._settled = (entries, done.settled, done.limit)
        return Taken(manifest, entries, read, time.perf_counter() - started,
                     (added, modified, len(done.deleted)), done.looked)

    def _take(self, turn: int | None, kind: str) -> tuple[dict[str, Entry], Manifest, int]:
        """The listing, each path's entry, the trees and the manifest (under the lock)."""
        found = scan(self.workspace, self.ignore,
                     out=kept_out(self.workspace, self.store.keep_out), stats=True,
                     clean=True)
        previous = self.previous
        limit = self.previous_start_ns - RACY_NS
        clean, vouched_before = found.clean, self._clean
        stats = found.stats
        entries: dict[str, Entry] = {}
        touched: list[str] = []  # the paths whose entry is not the previous one
        stored = read = looked = kept = 0
        large: list[str] = []
        with Beneath(self.workspace) as below:
            quick = self._quick(clean, below, limit)
            settled = set(quick)  # what the next checkpoint may take as `quick`
            at, fd = None, -1  # a folder's files come together
            first = not previous and stats is None  # (a walk's listing has the stats)
            kinds: dict[str, int] = {}
            kinds_at: str | None = None
            for i, path in enumerate(found.paths):
                if path in quick:
                    entries[path] = previous[path]
                    kept += 1
                    continue
                parent, _, name = path.rpartition("/")
                if parent != at:
                    at = parent
                    try:
                        fd = below.folder(parent)
                    except OSError:
                        fd = -1  # gone since listed, or a link now: none of it is recorded
                if fd < 0:
                    continue
                old = previous.get(path)
                if (clean and old is not None and (record := clean.get(path)) is not None
                        and vouched_before.get(path) == record and old.kind == "f"
                        and 0 < old.ctime_ns < limit and old.mtime_ns < limit):
                    # git found it unchanged at the last checkpoint and now, against the same
                    # index entry; and when it was last looked at, it had not changed since
                    # well before that checkpoint began (so git's look then saw what we
                    # recorded): it is as recorded, no lstat needed. See the module's note.
                    entries[path] = old
                    settled.add(path)
                    kept += 1
                    continue
                st: os.stat_result | None
                if stats is not None:
                    st = stats[i]
                elif first:
                    # Nothing to compare with: the folder's listing says file or link, no
                    # lstat (`_entry` checks what it opens).
                    if kinds_at != parent:
                        kinds, kinds_at = _kinds(fd), parent
                    st = None
                    if not (mode := kinds.get(name, 0)):
                        continue  # gone since listed, or neither a file nor a link
                else:
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue  # deleted since listed (a tracked file gone), or under a link
                looked += 1
                if st is not None:
                    mode = st.st_mode
                    if (old is not None and old.mtime_ns == st.st_mtime_ns
                            and old.size == st.st_size and old.ctime_ns == st.st_ctime_ns
                            and old.ino == st.st_ino and old.kind == "f"
                            and mode == _REGULAR | old.mode and st.st_mtime_ns < limit):
                        entries[path] = old
                        kept += 1
                        continue
                got = self._entry(fd, name, mode)
                if got is None:
                    continue
                entry, was_read, written = got
                entries[path] = entry
                if old is not None:
                    kept += 1
                touched.append(path)
                read += was_read
                stored += written
                if entry.kind == "f" and not entry.stored:
                    large.append(path)
        if self._large is None:  # entries handed in: which of them are large is not known yet
            self._large = [p for p, e in previous.items() if e.kind == "f" and not e.stored]
        # A large file kept as it was is still one (only the files looked at were seen here).
        large += [p for p in self._large if (e := entries.get(p)) is not None
                  and e is previous.get(p)]
        deleted = [p for p in previous if p not in entries] if kept < len(previous) else []
        self._done = _Done(touched, deleted, clean, large, looked, settled, limit)
        root, written = self._tree_of(entries, touched, deleted)
        stored += written
        manifest = Manifest(id=new_id(), run=self.run, workspace=self.workspace, root=root,
                            created=time.time(), turn=turn, kind=kind,
                            source=found.source, files=len(entries),
                            stored_bytes=stored, large=sorted(large))
        if self._writer is not None:
            self._writer.commit()  # the blobs first, then the manifest that names them
            self.store.write_manifest(manifest)
        return entries, manifest, read

    def _quick(self, clean: dict[str, str], below: Beneath, limit: int) -> set[str]:
        """The paths `_take` keeps without a step of its own: those the previous checkpoint
        settled (git vouched for them then, each entry's ctime and mtime well before that
        checkpoint's limit, which only grows) that git still vouches for now, against the
        same index records, in folders that are still folders. The vouching rule of `_take`,
        decided for ten thousand paths at once, in C (dict and set operations)."""
        entries, settled, settled_limit = self._settled
        vouched_before = self._clean
        if entries is not self.previous or limit < settled_limit or not settled or not clean:
            return set()  # settled for other entries, or the clock went back
        # Every path in both has the same record in both (else: decided path by path).
        if {**vouched_before, **clean} != {**clean, **vouched_before}:
            return set()
        try:
            for folder in self._trees:  # every folder of the previous checkpoint
                below.folder(folder)
        except OSError:
            return set()  # one is gone or a link now: its paths are looked at one by one
        return settled & clean.keys()

    def _entry(self, folder: int, name: str, mode: int) -> tuple[Entry, int, int] | None:
        """The entry of `name` in the open `folder` (`mode`: its lstat's, or its kind from the
        folder's listing), whether it was read, and the bytes stored (None: not recorded)."""
        if stat.S_ISLNK(mode):
            try:
                target = os.readlink(name, dir_fd=folder)
            except OSError:
                return None
            return Entry("l", 0o777, len(target), target, True), 0, 0
        if not stat.S_ISREG(mode):
            return None
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=folder)
        except OSError:
            return None
        try:
            st = os.fstat(fd)  # the file opened, not the name looked at before
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > self.large_bytes:
                hasher = hashlib.sha256()
                while chunk := os.read(fd, _CHUNK):
                    hasher.update(chunk)
                size, written, stored = st.st_size, 0, False
                digest = hasher.hexdigest()
            else:
                data = _read_all(fd, st.st_size)
                digest = hashlib.sha256(data).hexdigest()
                size, stored = len(data), True
                writer = self._writer
                written = writer.put(digest, data) if writer is not None else 0
        except OSError:
            return None
        finally:
            os.close(fd)
        entry = Entry("f", stat.S_IMODE(st.st_mode), size, digest, stored,
                      st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        return entry, 1, written

    def _tree_of(self, entries: dict[str, Entry], touched: list[str],
                 deleted: list[str]) -> tuple[str, int]:
        """Store the folders' trees (only those that changed since the last checkpoint: an
        unchanged folder keeps its digest); the root's digest and the bytes written.
        `touched`: the paths whose entry is not the previous one (the stat cache hands back
        the previous entry object itself), `deleted`: those no longer there."""
        trees = self._trees
        if not trees or "" not in trees:
            return self._all_trees(entries)
        touched = touched + deleted
        if not touched:
            return trees[""][1], 0
        dirty: dict[str, set[str]] = {}  # folder -> names in it to update
        for path in touched:
            folder, _, name = path.rpartition("/")
            dirty.setdefault(folder, set()).add(name)
            while folder:
                parent, _, child = folder.rpartition("/")
                names = dirty.setdefault(parent, set())
                if child in names:
                    break
                names.add(child)
                folder = parent
        written = 0
        trees = dict(trees)
        for folder in sorted(dirty, key=lambda f: f.count("/") + bool(f), reverse=True):
            old = trees.get(folder)
            tree = dict(old[0]) if old is not None else {}
            for name in dirty[folder]:
                path = f"{folder}/{name}" if folder else name
                entry = entries.get(path)
                sub = trees.get(path)
                if entry is not None:
                    tree[name] = entry.to_list()
                elif sub is not None:  # a folder (an emptied one was dropped already)
                    tree[name] = ["d", sub[1]]
                else:
                    tree.pop(name, None)
            if not tree and folder:
                trees.pop(folder, None)  # emptied: its parent drops it
                continue
            digest, size = self._store_tree(tree)
            written += size
            trees[folder] = (tree, digest)
        if self._record:
            self._trees = trees
        return trees[""][1], written

    def _store_tree(self, tree: dict[str, Any]) -> tuple[str, int]:
        """One folder's tree into the pack (a dry run: only a digest); digest, bytes added."""
        if self._writer is None:
            return hashlib.sha256(repr(sorted(tree.items())).encode()).hexdigest(), 0
        return self._writer.put_tree(tree)

    def _all_trees(self, entries: dict[str, Entry]) -> tuple[str, int]:
        """Every folder's tree, built from nothing (the run's first checkpoint)."""
        folders: dict[str, dict[str, Any]] = {"": {}}
        for path, entry in entries.items():
            parent, _, name = path.rpartition("/")
            tree = folders.get(parent)
            if tree is None:
                tree = folders[parent] = {}
                up = parent  # every folder above it exists too, so that it is linked in
                while up:
                    up = up.rpartition("/")[0]
                    folders.setdefault(up, {})
            tree[name] = entry.to_list()
        children: dict[str, list[str]] = {}
        for folder in folders:
            if folder:
                children.setdefault(folder.rpartition("/")[0], []).append(folder)
        written = 0
        trees: dict[str, tuple[dict[str, Any], str]] = {}
        for folder in sorted(folders, key=lambda f: f.count("/") + bool(f), reverse=True):
            tree = folders[folder]
            for child in children.get(folder, ()):
                tree[child.rpartition("/")[2]] = ["d", trees[child][1]]
            digest, size = self._store_tree(tree)
            written += size
            trees[folder] = (tree, digest)
        if self._record:
            self._trees = trees
        return trees[""][1], written


def changes(before: dict[str, Entry],
            after: dict[str, Entry]) -> tuple[list[str], list[str], list[str]]:
    """The paths added, modified and deleted from `before` to `after`."""
    added = [p for p in after if p not in before]
    deleted = [p for p in before if p not in after]
    modified = [p for p, e in after.items()
                if (old := before.get(p)) is not e and old is not None
                and not same_content(old, e)]
    return added, modified, deleted
