"""Planning and applying a rewind: the workspace back to a checkpoint, leaving others' changes.

Three states decide each path: the `target` (the checkpoint to go back to), the `baseline` (the
workspace as the run, or the cockpit's last rewind, left it) and `current` (as it is now):

- current already as in the target: nothing to do;
- current as the baseline left it: the run changed it after the target, so it goes back (written
  again, or removed when the run created it);
- anything else: someone else changed it after the baseline; it is left alone and listed.

A path over the size cap in the target cannot be written back (only its hash is known): it is
left alone and listed unless it already matches. Before anything is changed every blob the plan
needs is read and checked (`check_blobs`), so a damaged store changes nothing. Writes go to a
temporary name in the same folder and are renamed over the path; folders are opened below the
workspace without following links (`Beneath`), so a rewind never writes outside it, and no
path of a checkpoint can be inside a `.git`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from dataclasses import dataclass, field

from engine_adapter.checkpoints.beneath import Beneath
from engine_adapter.checkpoints.entries import Entry, same_content
from engine_adapter.checkpoints.store import CheckpointStore

__all__ = ["RewindPlan", "apply_plan", "check_blobs", "plan_rewind"]


@dataclass
class RewindPlan:
    """What a rewind does: paths written back (`brought_back`: those of them that are gone
    now), paths removed, paths left alone (and why)."""

    target: dict[str, Entry]
    restore: list[str] = field(default_factory=list)
    brought_back: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    left_alone: list[tuple[str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Whether the rewind would change nothing."""
        return not self.restore and not self.remove


def plan_rewind(target: dict[str, Entry], baseline: dict[str, Entry],
                current: dict[str, Entry]) -> RewindPlan:
    """What rewinding `current` to `target` does, given what the run left (`baseline`)."""
    plan = RewindPlan(target)
    for path in sorted(target.keys() | baseline.keys() | current.keys()):
        t, b, c = target.get(path), baseline.get(path), current.get(path)
        if same_content(c, t):
            continue
        if not same_content(c, b):
            plan.left_alone.append((path, "changed by someone else since the run"))
        elif t is None:
            plan.remove.append(path)
        elif t.kind == "f" and not t.stored:
            plan.left_alone.append((path, "over the size cap: recorded by hash only"))
        else:
            plan.restore.append(path)
            if c is None:
                plan.brought_back.append(path)
    return plan


def check_blobs(store: CheckpointStore, plan: RewindPlan) -> None:
    """Read and check every blob the plan writes back: `StoreDamaged` if one is missing or
    changed (and then nothing has been changed)."""
    for path in plan.restore:
        entry = plan.target[path]
        if entry.kind == "f":
            store.get(entry.digest)


def _write(below: Beneath, path: str, entry: Entry, store: CheckpointStore) -> None:
    folder, name = below.split(path, create=True)
    temporary = f".{name[:200]}.cockpit-{secrets.token_hex(4)}"
    if entry.kind == "l":
        os.symlink(entry.digest, temporary, dir_fd=folder)
    else:
        data = store.get(entry.digest)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                os.fchmod(out.fileno(), entry.mode & 0o7777)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    try:
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def _prune_folders(below: Beneath, removed: list[str], keep: dict[str, Entry]) -> None:
    """Remove the folders that removing `removed` left empty, unless the target has paths in
    them (a folder the target had, still empty, is left)."""
    needed = {path.rpartition("/")[0] for path in keep}
    for path in list(needed):
        while path:
            path = path.rpartition("/")[0]
            needed.add(path)
    folders = {p.rpartition("/")[0] for p in removed}
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        while folder and folder not in needed:
            parent, _, name = folder.rpartition("/")
            try:
                up = below.folder(parent)
                below.forget(folder)
                os.rmdir(name, dir_fd=up)
            except OSError:
                break  # not empty (someone else's file), or gone
            folder = parent


def apply_plan(store: CheckpointStore, workspace: str, plan: RewindPlan) -> list[tuple[str, str]]:
    """Carry out `plan` in `workspace`; returns the paths it could not change and why (the
    rest is done). Removals first (deepest first), then the folders they emptied, then writes."""
    failed: list[tuple[str, str]] = []
    with Beneath(workspace) as below:
        for path in sorted(plan.remove, key=lambda p: p.count("/"), reverse=True):
            try:
                folder, name = below.split(path)
                os.unlink(name, dir_fd=folder)
            except FileNotFoundError:
                pass
            except OSError as exc:
                failed.append((path, f"could not remove it: {exc.strerror or exc}"))
        _prune_folders(below, plan.remove + plan.restore, plan.target)
        for path in plan.restore:
            try:
                _write(below, path, plan.target[path], store)
            except OSError as exc:
                why = ("a folder or a link is in its way" if exc.errno in (
                    errno.EISDIR, errno.ENOTDIR, errno.ELOOP, errno.ENOTEMPTY)
                    else exc.strerror or str(exc))
                failed.append((path, f"could not write it back: {why}"))
    return failed
