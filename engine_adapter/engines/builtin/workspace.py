"""The workspace a built-in run is confined to: every path a tool touches resolves inside it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

__all__ = ["Workspace", "WorkspaceError"]


class WorkspaceError(Exception):
    """A path was refused: absolute, escaping with `..`, or leading out through a symlink."""


class Workspace:
    """A directory the tools may read and write in, and nothing outside it. `guard`, when set,
    says why a resolved path may not be written (`Sandbox.write_refusal`: what the sandbox keeps
    read-only, the file tools never write either), or None."""

    def __init__(self, root: str | Path) -> None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise WorkspaceError(f"workspace {str(path)!r} is not a directory")
        self.root = path.resolve()
        self.guard: Callable[[Path], str | None] | None = None

    def check_write(self, real: Path, shown: str) -> None:
        """Refuse (`WorkspaceError`) a write to a resolved path that `guard` keeps read-only."""
        why = self.guard(real) if self.guard is not None else None
        if why:
            raise WorkspaceError(f"{shown}: {why}")

    def resolve(self, path: object) -> Path:
        """The real path of `path` (relative to the workspace), symlinks followed.

        Refused with `WorkspaceError`: anything but a non-empty string, an absolute path, a `..`
        that climbs out, and a path whose real location (after symlinks) is outside the root.
        The file need not exist (a file about to be written).
        """
        if not isinstance(path, str) or not path.strip():
            raise WorkspaceError("a path must be a non-empty string, relative to the workspace")
        if "\x00" in path:
            raise WorkspaceError(f"{path!r} contains a NUL byte")
        pure = PurePosixPath(path)
        if pure.is_absolute() or Path(path).is_absolute():
            raise WorkspaceError(
                f"{path!r} is an absolute path; give a path relative to the workspace")
        parts: list[str] = []
        for part in pure.parts:
            if part == "..":
                if not parts:
                    raise WorkspaceError(f"{path!r} leads outside the workspace")
                parts.pop()
            elif part != ".":
                parts.append(part)
        try:
            real = self.root.joinpath(*parts).resolve()
        except (OSError, RuntimeError) as exc:  # a loop of symbolic links, a name too long
            raise WorkspaceError(f"{path!r} cannot be resolved: {_reason(exc)}") from None
        if not self.contains(real):
            raise WorkspaceError(f"{path!r} leads outside the workspace through a symbolic link")
        return real

    def contains(self, real: Path) -> bool:
        """Whether a resolved path is the root or inside it."""
        return real == self.root or real.is_relative_to(self.root)

    def relative(self, real: Path) -> str:
        """`real` as a path relative to the root (`.` for the root itself)."""
        rel = real.relative_to(self.root).as_posix()
        return rel or "."


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError):  # pathlib's word for a loop of symbolic links
        return "a loop of symbolic links"
    return getattr(exc, "strerror", None) or str(exc)
