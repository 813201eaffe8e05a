"""The write-ahead journal: one event a line, UTF-8 JSON Lines, appended and flushed per event.

Writing goes straight to the file descriptor (`os.write` of one whole line), so every event is in
the kernel before the Session lets anyone see it; `fsync` decides how often it is forced to disk.

One writer at a time: opening takes an exclusive `flock` on the file (a second writer gets a
`JournalError` naming the writer's pid), so the tail repair of a reopened journal never cuts
another writer's line in flight. Readers never lock and never repair.

Reading survives a crash: a torn last line (no newline, not valid) is skipped and reported; a bad
line anywhere else is corruption, raised as `JournalError` with its line number (or, with
`strict=False`, skipped and counted). A UTF-8 byte order mark at the start of a line is ignored.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import from_json

from engine_adapter.events import (
    EVENT_ADAPTER,
    BaseEvent,
    HarnessEvent,
    bounded_line,
    parse_error_text,
)
from engine_adapter.journal.chain import SEED, chain_of, mark_line, unmarked

__all__ = [
    "BOM",
    "FsyncPolicy",
    "JournalError",
    "JournalReader",
    "JsonlEventJournal",
    "decode_json",
    "is_blank",
    "read_journal",
    "writer_alive",
    "writer_pid",
]

FsyncPolicy = Literal["always", "boundary", "never"]

# Events after which `fsync="boundary"` forces the file to disk: a human decision, a turn's end,
# the run's end. A crash loses at most the streamed text since the last of these.
BOUNDARY_TYPES = frozenset({"approval_requested", "approval_resolved", "turn_end", "agent_end"})

BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte order mark: an editor may put one at the start of a file; readers skip it."""

PROC_LOCKS = "/proc/locks"  # Linux: every lock held, with its holder's pid

_JSON_SPACE = b" \t\r\n"  # the whitespace JSON allows around a value (not \v or \f)


def is_blank(raw: bytes) -> bool:
    """Whether a line holds nothing but JSON whitespace: skipped by every reader, not a bad line
    (a line of form feeds is a bad line: the event parser would refuse it beside an event)."""
    return not raw.strip(_JSON_SPACE)


def decode_json(raw: bytes | str) -> Any:
    """The JSON value of one journal line (a leading byte order mark skipped), for readers that
    look at lines without validating them as events.

    Raises only `ValueError`: for text that is not one JSON value, not UTF-8, or nested more than
    200 levels (where Python's `json` would raise `RecursionError` out of the reader).
    """
    if isinstance(raw, bytes) and raw.startswith(BOM):
        raw = raw[3:]
    return from_json(raw)


