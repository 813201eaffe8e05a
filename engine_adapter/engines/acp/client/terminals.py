"""The commands an agent runs through `terminal/*`: each in the sandbox (`engine_adapter.sandbox`)
and its own scope (`engine_adapter.processes.scopes`), its combined output kept up to a byte limit
(the tail wins), stopped whole on kill, release or close; whatever a command leaves running when it
exits (a background job, a `setsid` daemon) is ended with it. When the sandbox stopped a command,
its output ends with a note saying what, and how to ask for a run outside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine_adapter.processes import Scope, end_scope, start_in_scope
from engine_adapter.sandbox import Sandbox, Wrapped

__all__ = ["DEFAULT_OUTPUT_LIMIT", "OUTSIDE_VARIABLE", "Prepared", "Terminal", "TerminalError",
           "Terminals"]

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
OUTSIDE_VARIABLE = "COCKPIT_SANDBOX"
"""A `terminal/create` that sets this to `off` asks to run outside the sandbox (tier 4)."""


class TerminalError(Exception):
    """A terminal request that cannot be served (unknown id, program not found)."""


class Terminal:
    """One running (or finished) command."""

    def __init__(self, terminal_id: str, proc: asyncio.subprocess.Process, scope: Scope,
                 argv: Sequence[str], limit: int, wrapped: Wrapped | None = None) -> None:
        self.terminal_id = terminal_id
        self.proc = proc
        self.scope = scope
        self.argv = list(argv)
        self.limit = max(limit, 0)
        self.wrapped = wrapped
        self.output = bytearray()
        self.truncated = False
        self.killed = False
        self.blocked: str | None = None  # what the sandbox stopped, once it exited
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        torn_down = False
        try:
            while data := await stream.read(65536):
                self.output += data
                if len(self.output) > self.limit:
                    del self.output[: len(self.output) - self.limit]
                    self.truncated = True
        except OSError:
            pass
        except asyncio.CancelledError:
            # The loop is going away (or we are being torn down): leave no command behind.
            torn_down = True
            self.kill()
            raise
        finally:
            if not torn_down:
                await self.proc.wait()
                if self.wrapped is not None:
                    if self.proc.returncode and not self.killed:
                        self.blocked = self.wrapped.blocked(self._decoded())
                    self.wrapped.close()  # the holder is gone: so is all it ran
            if not self.exited.done():
                self.exited.set_result(None)

    @property
    def sandbox(self) -> str | None:
        """The sandbox state it runs in (None: started without a sandbox)."""
        return self.wrapped.state if self.wrapped is not None else None

    def text(self) -> str:
        """The output kept so far, decoded (a multi-byte character cut by the limit is
        dropped, never turned into a wrong one), and the note when the sandbox stopped it."""
        if not self.blocked:
            return self._decoded()
        return (f"{self._decoded()}\n[cockpit: blocked by sandbox: {self.blocked}. Commands run "
                "in a sandbox: writes only in the workspace and $TMPDIR, no network. To ask the "
                f"human to run it outside the sandbox, create the terminal again with "
                f"{OUTSIDE_VARIABLE}=off in its env; they are asked every time.]")

    def _decoded(self) -> str:
        data = bytes(self.output)
        if self.truncated:
            # Skip UTF-8 continuation bytes at the front left by cutting mid-character.
            start = 0
            while start < len(data) and start < 4 and (data[start] & 0xC0) == 0x80:
                start += 1
            data = data[start:]
        return data.decode("utf-8", "replace")

    @property
    def exit_code(self) -> int | None:
        """The exit code once it exited normally."""
        code = self.proc.returncode
        return code if code is not None and code >= 0 else None

    @property
    def signal_name(self) -> str | None:
        """The signal that killed it, if one did."""
        code = self.proc.returncode
        if code is None or code >= 0:
            return None
        try:
            return signal.Signals(-code).name
        except ValueError:
            return str(-code)

    def kill(self) -> None:
        """Kill the command and everything it started (never waits)."""
        if self.proc.returncode is None:
            self.killed = True
        self.scope.kill()


@dataclass(frozen=True)
class Prepared:
    """A command ready to start: its terminal id, argv as asked, and how it will run."""

    terminal_id: str
    argv: list[str]
    cwd: str
    env: dict[str, str]
    limit: int
    wrapped: Wrapped | None

    @property
    def sandbox(self) -> str | None:
        """The sandbox state it will run in (None: no sandbox)."""
        return self.wrapped.state if self.wrapped is not None else None

    def discard(self) -> None:
        """Forget a command that will not start (its sandbox's temporary directory goes)."""
        if self.wrapped is not None:
            self.wrapped.close()


def _start_error(argv: Sequence[str], exc: OSError) -> TerminalError:
    if isinstance(exc, FileNotFoundError):
        return TerminalError(f"{argv[0]} was not found")
    return TerminalError(f"cannot run {argv[0]}: {exc.strerror or exc}")


class Terminals:
    """The terminals of one ACP session. `on_exit(terminal)` is called when a command ends."""

    def __init__(self, on_exit: Callable[[Terminal], None] | None = None) -> None:
        self._terminals: dict[str, Terminal] = {}
        self._released: list[Terminal] = []
        self._ids = itertools.count(1)
        self.on_exit = on_exit

    def prepare(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
                output_limit: int | None, sandbox: Sandbox | None = None,
                outside: bool = False) -> Prepared:
        """Everything about a command but its start: its id, and `argv` wrapped for the sandbox
        if given (unless `outside`: one approved run outside it), so that its row can be
        journaled before anything runs. Raises `TerminalError` if the program cannot be run."""
        wrapped = None
        try:
            if sandbox is not None:
                wrapped = sandbox.wrap(argv, cwd=cwd, env=env, bypass=outside)
        except OSError as exc:
            raise _start_error(argv, exc) from None
        limit = DEFAULT_OUTPUT_LIMIT if output_limit is None else min(output_limit,
                                                                       DEFAULT_OUTPUT_LIMIT)
        return Prepared(f"term-{next(self._ids)}", list(argv), cwd, dict(env), limit, wrapped)

    async def start(self, prepared: Prepared) -> Terminal:
        """Start a prepared command (no shell); raises `TerminalError` if it cannot start."""
        wrapped = prepared.wrapped
        try:
            proc, scope = await start_in_scope(
                wrapped.argv if wrapped else prepared.argv, cwd=prepared.cwd,
                env=wrapped.env if wrapped else prepared.env,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                pass_fds=wrapped.pass_fds if wrapped else ())
        except OSError as exc:
            prepared.discard()
            raise _start_error(prepared.argv, exc) from None
        terminal = Terminal(prepared.terminal_id, proc, scope, prepared.argv, prepared.limit,
                            wrapped)
        self._terminals[terminal.terminal_id] = terminal
        if self.on_exit is not None:
            callback = self.on_exit
            terminal.exited.add_done_callback(lambda _f: callback(terminal))
        return terminal

    def get(self, terminal_id: str) -> Terminal:
        """The terminal with that id, or `TerminalError`."""
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise TerminalError(f"no terminal {terminal_id!r} (never created, or released)")
        return terminal

    def find(self, terminal_id: str) -> Terminal | None:
        """The terminal with that id, or `None`."""
        return self._terminals.get(terminal_id)

    def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs and forget the terminal (`close` still makes sure
        nothing of it is left)."""
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is not None:
            terminal.kill()
            self._released.append(terminal)

    @property
    def running(self) -> list[Terminal]:
        """Terminals whose command has not exited."""
        return [t for t in self._terminals.values() if not t.exited.done()]

    async def close(self) -> None:
        """Kill every command (and all they started) and wait for each to be reaped."""
        terminals = [*self._terminals.values(), *self._released]
        for terminal in terminals:
            terminal.kill()
        for terminal in terminals:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(terminal.exited), 5.0)
            with contextlib.suppress(Exception):
                await end_scope(terminal.scope, terminal.proc)
            if terminal.wrapped is not None:
                terminal.wrapped.close()
        self._terminals.clear()
        self._released.clear()
