"""Unified diffs of file writes, fast on any input and capped, for approvals and tool rows.

One diff for every place that shows one (the built-in `write_file`/`edit`, ACP writes, ACP diff
updates). `difflib` alone is quadratic on permuted lines (50,000 shuffled lines took ~100 s), so
lines are matched patience-style: lines are interned to integers, lines unique on both sides
anchor the match (their longest increasing run, O(n log n)), and the gaps between anchors are
matched the same way; a gap with no unique line is handed to `difflib` only when it is small,
else shown as removed-and-added. Three caps keep it bounded, and each says so in the diff:

- input over `MAX_DIFF_LINES` lines a side: no diff, a line saying how big each side is;
- refining past `DIFF_SECONDS`: the rest is shown coarsely (still a correct diff);
- output over `MAX_DIFF_CHARS` characters: cut, with how much was left out.

`unified_diff` is synchronous and meant for a worker thread; `unified_diff_async` runs it there,
so the event loop never computes a diff.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator

from engine_adapter.text import Cut

__all__ = [
    "DIFF_SECONDS",
    "MAX_DIFF_CHARS",
    "MAX_DIFF_LINES",
    "unified_diff",
    "unified_diff_async",
]

MAX_DIFF_CHARS = 64 * 1024
"""Characters of diff text kept; the rest is cut with a note."""
MAX_DIFF_LINES = 200_000
"""Lines a side above which no diff is computed at all."""
DIFF_SECONDS = 2.0
"""Seconds spent refining the match before the rest is shown coarsely."""
_SMALL_GAP = 40_000  # a gap without unique lines goes to difflib only if len(a) * len(b) <= this
_CONTEXT = 3


def unified_diff(old: str | None, new: str, name: str, *, limit: int = MAX_DIFF_CHARS,
                 seconds: float = DIFF_SECONDS, context: int = _CONTEXT) -> str:
    """The unified diff from `old` (None: the file does not exist yet) to `new` for `name`.

    Headers are `--- a/name` (or `--- /dev/null`) and `+++ b/name`, or, for an absolute name
    (a file outside the workspace), the path itself on both (`--- /etc/hosts`): never a
    relative-looking `a/etc/hosts`. A last line without a newline is followed by `\\ No
    newline at end of file`. Empty when nothing changes. Never raises on any text input.
    """
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    shown_old, shown_new = (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")
    head = f"--- {'/dev/null' if old is None else shown_old}\n+++ {shown_new}\n"
    if len(before) > MAX_DIFF_LINES or len(after) > MAX_DIFF_LINES:
        return (f"{head}[diff not computed: {len(before):,} lines before, {len(after):,} lines "
                f"after; the limit is {MAX_DIFF_LINES:,} lines a side]\n")
    blocks, coarse = _matching_blocks(before, after, time.monotonic() + seconds)
    out = _Capped(limit)
    for group in _groups(blocks, len(before), len(after), context):
        if not out.parts:
            out.add(head)
        _hunk(out, group, before, after)
    if out.parts and coarse:
        out.note(f"[diff coarse: matching stopped after {seconds:g} s; some unchanged lines "
                 "may show as removed and added]\n")
    return out.text()


async def unified_diff_async(old: str | None, new: str, name: str, *,
                             limit: int = MAX_DIFF_CHARS) -> str:
    """`unified_diff` computed in a worker thread (never on the event loop)."""
    return await asyncio.to_thread(unified_diff, old, new, name, limit=limit)


class _Capped:
    """Diff text gathered up to a character limit, then a note of what was left out."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.parts: list[str] = []
        self.size = 0
        self.full = False
        self.dropped_lines = 0
        self.notes: list[str] = []

    def add(self, line: str) -> None:
        if self.full or self.size + len(line) > self.limit:
            self.full = True
            self.dropped_lines += 1
            return
        self.parts.append(line)
        self.size += len(line)

    def note(self, line: str) -> None:
        self.notes.append(line)

    def text(self) -> str:
        tail = list(self.notes)
        if self.full:  # worded by the one text policy: "… 1,234 more lines dropped"
            dropped = Cut("".join(self.parts), max(1, self.dropped_lines), self.dropped_lines)
            tail.insert(0, f"{dropped.note()} (diff cut at {self.limit:,} characters)\n")
        return "".join(self.parts + tail)


def _line(prefix: str, text: str) -> str:
    if text.endswith("\n"):
        return prefix + text
    return f"{prefix}{text}\n\\ No newline at end of file\n"  # as diff and git write it


