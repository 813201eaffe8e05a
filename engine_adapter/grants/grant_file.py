"""One saved-grants file: read with clear errors, written atomically under a lock.

The format (TOML, one table a grant or deny rule)::

    version = 1
    project = "/home/me/src/app"      # project files only: the project's canonical path

    [grant.g-3f9a2c1b]
    tool = "shell"
    prefix = "git status"
    max_tier = 3
    created = 2025-06-01T10:00:00Z
    last_used = 2025-06-02T11:30:00Z  # absent until first used
    note = "allowed from the approval bar"

    [deny.d-81b2c3e4]
    tool = "shell"                    # or "*": every tool
    prefix = "git push"
    created = 2025-06-01T10:05:00Z

Reading never raises and never trusts part of a broken file: a file that is not valid TOML, has
an unknown key or a wrong type, is too big, is a symbolic link, is not the user's own, or can be
written by other users allows nothing (`broken` says why, with the line). Its deny rules that
can be read still deny: a broken file never makes cockpit allow more. A grant the current rules
would not produce is ignored and reported (`problems`).

Writing (`update`) takes an exclusive lock beside the file, reads it again, changes it and
replaces it with a temporary file that was written and fsynced first: concurrent cockpits never
lose each other's grants, and a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine_adapter.atomic import replace_file
from engine_adapter.grants.records import MAX_NOTE, DenyRule, SavedGrant, Scope, text_problem

__all__ = ["MAX_ENTRIES", "MAX_FILE_BYTES", "GrantFile", "GrantFileError", "read_grant_file",
           "update_grant_file"]

FORMAT_VERSION = 1
MAX_FILE_BYTES = 512 * 1024
"""A grants file larger than this is not read (thousands of grants; no cockpit writes that)."""
MAX_ENTRIES = 2_000
LOCK_TIMEOUT = 10.0  # seconds to wait for another cockpit's write

_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
_TOML_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")
_GRANT_KEYS = {"tool": str, "prefix": str, "max_tier": int, "created": datetime,
               "last_used": datetime, "note": str}
_DENY_KEYS = {"tool": str, "prefix": str, "created": datetime, "last_used": datetime,
              "note": str}
_REQUIRED = {"grant": ("tool", "prefix", "max_tier", "created"),
             "deny": ("tool", "prefix", "created")}


class GrantFileError(Exception):
    """A grants file could not be changed; the message is one line for the user."""


@dataclass
class GrantFile:
    """What one file holds, as far as it can be trusted.

    `broken`: why the file allows nothing (None: it was read). `ignored`: entries the current
    rules would not honour (kept in the file, never applied); `problems`: one line each for
    what was ignored. `stamp` identifies the version read (to notice another writer).
    """

    path: Path
    scope: Scope
    project: str | None = None
    grants: dict[str, SavedGrant] = field(default_factory=dict)
    denies: dict[str, DenyRule] = field(default_factory=dict)
    ignored: dict[str, SavedGrant | DenyRule] = field(default_factory=dict)
    broken: str | None = None
    problems: list[str] = field(default_factory=list)
    stamp: tuple[int, int, int] | None = None

    def ids(self) -> set[str]:
        """Every id in the file."""
        return set(self.grants) | set(self.denies) | set(self.ignored)


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """(mtime, size, inode) of `path`, or None when it does not exist (not followed)."""
    try:
        st = path.lstat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# -- reading ----------------------------------------------------------------------------------

def read_grant_file(path: Path, scope: Scope, project: str | None = None) -> GrantFile:
    """Read `path` as the grants of `scope` (for `project`, a project file). Never raises."""
    found = GrantFile(path, scope, project)
    try:
        text, found.stamp = _read_trusted(path)
    except _Broken as exc:
        found.broken = f"{path}: {exc}"
        return found
    if text is None:
        return found
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = _TOML_LINE.search(str(exc))
        message = _TOML_LINE.sub("", str(exc)).strip()
        found.broken = f"{path}: line {where.group(1)}: {message}" if where \
            else f"{path}: {message}"
        return found
    except RecursionError:
        found.broken = f"{path}: nested too deeply to read"
        return found
    broken = _check(raw, found, text)
    if broken is not None:
        found.broken = f"{path}: {broken}"
        found.grants = {}  # a broken file allows nothing; its readable deny rules still deny
    return found


class _Broken(Exception):
    pass


def _read_trusted(path: Path) -> tuple[str | None, tuple[int, int, int] | None]:
    """The file's text, if it is a regular file of the user's, not writable by others and not
    too big; (None, None) when there is none. Raises `_Broken` saying what is wrong."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Broken("is a symbolic link; grants are read only from a regular file") \
                from None
        raise _Broken(f"cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Broken("is not a regular file")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise _Broken("belongs to another user; cockpit reads only your own grants")
        if st.st_mode & 0o022:
            raise _Broken(f"can be changed by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                          f"run: chmod 600 {path}")
        if st.st_size > MAX_FILE_BYTES:
            raise _Broken(f"is larger than {MAX_FILE_BYTES // 1024} KiB")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _Broken(f"is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8"), (st.st_mtime_ns, st.st_size, st.st_ino)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _Broken(f"line {line}: not UTF-8 text") from None


def _check(raw: dict[str, Any], found: GrantFile, text: str) -> str | None:
    """Fill `found` from the parsed file; the first structural problem, or None."""
    extra = sorted(set(raw) - {"version", "project", "grant", "deny"})
    if extra:
        return f"line {_key_line(text, extra[0])}: unknown setting {extra[0]!r}"
    version = raw.get("version", FORMAT_VERSION)
    if isinstance(version, bool) or version != FORMAT_VERSION:
        return f"version must be {FORMAT_VERSION} (written by a newer cockpit?)"
    recorded = raw.get("project")
    if found.scope == "project":
        if recorded != found.project:
            return (f"records project {recorded!r}, not {found.project!r}: a grant never "
                    "applies to another project")
    elif recorded is not None:
        return "a user grants file names no project"
    first: str | None = None
    total = 0
    for kind in ("grant", "deny"):
        tables = raw.get(kind, {})
        if not isinstance(tables, dict):
            return f"line {_key_line(text, kind)}: {kind} must be tables ([{kind}.ID])"
        total += len(tables)
        if total > MAX_ENTRIES:
            return f"holds more than {MAX_ENTRIES:,} entries"
        for entry_id, table in tables.items():
            line = _table_line(text, kind, entry_id)
            problem = _entry(kind, entry_id, table, found)
            if problem is not None and first is None:
                first = f"line {line}: [{kind}.{_shown(entry_id)}] {problem}"
            if problem is None:
                _judge(kind, entry_id, line, found)
    return first


def _entry(kind: str, entry_id: object, table: object, found: GrantFile) -> str | None:
    """Build one entry into `found`; its structural problem, or None."""
    if not isinstance(entry_id, str) or not _ID.fullmatch(entry_id):
        return "an id is letters, digits, - and _ (at most 40)"
    if entry_id in found.ids():
        return "the id is used twice"
    if not isinstance(table, dict):
        return "must be a table"
    keys = _GRANT_KEYS if kind == "grant" else _DENY_KEYS
    unknown = sorted(set(table) - set(keys))
    if unknown:
        return f"unknown key {unknown[0]!r}"
    missing = [k for k in _REQUIRED[kind] if k not in table]
    if missing:
        return f"{missing[0]} is missing"
    for key, value in table.items():
        want = keys[key]
        if isinstance(value, bool) or not isinstance(value, want):
            return f"{key} must be {'a date-time' if want is datetime else want.__name__}"
    problem = (text_problem(table["tool"], "tool", 100) or text_problem(table["prefix"],
                                                                        "prefix", 1_000)
               or text_problem(table.get("note", ""), "note", MAX_NOTE))
    if problem is not None:
        return problem
    if kind == "grant" and not 1 <= table["max_tier"] <= 3:
        return "max_tier must be 1, 2 or 3 (tier 4 is never granted)"
    common = {"id": entry_id, "scope": found.scope, "tool": table["tool"],
              "prefix": table["prefix"], "created": _utc(table["created"]),
              "last_used": _utc(table["last_used"]) if "last_used" in table else None,
              "note": table.get("note", "")}
    if kind == "grant":
        found.grants[entry_id] = SavedGrant(max_tier=table["max_tier"], **common)
    else:
        found.denies[entry_id] = DenyRule(**common)
    return None


def _judge(kind: str, entry_id: str, line: int, found: GrantFile) -> None:
    """Drop an entry the current rules would not honour, saying so."""
    entry: SavedGrant | DenyRule = (found.grants if kind == "grant" else found.denies)[entry_id]
    problem = entry.problem()
    if problem is None:
        return
    found.ignored[entry_id] = (found.grants if kind == "grant" else found.denies).pop(entry_id)
    what = f"{_shown(entry.tool)} `{_shown(entry.prefix)}`"
    found.problems.append(f"{found.path}: line {line}: {kind} {entry_id} ({what}) ignored: "
                          f"{problem}")


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _shown(value: object, limit: int = 60) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table_line(text: str, kind: str, entry_id: object) -> int:
    """The line of `[kind.entry_id]` (1 when it cannot be found)."""
    key = re.escape(str(entry_id))
    gap = r"[ \t]*"  # spaces only: a header is one line
    pattern = re.compile(rf"^{gap}\[{gap}{kind}{gap}\.{gap}(?:{key}|\"{key}\"|'{key}'){gap}\]",
                         re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _key_line(text: str, key: str) -> int:
    match = re.search(rf"^[ \t]*\[?[ \t]*{re.escape(key)}\b", text, re.M)
    return text.count("\n", 0, match.start()) + 1 if match else 1


# -- writing ----------------------------------------------------------------------------------

def _toml_string(value: str) -> str:
    """A TOML basic string (JSON escapes are TOML's, except that DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_time(value: datetime) -> str:
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def dump_grant_file(found: GrantFile) -> str:
    """The TOML text of `found` (its grants and deny rules)."""
    lines = [f"# cockpit saved grants, {found.scope} scope. Written by cockpit: list them with",
             "# `cockpit grants list`, remove one with `cockpit grants revoke ID`.",
             f"version = {FORMAT_VERSION}"]
    if found.project is not None:
        lines.append(f"project = {_toml_string(found.project)}")
    entries: list[tuple[str, SavedGrant | DenyRule]] = [
        *(("grant", g) for g in found.grants.values()),
        *(("deny", d) for d in found.denies.values()),
        *(("grant" if isinstance(e, SavedGrant) else "deny", e) for e in found.ignored.values())]
    for kind, entry in entries:
        lines += ["", f"[{kind}.{entry.id}]", f"tool = {_toml_string(entry.tool)}",
                  f"prefix = {_toml_string(entry.prefix)}"]
        if isinstance(entry, SavedGrant):
            lines.append(f"max_tier = {entry.max_tier}")
        lines.append(f"created = {_toml_time(entry.created)}")
        if entry.last_used is not None:
            lines.append(f"last_used = {_toml_time(entry.last_used)}")
        if entry.note:
            lines.append(f"note = {_toml_string(entry.note)}")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """An exclusive lock on `<dir>/.<name>.lock`, waited for up to `timeout` seconds."""
    lock_path = path.with_name(f".{path.name}.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise GrantFileError(f"{path} is locked by another cockpit; try again") \
                        from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def update_grant_file(path: Path, scope: Scope, project: str | None,
                      change: Callable[[GrantFile], Any], *,
                      timeout: float = LOCK_TIMEOUT) -> GrantFile:
    """Lock `path`, read it again, apply `change` to it and write it back atomically.

    Returns the file as written. Raises `GrantFileError` when it cannot: the folder cannot be
    made, the lock is held too long, or the file on disk is broken (a broken file is left as
    it is for the user to see, never overwritten).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _locked(path, timeout):
            current = read_grant_file(path, scope, project)
            if current.broken is not None:
                raise GrantFileError(f"{current.broken} — fix or remove it first")
            change(current)
            replace_file(path, dump_grant_file(current), mode=0o600)
            current.stamp = file_stamp(path)
            return current
    except OSError as exc:
        raise GrantFileError(f"could not write {path}: {exc.strerror or exc}") from None
