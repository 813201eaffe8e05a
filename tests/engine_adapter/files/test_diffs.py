"""The one diff: correct on any input (it applies back), difflib's format, fast on permuted
input, and every cap says so."""

from __future__ import annotations

import asyncio
import difflib
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from support.hostile import while_ticking

from engine_adapter.files.diffs import MAX_DIFF_LINES, unified_diff, unified_diff_async

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply(old: str | None, diff: str) -> str:
    """Apply a unified diff to `old`."""
    source = (old or "").splitlines(keepends=True)
    lines = diff.splitlines(keepends=True)[2:]
    out: list[str] = []
    at = 0
    for index, line in enumerate(lines):
        match = _HUNK.match(line)
        text = line[1:]
        if index + 1 < len(lines) and lines[index + 1].startswith("\\"):
            text = text[:-1]  # "\ No newline at end of file"
        if match:
            start, count = int(match.group(1)), int(match.group(2) or 1)
            begin = start - 1 if count else start
            out += source[at:begin]
            at = begin
        elif line.startswith(" "):
            assert source[at] == text
            out.append(source[at])
            at += 1
        elif line.startswith("-"):
            assert source[at] == text
            at += 1
        elif line.startswith("+"):
            out.append(text)
    return "".join(out + source[at:])


texts = st.lists(st.sampled_from(["a", "b", "c", "d", "", "a b", "é", "\t"]),
                 max_size=30).map(lambda lines: "".join(f"{x}\n" for x in lines))


@settings(max_examples=300, deadline=None)
@given(old=texts, new=texts, tail=st.booleans())
def test_the_diff_applies_back(old, new, tail):
    if tail and new:
        new = new[:-1]  # a last line without a newline
    diff = unified_diff(old, new, "f.txt", limit=10**9)
    assert apply(old, diff) == new
    assert (diff == "") == (old == new)


@settings(max_examples=100, deadline=None)
@given(new=texts)
def test_a_new_file_is_all_added(new):
    diff = unified_diff(None, new, "n.txt", limit=10**9)
    if new:
        assert diff.startswith("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1")
        assert apply(None, diff) == new


def test_small_edits_read_like_difflib():
    old = "".join(f"line {i}\n" for i in range(40))
    for new in (old.replace("line 7\n", "seven\n"), old.replace("line 20\n", ""),
                old + "more\n", "top\n" + old):
        ours = unified_diff(old, new, "x.py")
        theirs = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                              "a/x.py", "b/x.py"))
        assert ours == theirs


def test_a_permuted_file_is_diffed_and_cut_with_a_note():
    lines = [f"row {i}\n" for i in range(50_000)]
    shuffled = list(lines)
    random.Random(5).shuffle(shuffled)
    diff = unified_diff("".join(lines), "".join(shuffled), "big.txt")
    assert len(diff) < 70_000
    assert re.search(r"\n… [\d,]+ more lines dropped \(diff cut at 65,536 characters\)\n$", diff)


def test_every_cap_says_so():
    assert "diff not computed" in unified_diff("a\n" * (MAX_DIFF_LINES + 1), "b\n", "f")
    lines = [f"{i}\n" for i in range(3000)]
    shuffled = list(lines)
    random.Random(1).shuffle(shuffled)
    coarse = unified_diff("".join(lines), "".join(shuffled), "f", seconds=0, limit=10**9)
    assert coarse.endswith("some unchanged lines may show as removed and added]\n")
    assert apply("".join(lines), coarse) == "".join(shuffled)  # coarse, but still right
    cut = unified_diff("a\n" * 100, "b\n" * 100, "f", limit=50)
    assert "diff cut at 50 characters" in cut


def test_the_async_diff_leaves_the_loop_running():
    lines = [f"row {i}\n" for i in range(50_000)]
    shuffled = list(lines)
    random.Random(2).shuffle(shuffled)
    diff, ticks = asyncio.run(while_ticking(
        unified_diff_async("".join(lines), "".join(shuffled), "big.txt")))
    assert "diff cut at" in diff
    assert ticks > 10
