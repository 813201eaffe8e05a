"""Seeking in a journal: the run's view as of any position, folded from the nearest checkpoint.

`JournalReplay` pairs a `JournalIndex` with checkpoints: copies of the fold's `RunView` taken as a
background pass folds the journal once from the start. The view after the first `k` positions is
the nearest checkpoint at or before `k`, copied, plus the lines up to `k` parsed and folded on the
spot. It is the same `RunFold` the live cockpit uses, so what replay shows at `k` is what the live
view showed after `k` events.

Checkpoints are copy-on-write copies (`RunView.copy`: the rows are shared until the fold changes
one), so taking one costs pointers, not a copy of every row. Still there are few: one every
`spacing` positions, and when there are more than `max_checkpoints` every other one is dropped
and the spacing doubles. Seeking then folds at most `spacing` lines, however long the journal. A
"tail" checkpoint at the end of what the pass has folded makes jumping to the end cheap even
while a journal grows.

Most of a long journal is streamed text: runs of `model_update` lines that the index hints
continue one another (`STREAM`). Such a run is folded in one step (`RunFold.apply_stream`), its
text left in the file as a `JournalText` that is read only when a row is drawn.

Threads: one thread runs `advance()` (the pass; it also scans the file for new lines); any thread
may call `state_at()`. Checkpoints are never mutated once stored.
"""

from __future__ import annotations

import bisect
import gc
import os
import re
import threading
from collections.abc import Callable

from .events import BaseEvent
from .fold import Change, DeferredText, RunFold, RunView
from .journal_index import STREAM, TYPE_CODES, TYPE_MASK, VALIDATORS, JournalIndex

__all__ = ["JournalReplay"]

_FREEZE_EVERY = 50_000  # the pass moves what it has built out of the GC's way this often
_TAIL_LAG = 1_000  # refresh the tail checkpoint once the pass is this far past it
_CHEAP_COPY_ITEMS = 5_000  # below this many transcript rows a view copies in milliseconds
_STREAM_RUN = 4  # this many `model_update` lines of one stream are folded in one step
_UPDATE = TYPE_CODES["model_update"]
# A model_update line, then lines the index says continue its stream (see `STREAM`).
_STREAMS = re.compile(b"[" + re.escape(bytes([_UPDATE, _UPDATE | STREAM])) + b"]"
                      + re.escape(bytes([_UPDATE | STREAM])) + b"{%d,}" % (_STREAM_RUN - 1))

OnChange = Callable[[int, Change], None]