def _left_out(group: list[tuple[str, int, int, int, int]]) -> int:
    return sum((i2 - i1) + (j2 - j1 if tag != "equal" else 0) for tag, i1, i2, j1, j2 in group)


def _hunk(out: _Capped, group: list[tuple[str, int, int, int, int]], a: list[str],
          b: list[str]) -> None:
    if out.full:  # past the cap: only count what is left out (the note says how much)
        out.dropped_lines += 1 + _left_out(group)
        return
    first, last = group[0], group[-1]
    out.add(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
    for index, (tag, i1, i2, j1, j2) in enumerate(group):
        if out.full:
            out.dropped_lines += _left_out(group[index:])
            return
        runs = [(" ", a[i1:i2])] if tag == "equal" else [("-", a[i1:i2]), ("+", b[j1:j2])]
        for prefix, lines in runs:
            for n, line in enumerate(lines):
                if out.full:  # count the rest of this run without formatting it
                    out.dropped_lines += len(lines) - n
                    break
                out.add(_line(prefix, line))


def _range(start: int, stop: int) -> str:
    # As difflib writes it: 1-based start, length omitted when 1, start-1 when empty.
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def _groups(blocks: list[tuple[int, int, int]], n_a: int, n_b: int,
            context: int) -> Iterator[list[tuple[str, int, int, int, int]]]:
    """Hunks: runs of changes with up to `context` equal lines around them (difflib's
    grouping, over our matching blocks)."""
    codes: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for bi, bj, size in [*blocks, (n_a, n_b, 0)]:
        if i < bi or j < bj:
            tag = "replace" if i < bi and j < bj else "delete" if i < bi else "insert"
            codes.append((tag, i, bi, j, bj))
        if size:
            codes.append(("equal", bi, bi + size, bj, bj + size))
        i, j = bi + size, bj + size
    if not any(code[0] != "equal" for code in codes):
        return
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    group: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _matching_blocks(a_lines: list[str], b_lines: list[str],
                     deadline: float) -> tuple[list[tuple[int, int, int]], bool]:
    """Matching runs `(i, j, size)` in order, and whether the deadline cut the refining."""
    ids: dict[str, int] = {}
    a = [ids.setdefault(line, len(ids)) for line in a_lines]
    b = [ids.setdefault(line, len(ids)) for line in b_lines]
    pairs: list[tuple[int, int]] = []
    coarse = False
    regions = [(0, len(a), 0, len(b))]
    while regions:
        alo, ahi, blo, bhi = regions.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        if time.monotonic() > deadline:
            coarse = True
            continue
        anchors = _unique_anchors(a, alo, ahi, b, blo, bhi)
        if not anchors:
            if (ahi - alo) * (bhi - blo) <= _SMALL_GAP:
                matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
                for i, j, size in matcher.get_matching_blocks():
                    pairs.extend((alo + i + k, blo + j + k) for k in range(size))
            continue
        prev_a, prev_b = alo, blo
        for i, j in anchors:
            pairs.append((i, j))
            regions.append((prev_a, i, prev_b, j))
            prev_a, prev_b = i + 1, j + 1
        regions.append((prev_a, ahi, prev_b, bhi))
    pairs.sort()
    blocks: list[tuple[int, int, int]] = []
    for i, j in pairs:
        if blocks:
            bi, bj, size = blocks[-1]
            if bi + size == i and bj + size == j:
                blocks[-1] = (bi, bj, size + 1)
                continue
        blocks.append((i, j, 1))
    return blocks, coarse


def _unique_anchors(a: list[int], alo: int, ahi: int, b: list[int], blo: int,
                    bhi: int) -> list[tuple[int, int]]:
    """Lines that occur once in `a[alo:ahi]` and once in `b[blo:bhi]`, paired, reduced to the
    longest run increasing on both sides (patience sorting)."""
    count_a, count_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    where_b = {line: j for j, line in enumerate(b[blo:bhi], blo) if count_b[line] == 1}
    candidates = [(i, where_b[line]) for i, line in enumerate(a[alo:ahi], alo)
                  if line in where_b and count_a[line] == 1]
    if not candidates:
        return []
    # Longest increasing subsequence of the b positions, in a order.
    tails: list[int] = []  # b position ending the best run of each length
    tail_at: list[int] = []  # index into candidates of that run's end
    back: list[int] = [-1] * len(candidates)
    for index, (_i, j) in enumerate(candidates):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[k] = j
            tail_at[k] = index
        back[index] = tail_at[k - 1] if k else -1
    run: list[tuple[int, int]] = []
    index = tail_at[-1]
    while index >= 0:
        run.append(candidates[index])
        index = back[index]
    run.reverse()
    return run
