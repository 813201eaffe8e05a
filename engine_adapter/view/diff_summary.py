"""Reading a unified diff an engine made (never computing one): what each line is, lines added
and removed per file, and where the changes start.

Engines put the diff of an edit in its events (`tool_input["diff"]`, `ToolEnd.diff`), computed
off the event loop and capped by `engine_adapter.files.diffs`; every view reads it with these
helpers, so the transcript, the end panel, headless output and the export count the same lines.

Lines are classified with the hunk headers' counts, so a removed line that reads `--- x` (a
Markdown rule, a YAML separator) is a removed line, not a file header.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

__all__ = [
    "FileChange",
    "LineKind",
    "changed_files",
    "diff_counts",
    "diff_stats",
    "line_kinds",
    "merge_changes",
    "preview_start",
]

LineKind = Literal["file", "hunk", "add", "remove", "context", "note"]

_HUNK_RE = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def line_kinds(lines: list[str]) -> list[LineKind]:
    """What each line of a unified diff is: a file header (`---`/`+++`), a hunk header (`@@`),
    an added, removed or context line, or a note (`\\ No newline at end of file`, a cap's
    `[diff …]`, anything else). Inside a hunk, its header's counts decide."""
    kinds: list[LineKind] = []
    old = new = 0  # lines of the current hunk still to come, each side
    for line in lines:
        first = line[:1]
        if old > 0 or new > 0:
            if first == "+" and new > 0:
                kinds.append("add")
                new -= 1
                continue
            if first == "-" and old > 0:
                kinds.append("remove")
                old -= 1
                continue
            if (first == " " or line == "") and old > 0 and new > 0:
                kinds.append("context")
                old, new = old - 1, new - 1
                continue
            if first == "\\":
                kinds.append("note")
                continue
            old = new = 0  # a hunk shorter than its header said (a cut diff): read on freely
        match = _HUNK_RE.match(line)
        if match:
            kinds.append("hunk")
            old = int(match.group(1)) if match.group(1) is not None else 1
            new = int(match.group(2)) if match.group(2) is not None else 1
        elif line.startswith(("--- ", "+++ ")):
            kinds.append("file")
        elif first == "+":
            kinds.append("add")
        elif first == "-":
            kinds.append("remove")
        elif first == " ":
            kinds.append("context")
        else:
            kinds.append("note")
    return kinds


def diff_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by `diff` (file headers not counted)."""
    kinds = line_kinds(diff.split("\n"))
    return kinds.count("add"), kinds.count("remove")


def diff_stats(diff: str) -> str:
    """`+3 −1`: lines added and removed by a unified diff (headers not counted)."""
    added, removed = diff_counts(diff)
    return f"+{added} −{removed}"


class FileChange(NamedTuple):
    """One file a diff changes: its path as the diff names it, lines added and removed."""

    path: str
    added: int
    removed: int


def _header_path(line: str) -> str | None:
    """The path a `---`/`+++` header names (`a/`/`b/` dropped), None for `/dev/null`."""
    path = line[4:].split("\t", 1)[0].strip()
    if not path or path == "/dev/null":
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def changed_files(diff: str, default: str | None = None) -> list[FileChange]:
    """The files `diff` changes, in order, each with its lines added and removed. Lines before
    any file header count for `default` (the path its call named), if given."""
    files: list[FileChange] = []
    path, old_path, added, removed = default, None, 0, 0
    lines = diff.split("\n")
    for line, kind in zip(lines, line_kinds(lines), strict=True):
        if kind == "file" and line.startswith("---"):
            if path is not None and (added or removed):
                files.append(FileChange(path, added, removed))
            path, old_path, added, removed = None, _header_path(line), 0, 0
        elif kind == "file":
            path = _header_path(line) or old_path  # `+++ /dev/null`: the file was deleted
        elif kind == "add":
            added += 1
        elif kind == "remove":
            removed += 1
    if path is not None and (added or removed):
        files.append(FileChange(path, added, removed))
    return files


def merge_changes(changes: list[FileChange]) -> list[FileChange]:
    """Changes to the same path added up, in the order each path first appears."""
    merged: dict[str, FileChange] = {}
    for change in changes:
        before = merged.get(change.path)
        merged[change.path] = change if before is None else FileChange(
            change.path, before.added + change.added, before.removed + change.removed)
    return list(merged.values())


def preview_start(kinds: list[LineKind]) -> int:
    """Where a preview of a diff starts: its first added or removed line (not the file or hunk
    headers, nor the context before the change); 0 when it changes nothing."""
    for index, kind in enumerate(kinds):
        if kind in ("add", "remove"):
            return index
    return 0
