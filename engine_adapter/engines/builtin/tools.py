"""The built-in engine's tools, their permission tiers, and the file tools' implementations.

Tiers: 1 read-only (runs at once), 2 writes in the workspace (runs at once, but only in the edit
phase), 3 asks the human, 4 destructive (asks every time, never granted or auto-approved). A
write into a file that runs later by itself (the git dir, hooks, start-up files: see
`engine_adapter.files.runs_later`) is tier 4.
The shell's tier comes from `engine_adapter.shell.classify_command`; running it, and the asks
(`switch_to_editing`, `declare_verification`, `alter_verification`), live in the loop.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine_adapter.engines.builtin.models import ToolSpec
from engine_adapter.engines.builtin.workspace import Workspace, WorkspaceError
from engine_adapter.events import VerificationCheck
from engine_adapter.files import (
    FileRefused,
    check_writable,
    describe_error,
    read_regular,
    runs_later,
    unified_diff,
    write_regular,
)
from engine_adapter.shell import DESTRUCTIVE, classify_command
from engine_adapter.text import plural

__all__ = [
    "EDIT_TOOLS",
    "TOOLS",
    "PreparedWrite",
    "ToolError",
    "cap_text",
    "list_dir",
    "parse_checks",
    "prepare_write",
    "read_file",
    "search",
]

_NUMBER = (int, float)

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("read_file", 1, "Read a text file of the workspace.", {"path": str}),
    ToolSpec("list_dir", 1, "List a directory of the workspace.", {}, {"path": str}),
    ToolSpec("search", 1, "Find the lines that contain `pattern` (a regex if `regex`) in the "
             "files under `path`.", {"pattern": str}, {"path": str, "regex": bool}),
    ToolSpec("write_file", 2, "Create or replace a file (edit phase only).",
             {"path": str, "content": str}),
    ToolSpec("edit", 2, "Replace the one exact occurrence of `old` with `new` in a file (edit "
             "phase only).", {"path": str, "old": str, "new": str}),
    ToolSpec("shell", 3, "Run a command in the workspace: `command` (a shell line) or `argv`. "
             "Asks the human; destructive commands ask every time. Runs in a sandbox (writes "
             "only in the workspace and $TMPDIR, no network); `sandbox: false` asks the human "
             "to run it outside, every time: only after the sandbox blocked what the task "
             "needs.", {},
             {"command": str, "argv": list, "timeout": _NUMBER, "description": str,
              "sandbox": bool}),
    ToolSpec("switch_to_editing", 3, "Ask to move from investigating to editing, saying why.",
             {"reason": str}),
    ToolSpec("declare_verification", 3, "Declare how the change will be verified: `checks`, "
             "each {name, command, id?}. Required before the first edit; then frozen.",
             {"checks": list}),
    ToolSpec("alter_verification", 3, "Ask to change the frozen verification plan: `add` "
             "checks and/or `remove` check ids, saying why.", {"reason": str},
             {"add": list, "remove": list}),
)}
"""Every tool, by name. (`finish` is not a tool but a decision: `{"action": "finish"}`.)"""

EDIT_TOOLS = frozenset({"write_file", "edit"})
"""The tier-2 tools: run only in the edit phase, and only once a verification plan is frozen."""

_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache",
                        ".pytest_cache", ".ruff_cache"})
_MAX_READ = 2_000_000  # bytes: bigger files are refused, not read
_MAX_MATCHES = 200


class ToolError(Exception):
    """A tool refused its input or failed; the message is what the model and human see."""


def cap_text(text: str, cap: int) -> str:
    """`text`, cut to `cap` characters with a note of how much was left out."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}\n[… {plural(len(text) - cap, 'more character')} not shown]"


def _resolve(workspace: Workspace, path: Any) -> Path:
    try:
        return workspace.resolve(path)
    except WorkspaceError as exc:
        raise ToolError(str(exc)) from None


def _read_text(path: Path, shown: str, *, missing_ok: bool = False) -> str | None:
    """The text of a regular file (see `engine_adapter.files`: a FIFO, device or socket is refused,
    never opened in a way that blocks); `None` for a missing file with `missing_ok`."""
    try:
        data = read_regular(str(path), shown, max_bytes=_MAX_READ, missing_ok=missing_ok)
    except FileRefused as exc:
        raise ToolError(str(exc)) from None
    if data is None:
        return None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} is a binary file")
    return data.decode("utf-8", errors="replace")


def read_file(workspace: Workspace, tool_input: Mapping[str, Any]) -> str:
    """The text of a file."""
    return _read_text(_resolve(workspace, tool_input["path"]), tool_input["path"]) or ""


def list_dir(workspace: Workspace, tool_input: Mapping[str, Any]) -> str:
    """One line an entry: `name/` for directories, `name  (N bytes)` for files, `name -> target`
    for symbolic links (those leading out are marked, and are not followed by any tool)."""
    shown = tool_input.get("path", ".")
    path = _resolve(workspace, shown)
    if not path.is_dir():
        raise ToolError(f"{shown} is not a directory")
    lines = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_symlink():
            target = os.readlink(entry.path)
            try:
                where = "" if workspace.contains(Path(entry.path).resolve()) else \
                    "  (outside the workspace)"
            except (OSError, RuntimeError):  # a loop of links, a name too long
                where = "  (does not resolve)"
            lines.append(f"{entry.name} -> {target}{where}")
        elif entry.is_dir():
            lines.append(f"{entry.name}/")
        elif entry.is_file():
            lines.append(f"{entry.name}  ({entry.stat().st_size} bytes)")
        else:
            lines.append(f"{entry.name}  (not a regular file)")
    return "\n".join(lines) if lines else "(empty)"


