"""Fan-out as cursors over one append-only log.

The log is the run's history. Each subscriber is an index into it plus a shared wake-up: appending
is O(1) whatever the number of subscribers, never awaits and copies nothing, and a subscriber that
never reads only leaves its own cursor behind. (Per-subscriber queues are what this avoids: with
back-pressure they block the run, without it they drop events.)

The log stores items in a compact form (the Session stores each event as its journal line:
bytes, which the garbage collector never walks) and hands out decoded items. The most recent
decoded items are kept, so readers that keep up share one object and never decode; only a
reader far behind pays for decoding.

With `pack=True` (stored forms are bytes), items older than the decoded window are packed
`CHUNK` at a time into one compressed block: a long run (a host holds several, 100k events
each) keeps a tenth of its lines' size, and only a reader that far behind unpacks a block.
"""

from __future__ import annotations

import asyncio
import threading
import zlib
from array import array
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

__all__ = ["CHUNK", "EventLog"]

T = TypeVar("T")

CHUNK = 1024
"""Items packed together into one compressed block (`pack=True`)."""


_END = array("I").itemsize


def _pack(lines: Sequence[bytes]) -> bytearray:
    """`CHUNK` lines as one block: where each ends, then all of them compressed. A bytearray,
    so it tells itself from a line (bytes) and, like a line, is never walked by the collector."""
    ends, end = array("I"), 0
    for line in lines:
        end += len(line)
        ends.append(end)
    return bytearray(ends.tobytes() + zlib.compress(b"".join(lines), 1))  # level 1: emit path


class EventLog(Sequence[T], Generic[T]):
    """An append-only, indexable log that any number of async readers follow at their own pace.

    `append` may be called from the event loop or from another thread; readers run on an event
    loop. A reader's stream ends after it has yielded an item for which `is_last(item)` holds, or,
    once the log is `close()`d, after the last item.
    """

    def __init__(self, decode: Callable[[Any], T], *, window: int = 4096,
                 pack: bool = False) -> None:
        self._items: list[Any] = []  # the stored (compact) forms, or the packed block of each
        self._decode = decode
        self._window = window
        self._pack = pack
        self._packed = 0  # items packed so far: a multiple of CHUNK
        self._unpacked: tuple[bytearray, array[int], bytes] | None = None  # the last block read
        # A ring of (index, decoded item): slot `index % window`. O(1), no dict churn.
        self._recent: list[tuple[int, T] | None] = [None] * window
        self._closed = False
        # One future shared by every reader that is waiting: appending wakes them all at once.
        self._wakeup: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None

    # Sequence protocol ---------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self._get(i) for i in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
            if index < 0:
                raise IndexError("log index out of range")
        return self._get(index)

    def __iter__(self) -> Iterator[T]:  # what the log holds now
        return (self._get(i) for i in range(len(self._items)))

    def _get(self, index: int) -> T:
        slot = self._recent[index % self._window]
        if slot is not None and slot[0] == index:
            return slot[1]
        stored = self._items[index]
        if type(stored) is bytearray:
            stored = self._line(stored, index)
        item = self._decode(stored)
        if index >= len(self._items) - self._window:
            self._remember(index, item)  # a reader far behind must not evict the newest
        return item

    def _line(self, block: bytearray, index: int) -> bytes:
        unpacked = self._unpacked
        if unpacked is None or unpacked[0] is not block:
            ends = array("I")
            ends.frombytes(block[:CHUNK * _END])
            unpacked = self._unpacked = (block, ends, zlib.decompress(block[CHUNK * _END:]))
        _block, ends, text = unpacked
        at = index % CHUNK  # blocks start at multiples of CHUNK
        return text[ends[at - 1] if at else 0:ends[at]]

    def _pack_oldest(self) -> None:
        """Pack the oldest unpacked `CHUNK` items once they are all behind the decoded window:
        each slot then refers to the block (a reader sees the line or the block, either reads)."""
        items, start = self._items, self._packed
        lines = items[start:start + CHUNK]
        if not all(type(line) is bytes for line in lines):
            self._pack = False  # not lines: kept as they are
            return
        block = _pack(lines)
        for index in range(start, start + CHUNK):
            items[index] = block
        self._packed = start + CHUNK

    def _remember(self, index: int, item: T) -> None:
        self._recent[index % self._window] = (index, item)

    def shed(self) -> None:
        """Forget the decoded items kept for readers that keep up (a log nobody follows closely
        any more: an ended run a host still lists), and pack what can be: every later read
        decodes from the stored forms, as a reader far behind does. Reads stay correct; only
        their cost changes."""
        self._recent = [None] * self._window
        self._unpacked = None
        while self._pack and len(self._items) >= self._packed + CHUNK:
            self._pack_oldest()

    @property
    def closed(self) -> bool:
        """Whether no more items will be appended."""
        return self._closed

    # Writing -----------------------------------------------------------------------------------
    def append(self, item: Any, decoded: T | None = None) -> None:
        """Add one item in its stored form and wake waiting readers. O(1); never blocks.

        `decoded`, when given, is what decoding `item` would give: readers get that very
        object instead of decoding it."""
        items = self._items
        if decoded is not None:  # (inlined `_remember`: this is every event's path)
            index = len(items)
            self._recent[index % self._window] = (index, decoded)
        items.append(item)
        if self._pack and len(items) >= self._packed + CHUNK + self._window:
            self._pack_oldest()
        if self._wakeup is not None:
            self._wake()

    def close(self) -> None:
        """Mark the log complete; readers end once they have read everything."""
        self._closed = True
        if self._wakeup is not None:
            self._wake()

    def _wake(self) -> None:
        waiter, loop = self._wakeup, self._loop
        self._wakeup = None
        if waiter is None or loop is None:
            return
        if threading.get_ident() == self._thread:
            if not waiter.done():
                waiter.set_result(None)
        else:
            loop.call_soon_threadsafe(_settle, waiter)

    # Reading -----------------------------------------------------------------------------------
    def cursor(self, start: int = 0,
               is_last: Callable[[T], bool] | None = None) -> AsyncIterator[T]:
        """A new independent stream from index `start`. The position is fixed now, at call
        time, so a reader created before the first append sees every item."""
        return self._follow(start, is_last)

    async def _follow(self, position: int,
                      is_last: Callable[[T], bool] | None) -> AsyncIterator[T]:
        items, get = self._items, self._get
        while True:
            if position < len(items):
                item = get(position)
                position += 1
                yield item
                if is_last is not None and is_last(item):
                    return
            elif self._closed:
                return
            else:
                await self._wait(position)

    async def _wait(self, position: int) -> None:
        waiter = self._wakeup
        if waiter is None:
            loop = asyncio.get_running_loop()
            self._loop, self._thread = loop, threading.get_ident()
            waiter = self._wakeup = loop.create_future()
            # Re-check after publishing the waiter: an append from another thread in between
            # either saw the waiter (and wakes it) or is visible here.
            if position < len(self._items) or self._closed:
                return
        await asyncio.shield(waiter)


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
