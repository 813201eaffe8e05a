"""Running a test's coroutine, and waiting on the event loop for a condition (never a clock)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


def run(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion on a fresh event loop (tests need no async plugin)."""
    return asyncio.run(coro)  # type: ignore[arg-type]


async def until(predicate: Callable[[], bool], *, limit: int = 10_000) -> None:
    """Yield to the event loop until `predicate()` holds (a condition, not a clock)."""
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")

