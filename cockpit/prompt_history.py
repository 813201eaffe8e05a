"""`PromptHistory`: the prompts sent in one project (workspace), kept across runs in the data
directory, for the message box's `up` and `ctrl+r`.

One JSON Lines file a project, `<data_dir>/history/<hash of the workspace's real path>.jsonl`,
each line `{"text": …, "ts": …, "workspace": …}`. Its contents are the human's own words, but
the file is still read as untrusted: a line that is not JSON, not UTF-8 or has no text is
skipped; a file over `READ_LIMIT` bytes, or one that is not a regular file, is not read at all.
Either way the history says so once (`Loaded.note`) and never raises. It is opened with
`O_NOFOLLOW | O_NONBLOCK` (a symbolic link or a FIFO put in its place is refused, as for the
journals), appended one line a prompt, and rewritten to the newest `KEEP` prompts once it holds
twice as many. Every method here blocks on the disk: the app calls them off its event loop.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from cockpit.paths import data_dir
from engine_adapter.atomic import replace_file

__all__ = ["KEEP", "READ_LIMIT", "TEXT_LIMIT", "Loaded", "PromptHistory"]

KEEP = 500
"""Prompts kept per project (the newest)."""
READ_LIMIT = 4 * 1024 * 1024
"""A history file bigger than this is not read (it was not written by the cockpit)."""
TEXT_LIMIT = 20_000
"""Characters of one prompt kept (the message box's own limit)."""

_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK


@dataclass(frozen=True)
class Loaded:
    """The prompts read, oldest first, and what could not be read (one sentence, or None)."""

    prompts: tuple[str, ...]
    note: str | None = None


class PromptHistory:
    """The prompt history of one project (see the module docstring).

    Args:
        path: The history file.
        workspace: The project's folder, as recorded with each prompt.
    """

    def __init__(self, path: Path, workspace: str) -> None:
        self.path = path
        self.workspace = workspace
        self._lines: int | None = None  # lines in the file, once read or written

    @classmethod
    def for_workspace(cls, workspace: str | os.PathLike[str]) -> PromptHistory:
        """The history of the project at `workspace` (its real path names the file)."""
        real = os.path.realpath(os.fspath(workspace))
        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        return cls(data_dir() / "history" / f"{digest}.jsonl", real)

    def load(self) -> Loaded:
        """The prompts of this project, oldest first, at most `KEEP`; never raises."""
        try:
            data = self._read()
        except FileNotFoundError:
            self._lines = 0
            return Loaded(())
        except _Unread as exc:
            return Loaded((), f"prompt history not read: {exc}")
        except OSError as exc:
            return Loaded((), f"prompt history not read: {self.path}: "
                              f"{exc.strerror or exc}")
        prompts: list[str] = []
        bad = 0
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            text = _text_of(line)
            if text is None:
                bad += 1
            else:
                prompts.append(text)
        self._lines = len(lines)
        note = (f"prompt history: {bad} unreadable line{'s' if bad > 1 else ''} skipped in "
                f"{self.path}") if bad else None
        return Loaded(tuple(prompts[-KEEP:]), note)

    def _read(self) -> bytes:
        fd = os.open(self.path, os.O_RDONLY | _FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _Unread(f"{self.path} is not a regular file")
            if info.st_size > READ_LIMIT:
                raise _Unread(f"{self.path} is {info.st_size / 1e6:.1f} MB (a history is at "
                              f"most {READ_LIMIT // (1024 * 1024)} MB); remove it to start "
                              "a new one")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)[:READ_LIMIT]
        finally:
            os.close(fd)

    def add(self, text: str) -> str | None:
        """Append `text` (cut to `TEXT_LIMIT`); None, or why it could not be kept."""
        if not text.strip():
            return None
        line = json.dumps({"text": text[:TEXT_LIMIT], "ts": round(time.time(), 3),
                           "workspace": self.workspace}, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self._lines is None:
                self.load()  # (counts the lines: the rewrite below needs it)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, 0o600)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return f"prompt history not kept: {self.path} is not a regular file"
                os.write(fd, line.encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
        except OSError as exc:
            return f"prompt history not kept: {self.path}: {exc.strerror or exc}"
        self._lines = (self._lines or 0) + 1
        if self._lines > 2 * KEEP:
            return self._compact()
        return None

    def _compact(self) -> str | None:
        """Rewrite the file with the newest `KEEP` prompts (a new file put in its place)."""
        loaded = self.load()
        kept = "".join(json.dumps({"text": prompt, "workspace": self.workspace},
                                  ensure_ascii=False) + "\n" for prompt in loaded.prompts)
        try:  # (a link in its place is replaced itself, never its target)
            replace_file(self.path, kept.encode("utf-8", "surrogateescape"), mode=0o600)
        except OSError as exc:
            return f"prompt history not compacted: {exc.strerror or exc}"
        self._lines = len(loaded.prompts)
        return None


class _Unread(Exception):
    """A history file that is not read (the message says why)."""


def _text_of(line: bytes) -> str | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    text = record.get("text") if isinstance(record, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    return text[:TEXT_LIMIT]
