"""`SessionCancelToken`: the cancel token a Session hands its engine (awaitable, with callbacks)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["SessionCancelToken"]

log = logging.getLogger(__name__)


class SessionCancelToken:
    """The cancel token a Session hands its engine: a `runner.WatchableCancelToken`.

    Besides `cancelled` and `reason`, an engine may `await token.wait()` or register
    `on_cancel(callback)` to stop work at once (a child process, say) rather than at its next
    boundary.
    """

    def __init__(self) -> None:
        self.cancelled = False
        self.reason: str | None = None
        self._callbacks: list[Callable[[], Any]] = []
        self._event: asyncio.Event | None = None

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call `callback()` when the token trips (at once if it already has). Returns a function
        that unregisters it."""
        if self.cancelled:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> None:
        """Return once the token has tripped."""
        if self.cancelled:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def trip(self, reason: str) -> None:
        """Trip the token (first reason wins) and run the callbacks; a failing callback is
        logged, never raised into the caller."""
        if self.cancelled:
            return
        self.cancelled, self.reason = True, reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("cancel callback failed")