def search(workspace: Workspace, tool_input: Mapping[str, Any]) -> str:
    """`path:line: text` for each matching line, at most 200."""
    pattern = tool_input["pattern"]
    if not pattern:
        raise ToolError("search needs a non-empty pattern")
    try:
        matcher = re.compile(pattern if tool_input.get("regex") else re.escape(pattern))
    except re.error as exc:
        raise ToolError(f"bad regular expression: {exc}") from None
    top = _resolve(workspace, tool_input.get("path", "."))
    files = [top] if top.is_file() else _walk(top)
    matches: list[str] = []
    for file in files:
        try:
            text = _read_text(file, file.name) or ""
        except (ToolError, OSError):
            continue
        rel = workspace.relative(file)
        for number, line in enumerate(text.splitlines(), 1):
            if matcher.search(line):
                matches.append(f"{rel}:{number}: {line.strip()}")
                if len(matches) >= _MAX_MATCHES:
                    return "\n".join([*matches, f"[stopped after {_MAX_MATCHES} matches]"])
    return "\n".join(matches) if matches else "no matches"


def _walk(top: Path) -> list[Path]:
    files = []
    for root, dirs, names in os.walk(top):  # symlinked directories are not followed
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(root, name)
            if not path.is_symlink():
                files.append(path)
    return files


@dataclass(frozen=True)
class PreparedWrite:
    """A write or edit, checked and ready: where, the new text, and its diff for display."""

    path: Path
    shown: str
    content: str
    diff: str
    created: bool
    runs_later: str | None = None
    """Why the file runs later by itself (`engine_adapter.files.runs_later`): then the write
    asks every time, at tier 4, and is never granted."""

    def apply(self) -> str:
        """Write it (in a worker thread: this does file I/O). Refused like `engine_adapter.files`
        says: only a regular file, never through a hard link or a symbolic link swapped in
        meanwhile."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(describe_error(exc, self.shown, "write")) from None
        try:
            write_regular(str(self.path), self.shown, self.content.encode("utf-8"))
        except FileRefused as exc:
            raise ToolError(str(exc)) from None
        verb = "created" if self.created else "edited"
        return f"{verb} {self.shown}"


def prepare_write(workspace: Workspace, tool: str, tool_input: Mapping[str, Any]) -> PreparedWrite:
    """Check a `write_file` or `edit` call and compute the new text and its unified diff.

    Does file I/O and may diff a big file: run it in a worker thread. Every problem with the
    path (too long, a loop of links, a directory, a FIFO, …) is a `ToolError`."""
    shown = tool_input["path"]
    path = _resolve(workspace, shown)
    try:
        workspace.check_write(path, shown)
    except WorkspaceError as exc:
        raise ToolError(str(exc)) from None
    try:
        check_writable(str(path), shown)
    except FileRefused as exc:
        raise ToolError(str(exc)) from None
    old = _read_text(path, shown, missing_ok=True)
    exists = old is not None
    if tool == "edit":
        if old is None:
            raise ToolError(f"{shown} does not exist; use write_file to create it")
        before, after = tool_input["old"], tool_input["new"]
        count = old.count(before) if before else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times"
            raise ToolError(f"the text to replace was {found} in {shown}; give an exact, "
                            "unique piece of the file")
        new = old.replace(before, after, 1)
    else:
        new = tool_input["content"]
    diff = unified_diff(old, new, workspace.relative(path))
    return PreparedWrite(path, shown, new, diff, created=not exists,
                         runs_later=runs_later(workspace.root, shown, path))


_SLUG = re.compile(r"[^a-z0-9]+")


def parse_checks(raw: Any, workspace: Workspace, *,
                 taken: Sequence[str] = ()) -> list[VerificationCheck]:
    """Verification checks from a model's `[{name, command, id?}, …]`. Each command must run
    in the workspace and not be destructive (tier 4 is refused); ids are unique."""
    if not isinstance(raw, list) or not raw:
        raise ToolError("give at least one check: [{\"name\": …, \"command\": …}]")
    checks: list[VerificationCheck] = []
    seen = set(taken)
    for item in raw:
        if not isinstance(item, Mapping):
            raise ToolError("each check must be an object with 'name' and 'command'")
        name, command = item.get("name"), item.get("command")
        if not isinstance(name, str) or not name.strip():
            raise ToolError("each check needs a 'name'")
        if not isinstance(command, str) or not command.strip():
            raise ToolError(f"check {name!r} needs a 'command'")
        found = classify_command(command, workspace.root)
        if found.tier >= DESTRUCTIVE:
            raise ToolError(f"check {name!r} may not be destructive: {found.reason}")
        check_id = item.get("id") or _SLUG.sub("-", name.lower()).strip("-") or "check"
        if not isinstance(check_id, str) or check_id in seen:
            raise ToolError(f"check id {check_id!r} is not unique")
        seen.add(check_id)
        checks.append(VerificationCheck(id=check_id, name=name, command=command))
    return checks
