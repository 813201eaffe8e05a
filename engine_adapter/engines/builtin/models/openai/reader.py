"""The model's own I/O thread: an event loop in a daemon thread where the SDK client makes its
requests and reads and parses the streams, so the caller's event loop (the cockpit's screen)
only receives what was parsed, in batches.

Reading a streamed reply costs the SDK, httpx and the JSON decoder about a fifth of a core at
a few hundred chunks a second (measured: ~1 s of a 4.5 s reply); on the screen's loop that is
time a key's answer waits behind. Here the I/O loop does it, and hands over whatever was parsed
since the caller last looked: one wake-up for a batch, however many chunks it holds.

`ModelIO.run(coro)` runs a coroutine on the I/O loop and awaits its result from the caller's
loop; `ModelIO.stream(produce)` runs `produce(put)` there and yields the lists it `put`s, joined
while the caller was busy. A cancel on the caller's side (the run's cancel, a closed generator)
cancels the I/O side's task at once, so a stream is closed mid-read. One thread serves every
model of the process (`shared_io()`); it lives as long as the process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Generic, TypeVar

__all__ = ["ModelIO", "shared_io"]

T = TypeVar("T")


class _Handover(Generic[T]):
    """Items put on the I/O thread, taken in batches on the caller's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._items: list[T] = []
        self._finished = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None  # the caller waits on it, when empty

    def put(self, items: list[T]) -> None:
        """(I/O thread) Add items; wake the caller if it waits."""
        with self._lock:
            self._items += items
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            self._loop.call_soon_threadsafe(_wake, waiter)

    def finish(self, error: BaseException | None = None) -> None:
        """(I/O thread) No more items; `error` is raised on the caller's side after them."""
        with self._lock:
            self._finished, self._error = True, error
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            self._loop.call_soon_threadsafe(_wake, waiter)

    async def batches(self) -> AsyncIterator[list[T]]:
        """(caller's loop) Everything put since the last batch, until finished."""
        while True:
            with self._lock:
                items, self._items = self._items, []
                finished, error = self._finished, self._error
                if not items and not finished:
                    waiter = self._waiter = self._loop.create_future()
            if items:
                yield items
            elif finished:
                if error is not None:
                    raise error
                return
            else:
                await waiter


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class ModelIO:
    """An event loop in a daemon thread (started on first use) for a model's network I/O."""

    def __init__(self, name: str = "model-io") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The I/O loop (its thread is started the first time)."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name=self.name, daemon=True).start()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coro` on the I/O loop (from any thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """`coro`'s result, run on the I/O loop; cancelling the caller cancels it there."""
        return await asyncio.wrap_future(self.submit(coro))

    async def stream(self, produce: Callable[[Callable[[list[T]], None]], Coroutine[Any, Any,
                                                                                    None]]
                     ) -> AsyncIterator[list[T]]:
        """Run `produce(put)` on the I/O loop and yield what it puts, in batches (all it put
        while the caller was busy). Its exception is raised here after the items before it;
        closing or cancelling this generator cancels `produce` at once."""
        handover: _Handover[T] = _Handover(asyncio.get_running_loop())

        async def producing() -> None:
            try:
                await produce(handover.put)
            except BaseException as exc:  # handed to the caller, who raises it
                handover.finish(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
            else:
                handover.finish()

        task = self.submit(producing())
        try:
            async for batch in handover.batches():
                yield batch
        finally:
            task.cancel()  # a no-op when it ended; else the stream is closed where it reads


_SHARED = ModelIO()


def shared_io() -> ModelIO:
    """The process's one model I/O thread."""
    return _SHARED
