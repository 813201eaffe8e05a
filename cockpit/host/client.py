"""Talking to the host from a short command (`cockpit ps`, `host status`, `run --detach`): a
blocking connection, one request at a time, and the host started on demand when none runs."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from cockpit.host.places import log_path, private_dir, socket_path
from cockpit.host.wire import MAX_LINE, WireError, decode, encode, hello, hello_problem

__all__ = ["START_SECONDS", "HostClient", "HostError", "NoHost", "ensure_host", "start_host"]

START_SECONDS = 30.0
"""How long a command waits for the host it started to listen."""


class HostError(Exception):
    """The host refused a request, or could not be reached or started (one line for the user)."""


class NoHost(HostError):
    """No host is running (nothing listens on the socket)."""


class HostClient:
    """A blocking connection to the host: `request(op, **fields)` returns the reply's fields."""

    def __init__(self, sock: socket.socket,
                 process: subprocess.Popen[bytes] | None = None) -> None:
        self.sock = sock
        self.process = process  # a `--via` command, ended with the connection
        self._buffer = b""
        self._next_id = 0
        self.greeting: dict[str, Any] = {}

    @classmethod
    def connect(cls, path: Path | None = None, *, timeout: float | None = 30.0,
                via: str | None = None) -> HostClient:
        """Connect and greet (through `via`'s stdio when given, see `cockpit.host.via`);
        `NoHost` if nothing listens there, `HostError` if refused or unreachable."""
        if via is not None:
            from cockpit.host.via import via_socket

            sock, process = via_socket(via)
            sock.settimeout(timeout)
            client = cls(sock, process)
        else:
            path = path if path is not None else socket_path()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(str(path))
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                raise NoHost("no host running") from None
            except OSError as exc:
                sock.close()
                raise HostError(f"cannot reach the host at {path}: "
                                f"{exc.strerror or exc}") from None
            client = cls(sock)
        try:
            # What the other side said before it hung up is read even if our greeting could
            # not be sent (a command that prints a line and exits: its line says what it is).
            with contextlib.suppress(HostError):
                client.send(hello())
            greeting = client.read()
        except HostError as exc:
            client.close()
            raise HostError(f"--via {via!r}: {exc}" if via else str(exc)) from None
        except BaseException:
            client.close()
            raise
        problem = hello_problem(greeting)
        if problem is not None:
            client.close()
            raise HostError(f"the host refused: {problem}")
        client.greeting = greeting
        return client

    def send(self, message: dict[str, Any]) -> None:
        """Write one message."""
        try:
            self.sock.sendall(encode(message))
        except OSError as exc:
            raise HostError(f"the host went away: {exc.strerror or exc}") from None

    def read(self) -> dict[str, Any]:
        """The next message; `HostError` if the host hung up or sent a bad line."""
        while b"\n" not in self._buffer:
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError as exc:
                raise HostError(f"the host went away: {exc.strerror or exc}") from None
            if not chunk:
                raise HostError("the host closed the connection")
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                raise HostError("the host sent a line too long")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return decode(line)
        except WireError as exc:
            raise HostError(f"the host sent a bad line: {exc}") from None

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its reply; `HostError` with the host's words if it
        failed."""
        self._next_id += 1
        ident = self._next_id
        self.send({"op": op, "id": ident, **fields})
        while True:
            reply = self.read()
            if reply.get("id") == ident:
                break
        if not reply.get("ok"):
            raise HostError(str(reply.get("error") or "the host refused the request"))
        return reply

    def close(self) -> None:
        """Hang up (and end a `--via` command)."""
        self.sock.close()
        if self.process is not None:
            from cockpit.host.via import close_via

            close_via(self.process)

    def __enter__(self) -> HostClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_host(*, timeout: float = START_SECONDS) -> None:
    """Start a host detached from this terminal (its own session, no terminal, its output in
    its log) and return once it listens. A host that finds another already running says so
    and exits: either way one host listens afterwards. `HostError` if none came up."""
    log = log_path()
    private_dir(log.parent)
    read_end, write_end = os.pipe()
    try:
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "cockpit", "host", "--ready-fd", str(write_end)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, pass_fds=(write_end,),
                start_new_session=True, close_fds=True)
        os.close(write_end)
        write_end = -1
        # The host writes one line on the pipe once it listens (or that another one does); the
        # pipe ends without it if the host failed: its log says why.
        said = b""
        while not said.endswith(b"\n"):
            ready, _, _ = select.select([read_end], [], [], timeout)
            if not ready:
                raise HostError(f"the host did not start within {timeout:g} s; see {log}")
            chunk = os.read(read_end, 256)
            if not chunk:
                break
            said += chunk
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if not said.strip():
        code = process.poll()
        raise HostError(f"the host could not start (exit {code}); see {log}")


def ensure_host(via: str | None = None) -> HostClient:
    """A connection to the host, started first if none runs (`via`: a command whose stdio
    reaches one, which starts it itself)."""
    if via is not None:
        return HostClient.connect(via=via)
    try:
        return HostClient.connect()
    except NoHost:
        pass
    start_host()
    return HostClient.connect()
