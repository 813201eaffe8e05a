"""Helpers for the hostile-input tests: special files planted in a workspace, a guard that frees
an event loop stuck on a FIFO, a probe that the loop kept running, and process liveness."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import threading
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class Planted:
    """Special files in a workspace: name -> a word the refusal must contain."""

    workspace: Path
    outside: Path
    refusals: dict[str, str] = field(default_factory=dict)
    sockets: list[socket.socket] = field(default_factory=list)

    @property
    def fifos(self) -> list[Path]:
        return [p for p in self.workspace.rglob("*")
                if not p.is_symlink() and stat.S_ISFIFO(p.lstat().st_mode)]

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def plant(workspace: Path, outside: Path) -> Planted:
    """Plant every kind of file an agent must not be able to read or write through, in
    `workspace` (`outside` is a directory outside it, holding `secret.txt`)."""
    ws = workspace
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("outside\n")
    planted = Planted(ws, outside)
    refuse = planted.refusals
    os.mkfifo(ws / "fifo")
    refuse["fifo"] = "FIFO"
    (ws / "sub").mkdir()
    os.mkfifo(ws / "sub" / "pipe.txt")  # a FIFO with an innocent name, deeper down
    refuse["sub/pipe.txt"] = "FIFO"
    (ws / "to-fifo").symlink_to("fifo")  # a symlink inside to a FIFO inside
    refuse["to-fifo"] = "FIFO"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(ws / "sock"))
    sock.listen(1)
    planted.sockets.append(sock)
    refuse["sock"] = "socket"
    (ws / "zero").symlink_to("/dev/zero")  # a device linked in: resolves outside
    refuse["zero"] = "outside"
    (ws / "urandom").symlink_to("/dev/urandom")
    refuse["urandom"] = "outside"
    with contextlib.suppress(PermissionError, OSError):  # needs root (or CAP_MKNOD)
        os.mknod(ws / "zero-node", stat.S_IFCHR | 0o600, os.makedev(1, 5))
        refuse["zero-node"] = "character device"
    (ws / "a-dir").mkdir()
    refuse["a-dir"] = "directory"
    (ws / "loop1").symlink_to("loop2")
    (ws / "loop2").symlink_to("loop1")
    refuse["loop1"] = "link"
    (ws / "escape").symlink_to(outside / "secret.txt")
    refuse["escape"] = "outside"
    refuse["x" * 300] = "too long"
    refuse["d/" * 2100 + "f"] = "too long"
    return planted


@contextlib.contextmanager
def fifo_guard(planted: Planted, seconds: float = 30.0) -> Iterator[list[bool]]:
    """If code under test blocks on one of the FIFOs (the loop stuck in `open`), open them all
    from another thread after `seconds` (a bound against a hung test, not a timing) so the
    test can end and fail: `fired[0]` says whether that was needed."""
    fired = [False]
    stop = threading.Event()

    def free() -> None:
        if stop.wait(seconds):
            return
        fired[0] = True
        for fifo in planted.fifos:  # a partner came and went: a blocked open returns
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))

    thread = threading.Thread(target=free, daemon=True)
    thread.start()
    try:
        yield fired
    finally:
        stop.set()
        thread.join()


async def while_ticking(work: Awaitable[T]) -> tuple[T, int]:
    """Await `work` while another task counts how often it got the event loop meanwhile: a
    loop blocked by `work` gives it no turn until `work` is done."""
    ticks = 0
    done = False

    async def tick() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0)  # the ticker starts before the work does
    seen = ticks
    try:
        result = await work
    finally:
        done = True
        await ticker
    return result, ticks - seen


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


async def gone(pid: int, limit: int = 2000) -> bool:
    """Wait (a bound against hangs, not a timing) for a process to be gone."""
    for _ in range(limit):
        if not alive(pid):
            return True
        await asyncio.sleep(0.005)
    return False


def read_pids(path: Path) -> list[int]:
    """The pids a command wrote, one a line."""
    if not path.exists():
        return []
    return [int(word) for word in path.read_text().split()]


def environ_of(pid: int) -> dict[str, Any]:
    """The environment of a live process (for checking scope markers)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0")
                if "=" in item)
