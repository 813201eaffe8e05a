"""`AnswerFirst`: when the live cockpit draws the transcript, so that what the keys answer is
drawn first and a flood's rows do not queue in front of it.

Measured on the tool-heavy flood of `bench/bench_ui.py` (a dozen new items a frame: a transcript
paint of ~10 ms, several times the rest of a frame):

- A delivery that changes what the keys answer (a new approval or question, or a key's answer)
  is drawn without the transcript's part (its new and changed rows, its room below for the
  approval bar); that part follows once that frame is drawn, behind any input already waiting
  (`App.call_later` queues it after the keys the app has not read yet).
- While a key is being answered (from its arrival to the frame after its action, at most
  `HOLD_SECONDS`), the transcript waits: the key's frame shows the answer, not the stream's rows.

Only when the transcript is drawn changes: every event is folded, in order, all the same, and the
display (`RunDisplay.apply_changes(..., transcript_later=True)`, `catch_up()`) keeps what
changed until it is drawn. All but the longest wait for a key run on Textual's own messages and
refreshes, so a test that waits for the app to be idle sees the transcript up to date.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from engine_adapter.fold import APPROVALS, QUESTIONS, RunView

from .pump import HOLD_SECONDS, ChangeSet
from .widgets import RunDisplay

__all__ = ["AnswerFirst"]


class AnswerFirst:
    """Paces the transcript of `display()` around the keys' answers (see the module).

    Args:
        display: The run display (looked up when needed: it is composed after this is made).
        after_refresh: Calls a function once the next frame is drawn (`App.call_after_refresh`).
        later: Calls a function (with arguments) after the messages already waiting
            (`App.call_later`).
    """

    def __init__(self, display: Callable[[], RunDisplay],
                 after_refresh: Callable[[Callable[[], None]], object],
                 later: Callable[..., object]) -> None:
        self._display = display
        self._after_refresh = after_refresh
        self._later = later
        self._key_until = 0.0  # loop time until which a key is being answered
        self._answers = 0  # answers delivered whose frame is not drawn yet
        self._behind = False  # the transcript waits for `_catch_up`

    def deliver(self, view: RunView, changes: ChangeSet) -> None:
        """Draw `changes`: all of them, or all but the transcript's part, which follows."""
        display = self._display()
        if changes.parts & (APPROVALS | QUESTIONS):
            display.apply_changes(view, changes, transcript_later=True)
            self._behind = True
            self._answers += 1
            self._after_refresh(self._answer_drawn)
        elif self._answers or self._key_waits():
            display.apply_changes(view, changes, transcript_later=True)
            self._behind = True
        else:
            self._behind = False
            display.apply_changes(view, changes)

    def key_pressed(self) -> None:
        """A key arrived, or its answer was delivered: the transcript waits for the answer's
        frame (`key_drawn()`), at most `HOLD_SECONDS`."""
        self._key_until = asyncio.get_running_loop().time() + HOLD_SECONDS

    def key_drawn(self) -> None:
        """The frame after a key's answer is drawn: the transcript goes on."""
        self._key_until = 0.0
        self._later(self._catch_up)

    def _key_waits(self) -> bool:
        return bool(self._key_until) and asyncio.get_running_loop().time() < self._key_until

    def _answer_drawn(self) -> None:
        self._answers = max(0, self._answers - 1)
        # A key that arrived while the frame was drawn reaches the app's queue a turn of the
        # event loop from now: the catch-up goes through the queue twice, so it comes after.
        self._later(self._later, self._catch_up)

    def _catch_up(self) -> None:
        if not self._behind or self._answers:
            return  # drawn already, or an answer's frame comes first (it calls again)
        if self._key_waits():  # a key's action may not have run yet: its frame comes first
            asyncio.get_running_loop().call_at(self._key_until, self._later, self._catch_up)
            return
        display = self._display()
        if display.is_mounted:
            self._behind = False
            display.catch_up()
