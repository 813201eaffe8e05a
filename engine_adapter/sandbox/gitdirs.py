"""The git directories a sandboxed command must not change: git runs what they say (config,
hooks, `commondir`, a `.git` file's `gitdir:`) in the human's next `git status`, outside any
sandbox.

`git_entries(workspace)` lists, for read-only binds:

- the workspace's own `.git` entry, a folder or a file (bound whole, so `mv .git x`, `rm -rf
  .git` and writing `.git/commondir` fail: a mount point cannot be renamed or removed);
- the git dir a `.git` file names (`gitdir: …`: a worktree, a submodule) and its `commondir`;
- every submodule's `.git` file (found from `.git/modules/*/config`'s `core.worktree`) and the
  `.git` entries of repositories nested a few levels down (a bounded walk).

When the workspace has no `.git` at all, `core.Sandbox` binds an empty, unreadable folder on
the name, so a command cannot create one (`git init`, or a `.git` file pointing at a config it
wrote) that a later git run in the workspace would follow. What remains: a `.git` the command
creates in a new subdirectory, followed only by a git run inside that subdirectory.
"""

from __future__ import annotations

import os
from collections import deque

__all__ = ["git_entries", "gitdir_of"]

_WALK_DIRS = 2000  # folders looked into at most for nested repositories
_WALK_DEPTH = 4
_SKIP = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                   ".ruff_cache", ".pytest_cache", "target", "dist", "build", ".cache"})
_READ_CAP = 4096


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(_READ_CAP)
    except OSError:
        return ""


def gitdir_of(dot_git: str) -> str | None:
    """The folder a `.git` file names (`gitdir: PATH`, relative to the file), or None."""
    for line in _read(dot_git).splitlines():
        if line.startswith("gitdir:"):
            target = line[len("gitdir:"):].strip()
            if target:
                return os.path.realpath(os.path.join(os.path.dirname(dot_git), target))
    return None


def _common_dir(gitdir: str) -> str | None:
    common = _read(os.path.join(gitdir, "commondir")).strip()
    return os.path.realpath(os.path.join(gitdir, common)) if common else None


def _submodule_worktrees(gitdir: str) -> list[str]:
    """The `.git` files of the submodules whose git dirs lie in `gitdir/modules`."""
    found: list[str] = []
    stack = [os.path.join(gitdir, "modules")]
    seen = 0
    while stack and seen < _WALK_DIRS:
        folder = stack.pop()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            config = _read(os.path.join(entry.path, "config"))
            for line in config.splitlines():
                key, _, value = line.strip().partition("=")
                if key.strip() == "worktree" and value.strip():
                    tree = os.path.realpath(os.path.join(entry.path, value.strip()))
                    found.append(os.path.join(tree, ".git"))
            stack.append(os.path.join(entry.path, "modules"))
    return found


def _nested(workspace: str) -> list[str]:
    """`.git` entries below the workspace's top (a bounded breadth-first walk)."""
    found: list[str] = []
    queue: deque[tuple[str, int]] = deque([(workspace, 0)])
    seen = 0
    while queue and seen < _WALK_DIRS:
        folder, depth = queue.popleft()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git" and folder != workspace:
                found.append(entry.path)
            elif (depth < _WALK_DEPTH and entry.name not in _SKIP and entry.name != ".git"
                  and entry.is_dir(follow_symlinks=False)):
                queue.append((entry.path, depth + 1))
    return found


def git_entries(workspace: str, *, walk: bool = True) -> list[str]:
    """Every git path of `workspace` to keep read-only (see the module docstring), real paths
    for the folders a `.git` file names; existing ones only, each once. Without `walk`, only
    the top's `.git` and what it names (cheap enough for every command)."""
    found: list[str] = []
    entries = [os.path.join(workspace, ".git"), *(_nested(workspace) if walk else [])]
    done: set[str] = set()
    while entries:
        entry = entries.pop(0)
        if entry in done or not os.path.lexists(entry):
            continue
        done.add(entry)
        found.append(entry)
        gitdir = entry if os.path.isdir(entry) else gitdir_of(entry)
        if gitdir is None:
            continue
        for folder in (gitdir, _common_dir(gitdir)):
            if folder and folder not in done and os.path.isdir(folder):
                done.add(folder)
                found.append(folder)
                entries += _submodule_worktrees(folder)
    return found