class JournalReplay:
    """A journal's views at any position. Position `k` means "after the first `k` lines"."""

    def __init__(self, path: str | os.PathLike[str], *, spacing: int = 1_000,
                 max_checkpoints: int = 4) -> None:
        self.index = JournalIndex(path)
        self.spacing = spacing
        self.max_checkpoints = max(2, max_checkpoints)
        self._positions: list[int] = [0]  # checkpoint positions, ascending
        self._views: list[RunView] = [RunView()]
        self._tail: tuple[int, RunView] | None = None
        self._fold = RunFold()  # the pass's own fold; only the pass thread touches it
        self.folded = 0  # positions the pass has folded
        self._joined = 0  # items whose streamed text the pass has joined
        self._changed = threading.Condition()

    def close(self) -> None:
        """Close the journal file."""
        self.index.close()

    def __len__(self) -> int:
        return len(self.index)

    # the pass (one thread) -------------------------------------------------------------------
    def advance(self, *, max_positions: int | None = None, scan: bool = True) -> int:
        """Scan the file for new lines (unless `scan` is false) and fold what the pass has not
        folded yet (at most `max_positions`), taking checkpoints. Returns positions folded."""
        index = self.index
        if scan:
            index.scan()
        stop = len(index)
        if max_positions is not None:
            stop = min(stop, self.folded + max_positions)
        start = self.folded
        if stop <= start:
            return 0
        fold = self._fold
        if self._tail is not None and self._tail[1] is fold.view:
            # The tail is the pass's own view (saved a copy at the end of the first pass): the
            # pass continues on a copy, so the stored tail never changes.
            fold = self._fold = RunFold(view=fold.view.copy())
        # Spread the checkpoints over what is known now, rather than take many and thin them.
        self.spacing = max(self.spacing, (stop - self._positions[-1]) // self.max_checkpoints)
        # The next on the grid, never behind what is folded (the spacing may have grown).
        next_checkpoint = max(self._positions[-1] + self.spacing, start + 1)
        next_freeze = start + _FREEZE_EVERY
        position = start
        while position < stop:
            mark = min(next_checkpoint, next_freeze, stop)
            self._fold_lines(fold, position, mark)
            position = mark
            if position < next_checkpoint and position < next_freeze:
                break  # the end of what there is to fold
            # What the pass has built lives as long as the viewer: keep the collector from
            # walking it again and again (full collections over millions of objects).
            self._join_messages()  # one string per finished message, not thousands
            gc.freeze()
            next_freeze = position + _FREEZE_EVERY
            if position == next_checkpoint:
                self._checkpoint(position)
                next_checkpoint = position + self.spacing
                with self._changed:
                    self.folded = position
                    self._changed.notify_all()
        with self._changed:
            self.folded = stop
            tail = self._tail
            # Caught up: keep a checkpoint at the end, unless one close enough exists and the
            # view is big enough that copying it for every trickle of new lines would show.
            if stop == len(index) and tail is None:
                self._join_messages()
                self._tail = (stop, fold.view)  # the first time: the view itself, no copy
            elif stop == len(index) and (stop - tail[0] >= _TAIL_LAG or (
                    tail[0] < stop and len(fold.view.items) < _CHEAP_COPY_ITEMS)):
                self._tail = (stop, self._snapshot())
            self._changed.notify_all()
        gc.freeze()
        return stop - start

    def _snapshot(self) -> RunView:
        self._join_messages()
        return self._fold.view.copy()

    def _join_messages(self) -> None:
        # Join streamed deltas into one string per message before copying: the copies then
        # share that string instead of each holding a list of thousands of small ones.
        items = self._fold.view.items
        for i in range(max(0, self._joined - 1), len(items)):
            if items[i].kind == "message":
                items[i].compact()  # type: ignore[attr-defined]
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

    def read_through(self, *, settle: bool = True, helper_min_bytes: int = 32 << 20,
                     batch: int = 100_000, progress: Callable[[], None] | None = None,
                     indexed: Callable[[], None] | None = None,
                     stop: threading.Event | None = None) -> bool:
        """Index the whole file and fold it once, side by side: a thread indexes (a big file
        in a helper process, on another core: `JournalIndex.scan_with_helper`) while this one
        folds what is indexed, `batch` lines at a time, calling `progress()` after each.
        `indexed()` is called from the indexing thread once the index is complete (with
        `settle`, the unterminated tail decided too; leave it off for a file still written).
        Returns False when `stop` was set (the helper is stopped, the thread waited for). An
        error while indexing is raised here, once the thread has ended."""
        index = self.index
        grew = threading.Event()
        failure: list[Exception] = []

        def scan() -> None:
            try:
                index.scan_with_helper(min_bytes=helper_min_bytes, progress=grew.set)
                if settle:
                    index.settle()
                if indexed is not None:
                    indexed()
            except Exception as exc:  # raised in the caller's thread below
                failure.append(exc)
            finally:
                grew.set()

        scanning = threading.Thread(target=scan, daemon=True, name="journal-index")
        scanning.start()
        try:
            while stop is None or not stop.is_set():
                done = not scanning.is_alive()
                if self.advance(scan=False, max_positions=batch):
                    if progress is not None:
                        progress()
                elif done:
                    break
                else:
                    grew.wait(0.1)
                    grew.clear()
        finally:
            if stop is not None and stop.is_set():
                index.stop_helper()
            scanning.join()
        if failure:
            raise failure[0]
        return stop is None or not stop.is_set()

    def wait_folded(self, position: int, timeout: float | None = None) -> bool:
        """Block until the pass has folded `position` lines (for a seek beyond it)."""
        with self._changed:
            return self._changed.wait_for(lambda: self.folded >= position, timeout)

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
        self._fold_lines(RunFold(view=view), start, stop, on_change)
        return view

    def _fold_lines(self, fold: RunFold, start: int, stop: int,
                    on_change: OnChange | None = None) -> None:
        """Fold lines `[start, stop)`: each event parsed and applied, except runs of streamed
        text, which are folded in one step with their text left in the journal."""
        index = self.index
        each = self._fold_each
        for first, end, data, base in index.blocks(start, stop):
            block = (end, data, base)
            position = first
            for run in _STREAMS.finditer(index.codes[first:end].tobytes()):
                a, b = first + run.start(), first + run.end()
                each(fold, position, a, block, on_change)
                self._fold_streams(fold, a, b, block, on_change)
                position = b
            each(fold, position, end, block, on_change)

    def _fold_each(self, fold: RunFold, lo: int, hi: int, block: tuple[int, bytes, int],
                   on_change: OnChange | None) -> None:
        """Parse and fold lines `[lo, hi)` one by one (`block`: see `_fold_stream`)."""
        end, data, base = block
        index = self.index
        apply, parse, offsets, codes = fold.apply, index.parse, index.offsets, index.codes
        validators = VALIDATORS
        for p in range(lo, hi):
            raw = data[offsets[p] - base:offsets[p + 1] - base if p + 1 < end else None]
            try:  # `index.parse`, its common case inlined (this is the hottest loop of replay)
                event = validators[codes[p] & TYPE_MASK](raw)
            except (KeyError, ValueError):
                event = parse(p, raw)
            if event is not None:
                change = apply(event)
                if on_change is not None:
                    on_change(p, change)

    def _fold_streams(self, fold: RunFold, a: int, b: int, block: tuple[int, bytes, int],
                      on_change: OnChange | None) -> None:
        """Fold the `model_update` lines `[a, b)` of one channel: in one step, else (another
        turn, a gap in the seqs) each half the same way."""
        if b - a < _STREAM_RUN:
            self._fold_each(fold, a, b, block, on_change)
        elif not self._fold_stream(fold, a, b, block, on_change):
            middle = (a + b) // 2
            self._fold_streams(fold, a, middle, block, on_change)
            self._fold_streams(fold, middle, b, block, on_change)

    def _fold_stream(self, fold: RunFold, a: int, b: int, block: tuple[int, bytes, int],
                     on_change: OnChange | None) -> bool:
        """Fold the `model_update` lines `[a, b)`, which the index says continue one another
        (one event a line, one channel: see `STREAM`), in one step, if they share a turn and
        their seqs run without a gap (a byte count checks the turn of the lines between).
        `block` is `(end, data, base)`: `data` holds the lines up to `end` and starts at file
        offset `base`. Returns False (nothing folded) otherwise.

        Only the outer two lines are parsed. What the index's byte counts cannot see: the
        seqs between, taken to run on as a Session stamps them, and a line of the right shape
        that fails validation; that one is found, and marked corrupt, when the text is read."""
        end, data, base = block
        index, offsets = self.index, self.index.offsets
        stop = offsets[b] - base if b < end else len(data)
        head = data[offsets[a] - base:offsets[a + 1] - base]
        tail = data[offsets[b - 1] - base:stop]
        first, last = index.parse(a, head), index.parse(b - 1, tail)
        count = b - a
        if (first is None or last is None or first.type != "model_update"
                or last.type != "model_update" or last.seq - first.seq != count - 1
                or last.turn != first.turn or last.channel != first.channel):  # type: ignore
            return False
        turn = first.turn  # type: ignore[attr-defined]
        turn_mark = b',"turn":%s,"text":"' % (b"null" if turn is None else b"%d" % turn)
        lo, hi = offsets[a + 1] - base, offsets[b - 1] - base  # the lines between, in place
        if data.count(turn_mark, lo, hi) != count - 2:
            return False
        # A size for layout until the text is read: the outer two lines stand for the rest.
        first_text, last_text = first.text, last.text  # type: ignore[attr-defined]
        overhead = (len(head) + len(tail) - len(first_text.encode())
                    - len(last_text.encode())) / 2
        newlines = (first_text.count("\n") + last_text.count("\n")) * count // 2
        size = stop - (offsets[a] - base)
        text = JournalText(index, a, b, max(0, int(size - count * overhead)), newlines)
        change = fold.apply_stream(first, last, count, text)
        if on_change is not None:
            on_change(b - 1, change)
        return True

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


class JournalText(DeferredText):
    """The joined text of the `model_update` lines `[start, stop)` of a journal, read from the
    file when first wanted (a long run's streamed text is most of its journal: replay keeps
    only where it is)."""

    __slots__ = ("index", "start", "stop")

    def __init__(self, index: JournalIndex, start: int, stop: int, chars: int,
                 newlines: int) -> None:
        super().__init__(chars, newlines)
        self.index, self.start, self.stop = index, start, stop

    def __str__(self) -> str:
        parse = self.index.parse
        texts = []
        for position, raw in self.index.raw_lines(self.start, self.stop):
            event = parse(position, raw)
            if event is not None and event.type == "model_update":
                texts.append(event.text)  # type: ignore[attr-defined]
        return "".join(texts)
