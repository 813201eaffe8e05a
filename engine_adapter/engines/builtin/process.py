"""Running a command for real: in the sandbox (`engine_adapter.sandbox`) when given one, in its
own scope (`engine_adapter.processes.scopes`), with a timeout and an output cap. When the command
ends, whatever it left running ends too (`sleep 60 &`, a double fork, a `setsid` daemon: nothing
outlives the call); a timeout or a cancel kills the whole scope at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine_adapter.context import wait_cancelled
from engine_adapter.processes import command_env, end_scope, start_in_scope
from engine_adapter.runner import CancelToken
from engine_adapter.sandbox import Sandbox

__all__ = ["ProcessResult", "run_process", "shell_argv"]

_READ_CHUNK = 65_536
_DRAIN_AFTER_KILL = 2.0  # seconds to collect output once the group is killed
# Non-interactive defaults for what the tools run: never page, never prompt.
_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class ProcessResult:
    """How a command ended. `exit_code` is None when it was killed (timeout or cancel).
    `sandbox` is the state it ran in (None: no sandbox was given), `blocked` what the sandbox
    stopped, judging by the output of a command that failed."""

    exit_code: int | None
    output: str  # stdout and stderr interleaved, at most the cap
    truncated: int  # bytes of output dropped past the cap
    timed_out: bool
    cancelled: bool
    duration_ms: float
    sandbox: str | None = None
    blocked: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        """The output kept, with a note of how much was dropped past the cap."""
        if not self.truncated:
            return self.output
        return f"{self.output}\n[… {self.truncated} more bytes of output not kept]"

    def describe(self) -> str:
        """One phrase: how it ended."""
        if self.cancelled:
            return "cancelled (killed)"
        if self.timed_out:
            return "timed out (killed)"
        if self.blocked:
            return f"exit {self.exit_code}; blocked by sandbox: {self.blocked}"
        return f"exit {self.exit_code}"


def shell_argv(command: str) -> list[str]:
    """The argv that runs a command line with the POSIX shell."""
    return ["/bin/sh", "-c", command]


async def run_process(argv: Sequence[str], *, cwd: str | Path, timeout: float, output_cap: int,
                      cancel_token: CancelToken | None = None, sandbox: Sandbox | None = None,
                      outside: bool = False) -> ProcessResult:
    """Run `argv` in `cwd` to its end, its timeout, or the token's cancel — whichever is first.

    The command gets no stdin; stdout and stderr are read together and kept up to `output_cap`
    bytes (the rest is read and dropped, so the command never blocks on a full pipe). When it
    exits, every process it started is killed; on timeout or cancel, all of them at once
    (SIGKILL). With a `sandbox` it runs inside it (unless it is off or missing, or `outside`:
    one approved run outside it). Raises `OSError` when the program cannot be started (not
    found, not executable).
    """
    started = time.monotonic()
    # Never the cockpit's secrets: the output goes to the model and the journal.
    env = {**(sandbox.command_env(os.environ) if sandbox else command_env(os.environ)), **_ENV}
    wrapped = sandbox.wrap(argv, cwd=cwd, env=env, bypass=outside) if sandbox else None
    try:
        proc, scope = await start_in_scope(
            wrapped.argv if wrapped else argv, cwd=cwd, env=wrapped.env if wrapped else env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, pass_fds=wrapped.pass_fds if wrapped else ())
    except BaseException:
        if wrapped:
            wrapped.close()
        raise
    kept = bytearray()
    dropped = 0

    async def read() -> None:
        nonlocal dropped
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(_READ_CHUNK):
            room = max(0, output_cap - len(kept))
            kept.extend(chunk[:room])
            dropped += len(chunk) - min(room, len(chunk))

    reader = asyncio.ensure_future(read())
    finished = asyncio.ensure_future(asyncio.gather(reader, proc.wait()))
    cancelled = asyncio.ensure_future(wait_cancelled(cancel_token)) if cancel_token else None
    waiting: set[asyncio.Future[tuple[None, int]] | asyncio.Future[None]] = (
        {finished} if cancelled is None else {finished, cancelled})
    timed_out = was_cancelled = False
    try:
        done, _ = await asyncio.wait(waiting, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if finished not in done:
            was_cancelled = cancelled in done
            timed_out = not was_cancelled
            scope.kill()
            with contextlib.suppress(TimeoutError):
                # Everything is being killed; collect the output written meanwhile.
                await asyncio.wait_for(asyncio.shield(finished), _DRAIN_AFTER_KILL)
    finally:
        if proc.returncode is None:  # our own task was cancelled mid-run
            scope.kill()
        for task in (reader, finished, cancelled):
            if task is not None and not task.done():
                task.cancel()
        await asyncio.shield(end_scope(scope, proc))
        if wrapped:
            wrapped.close()
    output = kept.decode("utf-8", errors="replace")
    exit_code = None if (timed_out or was_cancelled) else proc.returncode
    blocked = wrapped.blocked(output) if wrapped and exit_code not in (0, None) else None
    return ProcessResult(
        exit_code=exit_code, output=output, truncated=dropped, timed_out=timed_out,
        cancelled=was_cancelled, duration_ms=(time.monotonic() - started) * 1000,
        sandbox=wrapped.state if wrapped else None, blocked=blocked)

