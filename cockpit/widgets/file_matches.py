"""`FileIndex`: the workspace's files as the message box's `@` list finds them, best first.

A file matches when the typed letters appear in its path in order (a subsequence, case
ignored). Matches rank by how plainly they match, then the shorter path, then the path (so the
order is stable): the file's name starting with what was typed, then a word of the name starting
with it (`my notes.md` for "no"), then the name holding it, then the path holding it, then the
letters in order in the name, then in the path. Each tier is a C-speed string test or a regular
expression a path, and a query that extends the last one (the next keystroke) looks only at the
paths that held the last, so a keystroke over 20,000 paths stays in the milliseconds; only the
rows shown have their matched letters found (to highlight them).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
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


class FileIndex:
    """The paths of a workspace, lower-cased once, and the matching over them."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        self._rows = [(p, p.lower(), p.rfind("/") + 1) for p in self.paths]
        # The last query and the rows that held it as a subsequence: a query that extends it
        # (the next keystroke) looks only at those.
        self._last: tuple[str, list[tuple[str, str, int]]] = ("", self._rows)

    def __len__(self) -> int:
        return len(self.paths)

    def match(self, query: str, limit: int = 10) -> list[FileMatch]:
        """The best `limit` files for `query` (every file, in order, for an empty query)."""
        if len(query) > QUERY_LIMIT:
            return []
        q = query.lower()
        if not q:
            return [FileMatch(p, ()) for p in self.paths[:limit]]
        pattern = re.compile(".*?".join(map(re.escape, q)), re.DOTALL)
        word = re.compile(r"[ \t_.\-]" + re.escape(q))
        last, rows = self._last
        if not q.startswith(last):
            rows = self._rows
        held = [row for row in rows if pattern.search(row[1]) is not None]
        self._last = (q, held)
        ranked = []
        for path, lower, name_at in held:
            name = lower[name_at:]
            if name.startswith(q):
                tier = 0
            elif q in name:
                tier = 1 if word.search(name) is not None else 2
            elif q in lower:
                tier = 3
            elif pattern.search(name) is not None:
                tier = 4
            else:
                tier = 5
            ranked.append((tier, len(path), path, lower, name_at))
        best = heapq.nsmallest(limit, ranked)
        return [FileMatch(path, self._positions(tier, lower, name_at, q))
                for tier, _, path, lower, name_at in best]

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
