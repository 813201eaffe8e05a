"""Fan-out as cursors over one append-only log.

The log is the run's history. Each subscriber is an index into it plus a shared wake-up: appending
is O(1) whatever the number of subscribers, never awaits and copies nothing, and a subscriber that
never reads only leaves its own cursor behind. (Per-subscriber queues are what this avoids: with
back-pressure they block the run, without it they drop events.)

The log stores items in a compact form (the Session stores each event as its journal line:
bytes, which the garbage collector never walks) and hands out decoded items. The most recent
decoded items are kept, so readers that keep up share one object and never decode; only a
reader far behind pays for decoding.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

__all__ = ["EventLog"]

T = TypeVar("T")


class EventLog(Sequence[T], Generic[T]):
    """An append-only, indexable log that any number of async readers follow at their own pace.

    `append` may be called from the event loop or from another thread; readers run on an event
    loop. A reader's stream ends after it has yielded an item for which `is_last(item)` holds, or,
    once the log is `close()`d, after the last item.
    """

    def __init__(self, decode: Callable[[Any], T], *, window: int = 4096) -> None:
        self._items: list[Any] = []  # the stored (compact) forms
        self._decode = decode
        self._window = window
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
        item = self._decode(self._items[index])
        if index >= len(self._items) - self._window:
            self._remember(index, item)  # a reader far behind must not evict the newest
        return item

    def _remember(self, index: int, item: T) -> None:
        self._recent[index % self._window] = (index, item)

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
