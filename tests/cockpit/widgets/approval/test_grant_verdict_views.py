"""The approval bar, the headless view, export and replay show the grant verdict the
`approval_requested` event carried, as it is: they never decide it again (issue 10 §1)."""

from __future__ import annotations

from support.journals import write

from cockpit.export import export_journal
from cockpit.headless import format_event
from cockpit.widgets import always_text
from engine_adapter import AgentEnd, AgentStart, ApprovalRequested, ApprovalResolved
from engine_adapter.view import fold_events


def requested(approval_id: str, **fields) -> ApprovalRequested:
    base = {"tool": "shell", "reason": "runs it", "tool_input": {"command": "git status"},
            "tier": 3, "prefix": "git status"}
    return ApprovalRequested(approval_id=approval_id, **{**base, **fields})


def approval_of(*events):
    view = fold_events(list(events))
    (row,) = [r for r in view.tool_calls.values() if r.approval is not None]
    return row.approval


def test_the_bar_says_what_the_verdict_says_even_against_the_prefix() -> None:
    # A verdict of "no" with a non-blank prefix (say, an env key) is shown as "no", with why.
    no = approval_of(requested("a", grantable=False,
                               ungrantable_reason="sets GIT_EXTERNAL_DIFF in the environment"))
    assert always_text(no) == "cannot be granted: sets GIT_EXTERNAL_DIFF in the environment"
    assert not no.grantable
    yes = approval_of(requested("b", grantable=True))
    assert always_text(yes) == "always allow shell `git status …` in this session"


def test_old_journals_without_a_verdict_fall_back_to_the_prefix() -> None:
    assert approval_of(requested("a")).grantable
    assert always_text(approval_of(requested("a", prefix=""))) == "cannot be granted"
    assert not approval_of(requested("a", tier=4)).grantable


def test_the_reason_is_cleaned_for_the_terminal() -> None:
    evil = approval_of(requested("a", grantable=False,
                                 ungrantable_reason="carries x\x1b[2J\u202e, which …"))
    text = always_text(evil)
    assert "\x1b" not in text and "\u202e" not in text


def test_headless_prints_the_verdict() -> None:
    _, line, _ = format_event(requested("a", grantable=False, ungrantable_reason="runs bash, "
                                        "a shell"))
    assert line.endswith("[a] always: cannot be granted: runs bash, a shell")


def test_export_shows_the_verdict_of_each_ask(tmp_path) -> None:
    events = [
        AgentStart(task="t", engine="steps"),
        requested("a", grantable=True),
        ApprovalResolved(approval_id="a", tool="shell", allowed=True, via="human"),
        requested("b", tool_input={"command": "git diff", "env": {"X": "1"}}, prefix="git diff",
                  grantable=False, ungrantable_reason="sets X in the environment\x1b[31m"),
        ApprovalResolved(approval_id="b", tool="shell", allowed=False, via="human"),
        AgentEnd(status="completed", result="done"),
    ]
    events = [e.model_copy(update={"seq": i, "ts": 1.0 + i, "session_id": "s"})
              for i, e in enumerate(events)]
    path = tmp_path / "run.jsonl"
    write(path, events)
    text = export_journal(path, "markdown").text
    assert "allowed by a human; [a] always would allow `git status`" in text
    assert "denied by a human; cannot be granted: sets X in the environment\\x1b[31m" in text
    html = export_journal(path, "html").text
    assert "cannot be granted: sets X in the environment" in html and "\x1b" not in html
