"""Which approval a key answers, and from when: the one drawn on screen, once it is armed.

Two approvals waiting and two `y` presses arriving together: the second must not approve a
request that was never drawn. So a key answers the request the bar showed in the last frame
drawn (`drawn`, called after the screen refresh that showed it), never "the oldest pending
one" of a view that may be newer than the screen; and a newly shown request ignores keys for
`ARM_SECONDS` (as browsers' permission prompts do), so a key already on its way when the
request appeared cannot answer it. Ignored keys are reported (`Target.why`), never dropped
silently. No Textual here: the bar and the app feed it, a test drives it with a fake clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["ARM_SECONDS", "KeyArming", "Target"]

ARM_SECONDS = 0.5
"""How long a newly shown approval ignores its keys (browsers' permission prompts use about
this): long enough for a key pressed for the previous request to land harmlessly, short enough
not to be noticed by someone reading the request."""


class Target(NamedTuple):
    """What an answer key pressed now answers: `approval_id`, or None and `why` it answers
    nothing."""

    approval_id: str | None
    why: str = ""


class KeyArming:
    """The request on screen and when its keys arm (`clock`: monotonic seconds)."""

    def __init__(self, *, seconds: float = ARM_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = max(0.0, seconds)
        self.clock = clock
        self.drawn_id: str | None = None  # the request in the last frame drawn
        self.armed_at = 0.0  # (clock time) when its keys start to answer it
        self._answered: str | None = None  # the last request answered by a key

    def drawn(self, approval_id: str) -> bool:
        """`approval_id` is on screen (a frame showing it was drawn); True when it is newly
        shown (its keys arm `seconds` from now), False when it already was."""
        if approval_id == self.drawn_id:
            return False
        self.drawn_id = approval_id
        self.armed_at = self.clock() + self.seconds
        return True

    def hidden(self) -> None:
        """What the bar shows is changing or gone: no key answers until the next is drawn."""
        self.drawn_id = None

    def answered(self, approval_id: str) -> None:
        """A key answered `approval_id`: later keys wait for the next request to be drawn."""
        self._answered = approval_id
        if self.drawn_id == approval_id:
            self.drawn_id = None

    def armed(self) -> bool:
        """Whether a key pressed now answers the request on screen."""
        return self.drawn_id is not None and self.clock() >= self.armed_at

    def target(self) -> Target:
        """What a key pressed now answers (see `Target`)."""
        if self.drawn_id is None:
            if self._answered is not None:
                return Target(None, "its request was already answered; the next one is not "
                                    "on screen yet")
            return Target(None, "no request is on screen yet")
        left = self.armed_at - self.clock()
        if left > 0:
            return Target(None, f"the request was just shown: read it first (keys work in "
                                f"{max(0.1, left):.1f} s)")
        return Target(self.drawn_id)
