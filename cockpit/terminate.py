"""What SIGTERM, SIGHUP and SIGINT do to a run: the same as a quit by the user, never a kill
mid-write.

The run is cancelled cleanly (its journal ends with `agent_end`), the terminal is restored,
and whatever the command cleans up at exit (the demo's throw-away workspace) is cleaned up:
a `kill PID` or a closed terminal window leaves nothing behind.

A closed terminal (a closed window, `tmux kill-session`) hangs up the process's tty: from then
on every write to it fails (EIO), and a writer thread that dies of that leaves whoever queues
the next write blocked for good (Textual's driver, at shutdown, disabling the mouse). So the
handler runs as a plain `signal.signal` handler, at once in the main thread (before Textual's
SIGCONT handler, which the kernel's hang-up also triggers, tries to restart the screen), and
when the terminal is gone it points stdout and stderr at /dev/null and says so (`gone`), so
nothing is ever written to a terminal that is gone; the rest of the quit runs in the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import termios
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["HUNG_UP", "INTERRUPTED", "TERMINATED", "hurry_if_hung_up", "on_terminate",
           "silence_gone_terminal", "terminal_gone"]

TERMINATED = "terminated (SIGTERM)"
"""The reason a run cancelled by SIGTERM gives."""
HUNG_UP = "its terminal closed (SIGHUP)"
"""The reason a run cancelled by SIGHUP gives."""
INTERRUPTED = "interrupted (SIGINT)"
"""The reason a run cancelled by SIGINT gives (a `kill -INT`: in the cockpit, ctrl+c is a key)."""

_REASONS = {signal.SIGTERM: TERMINATED, signal.SIGHUP: HUNG_UP, signal.SIGINT: INTERRUPTED}
_OUTPUTS = (1, 2)  # stdout, stderr: where the driver and the exit lines write


def hurry_if_hung_up(runner: object, reason: str) -> None:
    """When the run is cancelled because its terminal closed (`HUNG_UP`), tell an engine that
    can stop sooner (one with `hurry()`, as the ACP runner has) not to wait for its agent: no
    one is there to see it, and the process must be gone within 2 s (an agent that ignores a
    cancel would otherwise get its full cancel grace)."""
    if reason != HUNG_UP:
        return
    hurry = getattr(runner, "hurry", None)
    if callable(hurry):
        hurry()


def terminal_gone(fd: int) -> bool:
    """Whether `fd` is a terminal that has hung up (its window closed): every call on it then
    fails with EIO. A pipe, a file or a live terminal is not gone."""
    try:
        termios.tcgetattr(fd)
    except termios.error as error:
        return bool(error.args) and error.args[0] == errno.EIO
    except (OSError, ValueError):
        return False
    return False


def silence_gone_terminal() -> bool:
    """Point stdout and stderr at /dev/null where they are a terminal that is gone (a write
    there would fail, and a thread that dies of it blocks the next writer); returns whether
    any was."""
    gone = [fd for fd in _OUTPUTS if terminal_gone(fd)]
    if not gone:
        return False
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in gone:
            os.dup2(null, fd)
    finally:
        os.close(null)
    return True


def on_terminate(loop: asyncio.AbstractEventLoop, handler: Callable[[str], object], *,
                 gone: Callable[[], None] | None = None,
                 interrupt: bool = False) -> Callable[[], None]:
    """Call `handler(reason)` in `loop` on SIGTERM or SIGHUP (and SIGINT with `interrupt`);
    returns what removes it. Once: a second SIGTERM or SIGINT acts as it did before (so a
    stuck run can still be killed); a second SIGHUP is ignored (a closed terminal sends more
    than one, and the quit is under way). When the terminal is gone (`terminal_gone`), stdout
    and stderr go to /dev/null and `gone()` is called, both at once, in the signal handler.
    Must be called in the main thread (Python's rule for signal handlers); elsewhere it does
    nothing."""
    numbers = [signal.SIGTERM, signal.SIGHUP, *([signal.SIGINT] if interrupt else [])]
    previous: dict[int, Any] = {}

    def remove() -> None:
        for number, before in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(number, before)
        previous.clear()

    def received(number: int, frame: FrameType | None) -> None:
        if silence_gone_terminal() and gone is not None:
            gone()
        if number == signal.SIGHUP:
            # Ignored first, and for good: a closed terminal sends more than one, and one that
            # found the default disposition (between restoring and ignoring) killed the
            # cockpit mid-quit.
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
            previous.pop(signal.SIGHUP, None)
        remove()
        try:
            # (call_soon_threadsafe wakes the loop: this handler may run while it sleeps)
            loop.call_soon_threadsafe(handler, _REASONS[signal.Signals(number)])
        except RuntimeError:  # the loop has closed (the run is over, its handler not removed)
            # No traceback out of a signal handler: the signal acts as it did before us (its
            # disposition is restored above; SIGHUP stays ignored, the quit is under way).
            if number != signal.SIGHUP:
                signal.raise_signal(number)

    try:
        for number in numbers:
            previous[number] = signal.signal(number, received)
    except (ValueError, OSError):  # not the main thread, or no such signal here
        remove()
        return lambda: None
    return remove