class JournalError(Exception):
    """A journal could not be opened, written or read. `line` is the 1-based bad line, if any."""

    def __init__(self, message: str, *, line: int | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.path = path


class JsonlEventJournal:
    """Appends events to a JSON Lines file. Opening fails at once, with a clear `JournalError`,
    for a path that cannot be written — never mid-run."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: FsyncPolicy = "boundary") -> None:
        if fsync not in ("always", "boundary", "never"):
            raise ValueError(f"fsync must be 'always', 'boundary' or 'never', not {fsync!r}")
        self.path = Path(path)
        self.fsync = fsync
        self._sync_all = fsync == "always"
        self._sync_boundary = fsync == "boundary"
        self.events_written = 0
        self._link = SEED  # the chain value of the journal's last line (`journal.chain`)
        if self.path.is_dir():
            raise JournalError(
                f"journal path {str(self.path)!r} is a directory; give a file path, "
                "e.g. --journal run.jsonl", path=str(self.path))
        try:
            fd = _open_no_links(self.path)
        except _LinkRefused as exc:
            raise JournalError(str(exc), path=str(self.path)) from None
        except OSError as exc:
            raise JournalError(
                f"cannot open journal {str(self.path)!r} for writing: {exc.strerror or exc}; "
                "choose another path with --journal", path=str(self.path)) from None
        try:
            # A device or a pipe (/dev/stdout, /dev/full) is a stream: nothing to lock, repair or
            # force to disk (fsync would fail on it).
            self._regular = stat.S_ISREG(os.fstat(fd).st_mode)
            if not self._regular:
                self._sync_all = self._sync_boundary = False
            else:
                _lock(fd, self.path)
                with contextlib.suppress(OSError):  # best effort: a read-only tail still appends
                    _repair_tail(fd, self.path)
                with contextlib.suppress(OSError):  # a resumed run continues the chain
                    self._link = _last_link(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd

    def write(self, event: BaseEvent, *, line: bytes | None = None) -> None:
        """Append one event as one line, in one `write` call, and flush it to the kernel.

        `line` is the event already serialised (`bounded_line(event)[1]`), when the caller has
        it: the Session serialises each event once, for the journal and its history alike.
        Without it, the event is serialised here, within the same caps (`events.caps`).
        """
        fd = self._fd
        if fd is None:
            raise JournalError(f"journal {str(self.path)!r} is closed", path=str(self.path))
        data, link = mark_line(line if line is not None else bounded_line(event)[1], self._link)
        written = 0
        try:
            written = os.write(fd, data)
            while written < len(data):  # a short write (signal, full disk): finish the line
                written += os.write(fd, data[written:])
            if self._sync_all or (self._sync_boundary and event.type in BOUNDARY_TYPES):
                os.fsync(fd)
        except OSError as exc:
            if 0 < written < len(data) and self._regular:
                # The disk took part of the line: take it back, so the journal ends with a
                # whole event rather than a torn line (this is its only writer: it is locked).
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, os.fstat(fd).st_size - written)
            raise JournalError(
                f"cannot write journal {str(self.path)!r}: {exc.strerror or exc}",
                path=str(self.path)) from None
        self._link = link  # only once the line is in: a line taken back is no link
        self.events_written += 1

    def close(self) -> None:
        """Force the file to disk (unless fsync is "never") and close it, which releases the
        lock. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self.fsync != "never" and self._regular:
                os.fsync(fd)
        finally:
            os.close(fd)

    @property
    def closed(self) -> bool:
        """Whether `close()` has been called."""
        return self._fd is None

    def __enter__(self) -> JsonlEventJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LinkRefused(Exception):
    """A journal path that is, or passes through, a symbolic link."""


_STREAMS = ("/dev/", "/proc/")  # the system's own streams (/dev/stdout is a link): no repair


def _open_no_links(path: Path) -> int:
    """Open (creating it and its folders) the journal for appending and reading, following no
    symbolic link: not the file's (`O_NOFOLLOW`), nor any folder's on the way (each is opened
    relative to the one above, `O_NOFOLLOW | O_DIRECTORY`). A repository's
    `logs/cockpit.jsonl -> ~/.bash_login` must not become a journal outside the workspace."""
    flags = os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    full = Path(os.path.abspath(path))
    if str(full).startswith(_STREAMS):
        return os.open(full, os.O_WRONLY | flags, 0o644)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    directory = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow | getattr(
        os, "O_CLOEXEC", 0)
    parts = full.parent.parts
    fd = os.open(parts[0], directory)
    try:
        walked = Path(parts[0])
        for part in parts[1:]:
            walked = walked / part
            try:
                next_fd = os.open(part, directory, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
                next_fd = os.open(part, directory, dir_fd=fd)
            except OSError as exc:
                if os.path.islink(walked):
                    raise _LinkRefused(
                        f"journal path {str(path)!r}: the folder {str(walked)!r} is a symbolic "
                        f"link; give the real path ({os.path.realpath(path)!r}) with --journal"
                    ) from None
                raise exc
            os.close(fd)
            fd = next_fd
        try:
            return os.open(full.name, os.O_RDWR | flags | nofollow, 0o644, dir_fd=fd)
        except PermissionError:
            return os.open(full.name, os.O_WRONLY | flags | nofollow, 0o644, dir_fd=fd)
        except OSError:
            if os.path.islink(full):
                raise _LinkRefused(
                    f"journal path {str(path)!r} is a symbolic link (to "
                    f"{os.readlink(full)!r}); a journal is never written through one: give "
                    "another path with --journal") from None
            raise
    finally:
        os.close(fd)


def _lock(fd: int, path: Path) -> None:
    """Make this the journal's only writer, or raise `JournalError` naming the one there is."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = writer_pid(fd)
        who = f"another process (pid {pid})" if pid else "another process"
        raise JournalError(
            f"journal {str(path)!r} is being written by {who}; wait for that run to end, or "
            "give this run another journal with --journal", path=str(path)) from None
    except OSError:
        pass  # a filesystem without locks: write as before rather than refuse to record


def writer_pid(fd: int) -> int | None:
    """The pid of the process holding the write lock on the file open at `fd`, from the
    kernel's own table (Linux `/proc/locks`: never stale, unlike a pid file); `None` where that
    table is missing or does not name it (another pid namespace, a filesystem whose device
    number `stat` reports differently)."""
    try:
        with open(PROC_LOCKS, encoding="ascii", errors="replace") as f:
            table = f.read()
    except OSError:
        return None
    info = os.fstat(fd)
    exact = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    by_inode: set[int] = set()
    for row in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 12200 fe:00:2154706 0 EOF"; waiters are marked "->".
        parts = row.split()
        if len(parts) < 6 or parts[1] != "FLOCK" or parts[3] != "WRITE" or "->" in parts:
            continue
        try:
            pid = int(parts[4])
        except ValueError:
            continue
        if pid <= 0:
            continue
        if parts[5] == exact:
            return pid
        if parts[5].rsplit(":", 1)[-1] == str(info.st_ino):
            by_inode.add(pid)
    # btrfs and some overlays number devices differently in stat: an inode alone, if unique.
    return by_inode.pop() if len(by_inode) == 1 else None


def writer_alive(path: str | os.PathLike[str]) -> bool | None:
    """Whether a live process holds the journal's write lock (a run still writing it): `True`
    or `False`, or `None` where it cannot be told (no such file, a filesystem without locks).

    A writer holds its lock until it closes the journal, and the kernel drops it when the
    process dies: a journal with no `agent_end` and no lock was left by a run that crashed.
    The lock table is read first (`writer_pid`: takes no lock); only when it names no writer is
    a shared lock tried and dropped at once (a writer opening the file in that instant would be
    refused, as for any second writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        if writer_pid(fd):
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        return False  # (closing the descriptor drops the shared lock)
    finally:
        os.close(fd)


def _repair_tail(fd: int, path: Path) -> None:
    """Before appending to an existing journal, deal with a line torn by an earlier crash: a
    complete event that only lacks its newline gets one; torn bytes are cut off (as SQLite's WAL
    and Kafka do), so appending never turns a torn tail into corruption in the middle."""
    size = os.fstat(fd).st_size
    if not size:
        return
    # Read through the descriptor opened without links, never by path again (a link swapped in
    # meanwhile would have its target's last line cut).
    start, tail = size, b""
    while start > 0:  # walk back until the torn line's start (the previous newline)
        step = min(start, 1 << 16)
        start -= step
        tail = os.pread(fd, step, start) + tail
        if tail[:-1].rfind(b"\n") >= 0 or tail.endswith(b"\n"):
            break
    if tail.endswith(b"\n"):
        return
    line_start = start + tail.rfind(b"\n") + 1
    torn = tail[line_start - start:]
    try:
        EVENT_ADAPTER.validate_json(torn[3:] if torn.startswith(BOM) else torn)
    except ValidationError:
        os.ftruncate(fd, line_start)
    else:
        os.write(fd, b"\n")


def _last_link(fd: int) -> bytes:
    """The chain value of the file's last non-blank line (read through `fd`, never by path):
    what the next line chains to. `SEED` for an empty file or one whose last line has no mark
    (a journal of an older version: the chain starts with the first line this run adds)."""
    end = os.fstat(fd).st_size
    tail = b""
    start = end
    while start > 0:
        step = min(start, 1 << 16)
        start -= step
        tail = os.pread(fd, step, start) + tail
        stripped = tail.rstrip(_JSON_SPACE)
        cut = stripped.rfind(b"\n")
        if stripped and (cut >= 0 or start == 0):
            marked = chain_of(stripped[cut + 1:])
            return SEED if marked is None else marked[1]
    return SEED


class JournalReader(Iterator[HarnessEvent]):
    """Iterates a journal's events. After (or during) iteration it reports what it skipped:
    `torn_tail` (a crash cut the last line), `bad_lines` (1-based numbers of corrupt lines,
    only when not strict) and `lines_read`."""

    def __init__(self, path: str | os.PathLike[str], *, strict: bool = True) -> None:
        self.path = Path(path)
        self.strict = strict
        self.torn_tail = False
        self.bad_lines: list[int] = []
        self.lines_read = 0
        if self.path.is_dir():
            raise JournalError(f"{str(self.path)!r} is a directory, not a journal file",
                               path=str(self.path))
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 - closed when iteration ends
        except OSError as exc:
            raise JournalError(f"cannot read journal {str(self.path)!r}: {exc.strerror or exc}",
                               path=str(self.path)) from None
        self._iter = self._events()

    def __next__(self) -> HarnessEvent:
        return next(self._iter)

    def close(self) -> None:
        """Stop reading and close the file."""
        self._iter.close()
        self._file.close()

    def _events(self) -> Generator[HarnessEvent, None, None]:
        validate = EVENT_ADAPTER.validate_json
        number = 0
        with self._file as f:
            pending: bytes | None = None  # one line of look-ahead, to know which line is last
            for raw in f:
                if pending is not None:
                    number += 1
                    event = self._parse(validate, pending, number, last=False)
                    if event is not None:
                        yield event
                pending = raw
            if pending is not None:
                number += 1
                event = self._parse(validate, pending, number, last=True)
                if event is not None:
                    yield event
        self.lines_read = number

    def _parse(self, validate: Callable[[bytes], HarnessEvent], raw: bytes, number: int, *,
               last: bool) -> HarnessEvent | None:
        self.lines_read = number
        if is_blank(raw):
            return None  # blank lines (e.g. the separator written after a torn tail) are harmless
        if raw.startswith(BOM):
            raw = raw[3:]
        try:
            return validate(unmarked(raw))  # (the chain mark is the file's, not the event's)
        except ValidationError as exc:
            if last and not raw.endswith(b"\n"):
                self.torn_tail = True  # a crash mid-write: the only line allowed to be bad
                return None
            if self.strict:
                raise JournalError(
                    f"{self.path}: line {number} is not a valid event ({parse_error_text(exc)})",
                    line=number, path=str(self.path)) from None
            self.bad_lines.append(number)
            return None


def read_journal(path: str | os.PathLike[str], *, strict: bool = True) -> JournalReader:
    """Iterate the events of a journal file, in order.

    A torn last line is skipped (`reader.torn_tail` is then true). With `strict` (the default) a
    bad line elsewhere raises `JournalError` naming the line; without it, the line is skipped and
    its number added to `reader.bad_lines`. A missing file or a directory raises `JournalError`.
    """
    return JournalReader(path, strict=strict)
