"""What must stay read-only when the workspace holds a home folder (or is `/`), and the mounts
that keep it so — including files that do not exist yet, and the folders above them.

Three traps, each measured with bubblewrap as root (`tests/engine_adapter/sandbox/`):

- A read-only bind of a path that does not exist makes bwrap create it on the host as an
  empty mount point: an empty `~/.bash_profile` would silently stop bash reading `~/.profile`.
  So a missing location is never bound: its parent folder is *sealed* instead (read-only, each
  of its existing entries bound writable again, but the protected ones), and nothing new can
  be made in it.
- A mount point cannot be renamed or removed (`EBUSY`), but its parent folders can: `mv
  ~/.config ~/.c && mkdir -p ~/.config/cockpit` writes a new `config.toml` beside the bound one.
  So every folder between the workspace and a protected path is bound onto itself too.
- A protected name that is a symbolic link (`~/.bashrc -> dotfiles/bashrc`) could be replaced:
  its folder is sealed, and its target is protected as well.

`mount_plan` turns protected paths into those mounts (parents first); `startup_locations` lists
what runs later, outside any sandbox, from a home folder; `homes_in` and `system_locations`
say whose homes and which system folders a workspace holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from engine_adapter.files.startup import inside

__all__ = ["mount_plan"]
# What a home holds that runs later (HOME_STARTUP, startup_locations, covered, …) lives in
# engine_adapter.files.startup: one list for the sandbox's mounts and for `runs_later`.

_NEVER_REBOUND = frozenset({"/proc", "/dev", "/sys"})
"""The sandbox's own `/proc` and `/dev` (and the kernel's `/sys`) are never bound over."""

RO, RW, SEAL = "ro", "rw", "seal"  # a protected path; a mount point; a sealed folder


def _real_parent(path: str) -> str:
    """`path` with its folders resolved but its last name kept: a link stays the link."""
    head, name = os.path.split(path)
    return os.path.join(os.path.realpath(head), name)


def mount_plan(workspace: str, protected: Iterable[str]) -> list[tuple[str, str]]:
    """The mounts that keep each of `protected` (absolute paths; those outside the workspace are
    ignored) read-only inside a writable `workspace`, as bwrap flags and paths in the order to
    give them (parents first): `("--ro-bind", path)` or `("--bind", path)`, each onto itself."""
    root = os.path.realpath(workspace)
    modes: dict[str, str] = {}
    leaves: set[str] = set()
    todo = [_real_parent(os.path.abspath(p)) for p in protected]
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen or not inside(path, root):
            continue
        seen.add(path)
        leaves.add(path)
        if os.path.lexists(path) and not os.path.islink(path):
            modes[path] = RO
            _chain(root, os.path.dirname(path), modes)
            continue
        # Missing, or a link: nothing may be made or swapped in its place, so its deepest
        # existing folder is sealed; a link's target is protected too.
        if os.path.islink(path):
            todo.append(_real_parent(os.path.realpath(path)))
        folder = os.path.dirname(path)
        while folder != root and inside(folder, root) and not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        if folder == root or inside(folder, root):
            if modes.get(folder) != RO:
                modes[folder] = SEAL
            _chain(root, os.path.dirname(folder), modes)
    for folder in [p for p, mode in modes.items() if mode == SEAL]:
        _reopen(folder, modes, leaves)
    return _ordered(modes)


def _chain(root: str, folder: str, modes: dict[str, str]) -> None:
    """Each folder from `folder` up to (not including) `root` becomes a mount point."""
    while inside(folder, root):
        modes.setdefault(folder, RW)
        folder = os.path.dirname(folder)


def _reopen(folder: str, modes: dict[str, str], leaves: set[str]) -> None:
    """A sealed folder's existing entries stay writable (bound onto themselves), except the
    protected ones, links (they cannot be changed in a sealed folder, and a bind would follow
    them) and what is not a plain file or folder."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        path = entry.path
        if path in leaves or path in modes or path in _NEVER_REBOUND:
            continue
        try:
            if entry.is_symlink() or not (entry.is_dir(follow_symlinks=False)
                                          or entry.is_file(follow_symlinks=False)):
                continue
        except OSError:
            continue
        modes[path] = RW


def _ordered(modes: dict[str, str]) -> list[tuple[str, str]]:
    """The mounts, parents first; nothing writable below a protected path."""
    protected = sorted(p for p, mode in modes.items() if mode == RO)
    plan: list[tuple[str, str]] = []
    for path in sorted(modes, key=lambda p: (p.count("/"), p)):
        mode = modes[path]
        if mode != RO and any(inside(path, top) for top in protected):
            continue  # under a read-only path: already read-only, never reopened
        plan.append(("--bind" if mode == RW else "--ro-bind", path))
    return plan
