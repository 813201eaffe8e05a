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
import threading
from typing import IO

__all__ = ["VIA_LOG_TAIL", "ViaError", "ViaLog", "abandon_via", "close_via", "logged_via",
           "relay", "via_socket"]

VIA_LOG_TAIL = 4096
"""How much of the end of the `--via` log `ViaLog.said` reads back."""


class ViaError(OSError):
    """The `--via` command could not be started (the message says why)."""


class ViaLog:
    """Where a `--via` command's stderr goes when a full-screen view runs (the fleet view, an
    attached run): a file in the state dir, appended to, instead of the terminal (ssh's
    "Permission denied" printed over the view's rows garbled them). `said(since)` is the last
    line it wrote after offset `since`, escaped, for the view to show as the reason."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        self.path = os.fspath(path)

    def open(self) -> tuple[int, int]:
        """An fd to hand the command as its stderr (close it once it started), and the log's
        size before it (what `said` reads after)."""
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return fd, os.fstat(fd).st_size

    def said(self, since: int) -> str:
        """The last non-blank line written after `since` ("" for none), at most 200
        characters, its unsafe characters escaped (`engine_adapter.text.escaped`)."""
        try:
            with open(self.path, "rb") as log:
                size = log.seek(0, os.SEEK_END)
                log.seek(max(since, size - VIA_LOG_TAIL))
                tail = log.read(VIA_LOG_TAIL)
        except OSError:
            return ""
        lines = [line for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
        if not lines:
            return ""
        from engine_adapter.text import escaped

        text = lines[-1].strip()
        text = text if len(text) <= 200 else text[:199] + "…"
        return escaped(text)  # (a terminal escape shows as `\x1b`, never acts)


def via_socket(command: str, stderr: int | None = None
               ) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    """Start `command` with its stdin and stdout on a socket pair; our end, and the process
    (stop it with `close_via` once done). `stderr`: an fd for the command's stderr (default:
    ours, the terminal)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # an unclosed quote
        raise ViaError(f"--via {command!r}: {exc}") from None
    if not argv:
        raise ViaError('--via needs a command, e.g. --via "ssh box cockpit host --stdio"')
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        process = subprocess.Popen(argv, stdin=theirs.fileno(), stdout=theirs.fileno(),
                                   stderr=stderr, close_fds=True,
                                   start_new_session=True)
    except OSError as exc:
        ours.close()
        raise ViaError(f"--via {command!r}: cannot start it: {exc.strerror or exc}") from None
    finally:
        theirs.close()
    return ours, process


def logged_via(command: str, log: ViaLog) -> tuple[socket.socket, subprocess.Popen[bytes], int]:
    """`via_socket` with the command's stderr into `log`: our end, the process, and the log's
    size before it (for `ViaLog.said`). Blocking: a caller on an event loop runs it in a
    thread, and ends what it started with `abandon_via` if it stops waiting for it."""
    fd, since = log.open()
    try:
        sock, process = via_socket(command, fd)
    finally:
        os.close(fd)  # (the command has its own copy)
    return sock, process, since


def abandon_via(sock: socket.socket, process: subprocess.Popen[bytes]) -> None:
    """End a `--via` command nobody will talk to (its starter was cancelled while it started),
    without blocking: our end closed, the command terminated, then reaped (killed if it has
    not ended in 2 s) in a thread of its own. It runs in its own session: nothing else would
    end it."""
    sock.close()
    with contextlib.suppress(OSError):
        process.terminate()

    def reap() -> None:
        try:
            process.wait(2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    threading.Thread(target=reap, name="cockpit-via-reap", daemon=True).start()


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
