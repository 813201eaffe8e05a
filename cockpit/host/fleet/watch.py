"""`HostWatch`: one host's fleet, followed for the fleet view — its rows as the host pushes
them (`watch`), or why it cannot be reached, since when, and when it is tried again; and the
answers the view sends to it.

A host that cannot be reached is tried again after a pause that doubles from `FIRST_PAUSE`
up to `MAX_PAUSE` (a `--via` command starts a process a try: an ssh to a machine that is off
must not be started every few seconds for as long as the view is open), and from the first
pause again once it was reached. This machine's host costs a connect on a local socket a try:
its pauses stop at `LOCAL_MAX_PAUSE`, so a host started in another terminal shows soon.
`retry_now()` cuts the pause short (the fleet view's `r`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.host.places import socket_path
from cockpit.host.stream import HostStream
from cockpit.host.wire import WireError, decode

__all__ = ["FIRST_PAUSE", "LOCAL_MAX_PAUSE", "MAX_PAUSE", "NO_HOST", "HostWatch"]

log = logging.getLogger(__name__)

FIRST_PAUSE = 1.0
"""Seconds before the first try again of a host that could not be reached (then doubled)."""
MAX_PAUSE = 60.0
"""The longest pause between two tries of a `--via` host."""
LOCAL_MAX_PAUSE = 5.0
"""The longest pause between two tries of this machine's host (a local connect, no process)."""


NO_HOST = "no host running (`cockpit demo --detach` starts one)"


def _why(exc: BaseException, via: str | None) -> str:
    """What the fleet says of a host it cannot watch."""
    if via is None and isinstance(exc, FileNotFoundError | ConnectionRefusedError):
        return NO_HOST
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"unreachable: {text or type(exc).__name__}"


class HostWatch:
    """A host's fleet, kept up to date while `run()` runs.

    Args:
        name: The host's name in the fleet (`local`, or its `[hosts]` name).
        path: Its socket (default: this machine's host's).
        via: A command whose stdio reaches it instead (`--via`).

    `on_change` is called whenever `rows`, `problem` or the next try changed (on the loop
    `run()` runs in).
    """

    def __init__(self, name: str, *, path: Path | None = None,
                 via: str | None = None) -> None:
        self.name = name
        self.via = via
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.problem: str | None = "connecting…"
        self.down_since: float | None = None
        """When (`time.time()`) the tries began to fail, since the host was last reached."""
        self.retry_at: float | None = None
        """When (`time.monotonic()`) it is tried again, while it cannot be reached."""
        self.tries = 0
        """How many tries have failed since it was last reached."""
        self.max_pause = MAX_PAUSE if via is not None else LOCAL_MAX_PAUSE
        self.on_change: Callable[[], None] = lambda: None
        self._stream: HostStream | None = None
        self._reached = False  # the current try got the host's fleet
        self._retry: asyncio.Event | None = None  # set: try again now

    @property
    def state(self) -> list[dict[str, Any]] | str:
        """Its rows, or why there are none (what `board.board` takes)."""
        return self.problem if self.problem is not None else self.rows

    def pause(self) -> float:
        """The pause before the next try, after `tries` failed ones: doubled each time."""
        return min(FIRST_PAUSE * 2 ** min(max(self.tries - 1, 0), 16), self.max_pause)

    def retry_in(self, now: float | None = None) -> float | None:
        """Seconds until the next try (None: it is connected, or being tried)."""
        if self.retry_at is None:
            return None
        return max(0.0, self.retry_at - (time.monotonic() if now is None else now))

    def retry_now(self) -> bool:
        """Try again now, if it waits to be tried again (True); else nothing."""
        if self._retry is None or self.retry_at is None:
            return False
        self._retry.set()
        return True

    async def run(self) -> None:
        """Watch until cancelled; a host that cannot be reached (or is lost) is tried again
        after a pause that doubles (see the module), or at once on `retry_now()`."""
        self._retry = asyncio.Event()
        while True:
            self._reached = False
            why = "unreachable: the host ended the watch"
            try:
                await self._watch_once()  # (it ends only by raising: the host went away)
            except (OSError, WireError, ValueError) as exc:
                if self._reached or self.down_since is None:  # (it was reached: start over)
                    self.tries, self.down_since = 0, time.time()
                self.tries += 1
                why = _why(exc, self.via)
            pause = self.pause()
            self.retry_at = time.monotonic() + pause
            self._retry.clear()
            self._set([], why)
            # (`asyncio.timeout`, not `wait_for`: on 3.11 `wait_for` loses a cancel that comes
            # as the event is set — `r` then quitting left the watch running, and the app hung)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._retry.wait()
            self.retry_at = None

    def _set(self, rows: list[dict[str, Any]], problem: str | None) -> None:
        self.rows, self.problem = rows, problem
        self.on_change()

    async def _watch_once(self) -> None:
        stream = await HostStream.open(self.path if self.path is not None else socket_path(),
                                       self.via)
        try:
            stream.write({"op": "watch", "id": "watch"})
            self._stream = stream
            while True:
                message = decode(await stream.readline())
                fleet = message.get("fleet")
                if isinstance(fleet, list):
                    if not self._reached:
                        self._reached = True
                        self.tries, self.down_since = 0, None
                    self._set(fleet, None)
                elif message.get("id") == "watch" and not message.get("ok"):
                    error = str(message.get("error") or "the host refused")
                    if "unknown request" in error:  # (a host older than the fleet view)
                        error = "this host cannot show a fleet: update the cockpit there"
                    raise ConnectionError(error)
                elif message.get("ok") is False:
                    log.info("host %s refused a request: %s", self.name, message.get("error"))
        finally:
            self._stream = None
            with contextlib.suppress(Exception):
                await stream.close()

    def send(self, op: str, **fields: Any) -> bool:
        """Send a request to the host (an answer, a cancel); False if it is not connected."""
        stream = self._stream
        if stream is None:
            return False
        try:
            stream.write({"op": op, **fields})
        except (ConnectionError, OSError):
            return False
        return True
