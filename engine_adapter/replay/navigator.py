"""Moving through a journal: the replay viewer's state machine, without any UI.

A `Navigator` knows which event is wanted (the cursor), which view is on screen and how far it is
folded, whether `end` was asked for before the end was known, whether the journal is followed
live, and whether playback is running. Each operation (`grew`, `seek`, `step`, `find`, `last`,
`play_tick`, `arrived`) returns what to show:

- a `Frame`: the view after the cursor's event, with what changed since the last frame (or
  `None`: draw it whole);
- a `Seek`: a fold too long for the caller's thread; run `fold(seek)` elsewhere, then hand the
  view to `arrived(seek, view)`, which drops it if the cursor moved on meanwhile;
- a `FoldTail`: the same for a provisional end: run `fold_tail(step)` elsewhere, then hand the
  part to `tail_arrived(tail)`, which drops it if the end is no longer wanted;
- `Wait`: the operation needs what is not read yet (`reason` says what);
- `None`: nothing to show.

Whatever the sequence of operations, a frame's view is the fold of the events up to its cursor,
except a provisional one: `end` asked before the pass has read the whole journal shows the fold
of the file's last part alone (`tail`), marked as such (`Frame.provisional`, and the
navigator's `provisional`), until the pass reaches the end and the exact view replaces it.
The journal itself is read by another thread (`JournalReplay.read_through`, then `follow`),
which tells the navigator with `grew()`; any thread may run `fold()`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine_adapter.journal import TYPE_CODES, TYPE_MASK
from engine_adapter.replay.seek import JournalReplay
from engine_adapter.replay.tail import TAIL_BYTES, Tail, fold_tail, tail_label
from engine_adapter.view import ChangeSet, RunView

__all__ = ["IDLE_CAP", "MIN_STEP", "POLL", "FoldTail", "Frame", "Navigator", "Seek", "Wait",
           "code_class"]

IDLE_CAP = 1.0  # seconds: a longer pause between two events plays as this long (before speed)
MIN_STEP = 0.01  # seconds between played events, however fast
SYNC_FOLD = 5_000  # a seek folding at most this many events (from a small view) runs inline
SYNC_ITEMS = 5_000  # ... and copying a checkpoint with fewer rows than this is inline too
POLL = 0.25  # seconds between looks for more events while playing at a followed end
REDRAW = 200  # folding forward more events than this redraws everything, not each change
_AGENT_END = TYPE_CODES["agent_end"]


class Frame(NamedTuple):
    """Show `view`, the view after event `cursor`; `changes` says what changed since the last
    frame (`None`: draw it whole). A `provisional` frame (cursor -1) shows the fold of the
    journal's last part only, until the pass reaches the end."""

    cursor: int
    view: RunView
    changes: ChangeSet | None
    provisional: Tail | None = None


class Seek(NamedTuple):
    """A view to fold in another thread: the one after the first `target` events."""

    target: int


class FoldTail(NamedTuple):
    """A provisional end to fold in another thread: the file's last `max_bytes` (megabytes of
    JSON, too long for the caller's thread)."""

    max_bytes: int


class Wait(NamedTuple):
    """The operation needs what the pass has not read yet; `reason` says so, for the user."""

    reason: str


Step = Frame | Seek | FoldTail | None


def code_class(codes: set[int] | frozenset[int] | tuple[int, ...]) -> re.Pattern[bytes]:
    """A regex matching one byte of the code array that is any of `codes`."""
    return re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in sorted(codes)) + b"]")


