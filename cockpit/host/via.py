"""Reaching a host through a command's stdio (`--via "ssh box cockpit host --stdio"`), and the
other end of it (`cockpit host --stdio`: the user's host, on stdin and stdout).

The command's stdin and stdout are one end of a socket pair, so a client talks to it exactly as
to the host's own socket; ssh does the transport and the authentication, and nothing listens on
a network port."""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import socket
import subprocess
from typing import IO

__all__ = ["ViaError", "close_via", "relay", "via_socket"]


class ViaError(OSError):
    """The `--via` command could not be started (the message says why)."""


def via_socket(command: str) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    """Start `command` with its stdin and stdout on a socket pair; our end, and the process
    (stop it with `close_via` once done)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # an unclosed quote
        raise ViaError(f"--via {command!r}: {exc}") from None
    if not argv:
        raise ViaError('--via needs a command, e.g. --via "ssh box cockpit host --stdio"')
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        process = subprocess.Popen(argv, stdin=theirs.fileno(), stdout=theirs.fileno(),
                                   close_fds=True,
                                   start_new_session=True)
    except OSError as exc:
        ours.close()
        raise ViaError(f"--via {command!r}: cannot start it: {exc.strerror or exc}") from None
    finally:
        theirs.close()
    return ours, process


def close_via(process: subprocess.Popen[bytes]) -> None:
    """End a `--via` command (its stdin is closed already with our end of the pair)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)
        return
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)
        return
    process.kill()
    process.wait()


def relay(sock: socket.socket, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Copy bytes both ways between `stdin`/`stdout` and `sock` until the socket ends (after
    stdin ends, what the host still sends is passed on)."""
    inp, out = stdin.fileno(), stdout.fileno()
    sock_fd = sock.fileno()
    reading = True
    while True:
        ready, _, _ = select.select([inp, sock_fd] if reading else [sock_fd], [], [])
        if inp in ready:
            data = os.read(inp, 1 << 16)
            if data:
                sock.sendall(data)
            else:
                reading = False
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
        if sock_fd in ready:
            data = sock.recv(1 << 16)
            if not data:
                return
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
