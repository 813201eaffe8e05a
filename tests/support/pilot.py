"""Waiting on a running app (Pilot): until what a test waits for is on screen, never by a clock."""

from __future__ import annotations

from collections.abc import Callable


async def until_shown(pilot, predicate: Callable[[], bool], *, limit: int = 2_000) -> None:
    """Let the app run (a frame at a time) until `predicate()` holds: the fold reaches the
    screen a frame after the event, and the replay's reading thread reports by messages."""
    for _ in range(limit):
        if predicate():
            return
        await pilot.pause()
    raise AssertionError("the app never showed it")
