"""The agent's process: started in its own process group, spoken to over its pipes, stopped whole.

We start the agent ourselves rather than through the SDK's `spawn_agent_process`: that helper
kills only the direct child and waits for it without a timeout, and agents that re-launch
themselves as a child process (Gemini CLI does) then hang the shutdown. Here the agent runs in
its own scope (`engine_adapter.processes.scopes`): every process it starts, `setsid` grandchildren
included, is ended with it, and `stop()` leaves nothing behind.

`PipeTransport` is the newline-delimited JSON-RPC framing over the pipes, handed to the SDK's
connection as a message transport. Unlike the SDK's own framing, a line that is not JSON-RPC is
not skipped silently: it ends the connection and is kept (`garbage`) so the run can say what the
agent wrote. Notifications may be handed to `on_notification` as they are read, before any
later message reaches the SDK (see `AcpClient.take_notification` for why).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from engine_adapter.engines.acp.text import clean, clean_stderr_line
from engine_adapter.processes import Scope, end_scope, start_in_scope

__all__ = ["AgentProcess", "AgentStartError", "PipeTransport"]

READ_CHUNK = 1 << 16
MAX_LINE = 64 * 1024 * 1024  # one JSON-RPC message; a bigger one is treated as garbage
STREAM_LIMIT = MAX_LINE  # asyncio's reader buffer limit (the SDK's default 64 KiB is too small)
_FIRST_LINES = 3  # lines of an agent's output kept to show when it turns out not to speak ACP
_FIRST_LINE_CHARS = 300
_KEEP_METHODS = 64  # methods the client sent, remembered to see an echo (few ever differ)


class AgentStartError(Exception):
    """The agent's program could not be started (not found, not executable, bad cwd)."""


class PipeTransport:
    """NDJSON JSON-RPC messages over an agent's stdin/stdout (the SDK's `Transport` protocol).

    `receive()` returns `None` at end of stream — and also at the first line that is not a
    JSON-RPC object, after keeping that line in `garbage`. `on_notification(method, params)`,
    when set, sees each notification first; returning True means it was handled and the SDK
    never sees it; returning an awaitable means it is being handled: it is awaited before the
    next message is read (so order holds while the work runs off the event loop).
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.on_notification: Callable[[str, object], bool | Awaitable[None]] | None = None
        self._reader = reader
        self._writer = writer
        self._lines: deque[str] = deque()
        self._partial: list[bytes] = []  # the start of a line not yet ended
        self._partial_size = 0
        self._eof = False
        self.garbage: str | None = None
        # What tells a program that does not speak ACP from an agent that failed: its first
        # lines (escaped, capped) and whether it sent back a request of ours (`cat` does).
        self.first_output: list[str] = []
        self.echoed = False
        self._sent_methods: set[str] = set()

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message; a closed pipe raises `ConnectionError`."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        method = message.get("method")
        if isinstance(method, str) and len(self._sent_methods) < _KEEP_METHODS:
            self._sent_methods.add(method)
        if self._writer.is_closing():
            raise ConnectionError("the agent's stdin is closed")
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionError(f"the agent's stdin is closed: {exc}") from None

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or `None` at end of stream or garbage."""
        while True:
            line = await self._next_line()
            if line is None:
                return None
            if not line.strip():
                continue
            if len(self.first_output) < _FIRST_LINES:
                self.first_output.append(clean(line.strip(), _FIRST_LINE_CHARS))
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("method") in self._sent_methods:
                # An agent never sends the client's own requests (`initialize`, `session/new`)
                # to the client: this is a program writing back what it read.
                self.echoed = True
            if not isinstance(message, dict):
                self.garbage = clean(line.strip(), 200)
                return None
            handler = self.on_notification
            if handler is not None and "id" not in message:
                method = message.get("method")
                handled = handler(method, message.get("params")) if isinstance(
                    method, str) else False
                if inspect.isawaitable(handled):
                    await handled
                    continue
                if handled:
                    continue
            return message

    async def _next_line(self) -> str | None:
        # Reading big chunks and splitting them is several times cheaper than one
        # `readuntil` per line, and a streamed reply is tens of thousands of lines.
        lines = self._lines
        while not lines:
            if self._eof or self.garbage is not None:
                return None
            # Yield to the event loop once per chunk read: `read` returns at once while the
            # agent keeps the buffer full, and without this a fast stream would hold the loop
            # (and the live cockpit's keys) until it paused. One chunk is a few ms of work.
            await asyncio.sleep(0)
            data = await self._reader.read(READ_CHUNK)
            if not data:
                self._eof = True
                tail = b"".join(self._partial)
                self._partial, self._partial_size = [], 0
                return tail.decode("utf-8", "replace") or None
            end = data.rfind(b"\n") + 1
            if not end:  # no line ends here: keep the piece (joined once, when one does)
                self._partial.append(data)
                self._partial_size += len(data)
                if self._partial_size > MAX_LINE:
                    self.garbage = f"a line longer than {MAX_LINE} bytes"
                    return None
                continue
            head = b"".join([*self._partial, data[:end]]) if self._partial else data[:end]
            self._partial = [data[end:]] if end < len(data) else []
            self._partial_size = len(data) - end
            # Whole lines only, so no character is split: one decode per read, not per line.
            lines.extend(head.decode("utf-8", "replace").split("\n")[:-1])
        return lines.popleft()

    async def close(self) -> None:
        """Close the agent's stdin (an agent reading EOF should exit)."""
        with contextlib.suppress(Exception):
            self._writer.close()


