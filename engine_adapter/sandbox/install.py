"""The programs the cockpit starts outside the sandbox, and its own install: resolved once, to
real paths that no sandboxed command can replace.

A command may write anywhere in a writable root (the workspace). If `bwrap` were looked up on
`$PATH` at each command, a planted `.venv/bin/bwrap` would run every later command unsandboxed;
if the cockpit runs from the workspace's own `.venv`, a command could replace the interpreter or
the cockpit's code, which the next command's scope holder (or the human's next start) runs.
So: `pick_bwrap` prefers `/usr/bin/bwrap`, resolves links, and refuses any candidate below a
writable root; `own_install` names what stays read-only in the sandbox (the interpreter, the
environment's prefix, the cockpit's packages).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["below", "own_install", "pick_bwrap"]

_SYSTEM_BWRAP = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")


def below(path: str, roots: Sequence[str]) -> bool:
    """Whether `path` is one of `roots` or lies under one (real paths)."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def pick_bwrap(path: str | None, writable: Sequence[str]) -> tuple[str | None, list[str]]:
    """The real path of the `bwrap` to use, and the candidates refused (with why): of those on
    `path` (default `$PATH`), the system ones (`/usr/bin/bwrap`, …) first, whatever the order
    of `path`; none below a `writable` root."""
    refused: list[str] = []
    seen: set[str] = set()
    search = path if path is not None else os.environ.get("PATH", "")
    on_path = [shutil.which("bwrap", path=folder) for folder in search.split(os.pathsep)
               if folder]
    on_path.sort(key=lambda found: found not in _SYSTEM_BWRAP)  # stable: else PATH's order
    for candidate in on_path:
        if not candidate or not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
            continue
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        if below(real, writable):
            refused.append(f"{candidate} (it lies in the writable {real})")
            continue
        return real, refused
    return None, refused


def _package_dir(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.realpath(locations[0]) if locations else None


def own_install() -> list[str]:
    """What the cockpit runs from: the interpreter (and what it links to), the environment's
    prefix and base prefix, and the `engine_adapter` and `cockpit` package folders."""
    paths = [sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix,
             str(Path(__file__).resolve().parents[1])]
    paths += [folder for folder in (_package_dir("cockpit"),) if folder]
    return [os.path.realpath(path) for path in paths if path]
