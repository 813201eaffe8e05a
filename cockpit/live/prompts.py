"""`PromptKeeper`: the live cockpit's side of the prompt history — it reads this project's
earlier prompts into the message box when the cockpit starts, and keeps every task sent (the
first one too), all off the event loop (`cockpit.prompt_history` blocks on the disk).

The project is the run's workspace: the task's `cwd`, else the engine's, else the folder the
cockpit was started in.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from cockpit.prompt_history import Loaded, PromptHistory
from cockpit.widgets import Composer
from engine_adapter import Session
from engine_adapter.files import FileRefused, off_loop

__all__ = ["PromptKeeper", "workspace_of"]

HISTORY_SECONDS = 5.0  # a history file that takes longer than this to read is given up on


def workspace_of(session: Session) -> str:
    """The folder whose history a run's prompts belong to."""
    runner = session.runner
    for candidate in (session.state.cwd, getattr(runner, "cwd", None),
                      getattr(getattr(runner, "workspace", None), "root", None)):
        if isinstance(candidate, str | os.PathLike) and os.fspath(candidate):
            return os.fspath(candidate)
    return os.getcwd()


class PromptKeeper:
    """Loads and keeps the prompt history of the run's project.

    Args:
        composer: Finds the message box (it fills its earlier prompts).
        say: Shows a note to the human (a history that could not be read or kept), once each.
    """

    def __init__(self, composer: Callable[[], Composer], say: Callable[[str], None]) -> None:
        self._composer = composer
        self._say = say
        self._history: PromptHistory | None = None
        self._said: set[str] = set()

    def history(self, session: Session) -> PromptHistory:
        """The project's history (the first session's workspace names it)."""
        if self._history is None:
            self._history = PromptHistory.for_workspace(workspace_of(session))
        return self._history

    async def load(self, session: Session) -> None:
        """Read the earlier prompts into the box (older than this run's first task)."""
        history = self.history(session)
        try:
            loaded = await off_loop(history.load, seconds=HISTORY_SECONDS,
                                    what="reading the prompt history")
        except FileRefused as exc:
            loaded = Loaded((), f"prompt history not read: {exc}")
        composer = self._composer()
        composer.set_history(loaded.prompts)
        if loaded.note:
            self._note(loaded.note)

    async def keep(self, session: Session, text: str) -> None:
        """A task was sent: it is the newest earlier prompt, in the box and in the file."""
        self._composer().remember(text)
        history = self.history(session)
        try:
            problem = await off_loop(lambda: history.add(text), seconds=HISTORY_SECONDS,
                                     what="keeping the prompt")
        except FileRefused as exc:
            problem = f"prompt history not kept: {exc}"
        if problem:
            self._note(problem)

    def _note(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self._say(line)