class AgentProcess:
    """A running agent: its process group, its pipes, and the tail of its stderr."""

    def __init__(self, proc: asyncio.subprocess.Process, scope: Scope, argv: Sequence[str],
                 stderr_lines: int) -> None:
        self.proc = proc
        self.scope = scope
        self.argv = list(argv)
        self.pid = proc.pid
        self.pgid = proc.pid  # start_new_session: the agent's scope leads its own group
        assert proc.stdout is not None and proc.stdin is not None
        self.transport = PipeTransport(proc.stdout, proc.stdin)
        self._stderr: deque[str] = deque(maxlen=stderr_lines)
        self.stderr_count = 0  # lines written to stderr so far (a mark for `stderr_since`)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        self._guard = asyncio.ensure_future(self._kill_when_loop_ends())
        self._stopped = False

    @classmethod
    async def start(cls, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
                    stderr_lines: int = 40, pass_fds: Sequence[int] = ()) -> AgentProcess:
        """Start `argv` in a new process group with pipes for stdin, stdout and stderr (and
        `pass_fds` given to it: the sandbox's seccomp filter, read by bwrap)."""
        if not argv:
            raise AgentStartError("no agent command given")
        try:
            proc, scope = await start_in_scope(
                argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                limit=STREAM_LIMIT, pass_fds=tuple(pass_fds))
        except FileNotFoundError:
            raise AgentStartError(f"{argv[0]!r} was not found (not on PATH, or the file does "
                                  "not exist)") from None
        except PermissionError:
            raise AgentStartError(f"{argv[0]!r} is not executable") from None
        except OSError as exc:
            raise AgentStartError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        return cls(proc, scope, argv, stderr_lines)

    async def _kill_when_loop_ends(self) -> None:
        # The event loop that started the agent is shutting down (`asyncio.run` returning
        # cancels every task) without `stop()`: kill the group now, synchronously, rather than
        # leave an agent behind that nobody can talk to any more.
        try:
            await asyncio.Event().wait()
        finally:
            if not self._stopped:
                self._stopped = True
                self.kill_group()
                # Close the pipes while the loop still runs; left to the garbage collector,
                # asyncio would try to close them on a closed loop (and say so on stderr).
                # asyncio's Process offers no public handle on its transport, and closing
                # stdin through its stream is not enough: the read pipes fail the same way.
                transport = getattr(self.proc, "_transport", None)
                with contextlib.suppress(Exception):
                    if transport is not None:
                        transport.close()

    async def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        partial = b""
        while True:
            try:
                data = await stream.read(READ_CHUNK)
            except (asyncio.CancelledError, Exception):
                return
            if not data:
                if partial:
                    self._stderr_line(partial)
                return
            parts = (partial + data).split(b"\n")
            partial = parts.pop()[-65536:]
            for part in parts:
                self._stderr_line(part)

    def _stderr_line(self, raw: bytes) -> None:
        self._stderr.append(clean_stderr_line(raw.decode("utf-8", "replace")))
        self.stderr_count += 1

    @property
    def returncode(self) -> int | None:
        """The exit status once the agent has exited (negative: killed by that signal)."""
        return self.proc.returncode

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr (cleaned), oldest first."""
        return [line for line in self._stderr if line.strip()]

    def stderr_since(self, mark: int) -> list[str]:
        """What of the tail the agent wrote after it had written `mark` lines
        (`stderr_count` then)."""
        new = max(0, min(self.stderr_count - mark, len(self._stderr)))
        return [line for line in list(self._stderr)[len(self._stderr) - new:] if line.strip()]

    def describe_exit(self) -> str:
        """How the agent ended, in words: "exited with code 3", "was killed by SIGKILL"."""
        code = self.proc.returncode
        if code is None:
            return "is still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the agent to exit; True if it has."""
        try:
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), timeout)
        except TimeoutError:
            return False
        return True

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        """End every process of the agent's scope (children, `setsid` grandchildren too):
        SIGKILL kills them now, any other signal asks them to stop (SIGTERM). Never waits."""
        if sig == signal.SIGKILL:
            self.scope.kill()
        else:
            self.scope.terminate()

    async def stop(self, grace: float = 1.0, *, exit_grace: float = 0.0) -> None:
        """Stop the agent and everything it started: close stdin (and wait up to `exit_grace`
        seconds for it to exit on its own), SIGTERM them all, wait up to `grace` seconds, then
        kill whatever is left (stragglers included) and reap the agent. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        await self.transport.close()
        if self.proc.returncode is None and exit_grace > 0:
            await self.wait_exit(exit_grace)
        if self.proc.returncode is None:
            self.scope.terminate()
            await self.wait_exit(grace)
        # Always end the scope: a child may outlive the agent or ignore SIGTERM.
        await end_scope(self.scope, self.proc)
        await self.proc.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._stderr_task, 1.0)
        self._stderr_task.cancel()
        self._guard.cancel()
