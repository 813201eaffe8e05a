"""Which paths of a workspace a checkpoint records.

In a git work tree: what git lists as tracked or untracked and not ignored (`.gitignore`,
`.git/info/exclude`, the global excludes), read with `--no-optional-locks` so git writes
nothing (not even the index's stat refresh); the environment's `GIT_*` variables are dropped so
that it is this workspace's repository that is read. Anywhere else (or when git fails): a walk
that never follows a link. Both then drop what the cockpit's own ignore list names (caches,
virtual environments), anything inside a `.git`, and the paths kept out (`kept_out`: the
cockpit's own journals, store, state and runtime folders when the workspace holds them).

`scan` is what a checkpoint asks: the walk hands back each file's `lstat` as it goes (the
folder's own descriptor, never a path that could cross a link), and git can also say which
tracked files it finds unchanged against its index (`clean`, see `Snapshotter`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import select
import subprocess
import sys
from collections.abc import Iterable
from typing import NamedTuple

from engine_adapter.checkpoints.beneath import DIR_FLAGS

__all__ = ["DEFAULT_IGNORE", "GIT_SECONDS", "Listing", "Scan", "kept_out", "list_paths", "scan"]

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


class Scan(NamedTuple):
    """What `scan` found: the relative paths (not sorted), `"git"` or `"folder"`, and:

    - `stats`: the walk's `lstat` of each path, in the same order (None: listed by git);
    - `clean`: the tracked paths git reports unchanged against its index, each with its index
      record (mode, object id, stage), when asked for (empty otherwise, and wherever
      attributes could convert content: see `_vouchable`); a path assumed unchanged, skipped
      in the work tree, unmerged, modified or deleted is never in it."""

    paths: list[str]
    source: str
    stats: list[os.stat_result] | None = None
    clean: dict[str, str] = {}  # noqa: RUF012 - a NamedTuple default, never mutated


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


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()

_GIT = ("git", "--no-optional-locks", "-c", "core.fsmonitor=false")
# What `clean` needs git to compare strictly, whatever the user's config says: every stat
# field (ctime too: it cannot be set back, unlike mtime), the executable bit, and content
# without line-ending conversion (global and system attributes off; a workspace with its own
# attributes is never vouched for, see `Snapshotter`).
_STRICT = ("-c", "core.checkStat=default", "-c", "core.trustctime=true", "-c",
           "core.fileMode=true", "-c", "core.autocrlf=false", "-c",
           "core.attributesFile=/dev/null")


def _git_env(*, strict: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # the same as --no-optional-locks, for any git it runs
    if strict:
        env["GIT_ATTR_NOSYSTEM"] = "1"
    return env


def _git_output(root: str, *, clean: bool) -> str | None:
    """`git ls-files`' records, decoded, or None when `root` is not in a work tree git can
    read. `clean`: tagged, with each tracked path's index record, modified and deleted ones
    listed again (one git run tells both what is there and what git finds unchanged)."""
    args = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    if clean:
        args[2:2] = ["-t", "-v", "-f", "-s", "--modified", "--deleted"]
    output = _run([*_GIT, *(_STRICT if clean else ()), "-C", root, *args],
                  _git_env(strict=clean))
    if output is None:
        return None
    # One decode of the whole output: NUL never occurs inside an encoded name.
    return output.decode(_FS_ENCODING, _FS_ERRORS)


def _await(child: subprocess.Popen[bytes]) -> None:
    """Wait for `child` to end, at most `GIT_SECONDS` (then it is killed)."""
    try:
        ended = os.pidfd_open(child.pid)
    except OSError:  # (no pidfd here: a kernel before 5.3, or a filter refuses it)
        try:
            child.wait(timeout=GIT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
        return
    try:
        waiting = select.poll()
        waiting.register(ended, select.POLLIN)
        if not waiting.poll(int(GIT_SECONDS * 1000)):
            child.kill()
    finally:
        os.close(ended)


def _run(argv: list[str], env: dict[str, str]) -> bytes | None:
    """What `argv` printed, or None when it failed, could not start or outran `GIT_SECONDS`.
    On Linux its output goes to a file in memory and its end is awaited on a descriptor:
    no wake-up for each few kilobytes it writes to a pipe, none to poll for its end (a
    checkpoint's listing is some 700 KB, written 4 KB at a time)."""
    if not (hasattr(os, "memfd_create") and hasattr(os, "pidfd_open")):
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=env, timeout=GIT_SECONDS, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None
    try:
        out = os.memfd_create("cockpit-ls-files", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env,
                                     stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        try:
            _await(child)
        except BaseException:
            child.kill()  # (cancelled: git goes too)
            raise
        finally:
            child.wait()  # (at once: it ended, or was killed)
        if child.returncode != 0:
            return None
        return os.pread(out, os.fstat(out).st_size, 0)
    except OSError:
        return None
    finally:
        os.close(out)


def _git_scan(root: str, kept: _Filter, *, clean: bool) -> Scan | None:
    """What git lists (kept by `kept`), and with `clean` the paths it vouches for."""
    output = _git_output(root, clean=clean)
    if output is None:
        return None
    records = output.split("\0")
    records.pop()  # the empty string after the last NUL
    if not clean:
        # A conflicted path is listed once a stage: kept once.
        return Scan(kept.keep(dict.fromkeys(records)), "git")
    listed: list[str] = []
    vouched: dict[str, str] = {}
    last = ""
    for record in records:
        if record[0] == "?":
            listed.append(record[2:])
            continue
        # "H 100644 <oid> 0\t<path>", then "C …" and "R …" when it is modified, deleted
        meta, _, path = record.partition("\t")
        tag = meta[0]
        if tag == "H":
            vouched[path] = meta
        elif tag == "C" or tag == "R":
            vouched.pop(path, None)
            continue  # listed already, with its "H"
        if path != last:  # not another stage of an unmerged path
            listed.append(path)
            last = path
    if ".gitattributes" in output:
        # Attributes in the workspace can convert content (line endings, filters): different
        # bytes then look unchanged to git. (Any name holding it counts: only slower.)
        vouched = {}
    return Scan(kept.keep(listed), "git", None, vouched)


def _walk(root: str, kept: _Filter, limit: int | None = None, *,
          stats: bool = False) -> Scan:
    """The files under `root`, never through a link: each folder is opened below the one
    above it without following a link and read through its descriptor, so is each file's
    `lstat` (`stats`). A folder the filter drops is not entered (`.venv`, `node_modules`:
    what they hold would be dropped anyway); one that cannot be read records nothing."""
    found: list[str] = []
    looked: list[os.stat_result] | None = [] if stats else None
    try:
        top = os.open(root, DIR_FLAGS)
    except OSError:
        return Scan(found, "folder", looked)
    names, suffixes, glob, out = kept.names, kept.suffixes or None, kept.glob, kept.out
    stack = [("", top)]
    try:
        while stack and (limit is None or len(found) < limit):
            rel, fd = stack.pop()
            prefix = f"{rel}/" if rel else ""
            try:
                with os.scandir(fd) as it:
                    for item in it:
                        name = item.name
                        path = prefix + name
                        if item.is_dir(follow_symlinks=False):
                            # gone, or a link now: none of it is recorded
                            if kept.folder_ok(path):
                                with contextlib.suppress(OSError):
                                    stack.append((path, os.open(name, DIR_FLAGS, dir_fd=fd)))
                            continue
                        # (the folder is kept: the walk is in it)
                        if (name in names or (suffixes is not None and name.endswith(suffixes))
                                or (glob is not None and glob.match(name) is not None)
                                or (out and path in out)):
                            continue
                        if looked is not None:
                            try:
                                looked.append(item.stat(follow_symlinks=False))
                            except OSError:
                                continue  # gone since it was listed
                        found.append(path)
                        if limit is not None and len(found) >= limit:
                            break
            except OSError:
                pass  # a folder we cannot read (or that went away) records nothing
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)
    return Scan(found, "folder", looked)


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

    def keep(self, paths: Iterable[str]) -> list[str]:
        """Those of `paths` kept: `__call__` over many, with a folder's verdict reused while
        its files come together (git lists them so)."""
        paths = list(paths)
        if self._keeps_all(paths):
            return paths
        names, suffixes, glob, out = self.names, self.suffixes or None, self.glob, self.out
        found: list[str] = []
        at, ok = None, False
        for path in paths:
            folder, _, name = path.rpartition("/")
            if folder != at:
                at, ok = folder, self.folder_ok(folder)
            if (not ok or name in names or (suffixes is not None and name.endswith(suffixes))
                    or (glob is not None and glob.match(name) is not None)
                    or (out and path in out) or path[0] == "/" or "\0" in path):
                continue
            found.append(path)
        return found

    def _keeps_all(self, paths: list[str]) -> bool:
        """Whether `keep` would keep every one of `paths`, decided over the distinct names
        their parts use (a few hundred for ten thousand paths: the loop in `keep` judges each
        path). A name the filter drops, an empty part (a leading, doubled or trailing slash),
        a NUL, or a path kept out (or below one) anywhere: no."""
        joined = "\0".join(paths)
        if not paths or joined.count("\0") != len(paths) - 1:
            return False
        parts = set(joined.replace("/", "\0").split("\0"))
        if not parts.isdisjoint(self.names):
            return False
        if self.suffixes and any(part.endswith(self.suffixes) for part in parts):
            return False
        glob = self.glob
        if glob is not None and any(glob.match(part) is not None for part in parts):
            return False
        if not self.out:
            return True
        wrapped = f"\0{joined}\0"
        return not any(f"\0{kept}/" in wrapped or f"\0{kept}\0" in wrapped for kept in self.out)

    def __call__(self, path: str) -> bool:
        if not path or "\0" in path or path.startswith("/"):
            return False
        folder, _, name = path.rpartition("/")
        known = self.folders.get(folder)
        if known is None:
            known = self.folder_ok(folder)
        return known and self._name_ok(name) and path not in self.out


def scan(root: str, ignore: Iterable[str] = DEFAULT_IGNORE, *, limit: int | None = None,
         out: Iterable[str] = (), stats: bool = False, clean: bool = False) -> Scan:
    """The paths of `root` a checkpoint records (not sorted), and where the list came from.
    `limit`: a walk stops once it has found that many (git lists what it tracks, which is
    bounded by the repository). `out`: relative paths (see `kept_out`) never listed, nor
    anything below them; a walk does not enter them. `stats`: the walk also hands back each
    path's `lstat`; `clean`: git also says which tracked paths it finds unchanged."""
    kept = _Filter(dict.fromkeys((*DEFAULT_IGNORE, *ignore)), out)
    # A gitlink (a submodule's folder) is skipped later: it is not a file.
    # `_Filter` refuses what `bad_path` refuses (an empty, `.`, `..` or `.git` part), faster.
    return (_git_scan(root, kept, clean=clean and _vouchable(root))
            or _walk(root, kept, limit, stats=stats))


def _vouchable(root: str) -> bool:
    """Whether git's word on unchanged files can be taken here: `root` is the top of a
    repository whose git dir is `root/.git` itself (not a worktree's or a submodule's `.git`
    file) and that has no `info/attributes`: attributes can convert content (line endings,
    filters), and then different bytes look unchanged to git (see `_git_scan` for the
    workspace's own `.gitattributes`)."""
    try:
        return (os.path.isdir(os.path.join(root, ".git"))
                and not os.path.lexists(os.path.join(root, ".git", "info", "attributes")))
    except (OSError, ValueError):
        return False


def list_paths(root: str, ignore: Iterable[str] = DEFAULT_IGNORE, *,
               limit: int | None = None, out: Iterable[str] = ()) -> Listing:
    """The paths of `root` a checkpoint records, sorted, and where the list came from.
    `limit`: a walk stops once it has found that many (a home folder is not walked whole; git
    lists what it tracks, which is bounded by the repository). `out`: relative paths (see
    `kept_out`) never listed, nor anything below them; a walk does not enter them."""
    found = scan(root, ignore, limit=limit, out=out)
    return Listing((sorted(found.paths), found.source))
