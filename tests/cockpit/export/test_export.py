"""The run report of a journal, in Markdown and HTML (`cockpit.export`): tasks, turns, tools,
approvals, verification and usage; outputs trimmed, fences that hold, journal text escaped; every
diff and the changed files; why a run failed, before its partial reply."""

from __future__ import annotations

import pytest
from support.journals import fixture_events, write

from cockpit.export import export_journal
from engine_adapter import ToolEnd


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "run.jsonl"
    write(path, fixture_events())
    return path


def test_markdown_report_has_task_turns_tools_approvals_verification_usage(journal) -> None:
    text = export_journal(journal, "markdown").text
    assert text.startswith("# Run report: fix the bug")
    assert "- **Status:** completed\n" in text  # the reply is not the status
    assert text.count("done") == 1  # the reply, once: at the end of its task
    assert "**■ completed**\n\n**Reply:**\n\ndone" in text
    assert "## Turn 1" in text and "## Turn 4" in text
    assert "**Tool call** `shell` (tier 1) — failed" in text  # turn 3's call
    assert "Approval: allowed by a human" in text
    assert "Approval: denied by a human" in text
    assert "✓ **tests** (passed): `pytest`" in text
    assert "- **Usage:** tokens unknown (none reported)" in text  # no usage in this run


def test_outputs_are_trimmed_and_fences_hold(tmp_path) -> None:
    events = fixture_events()
    long = "\n".join(f"row {i} ```" for i in range(500))
    events.insert(-2, ToolEnd(call_id="c1", tool="shell", ok=True, output=long,
                              seq=len(events), ts=1.0, session_id="s"))
    path = tmp_path / "long.jsonl"
    write(path, events)
    text = export_journal(path, "markdown").text
    assert "row 18 ```" in text and "row 19 ```" not in text  # 19 rows and the note's line
    assert "… 481 more lines dropped" in text
    assert "````" in text  # a fence longer than any run of backticks in the output


def test_html_report_escapes_journal_text(tmp_path) -> None:
    events = fixture_events()
    events[0] = events[0].model_copy(update={"task": "<script>alert(1)</script>\x1b[31m"})
    path = tmp_path / "evil.jsonl"
    write(path, events)
    page = export_journal(path, "html").text
    assert "<script>alert" not in page
    assert ("&lt;script&gt;alert(1)&lt;/script&gt;<mark class='unsafe' "
            "title='unsafe character U+001B'>␛</mark>[31m") in page
    assert page.startswith("<!doctype html>")


def _edit_run(tmp_path, end):
    """A run that edits a file unasked, says two lines, and ends as `end` says."""
    from engine_adapter import AgentStart, ModelUpdate, ToolEnd, ToolStart, TurnStart
    from engine_adapter.files import unified_diff

    diff = unified_diff("a = 1\nb = 2\n", "a = 1\nb = 3\n", "conf.py")
    events = [AgentStart(task="tune", engine="acp:test"), TurnStart(turn=1),
              ModelUpdate(turn=1, text="First line.\nSecond line."),
              ToolStart(call_id="e1", tool="edit", tier=2,
                        tool_input={"path": "conf.py", "diff": diff}),
              ToolEnd(call_id="e1", tool="edit", ok=True, output="edited conf.py"),
              ToolStart(call_id="e2", tool="edit", tier=2, tool_input={"path": "x.py"}),
              ToolEnd(call_id="e2", tool="edit", ok=True, output="",
                      diff=unified_diff(None, "x\n", "x.py")),
              end]
    path = tmp_path / "edit.jsonl"
    write(path, [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
                 for i, e in enumerate(events)])
    return path, diff


def test_the_report_shows_every_diff_and_the_changed_files(tmp_path) -> None:
    from engine_adapter import AgentEnd

    path, diff = _edit_run(tmp_path, AgentEnd(status="completed",
                                              result="First line.\nSecond line."))
    text = export_journal(path, "markdown").text
    assert "## Changed files\n\n```\nconf.py  +1 −1\nx.py     +1 −0\n2 files changed  +2 −1\n```" \
        in text
    assert f"```diff\n{diff.rstrip()}\n```" in text
    assert "```diff\n--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+x\n```" in text  # ToolEnd.diff
    assert "Input:\n\n```\npath: conf.py\n```" in text  # the diff once, in its own block
    assert "First line.  \nSecond line." in text  # the model's line break survives Markdown
    assert text.count("Second line.") == 1 and "*The reply is above.*" in text
    page = export_journal(path, "html").text
    assert "<span class='add'>+b = 3</span>" in page
    assert "<span class='remove'>-b = 2</span>" in page
    assert "<pre class='changes'>conf.py  +1 −1\nx.py     +1 −0" in page


def test_the_report_says_why_a_run_failed_before_its_partial_reply(tmp_path) -> None:
    from engine_adapter import AgentEnd

    end = AgentEnd(status="failed", result="half an answer",
                   error="the agent exited with code 3", stderr=["Traceback: boom"])
    path, _ = _edit_run(tmp_path, end)
    text = export_journal(path, "markdown").text
    assert "- **Status:** failed: the agent exited with code 3\n" in text
    assert "last lines the agent wrote to stderr:\n    Traceback: boom" in text
    assert "**■ failed: the agent exited with code 3**" in text
    assert text.index("**■ failed") < text.index("**Partial reply:**\n\nhalf an answer")
    page = export_journal(path, "html").text
    assert "<span class='failed'>failed</span>: the agent exited with code 3<pre>" in page
    assert "<b>Partial reply:</b>" in page


def test_a_journal_write_failure_reads_as_one(tmp_path) -> None:
    from engine_adapter import AgentEnd

    error = "journal write failed: [Errno 28] No space left on device"
    path, _ = _edit_run(tmp_path, AgentEnd(status="failed", error=error))
    text = export_journal(path, "markdown").text
    assert f"- **Status:** failed: {error}" in text and "cancel" not in text


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_an_input_changed_after_approval_is_reported_with_both(tmp_path, fmt) -> None:
    from support.changed_input import changed_input_events

    path = tmp_path / "changed.jsonl"
    write(path, changed_input_events())
    text = export_journal(path, fmt).text
    assert "⚠ input changed after you approved it (approved: $ ls)" in text
    assert "rm -rf ~/work" in text  # what ran is the input shown, not the approved one
