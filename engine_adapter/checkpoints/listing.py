"""Which paths of a workspace a checkpoint records.

In a git work tree: what git lists as tracked or untracked and not ignored (`.gitignore`,
`.git/info/exclude`, the global excludes), read with `--no-optional-locks` so git writes
nothing (not even the index's stat refresh); the environment's `GIT_*` variables are dropped so
that it is this workspace's repository that is read. Anywhere else (or when git fails): a walk
that never follows a link. Both then drop what the cockpit's own ignore list names (caches,
virtual environments) and anything inside a `.git`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from collections.abc import Iterable

from engine_adapter.checkpoints.entries import bad_path

__all__ = ["DEFAULT_IGNORE", "GIT_SECONDS", "Listing", "list_paths"]

DEFAULT_IGNORE = (".git", "__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                  ".hypothesis", ".tox", ".nox", ".venv", "node_modules", ".DS_Store")
"""Names (shell patterns, matched against each part of a path) a checkpoint never records."""

GIT_SECONDS = 30.0
"""How long `git ls-files` may take before the walk is used instead."""


class Listing(tuple[list[str], str]):
    """`(paths, source)`: the relative paths, and `"git"` or `"folder"`."""

    __slots__ = ()

    @property
    def paths(self) -> list[str]:
        return self[0]

    @property
    def source(self) -> str:
        return self[1]


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # the same as --no-optional-locks, for any git it runs
    return env


def _git_paths(root: str) -> list[str] | None:
    """What git lists, or None when `root` is not in a work tree git can read."""
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", root,
             "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, env=_git_env(), timeout=GIT_SECONDS, check=False,
            stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.split(b"\0")
    return sorted({os.fsdecode(n) for n in names if n})  # a conflicted path is listed per stage


def _walk_paths(root: str) -> list[str]:
    found: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                for item in it:
                    path = f"{rel}/{item.name}" if rel else item.name
                    if item.is_dir(follow_symlinks=False):
                        stack.append(path)
                    else:
                        found.append(path)
        except OSError:
            continue  # a folder we cannot read (or that went away) records nothing
    found.sort()
    return found


class _Ignore:
    """The ignore list, fast: exact names in a set, patterns in one expression (a checkpoint
    tests every part of ten thousand paths)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        patterns = tuple(patterns)
        self.names = {p for p in patterns if not any(c in p for c in "*?[")}
        globs = [fnmatch.translate(p) for p in patterns if p not in self.names]
        self.glob = re.compile("|".join(globs)) if globs else None

    def __call__(self, path: str) -> bool:
        parts = path.split("/")
        if not self.names.isdisjoint(parts):
            return True
        glob = self.glob
        return glob is not None and any(glob.match(part) for part in parts)


def list_paths(root: str, ignore: Iterable[str] = DEFAULT_IGNORE) -> Listing:
    """The paths of `root` a checkpoint records, sorted, and where the list came from."""
    ignored = _Ignore(dict.fromkeys((*DEFAULT_IGNORE, *ignore)))
    listed = _git_paths(root)
    source = "git"
    if listed is None:
        listed, source = _walk_paths(root), "folder"
    # A gitlink (a submodule's folder) is skipped later: it is not a file.
    return Listing(([p for p in listed if bad_path(p) is None and not ignored(p)],
                    source))
