"""An agent's files: read and written safely, and the diffs of what a write changes.

- `safe_io`: regular files only, never through a hard link, off the event loop, capped.
- `diffs`: unified diffs of file writes, fast on any input and capped.
- `runs_later`: whether a write lands in a file git or the shell runs by itself later (the git
  dir, hooks, start-up files, `.envrc`, …): such a write asks every time and is never granted.
"""

from engine_adapter.files.diffs import unified_diff, unified_diff_async
from engine_adapter.files.runs_later import runs_later, runs_later_by_name
from engine_adapter.files.safe_io import (
    FileRefused,
    check_writable,
    describe_error,
    off_loop,
    read_regular,
    write_regular,
)

__all__ = [
    "FileRefused",
    "check_writable",
    "describe_error",
    "off_loop",
    "read_regular",
    "runs_later",
    "runs_later_by_name",
    "unified_diff",
    "unified_diff_async",
    "write_regular",
]
