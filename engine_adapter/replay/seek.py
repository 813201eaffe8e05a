"""Seeking in a journal: the run's view as of any position, folded from the nearest checkpoint.

`JournalReplay` pairs a `JournalIndex` with checkpoints. One pass reads the journal once from the
start, chunk by chunk, in one thread: each chunk's lines are indexed and folded together (the
fold parses each line once, and that also gives the index its codes; see `fold_lines`), and
copies of the fold's `RunView` are kept as checkpoints. The view after the first `k` positions is
the nearest checkpoint at or before `k`, copied, plus the lines up to `k` folded on the spot. It
is the same `RunFold` the live cockpit uses, so what replay shows at `k` is what the live view
showed after `k` events.

Checkpoints are cheap copies (`RunView.copy`: the rows are shared until a fold changes one), one
every `spacing` positions; the spacing is set from the file's size so that there are about
`max_checkpoints`, and when there are more (a growing file) every other one is dropped and the
spacing doubles. A "tail" checkpoint at the end of what the pass has folded makes jumping to the
end cheap even while a journal grows.

Threads: one thread runs the pass (`advance`, `settle`, `read_through`); any thread may call
`state_at()`. Checkpoints are never changed once stored.
"""

from __future__ import annotations

import bisect
import gc
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from engine_adapter.events import BaseEvent
from engine_adapter.journal import Chunk, JournalIndex
from engine_adapter.replay.fold_lines import OnChange, fold_chunk
from engine_adapter.view import MessageItem, RunFold, RunView

__all__ = ["JournalReplay"]

