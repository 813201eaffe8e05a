"""Checks of a run's options, made before anything is created (no workspace, no journal, no
folder): each raises `SetupError` with one line saying what is wrong and what to do."""

from __future__ import annotations

import math
import os
import shutil
import stat
from pathlib import Path

from cockpit.launch.factory import SetupError
from cockpit.paths import free_journal_name
from engine_adapter.journal import BOM, decode_json, writer_alive

__all__ = [
    "check_agent_program",
    "check_journal_path",
    "check_limit",
    "check_seconds",
]

_HEAD = 64 << 10  # bytes of an existing file read to see whether it is a journal


def check_seconds(option: str, value: float | None, *, hint: str) -> None:
    """A number of seconds (or a pace) must be finite and 0 or more; `hint` says what 0 or
    leaving the option out means."""
    if value is None:
        return
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise SetupError(f"{option} {value:g}: give a finite number, 0 or more ({hint})")


def check_limit(option: str, value: int) -> None:
    """A count of things to show: 0 (all) or more."""
    if value < 0:
        raise SetupError(f"{option} {value}: give 0 or more (0 lists all)")


def _is_journal(path: Path) -> bool:
    """Whether an existing regular file is a journal (so that refusing it names the run it
    holds): empty, or its first line is an event (a JSON object with a "type")."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return True  # unreadable: opening it for writing says why
    first = head.split(b"\n", 1)[0]
    if not first.strip():
        return not head.strip()
    if b"\n" not in head and first.removeprefix(BOM).startswith(b"{"):
        return True  # a first event torn by a crash: the journal repairs it when reopened
    try:
        data = decode_json(first)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("type"), str)


def check_journal_path(path: Path | None) -> Path | None:
    """`--journal PATH` can be a journal: not a folder, not under a file, not some other file
    (appending would damage it). Returns the first folder that writing it would create (so the
    caller can say so once it is created), or `None` when its folder exists."""
    if path is None:
        return None
    shown = str(path)
    if path.is_dir():
        raise SetupError(f"--journal {shown!r} is a directory; give a file path inside it, "
                         f"e.g. --journal {os.path.join(shown, 'run.jsonl')}")
    missing: Path | None = None
    for parent in path.parents:
        try:
            info = parent.stat()
        except FileNotFoundError:
            missing = parent
            continue
        except NotADirectoryError:
            continue  # an ancestor further up is a file: found below
        except OSError as exc:
            raise SetupError(f"--journal {shown!r}: cannot reach {str(parent)!r} "
                             f"({exc.strerror or exc}); choose another path") from None
        if not stat.S_ISDIR(info.st_mode):
            raise SetupError(f"--journal {shown!r}: {str(parent)!r} is not a directory (it is "
                             "a file), so nothing can be written under it; choose another path")
        break
    if missing is None and path.is_file():
        if not _is_journal(path):
            raise SetupError(f"--journal {shown!r} exists and is not a cockpit journal "
                             "(appending would change it); give a new file path")
        if not _is_empty(path) and not writer_alive(path):  # (a live writer: its lock says)
            raise SetupError(f"--journal {shown!r} already holds a run ({_what_it_holds(path)}); "
                             "a journal holds one run, so it is never appended to: give a new "
                             f"path, e.g. --journal {str(free_journal_name(path))!r}, or remove "
                             "the old one")
    return missing


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return True  # gone or unreadable: opening it for writing says why


def _what_it_holds(path: Path) -> str:
    """A few words on the run a journal holds: its status and task, escaped and cut."""
    from cockpit.journals import summarize
    from engine_adapter.text import printable

    summary = summarize(path)
    task = printable(summary.task, 60)
    return f"{summary.status}: {task!r}" if task else summary.status


def check_agent_program(command: str, cwd: Path) -> None:
    """The program of `--agent "COMMAND ARGS"` exists and can be run, so that an agent that
    cannot start is a setup error (exit 2) like an unknown one, not a failed run."""
    if os.sep in command:
        program = Path(command) if os.path.isabs(command) else cwd / command
        if not program.exists():
            raise SetupError(f"--agent: {command!r} does not exist; give the agent's path, "
                             "or a program on PATH")
        if program.is_dir() or not os.access(program, os.X_OK):
            raise SetupError(f"--agent: {command!r} is not an executable program; give the "
                             "agent's program (chmod +x it if it is a script)")
    elif shutil.which(command) is None:
        raise SetupError(f"--agent: {command!r} is not a program on PATH; see `cockpit agents` "
                         "or give the agent's path")
