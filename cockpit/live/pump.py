"""The frame pump: fold events as they come, hand the widgets what changed at most once a frame.

Events are folded in order from an indexable source (`Session.history`, or a journal's events);
a stream (`Session.events()`) is used only as the wake-up that says more have arrived. Whatever
arrives between two frames is delivered as one `ChangeSet`, so 5,000 events a second cost sixty
redraws, not five thousand. `flush()` delivers at once: after a key press the app flushes so the
answer it caused is on the next frame. `hold()` keeps timed deliveries back while a key is being
answered (its frame is drawn without the stream's work queued in front of it); `release()`
delivers what waited. Only delivery waits: every event is folded, in order, all the same.

Keys first: Textual draws on a fixed grid (`TEXTUAL_FPS`: 60 a second unless told, 120 in the
cockpit, `cockpit.FRAME_CAP`), and a frame drawn for the stream keeps the next one back one to two
periods of it — for a key pressed just after it too (measured at 60: key->frame p95 3-4x the
idle one while a reply streamed). So
`answered()` (the key's action has run) delivers what waited (its transcript rows are drawn the
frame after the key's: `cockpit.live.answer_first`), and the streamed text that follows waits for
the next key, at most `KEY_SECONDS`: while keys keep coming, the stream is drawn just after their
frames and none of theirs waits behind one of its. Only text waits
(`KEY_WAITS`: a reply growing in a row already shown); any other event (a tool call, an
approval, the end) is delivered on the next frame as always.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from engine_adapter.view import ChangeSet, RunFold, RunView

__all__ = ["FRAME_SECONDS", "HOLD_SECONDS", "KEY_SECONDS", "KEY_WAITS", "FramePump"]

FRAME_SECONDS = 1 / 60
HOLD_SECONDS = 0.05  # the longest a key's frame keeps the stream's deliveries back
KEY_SECONDS = 0.1  # after an answered key, the stream waits this long for the next key's frame
KEY_WAITS = frozenset({"model_update"})  # the events that may wait for the next key's frame


class FramePump:
    """Folds events from `source` into `fold` and calls `deliver(view, changes)` once a frame.

    Args:
        fold: The one fold (the view's only owner).
        deliver: Called with the view and a non-empty `ChangeSet`.
        interval: Seconds between deliveries while events keep coming.
    """

    def __init__(self, fold: RunFold, deliver: Callable[[RunView, ChangeSet], Any], *,
                 interval: float = FRAME_SECONDS, freeze_every: int | None = 2_000) -> None:
        self.fold = fold
        self.deliver = deliver
        self.interval = interval
        # A long run keeps every event (the session's history) alive. A full garbage
        # collection walks all of them — measured: pauses growing past 250 ms by 50k events,
        # a visibly frozen screen. `gc.freeze()` every few thousand events moves what exists
        # into the permanent generation, so collections only walk what is new.
        self.freeze_every = freeze_every
        self._since_freeze = 0
        self._source: Sequence[Any] = ()
        self._position = 0
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._held_until = 0.0  # loop time until which timed deliveries wait (`hold`)
        self._keys_until = 0.0  # the same after an answered key, for the next one (`answered`)

    def attach(self, source: Sequence[Any], *, earlier: Sequence[Sequence[Any]] = ()) -> None:
        """Fold from `source` (a new task's history) from its first event on. `earlier`: the
        whole histories of the conversation's tasks before it (an attached run's, read from
        its host), folded first, in order; then all of it is delivered at once, as one frame
        (no end of an earlier task is shown, or alerted, on its own)."""
        self.flush()
        self._source = source
        self._position = 0
        if earlier:
            changes = ChangeSet()
            apply, add = self.fold.apply, changes.add
            for history in earlier:
                for event in history:
                    add(*apply(event))
                self._since_freeze += len(history)
            if self.pull(changes):
                self.deliver(self.fold.view, changes)
        if self.freeze_every is not None:
            gc.freeze()  # what exists now (the app, its widgets) lives as long as the run

    def pull(self, changes: ChangeSet) -> ChangeSet:
        """Fold every event not folded yet into `changes`."""
        source = self._source
        end = len(source)
        if self._position < end:
            apply = self.fold.apply
            add = changes.add
            for event in source[self._position:end]:
                add(*apply(event))
            self._since_freeze += end - self._position
            self._position = end
        return changes

    def _freeze_if_due(self) -> None:
        if self.freeze_every is not None and self._since_freeze >= self.freeze_every:
            self._since_freeze = 0
            gc.collect()  # garbage first, or frozen it would stay; walks only the unfrozen
            gc.freeze()

    def flush(self) -> None:
        """Fold what has arrived and deliver it now."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        changes = self.pull(ChangeSet())
        if changes:
            self.deliver(self.fold.view, changes)

    def request(self) -> None:
        """Ask for a delivery within a frame (one is scheduled at most)."""
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(self.interval, self._due)

    def hold(self, seconds: float = HOLD_SECONDS) -> None:
        """Keep timed deliveries back for at least `seconds` more (until `release()`): a key is
        being answered, and its frame should not wait behind the stream's."""
        self._held_until = max(self._held_until, asyncio.get_running_loop().time() + seconds)

    def answered(self) -> None:
        """A key's action has run: what waited is delivered now (its transcript rows are drawn
        the frame after the key's: `cockpit.live.answer_first`), and streamed text waits
        `KEY_SECONDS` for the next key (see the module); the key's own `hold()` ends, and
        `release()` does not end the wait for the next key."""
        self._held_until = 0.0
        self.flush()
        self._keys_until = asyncio.get_running_loop().time() + KEY_SECONDS

    def release(self) -> None:
        """End a `hold()`: what waited is delivered now (or when the wait after an answered
        key ends)."""
        if not self._held_until:
            return
        self._held_until = 0.0
        if self._handle is not None:  # a delivery was due or is scheduled: make it now
            self._handle.cancel()
            self._handle = asyncio.get_running_loop().call_soon(self._due)

    def _due(self) -> None:
        self._handle = None
        if self._held_until or self._keys_until:
            loop = asyncio.get_running_loop()
            now = loop.time()
            if now < self._held_until:
                self._handle = loop.call_at(self._held_until, self._due)
                return
            if now < self._keys_until and self._only_text_waits():
                # Looked at again each frame: anything but text is delivered on the next one.
                self._handle = loop.call_at(min(self._keys_until, now + self.interval),
                                            self._due)
                return
            self._held_until = self._keys_until = 0.0
        self.flush()
        # Here, never in a `flush()` a key asked for: the collection stalls the loop (tens of
        # ms on a busy machine, bench_ui), and the answer to a key must not wait for it.
        self._freeze_if_due()

    def _only_text_waits(self) -> bool:
        """Whether every event not folded yet is one that may wait for a key (`KEY_WAITS`)."""
        source = self._source
        return all(source[i].type in KEY_WAITS for i in range(self._position, len(source)))

    async def follow(self, stream: AsyncIterator[Any]) -> None:
        """Wake on each event of `stream` until it ends, then deliver the rest."""
        async for _ in stream:
            if self._handle is None:
                self.request()
        self.flush()
        self._freeze_if_due()

    def close(self) -> None:
        """Stop any scheduled delivery; hand frozen objects back to the collector."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self.freeze_every is not None:
            gc.unfreeze()  # what died while frozen can now be collected