class Navigator:
    """Where the viewer is in a journal, and what to show next. One thread calls the
    operations (the UI's); `fold` may run in any thread."""

    def __init__(self, replay: JournalReplay, *, follow: bool = False,
                 tail_bytes: int = TAIL_BYTES) -> None:
        self.replay = replay
        self.tail_bytes = tail_bytes  # `end` before the end is read: fold this much of it (0: wait)
        self.provisional: Tail | None = None  # the view shown is the fold of this part only
        self.tail_asked = False  # a `FoldTail` is out, not yet arrived
        self.follow = follow  # the journal is being written: keep showing what lands
        self.cursor = -1  # the event wanted (0-based); -1 before the first frame
        self.shown = -1  # the event of the last frame
        self.view: RunView | None = None  # the view of the last frame
        self.view_pos = 0  # events folded into `view`
        self.at_end = False  # the last frame showed the last event known then
        self._known = 0  # events known when the cursor was last set
        self.complete = False  # the whole journal has been read once
        self.want_end = False  # `end` was asked for before the end was known
        self.playing = False
        self.speed = 1.0

    @property
    def total(self) -> int:
        """Events known so far."""
        return len(self.replay)

    @property
    def span(self) -> int:
        """The events the whole file holds: `total` once it is read, else an estimate from the
        bytes read so far (the timeline spans it, so what is read is not stretched)."""
        total, index = self.total, self.replay.index
        if self.complete or not index.end:
            return total
        return max(total, total * index.size // index.end)

    @property
    def ended(self) -> bool:
        """Whether the last event known is an `agent_end` (a followed run is over, for now)."""
        total = self.total
        return bool(total) and self.replay.index.codes[total - 1] & TYPE_MASK == _AGENT_END

    # the journal grew ------------------------------------------------------------------------
    def grew(self, *, complete: bool = False) -> Step:
        """The reading thread indexed more (`complete`: it has read the whole file once)."""
        self.complete = self.complete or complete
        total = self.total
        if not total:
            return None
        if self.want_end and self.complete:
            self.want_end = False
            return self._seek(total - 1)  # (an exact view replaces a provisional one)
        if self.provisional is not None:
            return None  # (the label's progress changed: see `provisional_label`)
        if self.cursor < 0:
            if self.follow and self.complete:
                return self._seek(total - 1)  # a followed journal opens at its end
            self.want_end = self.want_end or self.follow  # (and moves there once known)
            return self._seek(0)  # the first event at once
        if self.follow and self.at_end and not self.playing and total - 1 > self.cursor:
            return self._seek(total - 1)  # following: show what landed
        return None

    # moving ----------------------------------------------------------------------------------
    def seek(self, cursor: int) -> Step:
        """Show the view after event `cursor` (clamped to what is known); an `end` asked
        before is given up (the user went elsewhere)."""
        self.want_end = False
        return self._seek(cursor)

    def _seek(self, cursor: int) -> Step:
        total = self.total
        if not total:
            return None
        cursor = max(0, min(cursor, total - 1))
        self.cursor, self._known = cursor, total
        target = cursor + 1
        replay, view = self.replay, self.view
        if (view is not None and self.provisional is None
                and self.view_pos <= target <= self.view_pos + SYNC_FOLD):
            changes = ChangeSet()
            if target > self.view_pos:  # fold forward into what is shown
                if replay.is_stored(view):  # a checkpoint shown as is: fold into a copy
                    view = view.copy()
                replay.fold_into(view, self.view_pos, target,
                                 lambda _position, change: changes.add(*change))
            return self._frame(view, target,
                               None if target - self.view_pos > REDRAW else changes)
        base_position, base = replay.nearest(target)
        if target == base_position or (target - base_position <= SYNC_FOLD
                                       and len(base.items) < SYNC_ITEMS):
            return self._frame(replay.state_at(target, share=True), target, None)
        return Seek(target)

    def fold(self, seek: Seek) -> RunView:
        """The view a `Seek` asked for (any thread; it may be a stored checkpoint)."""
        return self.replay.state_at(seek.target, share=True)

    def arrived(self, seek: Seek, view: RunView) -> Frame | None:
        """The view of `seek`, folded; `None` if the cursor has moved on since."""
        if self.cursor + 1 != seek.target:
            return None
        return self._frame(view, seek.target, None)

    def _frame(self, view: RunView, target: int, changes: ChangeSet | None) -> Frame:
        self.provisional = None
        self.view, self.view_pos = view, target
        self.shown = target - 1
        # (against what was known when the cursor was set: the reading thread goes on)
        self.at_end = target == self._known
        return Frame(target - 1, view, changes)

    def find(self, step: int, pattern: re.Pattern[bytes] | None = None,
             start: int | None = None) -> int | None:
        """The next position from the cursor (or `start`), exclusive, in direction `step`
        whose code matches `pattern` (see `code_class`); any position without one."""
        start = self.cursor if start is None else start
        total = self.total
        if pattern is None:
            target = start + step
            return target if 0 <= target < total else None
        data = self.replay.index.codes[:total].tobytes()
        if step > 0:
            found = pattern.search(data, start + 1)
            return found.start() if found else None
        # Backwards: search the reversed prefix (one C-speed copy), not every earlier match.
        found = pattern.search(data[max(0, start) - 1::-1]) if start > 0 else None
        return start - 1 - found.start() if found else None

    def step(self, step: int, pattern: re.Pattern[bytes] | None = None) -> Step | Wait | bool:
        """One event back or forward (of the codes `pattern` matches, with one); False when
        there is none that way."""
        if self.provisional is not None:
            return Wait(self.waiting)
        target = self.find(step, pattern)
        return False if target is None else self.seek(target)

    def last(self) -> Step:
        """The last event, as soon as the whole journal has been read once; before that, a
        `FoldTail` for a provisional frame of the file's last part (when `tail_bytes`), which
        the pass replaces with the exact one once it gets there (`grew`)."""
        if self.complete:
            return self.seek(self.total - 1)
        self.want_end = True
        if (self.provisional is not None or self.tail_asked or not self.total or not self.tail_bytes
                or self.replay.index.size <= self.tail_bytes):
            return None  # (a file this short is read in a moment: wait for the exact end)
        self.tail_asked = True
        return FoldTail(self.tail_bytes)

    def fold_tail(self, step: FoldTail) -> Tail | None:
        """The part a `FoldTail` asked for (any thread)."""
        return fold_tail(self.replay.index, step.max_bytes)

    def tail_arrived(self, tail: Tail | None) -> Frame | None:
        """Show the folded part, unless the end is no longer wanted (the user went elsewhere,
        or the exact end is known by now) or the part is the whole file (a file this short is
        read in a moment: the exact end follows)."""
        self.tail_asked = False
        if (tail is None or tail.whole or not self.want_end or self.complete
                or self.provisional is not None):
            return None
        self.provisional, self.view = tail, tail.view
        # No exact event is shown: a seek still folding from before is dropped on arrival.
        self.cursor = self.shown = -1
        self.at_end = False
        return Frame(-1, tail.view, None, tail)

    @property
    def provisional_label(self) -> str | None:
        """What the status line says while the view is provisional (None: it is exact)."""
        tail = self.provisional
        if tail is None:
            return None
        index = self.replay.index
        return tail_label(tail, index.end, index.size)

    @property
    def waiting(self) -> str:
        """Why keys that need the exact view wait, while the view is provisional."""
        index = self.replay.index
        percent = min(99, index.end * 100 // max(1, index.size))
        return (f"the end shown is provisional (read {percent}%): stepping, playing and the "
                "raw event wait until the whole journal is read; home goes to the start")

    # playing ---------------------------------------------------------------------------------
    def play(self, on: bool) -> float | None:
        """Start or stop playing from the cursor; the seconds to the first `play_tick`
        (`None`: nothing to play)."""
        self.playing = on and self.provisional is None
        delay = self._delay() if self.playing else None
        if delay is None:
            self.playing = False
        return delay

    def play_tick(self, pattern: re.Pattern[bytes] | None = None) -> tuple[Step, float | None]:
        """The next played event, and the seconds to the next tick (`None`: playing stopped,
        at the end of a finished journal). A followed journal keeps playing: at its end the
        tick comes back after `POLL` to look again."""
        if not self.playing:
            return None, None
        target = self.find(1, pattern)
        step = self.seek(target) if target is not None else None
        delay = self._delay(pattern)
        if delay is None:
            self.playing = False
        return step, delay

    def _delay(self, pattern: re.Pattern[bytes] | None = None) -> float | None:
        """Seconds between the cursor's event and the next one, as played."""
        after = self.find(1, pattern)
        if after is None:  # at the end: a followed journal is looked at again soon
            return POLL if self.follow and self.playing else None
        index = self.replay.index
        gap = MIN_STEP
        here, there = index.event(max(0, self.cursor)), index.event(after)
        if here is not None and there is not None:
            gap = min(max(0.0, there.ts - here.ts), IDLE_CAP)
        return max(MIN_STEP, gap / self.speed)