_STEP = 8 << 20  # the pass reads about this many bytes between two progress reports
_FREEZE_EVERY = 50_000  # the pass moves what it has built out of the GC's way this often
_TAIL_LAG = 1_000  # refresh the tail checkpoint once the pass is this far past it
_CHEAP_COPY_ITEMS = 5_000  # below this many transcript rows a view copies in a blink


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a chunk is folded: what the fold builds lives on (the pass
    freezes it, see `_FREEZE_EVERY`), so collections in the middle of a chunk only walk it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class JournalReplay:
    """A journal's views at any position. Position `k` means "after the first `k` lines"."""

    def __init__(self, path: str | os.PathLike[str], *, spacing: int = 1_000,
                 max_checkpoints: int = 32) -> None:
        self.index = JournalIndex(path)
        self.spacing = spacing
        self.max_checkpoints = max(2, max_checkpoints)
        self._positions: list[int] = [0]  # checkpoint positions, ascending
        self._views: list[RunView] = [RunView()]
        self._tail: tuple[int, RunView] | None = None
        self._fold = RunFold()  # the pass's own fold; only the pass thread touches it
        self.folded = 0  # positions the pass has folded
        self._joined = 0  # items whose streamed text the pass has joined
        self._next_freeze = _FREEZE_EVERY

    def close(self) -> None:
        """Close the journal file."""
        self.index.close()

    def __len__(self) -> int:
        return len(self.index)

    # the pass (one thread) -------------------------------------------------------------------
    def advance(self, *, max_bytes: int | None = None) -> int:
        """Index and fold what the file gained since the last call (at most about `max_bytes`
        of it), taking checkpoints. Returns how many positions were added."""
        index = self.index
        self._own_fold()
        self._fold_file(len(index))  # lines someone indexed without folding them
        before = len(index)
        index.scan(max_bytes=max_bytes, classify=self._fold_new)
        self._caught_up()
        return len(index) - before

    def settle(self) -> bool:
        """Decide about an unterminated last line once the writer has stopped (see
        `JournalIndex.settle`); a complete event there is folded too."""
        self._own_fold()
        self._fold_file(len(self.index))
        added = self.index.settle(classify=self._fold_new)
        if added:
            self._caught_up()
        return added

    def read_through(self, *, settle: bool = True, first_bytes: int | None = None,
                     progress: Callable[[], None] | None = None,
                     stop: threading.Event | None = None) -> bool:
        """Index and fold the whole file, calling `progress()` after each step (the first
        step reads only `first_bytes`, for a quick first view). With `settle`, the
        unterminated tail is decided too (leave it off for a file still being written).
        Returns False when `stop` was set before the end."""
        step = first_bytes or _STEP
        while stop is None or not stop.is_set():
            added = self.advance(max_bytes=step)
            step = _STEP
            if self.index.caught_up:
                if settle:
                    self.settle()
                if progress is not None:
                    progress()
                return True
            if added and progress is not None:
                progress()
        return False

    def follow(self, stop: threading.Event, grew: Callable[[], None], *,
               poll: float = 0.25) -> None:
        """Tail the file like `tail -f` until `stop` is set: look for more every `poll`
        seconds, index and fold what landed, and call `grew()`. An unterminated last line
        left alone for four looks is decided (`settle`), and `grew()` says so too."""
        quiet = 0
        while not stop.wait(poll):
            if self.advance():
                quiet = 0
                grew()
                continue
            quiet += 1
            if self.index.pending and quiet == 4:
                self.settle()
                grew()  # an event that only lacked its newline, or a torn tail to report

    def _own_fold(self) -> None:
        # The tail may be the pass's own view (kept without a copy when the pass caught up):
        # the pass goes on in a copy, so the stored tail never changes.
        if self._tail is not None and self._tail[1] is self._fold.view:
            self._fold = RunFold(view=self._fold.view.copy())

    def _fold_file(self, stop: int) -> None:
        """Fold positions `[folded, stop)` into the pass, reading them back from the file."""
        for chunk in self.index.chunks(self.folded, stop):
            self._fold_new(chunk)

    def _fold_new(self, chunk: Chunk) -> bytes:
        """Fold new lines into the pass (the index's `classify`), taking checkpoints on the
        way; returns their codes."""
        codes = bytearray(chunk.positions)
        self._space_checkpoints(chunk.first + len(codes), chunk.base + len(chunk.data))
        with _collector_paused():
            self._fold_parts(chunk, codes)
        return bytes(codes)

    def _fold_parts(self, chunk: Chunk, codes: bytearray) -> None:
        at = (0, chunk.first)
        while at[0] < len(chunk.parts):
            mark = min(self._positions[-1] + self.spacing, self._next_freeze)
            at = fold_chunk(self._fold, chunk, self.index, codes=codes, at=at, stop=mark)
            self.folded = at[1]
            if self.folded >= self._next_freeze:
                # What the pass builds lives as long as the viewer: keep the collector from
                # walking it again and again (full collections over millions of objects).
                self._join_messages()
                gc.freeze()
                self._next_freeze = self.folded + _FREEZE_EVERY
            if self.folded >= self._positions[-1] + self.spacing:
                self._checkpoint(self.folded)

    def _space_checkpoints(self, known: int, end: int) -> None:
        """Spread checkpoints over the whole file, guessing its length from the `known`
        positions in its first `end` bytes, rather than take many and thin them out."""
        guess = self.index.size * known // max(1, end)
        self.spacing = max(self.spacing, guess // self.max_checkpoints)

    def _caught_up(self) -> None:
        """At the end of what there is: keep a checkpoint there, unless one close enough exists
        and the view is big enough that copying it for every trickle of lines would show."""
        stop, tail, view = self.folded, self._tail, self._fold.view
        if stop < len(self.index) or not self.index.caught_up:
            return
        if tail is None:
            self._join_messages()
            self._tail = (stop, view)  # the first time: the view itself, no copy
        elif tail[0] < stop and (stop - tail[0] >= _TAIL_LAG
                                 or len(view.items) < _CHEAP_COPY_ITEMS):
            self._tail = (stop, self._snapshot())
        gc.freeze()

    def _snapshot(self) -> RunView:
        self._join_messages()
        return self._fold.view.copy()

    def _join_messages(self) -> None:
        # Join streamed deltas into one string per message before copying: the copies then
        # share that string instead of each holding a list of thousands of small ones.
        items = self._fold.view.items
        for i in range(max(0, self._joined - 1), len(items)):
            item = items[i]
            if isinstance(item, MessageItem):
                item.compact()
        self._joined = len(items)

    def _checkpoint(self, position: int) -> None:
        self._positions.append(position)
        self._views.append(self._snapshot())
        if len(self._positions) > self.max_checkpoints:
            # Too many: keep the first, the newest and every other one in between, and space
            # them twice as far.
            keep = sorted({0, *range(len(self._positions) - 1, 0, -2)})
            self._positions = [self._positions[i] for i in keep]
            self._views = [self._views[i] for i in keep]
            self.spacing *= 2

    # seeking (any thread) --------------------------------------------------------------------
    def nearest(self, position: int) -> tuple[int, RunView]:
        """The stored checkpoint closest at or before `position` (not copied: do not fold it)."""
        tail = self._tail
        best = tail if tail is not None and tail[0] <= position else (0, self._views[0])
        positions, views = self._positions, self._views
        i = bisect.bisect_right(positions, position) - 1
        if i >= 0 and i < len(views) and positions[i] > best[0]:
            best = (positions[i], views[i])
        return best

    def state_at(self, position: int, *, start: tuple[int, RunView] | None = None,
                 share: bool = False) -> RunView:
        """A fresh view after the first `position` lines. `start` may offer a view the caller
        owns and no longer needs, at a position at or before `position`; it is folded forward
        in place when that is cheaper than starting from a checkpoint. With `share`, a stored
        checkpoint exactly at `position` is returned itself, not copied: the caller must not
        fold into it (see `is_stored`)."""
        position = max(0, min(position, len(self.index)))
        base_position, base = self.nearest(position)
        if share and base_position == position and (start is None or start[0] != position):
            return base
        if start is not None and base_position <= start[0] <= position:
            view = start[1]
            base_position = start[0]
        else:
            view = base.copy()
        self.fold_into(view, base_position, position)
        return view

    def fold_into(self, view: RunView, start: int, stop: int,
                  on_change: OnChange | None = None) -> RunView:
        """Fold lines `[start, stop)` into `view` (in place); `on_change(position, change)` is
        told what each event changed (once for a stream folded in one step)."""
        fold = RunFold(view=view)
        for chunk in self.index.chunks(start, stop):
            fold_chunk(fold, chunk, self.index, on_change=on_change)
        return view

    def event_with_seq(self, seq: int, before: int | None = None) -> BaseEvent | None:
        """The event stamped `seq` among the first `before` lines (all, without it): the one at
        position `seq` in a clean single-session journal, else found by bisection over the
        seqs (a corrupt or blank line shifts positions). None when it cannot be found."""
        index = self.index
        stop = len(index) if before is None else min(before, len(index))

        def seq_at(position: int) -> tuple[int, BaseEvent | None]:
            # The first event at or after `position` (corrupt lines have none).
            while position < stop:
                event = index.event(position)
                if event is not None:
                    return position, event
                position += 1
            return position, None

        if 0 <= seq < stop:
            event = index.event(seq)
            if event is not None and event.seq == seq:
                return event
        low, high = 0, stop
        while low < high:  # seqs only grow within a session
            middle = (low + high) // 2
            position, event = seq_at(middle)
            if event is None or event.seq >= seq:
                if event is not None and event.seq == seq:
                    return event
                high = middle
            else:
                low = position + 1
        return None

    def is_stored(self, view: RunView) -> bool:
        """Whether `view` is a stored checkpoint (shared: copy it before folding into it)."""
        tail = self._tail
        return (tail is not None and tail[1] is view) or any(v is view for v in self._views)

    @property
    def checkpoints(self) -> list[int]:
        """Positions of the stored checkpoints (and the tail), for tests and the benchmark."""
        tail = [self._tail[0]] if self._tail is not None else []
        return [*self._positions, *tail]
