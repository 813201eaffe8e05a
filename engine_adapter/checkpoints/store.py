"""`CheckpointStore`: content-addressed blobs and trees, and one manifest per checkpoint.

Layout under the store's root (in the cockpit's data dir, never in a workspace):

    blobs/ab/cdef…   a file's bytes, or a tree (a folder's entries as JSON), named by SHA-256
    manifests/<id>.json
    lock             flock: shared while a checkpoint or rewind runs, exclusive while pruning

A blob is written to a temporary name beside it and renamed, so a reader sees it whole or not at
all; it is never rewritten (same name, same bytes). Reading checks the hash: a damaged blob is a
`StoreDamaged`, never wrong bytes. Blobs are not forced to disk one by one (ten thousand fsyncs
would cost seconds); a manifest is, after them, and a rewind checks every blob it needs before
it changes anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine_adapter.checkpoints.entries import Entry, bad_path
from engine_adapter.checkpoints.manifest import Manifest

__all__ = ["CheckpointStore", "StoreDamaged", "new_id"]

_DIGEST = re.compile(r"[0-9a-f]{64}")
_ID = re.compile(r"[0-9a-z-]{8,64}")


class StoreDamaged(Exception):
    """The store lacks or has a changed blob, tree or manifest; the message says which."""


def new_id() -> str:
    """A fresh manifest id that sorts by time: milliseconds in hex, then randomness."""
    return f"{int(time.time() * 1000):011x}-{secrets.token_hex(4)}"


class CheckpointStore:
    """The blobs, trees and manifests under `root` (made on first write, mode 0o700)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.manifests = self.root / "manifests"

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

    # blobs -----------------------------------------------------------------------------------
    def _blob(self, digest: str) -> Path:
        return self.blobs / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """Whether the blob `digest` is stored."""
        return self._blob(digest).exists()

    def put(self, digest: str, data: bytes) -> int:
        """Store `data` (whose SHA-256 is `digest`) unless it is there; the bytes written."""
        path = self._blob(digest)
        if path.exists():
            return 0
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return len(data)

    def get(self, digest: str) -> bytes:
        """The blob `digest`, checked against its name; `StoreDamaged` when missing or changed."""
        if not _DIGEST.fullmatch(digest):
            raise StoreDamaged(f"the checkpoint store names a blob {digest[:80]!r} that is no hash")
        try:
            data = self._blob(digest).read_bytes()
        except OSError as exc:
            raise StoreDamaged(f"the checkpoint store lacks blob {digest[:12]} "
                               f"({exc.strerror or exc})") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise StoreDamaged(f"the checkpoint store's blob {digest[:12]} was changed")
        return data

    # trees -----------------------------------------------------------------------------------
    def put_tree(self, tree: dict[str, Any]) -> tuple[str, int]:
        """Store one folder's entries (name -> entry list, or `["d", digest]`): its digest and
        the bytes written."""
        data = json.dumps(tree, sort_keys=True, separators=(",", ":")).encode()
        digest = hashlib.sha256(data).hexdigest()
        return digest, self.put(digest, data)

    def get_tree(self, digest: str) -> dict[str, Any]:
        """One folder's entries; `StoreDamaged` when the tree is missing or not one."""
        try:
            tree = json.loads(self.get(digest))
        except ValueError:
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
        path = self.manifests / f"{manifest.id}.json"
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(manifest.to_json())
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

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
        """The bytes the store's blobs and manifests take."""
        total = 0
        for folder in (self.blobs, self.manifests):
            for dirpath, _dirs, names in os.walk(folder):
                for name in names:
                    with contextlib.suppress(OSError):
                        total += os.lstat(os.path.join(dirpath, name)).st_size
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

    def _collect(self, manifests: list[Manifest]) -> None:
        """Remove every blob none of `manifests` reaches (a damaged tree keeps its subtree)."""
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
                elif isinstance(value, list) and len(value) == 8 and value[0] == "f":
                    live.add(str(value[3]))
        for dirpath, _dirs, names in os.walk(self.blobs):
            head = os.path.basename(dirpath)
            for name in names:
                if head + name not in live:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(dirpath, name))
