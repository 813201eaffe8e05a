"""The project's instructions file for the built-in engine: `AGENTS.md` in the workspace, else
`CLAUDE.md`, read once a run into the model's system prompt (as Codex and Claude Code do).

The file is the workspace's, so it is read as untrusted: a regular file only (a FIFO, a device
or a folder is refused), inside the workspace (a symbolic link is followed only to a file in the
workspace: `CLAUDE.md -> AGENTS.md` is common; one pointing out is refused), text only (a NUL
byte: refused), and capped at `INSTRUCTIONS_LIMIT` characters (the rest is left out, and the
note says so). `read_instructions` blocks on the disk: the loop calls it off its event loop.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

__all__ = ["INSTRUCTIONS_LIMIT", "INSTRUCTION_FILES", "Instructions", "read_instructions"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
"""The names looked for, in order: the first that exists is read."""
INSTRUCTIONS_LIMIT = 32_000
"""Characters of the file that go into the system prompt."""

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Instructions:
    """What was found: the file's `name`, its `text` (empty when refused), how many characters
    were left out (`dropped`), and why it was not used (`refused`, one sentence)."""

    name: str
    text: str = ""
    dropped: int = 0
    refused: str | None = None

    def note(self) -> str:
        """What the transcript says about it."""
        if self.refused is not None:
            return f"{self.name} not read into the system prompt: {self.refused}"
        cut = f"; cut to the first {len(self.text):,} characters" if self.dropped else ""
        return (f"read the project's instructions from {self.name} ({len(self.text):,} "
                f"characters{cut}) into the system prompt")


def read_instructions(root: str | os.PathLike[str]) -> Instructions | None:
    """The instructions file of the workspace at `root` (None: there is none)."""
    real_root = os.path.realpath(root)
    for name in INSTRUCTION_FILES:
        path = os.path.join(real_root, name)
        if not os.path.lexists(path):
            continue
        return _read(real_root, path, name)
    return None


def _read(root: str, path: str, name: str) -> Instructions:
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        return Instructions(name, refused="it is a symbolic link to a file outside the "
                                          "workspace")
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        return Instructions(name, refused=exc.strerror or str(exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Instructions(name, refused="it is not a regular file")
        data = os.read(fd, INSTRUCTIONS_LIMIT * 4 + 4)
    except OSError as exc:
        return Instructions(name, refused=exc.strerror or str(exc))
    finally:
        os.close(fd)
    if b"\0" in data:
        return Instructions(name, refused="it is not text (it holds NUL bytes)")
    text = data.decode("utf-8", errors="replace")
    if len(text) > INSTRUCTIONS_LIMIT or info.st_size > len(data):
        whole = max(len(text), info.st_size)
        return Instructions(name, text[:INSTRUCTIONS_LIMIT], whole - INSTRUCTIONS_LIMIT)
    return Instructions(name, text)

