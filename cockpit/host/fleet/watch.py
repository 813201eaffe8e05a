"""`HostWatch`: one host's fleet, followed for the fleet view — its rows as the host pushes
them (`watch`), or why it cannot be reached; and the answers the view sends to it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.host.places import socket_path
from cockpit.host.stream import HostStream
from cockpit.host.wire import WireError, decode

__all__ = ["NO_HOST", "RETRY_SECONDS", "HostWatch"]

log = logging.getLogger(__name__)

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""The pauses before trying an unreachable host again (then the last, over and over)."""


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

    `on_change` is called whenever `rows` or `problem` changed (on the loop `run()` runs in).
    """

    def __init__(self, name: str, *, path: Path | None = None,
                 via: str | None = None) -> None:
        self.name = name
        self.via = via
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.problem: str | None = "connecting…"
        self.on_change: Callable[[], None] = lambda: None
        self._stream: HostStream | None = None

    @property
    def state(self) -> list[dict[str, Any]] | str:
        """Its rows, or why there are none (what `board.board` takes)."""
        return self.problem if self.problem is not None else self.rows

    async def run(self) -> None:
        """Watch until cancelled; a host that cannot be reached (or is lost) is tried again
        after a pause (`RETRY_SECONDS`)."""
        tries = 0
        while True:
            try:
                await self._watch_once()
            except (OSError, WireError, ValueError) as exc:
                if self.problem is None:
                    tries = 0  # (it was reached: try again soon)
                self._set([], _why(exc, self.via))
            await asyncio.sleep(RETRY_SECONDS[min(tries, len(RETRY_SECONDS) - 1)])
            tries += 1

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
