"""`AnswerFirst`: when the live cockpit draws the transcript, so that what the keys answer is
drawn first and a flood's rows do not queue in front of it.

Measured on the tool-heavy flood of `bench/bench_ui.py` (a dozen new items a frame: a transcript
paint of ~10 ms, several times the rest of a frame):

- A delivery that changes what the keys answer (a new approval or question, or a key's answer)
  is drawn without the transcript's part (its new and changed rows, its room below for the
  approval bar); that part follows once that frame is drawn, behind any input already waiting
  (`App.call_later` queues it after the keys the app has not read yet).
- While a key is being answered (from its arrival until its action has run, at most
  `KEY_WAIT`, then one frame more: `KEY_FRAME`), the transcript waits: the key's frame shows
  the answer, not the stream's rows, which follow in the next frame, as far from the next key
  as they can be. (Drawn with the key's frame, a reply's growth made that frame several times
  dearer once the reply was long: re-wrapping its tail, a repainted scrollbar; measured in
  bench_model's key run. Longer, and a stream's rows would pile up into one dear frame with
  the next key's.)
- A flood (`FLOOD_ITEMS` new items in one delivery) is drawn at most every `FLOOD_WAIT`, the
  status line's totals with it: its paint costs the same however many rows scrolled past, so
  fewer of them leave the loop free for keys (on a busy machine, the difference between keeping
  up and not). What changes the run's status is drawn at once.

Only when the transcript is drawn changes: every event is folded, in order, all the same, and the
display (`RunDisplay.apply_changes(..., transcript_later=True)`, `catch_up()`) keeps what
changed until it is drawn. A flood's pace and a key's wait (`KEY_WAIT`, `KEY_FRAME`) run on a
clock; the rest runs on Textual's own messages and refreshes, so a test that waits for the app to
be idle sees the transcript up to date unless rows arrived while a key was answered (then they
come `KEY_FRAME` after its action).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from cockpit.live.pump import FRAME_SECONDS
from cockpit.widgets import RunDisplay
from engine_adapter.view import APPROVALS, QUESTIONS, RUN, ChangeSet, RunView

__all__ = ["FLOOD_ITEMS", "FLOOD_WAIT", "KEY_FRAME", "KEY_WAIT", "AnswerFirst"]

KEY_WAIT = 2 * FRAME_SECONDS  # the longest the transcript waits for a key's action to run
# ... and then for its frame: Textual draws it within a period of its frame cap (120 a
# second, `cockpit.FRAME_CAP`), so a 60th of a second is the frame's and some to spare. (Not
# "after the next refresh": a callback asked for then can run before the screen has heard of
# the key's repaint, and the transcript came first after all.)
KEY_FRAME = FRAME_SECONDS
FLOOD_ITEMS = 32  # new items in one delivery that make a flood (a screen's worth and more)
FLOOD_WAIT = 6 * FRAME_SECONDS  # what a flood's rows wait between two paints (10 a second)


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
        self._flood_until = 0.0  # loop time until which a flood's rows wait
        self._held = ChangeSet()  # what a flood's deliveries left for `_catch_up`

    def deliver(self, view: RunView, changes: ChangeSet) -> None:
        """Draw `changes`: all of them, or all but the transcript's part, which follows."""
        display = self._display()
        if changes.parts & (APPROVALS | QUESTIONS):
            display.apply_changes(view, changes, transcript_later=True)
            self._behind = True
            self._answers += 1
            self._after_refresh(self._answer_drawn)
        elif (self._answers or self._key_waits()) and not changes.parts & RUN and changes.items:
            display.apply_changes(view, changes, transcript_later=True)
            self._behind = True
            if self._key_waits():  # (an answer's frame calls the catch-up itself)
                asyncio.get_running_loop().call_at(self._key_until, self._later,
                                                   self._catch_up)
        elif not changes.parts & RUN and asyncio.get_running_loop().time() < self._flood_until:
            # All of it waits (the status line's totals too: they change with every delivery).
            self._held.update(changes)
            if not self._behind:
                self._behind = True
                asyncio.get_running_loop().call_at(self._flood_until, self._later,
                                                   self._catch_up)
        else:
            self._behind = False
            self._draw_transcript(lambda: display.apply_changes(view, self._take_held(changes)))

    def key_pressed(self) -> None:
        """A key arrived, or its answer was delivered: the transcript waits for the answer's
        frame (`key_answered()`, or an answer's `key_drawn()`), at most `KEY_WAIT`."""
        self._key_until = asyncio.get_running_loop().time() + KEY_WAIT

    def key_answered(self) -> None:
        """A key's action has run: the transcript waits for its frame, `KEY_FRAME` more."""
        loop = asyncio.get_running_loop()
        self._key_until = loop.time() + KEY_FRAME
        if self._behind:
            loop.call_at(self._key_until, self._later, self._catch_up)

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
        loop = asyncio.get_running_loop()
        if self._key_waits():  # a key's action may not have run yet: its frame comes first
            loop.call_at(self._key_until, self._later, self._catch_up)
            return
        if loop.time() < self._flood_until:  # a flood's rows keep their pace
            loop.call_at(self._flood_until, self._later, self._catch_up)
            return
        display = self._display()
        if display.is_mounted and display.view is not None:
            self._behind = False
            view, held = display.view, self._take_held(ChangeSet())
            self._draw_transcript(lambda: display.apply_changes(view, held))

    def _take_held(self, changes: ChangeSet) -> ChangeSet:
        """`changes` with the held ones (a flood's) added; nothing is held after."""
        changes.update(self._held)
        self._held = ChangeSet()
        return changes

    def _draw_transcript(self, draw: Callable[[], None]) -> None:
        """`draw()` the transcript's part; when a flood's worth of rows came with it, the next
        such part waits `FLOOD_WAIT`."""
        transcript = self._display().transcript
        before = transcript.item_count
        draw()
        if transcript.item_count - before >= FLOOD_ITEMS:
            self._flood_until = asyncio.get_running_loop().time() + FLOOD_WAIT
