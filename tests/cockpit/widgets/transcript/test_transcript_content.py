"""What the transcript shows (issue 13): every edit's diff, the failure reason first, the reply
once, line breaks kept, durations without the wait, numbered and coloured file contents, drop
notes. Rows are rendered from a fold of real events, with no app (the Pilot tests and snapshots
are in test_liveview_app.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets.transcript.items import item_text, render_item
from engine_adapter import parse_event
from engine_adapter.files import unified_diff
from engine_adapter.view import EndItem, RunFold, RunView, ToolCallItem

PALETTE = Palette(load_themes()["cockpit-dark"])
EDIT_DIFF = unified_diff("".join(f"line {i}\n" for i in range(1, 11)),
                         "".join(f"line {i}\n" for i in range(1, 11)).replace("line 8\n",
                                                                             "line eight\n"),
                         "notes.txt")


def fold(*events: dict[str, Any]) -> RunView:
    """A view of a task that starts, then `events` (seq and ts stamped in order)."""
    view_fold = RunFold()
    everything = [{"type": "agent_start", "task": "t", "engine": "e"}, *events]
    for seq, data in enumerate(everything):
        view_fold.apply(parse_event({"session_id": "s", "seq": seq, "ts": 100.0 + seq,
                                     **data}))
    return view_fold.view


def rows(view: RunView, index: int, *, expanded: bool = False, width: int = 100) -> list[str]:
    items = view.items
    strips = render_item(items[index], items[index - 1] if index else None, width=width,
                         expanded=expanded, palette=PALETTE, console=Console(width=width),
                         items=items)
    return [strip.text.rstrip() for strip in strips]


def last_rows(view: RunView, **kwargs: Any) -> list[str]:
    return rows(view, len(view.items) - 1, **kwargs)


def say(text: str) -> dict[str, Any]:
    return {"type": "model_update", "turn": 1, "text": text}


# -- the failure reason is never hidden ----------------------------------------------------------

def test_a_failed_run_shows_its_error_then_the_stderr_then_where_the_partial_reply_is() -> None:
    view = fold({"type": "turn_start", "turn": 1}, say("about to crash"),
                {"type": "agent_end", "status": "failed", "result": "about to crash",
                 "error": "the agent exited with code 3 during session/prompt",
                 "stderr": ["test agent: something broke", "test agent: giving up"]})
    shown = last_rows(view)
    assert shown[0] == "  ■ failed: the agent exited with code 3 during session/prompt"
    assert shown[1:] == ["    last lines the agent wrote to stderr:",
                         "      test agent: something broke", "      test agent: giving up",
                         "    ↑ the partial reply is above"]
    assert sum("about to crash" in "\n".join(rows(view, i)) for i in range(len(view.items))) == 1


def test_a_partial_reply_not_streamed_is_shown_below_the_error() -> None:
    view = fold({"type": "agent_end", "status": "cancelled", "result": "half\nof it",
                 "error": "cancelled by the user"})
    assert last_rows(view) == ["  ■ cancelled: cancelled by the user", "    partial reply:",
                               "    half", "    of it"]
    assert item_text(view.items[-1]).startswith("cancelled: cancelled by the user\n\n"
                                                "partial reply:\nhalf\nof it")


def test_a_cancel_without_an_error_says_why_it_was_cancelled() -> None:
    view = fold({"type": "cancellation_observed", "reason": "cancelled by the user"},
                {"type": "agent_end", "status": "cancelled"})
    assert rows(view, 1) == ["  ⊘ stopping: cancelled by the user"]
    assert last_rows(view) == ["  ■ cancelled: cancelled by the user"]


def test_a_journal_write_failure_is_not_a_cancellation() -> None:
    error = "journal write failed: [Errno 28] No space left on device"
    view = fold({"type": "turn_start", "turn": 1}, say("working"),
                {"type": "cancellation_observed", "reason": error, "turn": 1},
                {"type": "agent_end", "status": "failed", "error": error})
    text = "\n".join("\n".join(rows(view, i)) for i in range(len(view.items)))
    assert f"■ failed: {error}" in text and f"stopping: {error}" in text
    assert "cancelled" not in text


# -- the reply once ------------------------------------------------------------------------------

def test_the_reply_is_shown_once_where_it_was_not_streamed() -> None:
    view = fold({"type": "turn_start", "turn": 1}, say("Let me finish."),
                {"type": "model_decision", "turn": 1, "action": "finish",
                 "rationale": "Fixed the bug in median().\nAll tests pass.\nSee core.py."},
                {"type": "agent_end", "status": "completed",
                 "result": "Fixed the bug in median().\nAll tests pass.\nSee core.py."})
    decision = rows(view, 2)
    # A finish's rationale is the reply: one row here, all of it at the end.
    assert decision[0].startswith("  → finish — Fixed the bug") and len(decision) == 1
    assert last_rows(view) == ["  ■ completed", "    Fixed the bug in median().",
                               "    All tests pass.", "    See core.py."]


def test_a_streamed_reply_is_not_repeated_at_the_end() -> None:
    reply = "Done.\nThe file is fixed."
    view = fold({"type": "turn_start", "turn": 1}, say("Done.\nThe "), say("file is fixed."),
                {"type": "agent_end", "status": "completed", "result": reply})
    assert rows(view, 1)[1:] == ["  Done.", "  The file is fixed."]
    assert last_rows(view) == ["  ■ completed", "    ↑ the reply is above"]


def test_markdown_keeps_single_line_breaks() -> None:
    view = fold({"type": "turn_start", "turn": 1},
                say("**Plan**\nfirst read\nthen *edit*\n\n- one\n- two"),
                {"type": "turn_end", "turn": 1})
    shown = rows(view, 1)[1:]
    assert shown[:3] == ["  Plan", "  first read", "  then edit"]
    assert [line.strip() for line in shown[-2:]] == ["• one", "• two"]


# -- every edit's diff ---------------------------------------------------------------------------

def test_an_edit_run_without_asking_shows_its_diff_from_the_first_change() -> None:
    view = fold({"type": "tool_start", "call_id": "e1", "tool": "edit", "tier": 2,
                 "tool_input": {"path": "notes.txt", "diff": EDIT_DIFF}},
                {"type": "tool_end", "call_id": "e1", "tool": "edit", "ok": True,
                 "output": "edited notes.txt", "duration_ms": 3})
    shown = last_rows(view)
    assert shown[0].startswith("  ✓ edit T2 3 ms  path: notes.txt · diff: +1 −1")
    assert shown[1:] == ["    -line 8", "    +line eight", "     line 9", "     line 10",
                         "    └ … 3 more lines · enter to expand", "    │ edited notes.txt"]
    expanded = last_rows(view, expanded=True)
    assert expanded[1:4] == ["    --- a/notes.txt", "    +++ b/notes.txt", "    @@ -5,6 +5,6 @@"]
    assert "     8 - line 8" in expanded and "     8 + line eight" in expanded
    assert EDIT_DIFF.rstrip("\n") in item_text(view.items[-1])  # whole in the pager


def test_an_agents_edit_reported_with_a_diff_shows_it() -> None:
    view = fold({"type": "tool_start", "call_id": "t-edit", "tool": "edit", "tier": 2,
                 "tool_input": {"path": "/w/notes.txt"}},
                {"type": "tool_end", "call_id": "t-edit", "tool": "edit", "ok": True,
                 "output": "", "diff": EDIT_DIFF})
    row = view.items[-1]
    assert isinstance(row, ToolCallItem) and row.diff == EDIT_DIFF
    assert "    +line eight" in last_rows(view)


def test_an_edit_awaiting_approval_shows_its_diff_in_the_transcript_too() -> None:
    view = fold({"type": "approval_requested", "approval_id": "w1", "tool": "edit",
                 "reason": "the agent asks to write notes.txt", "tier": 3,
                 "tool_input": {"path": "notes.txt", "diff": EDIT_DIFF}})
    shown = last_rows(view)
    assert "[awaiting approval]" in shown[0] and "    -line 8" in shown


# -- durations, file contents, drop notes --------------------------------------------------------

def test_the_wait_for_the_human_is_shown_apart_from_the_duration() -> None:
    view = fold({"type": "tool_start", "call_id": "x1", "tool": "execute", "tier": 3,
                 "tool_input": {"command": "make"}},
                {"type": "approval_requested", "approval_id": "x1", "tool": "execute",
                 "reason": "r", "tier": 3, "tool_input": {"command": "make"}})
    # The answer came 12 s later, the call ended 0.4 s after that (ts are seconds).
    more = RunFold(view=view)
    more.apply(parse_event({"type": "approval_resolved", "approval_id": "x1", "tool": "execute",
                            "allowed": True, "via": "human", "seq": 3, "ts": 114.0}))
    more.apply(parse_event({"type": "tool_end", "call_id": "x1", "tool": "execute", "ok": True,
                            "output": "ok", "duration_ms": 12_400.0, "seq": 4, "ts": 114.4}))
    assert last_rows(view)[0].startswith("  ✓ execute T3 400 ms · waited 12.0 s for you "
                                         "[allowed by you]")


def test_an_expanded_file_read_is_numbered() -> None:
    text = "".join(f"value_{i} = {i}\n" for i in range(1, 8))
    view = fold({"type": "tool_start", "call_id": "r1", "tool": "read_file",
                 "tool_input": {"path": "conf.py"}},
                {"type": "tool_end", "call_id": "r1", "tool": "read_file", "ok": True,
                 "output": text})
    assert last_rows(view)[1:] == ["    │ value_1 = 1", "    │ value_2 = 2", "    │ value_3 = 3",
                                   "    └ … 4 more lines · enter to expand"]
    assert last_rows(view, expanded=True)[1:3] == ["    1 │ value_1 = 1", "    2 │ value_2 = 2"]


def test_one_more_line_is_singular() -> None:
    view = fold({"type": "tool_start", "call_id": "s1", "tool": "shell",
                 "tool_input": {"command": "ls"}},
                {"type": "tool_end", "call_id": "s1", "tool": "shell", "ok": True,
                 "output": "a\nb\nc\nd\n"})
    assert last_rows(view)[-1] == "    └ … 1 more line · enter to expand"


def test_the_end_row_names_the_files_the_task_changed() -> None:
    view = fold({"type": "tool_start", "call_id": "e1", "tool": "edit", "tier": 2,
                 "tool_input": {"path": "notes.txt", "diff": EDIT_DIFF}},
                {"type": "tool_end", "call_id": "e1", "tool": "edit", "ok": True},
                {"type": "tool_start", "call_id": "e2", "tool": "edit", "tier": 2,
                 "tool_input": {"path": "x.txt", "diff": unified_diff("a\n", "b\n", "x.txt")}},
                {"type": "tool_end", "call_id": "e2", "tool": "edit", "ok": False,
                 "error": "disk full"},
                {"type": "agent_end", "status": "completed"})
    end = view.items[-1]
    assert isinstance(end, EndItem)
    assert last_rows(view) == ["  ■ completed", "    changed: notes.txt +1 −1"]  # x.txt failed


def test_every_cut_says_how_much_it_dropped() -> None:
    view = fold({"type": "tool_start", "call_id": "s1", "tool": "shell",
                 "tool_input": {"command": "make"}},
                {"type": "tool_end", "call_id": "s1", "tool": "shell", "ok": False,
                 "error": "exit 2\nmake: *** [all] Error 2\nmake: giving up", "output": ""},
                {"type": "agent_end", "status": "failed", "error": "x" * 5_000})
    assert rows(view, 1)[1] == "    error: exit 2 … 2 more lines"
    end = "".join(last_rows(view, width=4_100))
    kept = end.count("x")
    assert end.endswith(f" … {5_000 - kept:,} more characters · enter opens the pager")
    long_output = "".join(f"row {i}\n" for i in range(1, 1_235))
    view = fold({"type": "tool_start", "call_id": "s1", "tool": "shell",
                 "tool_input": {"command": "seq"}},
                {"type": "tool_end", "call_id": "s1", "tool": "shell", "ok": True,
                 "output": long_output})
    assert last_rows(view)[-1] == "    └ … 1,231 more lines · enter opens the pager"
    assert last_rows(view, expanded=True)[-1] == \
        "    └ … 1,034 more lines · enter opens the pager"


def test_an_input_changed_after_approval_is_marked_under_the_rows_head() -> None:
    from support.changed_input import changed_input_events

    from cockpit.widgets.transcript.tool_rows import tool_row_count

    view = RunFold().apply_all(changed_input_events()[:-1])  # the row is the last item
    shown = last_rows(view)
    assert "rm -rf ~/work" in shown[0] and "T4" in shown[0]  # the head: what it became
    assert shown[1].strip() == "⚠ input changed after you approved it (approved: $ ls)"
    assert tool_row_count(view.items[-1], False) == len(shown)


@pytest.mark.parametrize("text, width, expected", [
    ("read_file stats/core.py", 10, "read_file…"),
    ("read_file stats/core.py", 23, "read_file stats/core.py"),  # fits: as it is
    ("read_file stats/core.py", 22, "read_file stats/core.…"),
    ("ab", 1, "…"),
    ("终端终端终端", 6, "终端 …"),  # a wide character that does not fit leaves a blank
    ("终端终端终端", 7, "终端终…"),
    ("tail   ", 4, "tail"),  # only blanks cut: no mark
    ("x\x1b[31mred", 6, "x␛[31…"),  # with a marker (not a plain row)
])
def test_a_cut_row_ends_in_an_ellipsis(text, width, expected) -> None:
    """Issue 26 §4: rows were cut at the edge with nothing saying so."""
    from cockpit.widgets.safe_text import styled
    from cockpit.widgets.transcript.rows import one

    for made in (styled(text), styled(text, "bold")):  # a plain row, and one in a style
        strip = one(Console(width=200), made, width)
        assert strip.text == expected, (made, strip.text)
        assert strip.cell_length <= width
