"""`WorkspaceFiles`: the live cockpit's side of the message box's `@` list — the workspace's
files, listed off the event loop when the box asks (its first `@`, and the first after each
turn), and handed to the box.

The list is the checkpoints' (`engine_adapter.checkpoints.list_paths`, one lister for both): in
a git work tree what git tracks plus what it does not ignore, read without taking git's locks
and without the environment's `GIT_*` variables; elsewhere a walk that never follows a link and
never enters the cockpit's ignored folders (`.venv`, `node_modules`, caches). At most
`FILES_LIMIT` paths are kept.
"""

from __future__ import annotations

from collections.abc import Callable

from cockpit.live.prompts import workspace_of
from cockpit.widgets import Composer
from cockpit.widgets.file_matches import FileIndex
from engine_adapter import Session
from engine_adapter.checkpoints import list_paths
from engine_adapter.files import FileRefused, off_loop

__all__ = ["FILES_LIMIT", "LIST_SECONDS", "WorkspaceFiles"]

FILES_LIMIT = 20_000
"""Paths the `@` list holds (of a bigger workspace: git's first, in path order; a walk's first
found)."""
LIST_SECONDS = 15.0
"""How long listing may take (a slow disk, a huge repository) before the list is given up."""


class WorkspaceFiles:
    """Lists the run's workspace for the message box.

    Args:
        composer: Finds the message box (it is handed the files).
        say: Shows a note to the human (a list cut short, or one that failed).
    """

    def __init__(self, composer: Callable[[], Composer], say: Callable[[str], None]) -> None:
        self._composer = composer
        self._say = say
        self._cut_said = False

    async def refresh(self, session: Session) -> None:
        """List the workspace of `session` and hand the files to the box."""
        root = workspace_of(session)
        def listed() -> tuple[int, FileIndex]:
            paths = list_paths(root, limit=FILES_LIMIT + 1).paths
            return len(paths), FileIndex(paths[:FILES_LIMIT])  # indexed here too: 35 ms at 20k

        try:
            count, index = await off_loop(listed, seconds=LIST_SECONDS,
                                          what="listing the workspace's files")
        except FileRefused as exc:
            self._composer().files_failed()
            self._say(f"the @ list has no files: {exc}")
            return
        if count > FILES_LIMIT and not self._cut_said:
            self._cut_said = True
            self._say(f"the workspace has more than {FILES_LIMIT:,} files: the @ list holds "
                      f"{FILES_LIMIT:,} of them (a path typed in full after @ is sent all the "
                      "same)")
        self._composer().set_files(index)
