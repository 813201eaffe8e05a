"""Which paths of a workspace a checkpoint records.

In a git work tree: what git lists as tracked or untracked and not ignored (`.gitignore`,
`.git/info/exclude`, the global excludes), read with `--no-optional-locks` so git writes
nothing (not even the index's stat refresh); the environment's `GIT_*` variables are dropped so
that it is this workspace's repository that is read. Anywhere else (or when git fails): a walk
that never follows a link. Both then drop what the cockpit's own ignore list names (caches,
virtual environments), anything inside a `.git`, and the paths kept out (`kept_out`: the
cockpit's own journals, store, state and runtime folders when the workspace holds them).
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from collections.abc import Iterable

__all__ = ["DEFAULT_IGNORE", "GIT_SECONDS", "Listing", "kept_out", "list_paths"]

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


def kept_out(root: str, paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The paths (relative to `root`) of those of `paths` that lie strictly inside `root`,
    both compared as real paths (a link to the workspace, or to a folder of the cockpit's,
    hides nothing). A path that is `root` or holds it keeps nothing out: the user chose to
    work in it."""
    base = os.path.realpath(root)
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        rel = os.path.relpath(real, base)
        if rel != "." and rel != ".." and not rel.startswith("../") and not os.path.isabs(rel):
            found.append(rel.replace(os.sep, "/"))
    return tuple(dict.fromkeys(found))


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


def _walk_paths(root: str, kept: _Filter, limit: int | None = None) -> list[str]:
    """The files under `root`, never through a link; a folder the filter drops is not entered
    (`.venv`, `node_modules`: what they hold would be dropped anyway)."""
    found: list[str] = []
    stack = [""]
    while stack and (limit is None or len(found) < limit):
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                for item in it:
                    path = f"{rel}/{item.name}" if rel else item.name
                    if item.is_dir(follow_symlinks=False):
                        if kept.folder_ok(path):
                            stack.append(path)
                    else:
                        found.append(path)
                        if limit is not None and len(found) >= limit:
                            break
        except OSError:
            continue  # a folder we cannot read (or that went away) records nothing
    found.sort()
    return found


class _Filter:
    """Which listed paths are kept, fast: a path's folder is judged once (memoised: ten
    thousand files live in a few hundred folders), its own name by a set and one expression."""

    def __init__(self, patterns: Iterable[str], out: Iterable[str] = ()) -> None:
        patterns = tuple(patterns)
        self.out = frozenset(out)  # relative paths never recorded, nor anything below them
        literal = {p for p in patterns if not any(c in p for c in "*?[")}
        self.names = literal | {"", ".", "..", ".git"}
        # `*.pyc`-like patterns are a suffix test; any other pattern one expression
        self.suffixes = tuple(p[1:] for p in patterns
                              if p.startswith("*") and not any(c in p[1:] for c in "*?["))
        globs = [fnmatch.translate(p) for p in patterns
                 if p not in literal and p[1:] not in self.suffixes]
        self.glob = re.compile("|".join(globs)) if globs else None
        self.folders: dict[str, bool] = {"": True}

    def _name_ok(self, name: str) -> bool:
        if name in self.names or (self.suffixes and name.endswith(self.suffixes)):
            return False
        glob = self.glob
        return glob is None or glob.match(name) is None

    def folder_ok(self, folder: str) -> bool:
        known = self.folders.get(folder)
        if known is None:
            parent, _, name = folder.rpartition("/")
            known = self.folders[folder] = (self.folder_ok(parent) and self._name_ok(name)
                                            and folder not in self.out)
        return known

    def __call__(self, path: str) -> bool:
        if not path or "\0" in path or path.startswith("/"):
            return False
        folder, _, name = path.rpartition("/")
        return self.folder_ok(folder) and self._name_ok(name) and path not in self.out


def list_paths(root: str, ignore: Iterable[str] = DEFAULT_IGNORE, *,
               limit: int | None = None, out: Iterable[str] = ()) -> Listing:
    """The paths of `root` a checkpoint records, sorted, and where the list came from.
    `limit`: a walk stops once it has found that many (a home folder is not walked whole; git
    lists what it tracks, which is bounded by the repository). `out`: relative paths (see
    `kept_out`) never listed, nor anything below them; a walk does not enter them."""
    kept = _Filter(dict.fromkeys((*DEFAULT_IGNORE, *ignore)), out)
    listed = _git_paths(root)
    source = "git"
    if listed is None:
        listed, source = _walk_paths(root, kept, limit), "folder"
    # A gitlink (a submodule's folder) is skipped later: it is not a file.
    # `_Filter` refuses what `bad_path` refuses (an empty, `.`, `..` or `.git` part), faster.
    return Listing(([p for p in listed if kept(p)], source))
