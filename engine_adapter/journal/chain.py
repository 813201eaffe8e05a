"""Tamper evidence for journals: a hash chain in the lines, and a pure checker for it.

The writer ends each line with `,"chain":"<16 hex>"}`: the first 16 hex digits of the SHA-256
of the previous line's chain value (ASCII) followed by this line's bytes up to that mark (the
first line starts from `SEED`). The mark goes at the end so a line still starts `{"type":…`
(the index's fast scan relies on it); readers see `chain` as an extra field and ignore it.

`check_lines` walks the lines and reports the first one that does not follow the one before it:
changed, removed before it, inserted, moved or duplicated. What the chain cannot tell: whole
lines cut off the end (that reads as a run that stopped early, and is reported as such), and a
file rewritten by someone who recomputes every mark (the chain has no secret).

Journals written before this version have no marks: they read as unchained, never as tampered.
A journal resumed from such a one is chained from the first new line on (from `SEED` again).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic_core import from_json

__all__ = ["CHAIN_KEY", "SEED", "ChainVerdict", "chain_of", "check_file", "check_lines",
           "mark_line", "next_link", "unmarked"]

CHAIN_KEY = "chain"
"""The field each chained line ends with. A later format of the chain takes another key."""
SEED = b"cockpit-journal-chain-v1"
"""What the first chained line of a journal chains to (the chain's version is in it)."""

_MARK_HEAD = b',"' + CHAIN_KEY.encode() + b'":"'
_MARK_LEN = len(_MARK_HEAD) + 16 + 2  # `,"chain":"` + 16 hex + `"}`
_MARK = re.compile(rb',"' + CHAIN_KEY.encode() + rb'":"([0-9a-f]{16})"\}')
# A line's end that was a chain mark once, reformatted (spaces, CRLF, other digits): a mark
# edited by hand or by a tool, never a line of an older version (no event ends in that field).
_DAMAGED = re.compile(rb',\s*"' + CHAIN_KEY.encode() + rb'"\s*:\s*"[^"\\]*"\s*\}\s*\Z')
_BOM = b"\xef\xbb\xbf"
_JSON_SPACE = b" \t\r\n"


def next_link(previous: bytes, body: bytes) -> bytes:
    """The chain value (16 ASCII hex digits) of a line whose bytes before its mark are `body`,
    following a line whose chain value was `previous` (`SEED` for the first)."""
    return hashlib.sha256(previous + body).digest()[:8].hex().encode()  # (= hexdigest()[:16])


def mark_line(line: bytes, previous: bytes) -> tuple[bytes, bytes]:
    """`line` (one JSON object and its newline, as the writer serialised it) with its chain mark,
    and its chain value. A line that is not an object ending `}\\n` is returned unmarked (the
    chain then reports it), with `previous` unchanged."""
    if not line.endswith(b"}\n"):
        return line, previous
    body = line[:-2]
    link = next_link(previous, body)
    return body + _MARK_HEAD + link + b'"}\n', link


def unmarked(raw: bytes) -> bytes:
    """`raw` (one line, its newline optional) without its chain mark, as an object: what the
    event parsers read, so the mark never becomes an extra field of an event."""
    end = len(raw) - 1 if raw.endswith(b"\n") else len(raw)
    head = end - _MARK_LEN
    if head > 0 and raw.startswith(_MARK_HEAD, head) and _MARK.match(raw, head, end):
        return raw[:head] + b"}"
    return raw


def chain_of(raw: bytes) -> tuple[bytes, bytes] | None:
    """`(body, chain value)` of a line with a chain mark (its newline and a leading byte order
    mark aside), or `None` for a line without one."""
    line = raw[:-1] if raw.endswith(b"\n") else raw
    if line.startswith(_BOM):
        line = line[3:]
    if len(line) < _MARK_LEN:
        return None
    found = _MARK.match(line, len(line) - _MARK_LEN)
    if found is None:
        return None
    return line[:found.start()], found.group(1)


Status = Literal["intact", "unchained", "partly-unchained", "changed", "empty"]


@dataclass
class ChainVerdict:
    """What `check_lines` found. `status`:

    - `intact`: every line follows the one before it, from the first;
    - `unchained`: no line has a mark (written before this version);
    - `partly-unchained`: lines `1..unchained_lines` have none, every later one follows the seed
      and its predecessor (a journal of an older version, resumed by this one);
    - `changed`: `line` (1-based, counting every line of the file) does not follow the line
      before it, `how` says what that means;
    - `empty`: no line at all.

    `lines` counts the non-blank lines read; `torn_tail` is a crash's torn last line (skipped,
    never tampering); `ended` whether an `agent_end` was among the lines that verified.
    """

    status: Status
    lines: int = 0
    chained_lines: int = 0
    unchained_lines: int = 0
    line: int | None = None
    how: str = ""
    torn_tail: bool = False
    ended: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def tampered(self) -> bool:
        """Whether a line was changed, removed, inserted or moved."""
        return self.status == "changed"

    def summary(self) -> str:
        """One line for a person: the verdict and, for a changed journal, where and how."""
        if self.status == "changed":
            return f"changed at line {self.line}: {self.how}"
        if self.status == "empty":
            return "empty: the journal has no lines"
        if self.status == "unchained":
            return (f"unchained: {self.lines} lines, written before journals were chained "
                    "(nothing to check)")
        tail = "" if self.ended else "; it ends without agent_end (the run crashed, is still " \
            "running, or lines were cut off its end: the chain cannot tell)"
        torn = "; a torn last line (a crash mid-write) skipped" if self.torn_tail else ""
        if self.status == "partly-unchained":
            return (f"partly unchained: lines 1-{self.unchained_lines} written before journals "
                    f"were chained, the {self.chained_lines} after them intact{tail}{torn}")
        return f"intact: {self.lines} lines{tail}{torn}"


def check_file(path: str | os.PathLike[str]) -> ChainVerdict:
    """`check_lines` over a journal file, read a line at a time (memory stays flat for any
    size). Raises `OSError` when it cannot be read."""
    with open(path, "rb") as f:
        return check_lines(f)


def _is_end(body: bytes) -> bool:
    return body.startswith(b'{"type":"agent_end"')


def check_lines(lines: Iterable[bytes]) -> ChainVerdict:
    """Check the chain of a journal's raw lines (each with its newline, the last maybe
    without), in file order. Pure: reads nothing else. Stops at the first changed line."""
    verdict = ChainVerdict(status="empty")
    previous: bytes | None = None  # the last verified chain value; None before the first mark
    pending: tuple[int, bytes, bytes, bytes | None] | None = None  # a mismatch, to diagnose
    last_chained = 0
    number = 0
    prefix: list[tuple[int, bytes]] = []  # the unchained lines before the first mark
    for raw in lines:
        number += 1
        if not raw.strip(_JSON_SPACE):
            continue  # blank lines (the separator after a repaired tail) are skipped by readers
        marked = chain_of(raw)
        if pending is not None:
            return _diagnose(verdict, pending, marked)
        if marked is None:
            if _DAMAGED.search(raw, max(0, len(raw) - 96)):
                return _changed(verdict, number, "its chain mark was altered (reformatted, its "
                                "line ending changed, or its value edited)")
            if not raw.endswith(b"\n") and not _complete_object(raw):
                verdict.torn_tail = True  # a crash mid-write: the only line allowed to be torn
                break
            verdict.lines += 1
            if previous is None:
                verdict.unchained_lines += 1
                if len(prefix) < _PREFIX_KEPT:
                    prefix.append((number, raw))
                verdict.ended = verdict.ended or _is_end(raw.removeprefix(_BOM))
                continue
            return _changed(verdict, number, f"it has no chain mark, though line {last_chained} "
                            "before it has one: the line was changed or inserted")
        body, link = marked
        verdict.lines += 1
        expected = SEED if previous is None else previous
        if next_link(expected, body) != link:
            if previous is None and prefix and next_link(_replayed(prefix), body) == link:
                return _changed(verdict, prefix[0][0], f"it and the lines after it up to line "
                                f"{number - 1} had their chain marks removed")
            pending = (number, body, link, previous)
            continue
        if previous is None and verdict.unchained_lines:
            verdict.notes.append(f"lines 1-{verdict.unchained_lines} carry no chain mark")
        previous = link
        last_chained = number
        verdict.chained_lines += 1
        verdict.ended = verdict.ended or _is_end(body)
    if pending is not None:
        return _diagnose(verdict, pending, None)
    if verdict.lines == 0:
        verdict.status = "empty"
    elif verdict.chained_lines == 0:
        verdict.status = "unchained"
    elif verdict.unchained_lines:
        verdict.status = "partly-unchained"
    else:
        verdict.status = "intact"
    return verdict


_PREFIX_KEPT = 4096  # unchained lines kept to tell removed marks (an old journal is unchained)


def _replayed(prefix: list[tuple[int, bytes]]) -> bytes:
    """The chain value the unchained lines would have ended with, had they been chained."""
    link = SEED
    for _, raw in prefix:
        line = raw.removeprefix(_BOM)
        link = next_link(link, line[:-2] if line.endswith(b"}\n") else line.rstrip(b"\n")[:-1])
    return link


def _complete_object(raw: bytes) -> bool:
    """Whether a last line without its newline is still a whole line (the writer would only add
    the newline): it ends as an object does. Anything else there is a crash's torn write."""
    try:
        return isinstance(from_json(raw.removeprefix(_BOM)), dict)
    except ValueError:
        return False


def _changed(verdict: ChainVerdict, line: int, how: str) -> ChainVerdict:
    verdict.status = "changed"
    verdict.line = line
    verdict.how = how
    return verdict


def _diagnose(verdict: ChainVerdict, pending: tuple[int, bytes, bytes, bytes | None],
              following: tuple[bytes, bytes] | None) -> ChainVerdict:
    """Say what a line that does not follow its predecessor most likely is, from whether the
    line after it follows it (its mark is then genuine, so its predecessor is what changed)."""
    number, _body, link, previous = pending
    what = "the first line" if previous is None else "the line before it"
    genuine = following is not None and next_link(link, following[0]) == following[1]
    if genuine:
        return _changed(verdict, number, f"it does not follow {what}, though the line after "
                        "it follows it: this line was edited, or lines before it were removed, "
                        "inserted or moved")
    if following is None and previous is not None:
        return _changed(verdict, number, f"it does not follow {what}: this line was edited, or "
                        "added, moved or removed here")
    return _changed(verdict, number, f"it does not follow {what}: this line was edited, "
                    "inserted, moved or duplicated here, or lines before it removed")
