"""Reading an engine's diff (`engine_adapter.view.diff_summary`) and drawing it and file contents in
the transcript (`cockpit.widgets.transcript.code_rows`): changed lines first, line numbers, syntax
colours, unsafe characters marked, every cut counted."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.style import Style

from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets.transcript.code_rows import code_rows, diff_preview, diff_rows, lexer_for
from engine_adapter.files import unified_diff
from engine_adapter.view import (
    FileChange,
    changed_files,
    diff_counts,
    diff_stats,
    line_kinds,
    merge_changes,
)

PALETTE = Palette(load_themes()["cockpit-dark"])
WARN = Style(reverse=True)

DIFF = unified_diff("a\nb\nc\nd\n--- rule\ne\n", "a\nb\nc\nd\ne\nf\n", "notes.md")


def test_a_removed_line_that_reads_like_a_header_is_a_removed_line() -> None:
    lines = DIFF.rstrip("\n").split("\n")
    assert lines[:2] == ["--- a/notes.md", "+++ b/notes.md"]
    kinds = line_kinds(lines)
    assert kinds[:3] == ["file", "file", "hunk"]
    assert kinds[lines.index("---- rule")] == "remove"
    assert diff_counts(DIFF) == (1, 1) and diff_stats(DIFF) == "+1 −1"
    assert changed_files(DIFF) == [FileChange("notes.md", 1, 1)]


def test_changed_files_per_file_new_and_deleted() -> None:
    both = (unified_diff(None, "x\ny\n", "new.py") + unified_diff("gone\n", "", "old.py")
            + unified_diff("1\n", "2\n", "app.py"))
    assert changed_files(both) == [FileChange("new.py", 2, 0), FileChange("old.py", 0, 1),
                                   FileChange("app.py", 1, 1)]
    assert changed_files("@@ -1 +1 @@\n-a\n+b\n", default="bare.txt") == [
        FileChange("bare.txt", 1, 1)]
    assert merge_changes([FileChange("a", 1, 0), FileChange("b", 0, 2),
                          FileChange("a", 3, 1)]) == [FileChange("a", 4, 1),
                                                      FileChange("b", 0, 2)]


@given(st.lists(st.sampled_from(["x", "y", "--- z", "+++ w", "@@ q", ""]), max_size=30),
       st.lists(st.sampled_from(["x", "y", "--- z", "+++ w", "@@ q", ""]), max_size=30))
def test_counts_agree_with_the_diff_made(old, new) -> None:
    before, after = "".join(f"{line}\n" for line in old), "".join(f"{line}\n" for line in new)
    diff = unified_diff(before, after, "f.txt")
    added, removed = diff_counts(diff)
    assert added - removed == len(new) - len(old)
    assert diff == "" or changed_files(diff) == ([FileChange("f.txt", added, removed)]
                                                 if added or removed else [])


def test_the_preview_starts_at_the_first_change() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n")
    diff = unified_diff(old, new, "f.txt")
    rows = diff_preview(diff, limit=3, palette=PALETTE, warn=WARN)
    assert [r.plain for r in rows.rows] == ["-line 10", "+line ten", " line 11"]
    assert rows.rows[0].style == PALETTE.diff_remove and rows.rows[1].style == PALETTE.diff_add
    assert rows.hidden == 5  # the 3 context lines before and 2 after (headers are not counted)


def test_the_whole_diff_has_line_numbers_and_syntax_colours() -> None:
    old = "def f(x):\n    return x\n"
    new = "def f(x):\n    return x + 1\n"
    rows = diff_rows(unified_diff(old, new, "m.py"), "m.py", limit=200, palette=PALETTE,
                     warn=WARN)
    plain = [r.plain for r in rows.rows]
    assert plain == ["--- a/m.py", "+++ b/m.py", "@@ -1,2 +1,2 @@", "1   def f(x):",
                     "2 -     return x", "2 +     return x + 1"]
    keyword = rows.rows[3]
    start = keyword.plain.index("def")
    assert any(span.start <= start < span.end and span.style.color is not None
               for span in keyword.spans)  # `def` coloured by the Python lexer
    assert rows.hidden == 0
    cut = diff_rows(unified_diff(old, new, "m.py"), "m.py", limit=4, palette=PALETTE, warn=WARN)
    assert len(cut.rows) == 4 and cut.hidden == 2


def test_file_text_is_numbered_coloured_marked_and_capped() -> None:
    text = "".join(f"x{i} = {i}  # n\n" for i in range(1, 251)) + "evil\u202e = '\x1b[2J'\n"
    rows = code_rows(text, "mod.py", limit=200, palette=PALETTE, warn=WARN)
    assert len(rows.rows) == 200 and rows.hidden == 51
    assert rows.rows[0].plain == "  1 │ x1 = 1  # n"
    tail = code_rows(text.split("\n", 250)[-1], "mod.py", limit=10, palette=PALETTE, warn=WARN)
    line = tail.rows[0]
    assert "\x1b" not in line.plain and "\u202e" not in line.plain
    assert "⟨U+202E⟩" in line.plain and "␛" in line.plain
    at = line.plain.index("⟨U+202E⟩")
    assert any(s.start <= at < s.end and s.style == WARN for s in line.spans)
    assert lexer_for("notes.unknownext") is None and lexer_for("Makefile") is None
    plain = code_rows("a\tb\n", "notes.unknownext", limit=5, palette=PALETTE, warn=WARN)
    assert plain.rows[0].plain == "1 │ a   b"
