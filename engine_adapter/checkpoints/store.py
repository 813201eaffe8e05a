"""`CheckpointStore`: content-addressed blobs and trees, and one manifest per checkpoint.

Layout under the store's root (in the cockpit's data dir, never in a workspace):

    packs/<id>.pack  the blobs one checkpoint added (files' bytes, and trees: a folder's entries
                     as JSON, zlib-compressed), end to end
    packs/<id>.idx   where each is in its pack: SHA-256, offset, length (44 bytes a blob)
    manifests/<id>.json
    lock             flock: shared while a checkpoint or rewind runs, exclusive while pruning

One pack a checkpoint, not one file a blob: creating ten thousand small files costs seconds on
a busy disk (measured: 0.4 ms a file here), appending them to one costs milliseconds. A pack is
written under a temporary name and renamed, then its index, so an index names only whole packs;
a blob already in any pack is never written again. Reading checks the hash: a damaged blob is a
`StoreDamaged`, never wrong bytes. Packs are not forced to disk; a manifest is, after its pack,
and a rewind checks every blob it needs before it changes anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import struct
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from engine_adapter.atomic import replace_file
from engine_adapter.checkpoints.entries import Entry, bad_path
from engine_adapter.checkpoints.manifest import Manifest

__all__ = ["CheckpointStore", "PackWriter", "StoreDamaged", "new_id"]

_DIGEST = re.compile(r"[0-9a-f]{64}")
_ID = re.compile(r"[0-9a-z-]{8,64}")
_RECORD = struct.Struct("<32sQI")


class StoreDamaged(Exception):
    """The store lacks or has a changed blob, tree or manifest; the message says which."""


def new_id() -> str:
    """A fresh id that sorts by time: milliseconds in hex, then randomness."""
    return f"{int(time.time() * 1000):011x}-{secrets.token_hex(4)}"


class PackWriter:
    """The blobs one checkpoint adds, appended to one new pack (`commit` makes it visible)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self.id = new_id()
        store.packs.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._temporary = store.packs / f".{self.id}.pack.tmp"
        # A big buffer: 8 KB writes into the page cache cost 30 ms more a first checkpoint.
        self._file = open(self._temporary, "xb", buffering=1 << 20)  # noqa: SIM115 - closed by commit/abort
        self._records: dict[str, tuple[int, int]] = {}
        self._offset = 0

    def has(self, digest: str) -> bool:
        """Whether the blob is stored already, or in this pack."""
        return digest in self._records or self.store.has(digest)

    def put(self, digest: str, data: bytes) -> int:
        """Add `data` (whose SHA-256 is `digest`) unless it is stored; the bytes added."""
        if self.has(digest):
            return 0
        self._file.write(data)
        self._records[digest] = (self._offset, len(data))
        self._offset += len(data)
        return len(data)

    def put_tree(self, tree: dict[str, Any]) -> tuple[str, int]:
        """Add one folder's entries (JSON, compressed: a tree is mostly hex digests, and a
        folder that changed is written whole); its digest and the bytes added."""
        data = zlib.compress(json.dumps(tree, sort_keys=True, separators=(",", ":")).encode(), 6)
        digest = hashlib.sha256(data).hexdigest()
        return digest, self.put(digest, data)

    def commit(self) -> None:
        """Make the pack visible: renamed into place, then its index (nothing when empty)."""
        self._file.close()
        if not self._records:
            self._temporary.unlink(missing_ok=True)
            return
        pack = self.store.packs / f"{self.id}.pack"
        os.replace(self._temporary, pack)
        index = b"".join(_RECORD.pack(bytes.fromhex(d), offset, length)
                         for d, (offset, length) in self._records.items())
        temporary = self.store.packs / f".{self.id}.idx.tmp"
        temporary.write_bytes(index)
        os.replace(temporary, self.store.packs / f"{self.id}.idx")
        self.store.learn(self.id, self._records)

    def abort(self) -> None:
        """Drop the pack (the checkpoint failed)."""
        with contextlib.suppress(OSError):
            self._file.close()
        self._temporary.unlink(missing_ok=True)


