"""Reading and writing an agent's files safely: regular files only, never through a hard link,
never blocking the event loop.

Both engines read and write workspace files for an agent, and an agent chooses the path. A FIFO
blocks `open()` until someone opens the other end; a device or a socket is not text; a file with
a second hard link may be the same inode as a file outside the workspace. So:

- a file is opened with `O_NONBLOCK | O_NOFOLLOW` (a FIFO opens at once, a symlink swapped in
  after the path was resolved is refused) and checked with `fstat` on the open descriptor (no
  stat-then-open race); anything but a regular file is refused, naming what it is;
- a write is refused when the file has more than one hard link (the cockpit never writes through
  a link: the other names may be outside the workspace); it truncates only after the checks;
- `off_loop` runs such work in a worker thread with a timeout, so the loop never waits on a disk.

Errors are `FileRefused`, whose message is one line, safe to show the human and the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "FILE_IO_SECONDS",
    "FileRefused",
    "check_writable",
    "describe_error",
    "off_loop",
    "read_regular",
    "write_regular",
]

T = TypeVar("T")

FILE_IO_SECONDS = 30.0
"""How long one file operation may take in its worker thread before the call gives up."""

_OPEN_FLAGS = os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


class FileRefused(Exception):
    """A file the cockpit will not read or write (or could not); the message says why."""


def _short(shown: str, limit: int = 120) -> str:
    """A path short enough that the reason after it is still read (a hostile name may be
    thousands of characters)."""
    return shown if len(shown) <= limit else f"{shown[:70]}…{shown[-40:]}"


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def describe_error(exc: OSError, shown: str, verb: str) -> str:
    """One line for an `OSError` met while trying to `verb` the file shown as `shown`."""
    shown = _short(shown)
    code = exc.errno
    if code == errno.ENOENT:
        return f"{shown} does not exist"
    if code == errno.EISDIR:
        return f"{shown} is a directory"
    if code == errno.ENOTDIR:
        return f"a part of {shown} is not a directory"
    if code == errno.ELOOP:
        return f"{shown} is a symbolic link or a loop of them; give the path of the file itself"
    if code == errno.ENAMETOOLONG:
        return f"{shown}: the file name is too long"
    if code == errno.ENXIO:
        return f"{shown} is not a regular file (a FIFO with no reader, or a socket)"
    return f"cannot {verb} {shown}: {exc.strerror or exc}"


def _refuse(info: os.stat_result, shown: str, *, writing: bool) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"{shown} is {_kind(info.st_mode)}; only regular files can be "
                          f"{'written' if writing else 'read'}")
    if writing and info.st_nlink > 1:
        raise FileRefused(f"{shown} has {info.st_nlink} hard links; writing it would change "
                          "the file under its other names too (they may be outside the "
                          "workspace), so it is refused; write a new file instead")


def _check(fd: int, shown: str, *, writing: bool) -> os.stat_result:
    info = os.fstat(fd)
    _refuse(info, shown, writing=writing)
    return info


def _precheck(path: str, shown: str, *, writing: bool) -> bool:
    """Refuse a special file before even opening it (opening some devices has effects);
    True if the file exists. The check that counts is `_check` on the open descriptor."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise FileRefused(describe_error(exc, shown, "write" if writing else "read")) from None
    _refuse(info, shown, writing=writing)
    return True


def check_writable(path: str, shown: str) -> bool:
    """Refuse now what `write_regular` would refuse (so nobody is asked to approve a write that
    cannot happen); True if the file exists. `write_regular` checks again, on the open file."""
    return _precheck(path, _short(shown), writing=True)


def read_regular(path: str, shown: str, *, max_bytes: int,
                 missing_ok: bool = False) -> bytes | None:
    """The bytes of the regular file at `path` (`shown` names it in errors).

    Refused: anything but a regular file, a symbolic link as the last component, a file over
    `max_bytes`. A missing file is `None` with `missing_ok`, else refused.
    """
    shown = _short(shown)
    try:
        if not _precheck(path, shown, writing=False):
            if missing_ok:
                return None
            raise FileRefused(f"{shown} does not exist")
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise FileRefused(f"{shown} does not exist") from None
    except OSError as exc:
        raise FileRefused(describe_error(exc, shown, "read")) from None
    try:
        info = _check(fd, shown, writing=False)
        if info.st_size > max_bytes:
            raise FileRefused(f"{shown} is too big to read ({info.st_size:,} bytes; the limit "
                              f"is {max_bytes:,})")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # it grew while we read
                raise FileRefused(f"{shown} is too big to read (over {max_bytes:,} bytes)")
        return b"".join(chunks)
    except OSError as exc:
        raise FileRefused(describe_error(exc, shown, "read")) from None
    finally:
        os.close(fd)


def write_regular(path: str, shown: str, data: bytes) -> bool:
    """Replace the contents of the regular file at `path` with `data` (created if missing, in
    an existing directory); True if it was created. Refused: anything but a regular file, a
    symbolic link as the last component, a file with more than one hard link."""
    shown = _short(shown)
    try:
        _precheck(path, shown, writing=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o666)
            created = True
        except FileExistsError:
            fd = os.open(path, os.O_WRONLY | _OPEN_FLAGS)
            created = False
    except OSError as exc:
        raise FileRefused(describe_error(exc, shown, "write")) from None
    try:
        _check(fd, shown, writing=True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return created
    except OSError as exc:
        raise FileRefused(describe_error(exc, shown, "write")) from None
    finally:
        os.close(fd)


async def off_loop(work: Callable[[], T], *, seconds: float = FILE_IO_SECONDS,
                   what: str = "the file operation") -> T:
    """Run `work()` in a worker thread; `FileRefused` if it takes longer than `seconds`.

    The thread is a daemon of its own, not the loop's default executor: a thread cannot be
    stopped, and one stuck in the kernel (a hung network mount) must hold up neither the
    loop's shutdown (which waits for its executor) nor the interpreter's exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting task, raised there
            error = exc
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, lambda: future.set_exception(error))
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, lambda: future.set_result(result))

    threading.Thread(target=run, name=f"cockpit-io: {what}", daemon=True).start()
    try:
        return await asyncio.wait_for(future, seconds)
    except TimeoutError:
        raise FileRefused(f"{what} took longer than {seconds:g} s and was abandoned") from None
