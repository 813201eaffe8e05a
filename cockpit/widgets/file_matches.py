"""`FileIndex`: the workspace's files as the message box's `@` list finds them, best first.

A file matches when the typed letters appear in its path in order (a subsequence, case
ignored). Matches rank by how plainly they match, then the shorter path, then the path (so the
order is stable): the file's name starting with what was typed, then a word of the name starting
with it (`my notes.md` for "no"), then the name holding it, then the path holding it, then the
letters in order in the name, then in the path. A tier is looked at only while the tiers before
it found fewer files than are shown, each is a C-speed string test a path, and the subsequence
tiers one regular expression over all the paths joined, so a keystroke over 20,000 paths stays
in the milliseconds; only the rows shown have their matched letters found (to highlight them).
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

__all__ = ["QUERY_LIMIT", "FileIndex", "FileMatch"]

QUERY_LIMIT = 256
"""Characters of a query looked for (a longer one matches nothing: no path is that long a
subsequence worth listing, and a 10,000-letter token must cost nothing)."""


class FileMatch(NamedTuple):
    """A file found: its `path` and the positions in it of the letters typed."""

    path: str
    positions: tuple[int, ...]


def _subsequence(text: str, query: str, start: int = 0) -> tuple[int, ...] | None:
    """The positions in `text` (from `start`) of `query`'s letters in order, leftmost."""
    found = []
    at = start
    for ch in query:
        at = text.find(ch, at)
        if at == -1:
            return None
        found.append(at)
        at += 1
    return tuple(found)


def _joined(lines: Sequence[str]) -> tuple[str, list[int]]:
    """`lines` as one text (a line each) and the offset each starts at."""
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    # A name may hold a newline: it becomes a NUL here (no name holds one, no query matches
    # one), so each path stays one line.
    return "\n".join(line.replace("\n", "\0") for line in lines), starts


def _lines(pattern: re.Pattern[str], text: str, starts: list[int]) -> Iterator[int]:
    """The index of each line of `text` (starting at `starts`) that `pattern` matches at its
    start."""
    for found in pattern.finditer(text):
        yield bisect.bisect_right(starts, found.start()) - 1


class FileIndex:
    """The paths of a workspace, lower-cased once, and the matching over them."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        self._lowers = [p.lower() for p in self.paths]
        self._name_at = [p.rfind("/") + 1 for p in self._lowers]
        self._names = [p[at:] for p, at in zip(self._lowers, self._name_at, strict=True)]
        # The lower-cased paths (and names) as one text, a line each: a subsequence is then
        # found by one regular expression over the whole text, at C speed, not 20,000 calls.
        self._joined_paths, self._path_starts = _joined(self._lowers)
        self._joined_names, self._name_starts = _joined(self._names)

    def __len__(self) -> int:
        return len(self.paths)

    def match(self, query: str, limit: int = 10) -> list[FileMatch]:
        """The best `limit` files for `query` (every file, in order, for an empty query)."""
        if len(query) > QUERY_LIMIT or "\n" in query or "\0" in query:
            return []
        q = query.lower()
        if not q:
            return [FileMatch(p, ()) for p in self.paths[:limit]]
        # The tiers in rank order; each is looked at only while fewer than `limit` files were
        # found in the tiers before it (a better tier always ranks first), so a common query
        # costs a few C-speed string tests a path and a rare one a regular expression.
        names, lowers = self._names, self._lowers
        word = re.compile(r"[ \t_.\-]" + re.escape(q))
        taken: set[int] = set()
        ranked: list[tuple[int, int, str, int]] = []

        def tier(number: int, hits: Iterable[int]) -> None:
            for i in hits:
                if i not in taken:
                    taken.add(i)
                    ranked.append((number, len(self.paths[i]), self.paths[i], i))

        tier(0, [i for i, name in enumerate(names) if name.startswith(q)])
        if len(ranked) < limit:
            in_name = [i for i, name in enumerate(names) if q in name]
            tier(1, [i for i in in_name if word.search(names[i]) is not None])
            tier(2, in_name)
        if len(ranked) < limit:
            tier(3, [i for i, lower in enumerate(lowers) if q in lower])
        if len(ranked) < limit:
            # Each letter's leftmost place after the last one's, never revisited (possessive):
            # linear in the text, where lazy `.*?` backtracks without end on a long query.
            letters = "".join(f"[^{re.escape(ch)}\\n]*+{re.escape(ch)}" for ch in q)
            line = re.compile(f"^{letters}", re.MULTILINE)
            tier(4, _lines(line, self._joined_names, self._name_starts))
            if len(ranked) < limit:
                tier(5, _lines(line, self._joined_paths, self._path_starts))
        best = heapq.nsmallest(limit, ranked)
        return [FileMatch(path, self._positions(number, lowers[i], self._name_at[i], q))
                for number, _, path, i in best]

    @staticmethod
    def _positions(tier: int, lower: str, name_at: int, q: str) -> tuple[int, ...]:
        if tier <= 2:
            start = lower.find(q, name_at)
            if tier == 1:
                start = next(i for i in range(name_at, len(lower))
                             if lower.startswith(q, i) and lower[i - 1] in " \t_.-")
            return tuple(range(start, start + len(q)))
        if tier == 3:
            start = lower.rfind(q)
            return tuple(range(start, start + len(q)))
        found = _subsequence(lower, q, name_at if tier == 4 else 0)
        return found or ()