class CheckpointStore:
    """The packs, trees and manifests under `root` (made on first write, mode 0o700).

    `keep_out`: the cockpit's own files and folders (journals, state, runtime, config) beside
    the store's `root`: a checkpoint of a workspace that holds any of them never records it,
    and a rewind never touches it (it would grow the store by itself at every turn, and
    bring back old journals)."""

    def __init__(self, root: str | os.PathLike[str], *,
                 keep_out: Iterable[str | os.PathLike[str]] = ()) -> None:
        self.root = Path(root)
        self.keep_out: tuple[Path, ...] = (self.root, *(Path(p) for p in keep_out))
        self.packs = self.root / "packs"
        self.manifests = self.root / "manifests"
        self._index: dict[str, tuple[str, int, int]] = {}  # digest -> pack, offset, length
        self._loaded: set[str] = set()  # the packs whose index is read
        self._read = False  # whether the packs folder was read at all
        self.generation = b""  # the store's `generation` as last read (pruning changes it)

    # locking ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, *, exclusive: bool = False) -> Iterator[None]:
        """Hold the store's lock: shared by checkpoints and rewinds, exclusive by pruning (so a
        blob another run just reused is never collected under it)."""
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    # the index of every pack -----------------------------------------------------------------
    def refresh(self) -> None:
        """Read the index of every pack not read yet (another run may have added some), all of
        them again after a prune (it moves and removes blobs)."""
        self._read = True
        try:
            generation = (self.root / "generation").read_bytes()
        except OSError:
            generation = b""
        if generation != self.generation:
            self._index.clear()
            self._loaded.clear()
            self.generation = generation
        try:
            names = os.listdir(self.packs)
        except FileNotFoundError:
            return
        for name in names:
            pack = name[:-4]
            if not name.endswith(".idx") or name.startswith(".") or pack in self._loaded:
                continue
            try:
                data = (self.packs / name).read_bytes()
            except OSError:
                continue
            usable = len(data) - len(data) % _RECORD.size
            for digest, offset, length in _RECORD.iter_unpack(data[:usable]):
                self._index.setdefault(digest.hex(), (pack, offset, length))
            self._loaded.add(pack)

    def learn(self, pack: str, records: dict[str, tuple[int, int]]) -> None:
        """Know the blobs of a pack this process just wrote."""
        for digest, (offset, length) in records.items():
            self._index.setdefault(digest, (pack, offset, length))
        self._loaded.add(pack)

    def has(self, digest: str) -> bool:
        """Whether the blob `digest` is stored (as far as the index read so far knows)."""
        if not self._read:
            self.refresh()
        return digest in self._index

    def writer(self) -> PackWriter:
        """A new pack for the blobs of one checkpoint."""
        self.refresh()  # under the lock a checkpoint holds: a prune in between is seen
        return PackWriter(self)

    def get(self, digest: str) -> bytes:
        """The blob `digest`, checked against its name; `StoreDamaged` when missing or changed."""
        if not _DIGEST.fullmatch(digest):
            raise StoreDamaged(f"the checkpoint store names a blob {digest[:80]!r} that is no hash")
        where = self._index.get(digest)
        if where is None:
            self.refresh()
            where = self._index.get(digest)
        if where is None:
            raise StoreDamaged(f"the checkpoint store lacks blob {digest[:12]}")
        pack, offset, length = where
        try:
            fd = os.open(self.packs / f"{pack}.pack", os.O_RDONLY | os.O_CLOEXEC)
            try:
                data = os.pread(fd, length, offset)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreDamaged(f"the checkpoint store lacks blob {digest[:12]} "
                               f"({exc.strerror or exc})") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise StoreDamaged(f"the checkpoint store's blob {digest[:12]} was changed")
        return data

    # trees -----------------------------------------------------------------------------------
    def put_tree(self, tree: dict[str, Any]) -> tuple[str, int]:
        """Store one folder's entries (name -> entry list, or `["d", digest]`) in a pack of
        its own: its digest and the bytes written."""
        writer = self.writer()
        try:
            written = writer.put_tree(tree)
        except BaseException:
            writer.abort()
            raise
        writer.commit()
        return written

    def get_tree(self, digest: str) -> dict[str, Any]:
        """One folder's entries; `StoreDamaged` when the tree is missing or not one."""
        try:
            tree = json.loads(zlib.decompress(self.get(digest)))
        except (ValueError, zlib.error):
            raise StoreDamaged(f"the checkpoint store's tree {digest[:12]} does not read") from None
        if not isinstance(tree, dict):
            raise StoreDamaged(f"the checkpoint store's tree {digest[:12]} is not a folder")
        return tree

    def entries(self, manifest: Manifest) -> dict[str, Entry]:
        """Every path of `manifest` and its entry; `StoreDamaged` when a part is missing, does
        not read, or names a path a checkpoint may not hold."""
        found: dict[str, Entry] = {}
        stack = [("", manifest.root)]
        while stack:
            prefix, digest = stack.pop()
            for name, value in self.get_tree(digest).items():
                path = f"{prefix}{name}"
                if bad_path(path) is not None or "/" in name:
                    raise StoreDamaged(f"the checkpoint store's tree {digest[:12]} names "
                                       f"{path[:80]!r}, {bad_path(path) or 'a nested name'}")
                if isinstance(value, list) and len(value) == 2 and value[0] == "d":
                    stack.append((f"{path}/", str(value[1])))
                    continue
                try:
                    found[path] = Entry.from_list(value)
                except ValueError as exc:
                    raise StoreDamaged(f"the checkpoint store's tree {digest[:12]}: {path[:80]!r}"
                                       f" {exc}") from None
        return found

    # manifests -------------------------------------------------------------------------------
    def write_manifest(self, manifest: Manifest) -> None:
        """Record `manifest`, atomically and forced to disk (its blobs are written first)."""
        self.manifests.mkdir(parents=True, exist_ok=True, mode=0o700)
        replace_file(self.manifests / f"{manifest.id}.json", manifest.to_json(), mode=0o600)

    def read_manifest(self, manifest_id: str) -> Manifest:
        """The manifest `manifest_id`; `StoreDamaged` when it is missing or does not read."""
        if not _ID.fullmatch(manifest_id):
            raise StoreDamaged(f"{manifest_id[:80]!r} is not a checkpoint id")
        try:
            return Manifest.from_json((self.manifests / f"{manifest_id}.json").read_bytes())
        except OSError as exc:
            raise StoreDamaged(f"the checkpoint store lacks checkpoint {manifest_id} "
                               f"({exc.strerror or exc})") from None
        except ValueError as exc:
            raise StoreDamaged(f"checkpoint {manifest_id} does not read: {exc}") from None

    def all_manifests(self) -> list[Manifest]:
        """Every manifest that reads (a damaged one is skipped here: pruning keeps going)."""
        found: list[Manifest] = []
        with contextlib.suppress(FileNotFoundError):
            for item in os.scandir(self.manifests):
                if item.name.endswith(".json") and not item.name.startswith("."):
                    with contextlib.suppress(StoreDamaged):
                        found.append(self.read_manifest(item.name[:-5]))
        return found

    # size and pruning ------------------------------------------------------------------------
    def size(self) -> int:
        """The bytes the store's packs, indexes and manifests take."""
        total = 0
        for folder in (self.packs, self.manifests):
            with contextlib.suppress(FileNotFoundError):
                for item in os.scandir(folder):
                    with contextlib.suppress(OSError):
                        total += item.stat(follow_symlinks=False).st_size
        return total

    def prune(self, max_bytes: int, *, keep_run: str | None = None) -> list[str]:
        """While the store is over `max_bytes`, drop the oldest run's manifests (never
        `keep_run`'s), then every blob no manifest still reaches. Returns the runs dropped."""
        dropped: list[str] = []
        with self.locked(exclusive=True):
            if self.size() <= max_bytes:
                return dropped
            manifests = self.all_manifests()
            started: dict[str, float] = {}
            for m in manifests:
                started[m.run] = min(started.get(m.run, m.created), m.created)
            for run in sorted(started, key=started.__getitem__):
                if run == keep_run:
                    continue
                for m in manifests:
                    if m.run == run:
                        with contextlib.suppress(FileNotFoundError):
                            (self.manifests / f"{m.id}.json").unlink()
                dropped.append(run)
                manifests = [m for m in manifests if m.run != run]
                self._collect(manifests)
                if self.size() <= max_bytes:
                    break
        return dropped

    def _live(self, manifests: list[Manifest]) -> set[str]:
        """Every blob `manifests` reach (a damaged tree keeps what it can)."""
        live: set[str] = set()
        stack = [m.root for m in manifests]
        while stack:
            digest = stack.pop()
            if digest in live:
                continue
            live.add(digest)
            try:
                tree = self.get_tree(digest)
            except StoreDamaged:
                continue
            for value in tree.values():
                if isinstance(value, list) and len(value) == 2 and value[0] == "d":
                    stack.append(str(value[1]))
                elif isinstance(value, list) and len(value) == 5 and value[0] == "f":
                    live.add(str(value[3]))
        return live

    def _collect(self, manifests: list[Manifest]) -> None:
        """Rewrite the packs so they hold only what `manifests` reach: a pack with nothing
        live is removed, one partly live copied into a new pack of the live blobs."""
        self.refresh()
        (self.root / "generation").write_bytes(secrets.token_hex(8).encode())
        live = self._live(manifests)
        by_pack: dict[str, list[str]] = {}
        for digest, (pack, _offset, _length) in self._index.items():
            by_pack.setdefault(pack, []).append(digest)
        for pack, digests in by_pack.items():
            keep = [d for d in digests if d in live]
            if len(keep) == len(digests):
                continue
            carried: dict[str, bytes] = {}
            for digest in keep:
                with contextlib.suppress(StoreDamaged):  # a damaged blob is not carried
                    carried[digest] = self.get(digest)
            for digest in digests:
                del self._index[digest]
            if carried:
                writer = PackWriter(self)
                for digest, data in carried.items():
                    writer.put(digest, data)
                writer.commit()
            for suffix in (".idx", ".pack"):
                with contextlib.suppress(FileNotFoundError):
                    (self.packs / f"{pack}{suffix}").unlink()
            self._loaded.discard(pack)
