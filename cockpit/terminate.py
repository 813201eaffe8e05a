"""What SIGTERM and SIGHUP do to a run: the same as a quit by the user, never a kill mid-write.

The run is cancelled cleanly (its journal ends with `agent_end`), the terminal is restored,
and whatever the command cleans up at exit (the demo's throw-away workspace) is cleaned up:
a `kill PID` or a closed terminal window leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

__all__ = ["HUNG_UP", "TERMINATED", "on_terminate"]

TERMINATED = "terminated (SIGTERM)"
"""The reason a run cancelled by SIGTERM gives."""
HUNG_UP = "its terminal closed (SIGHUP)"
"""The reason a run cancelled by SIGHUP gives."""

_REASONS = {signal.SIGTERM: TERMINATED, signal.SIGHUP: HUNG_UP}


def on_terminate(loop: asyncio.AbstractEventLoop,
                 handler: Callable[[str], object]) -> Callable[[], None]:
    """Call `handler(reason)` in `loop` on SIGTERM or SIGHUP (once: a second signal acts as
    usual, so a stuck run can still be killed); returns what removes it. Does nothing where
    signals cannot be handled (not the main thread, Windows)."""

    def remove() -> None:
        for number in _REASONS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(number)

    def received(reason: str) -> None:
        remove()
        handler(reason)

    try:
        for number, reason in _REASONS.items():
            loop.add_signal_handler(number, received, reason)
    except (NotImplementedError, RuntimeError, ValueError):
        remove()
        return lambda: None
    return remove
