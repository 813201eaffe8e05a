"""`cockpit export`: a readable report of a run from its journal, as Markdown (here) or HTML
(`cockpit.export.html`), both saying what `cockpit.export.contents` says.

The report is built from the same fold the cockpit shows (`RunFold`, run as replay runs it): the
task and how it ended (the error first, the reply once), the files it changed, each turn with
its messages (line breaks kept), decisions and tool calls (outputs trimmed, every diff),
approvals with who decided, the verification checks, and token usage. Journal contents are
untrusted: every character `engine_adapter.text` calls unsafe is shown — in Markdown as its
escape (`\u200b`), in HTML as a marker (`⟨U+200B⟩`) in a highlighted `<mark class="unsafe">` —
Markdown code fences are made long enough not to be closed by the content, HTML is escaped,
and every cut says how much it dropped. Each tool call shows its whole input, every key of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cockpit.export.contents import (
    CHANGED_MARK,
    END_LINES,
    HUMAN,
    TEXT_CHARS,
    ExportResult,
    approval_text,
    call_diff,
    call_input,
    call_tier,
    engine_text,
    problems,
    question_text,
    status_lines,
    trim,
    usage_text,
    when,
)
from cockpit.export.html import render_html
from engine_adapter.journal import JournalIndex, check_file
from engine_adapter.replay import JournalReplay
from engine_adapter.text import cap, escaped
from engine_adapter.view import (
    DecisionItem,
    EndItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    RunView,
    ToolCallItem,
    call_timing,
    changes_lines,
    task_changes,
    task_end_of,
)

__all__ = ["FORMATS", "export_journal", "render_markdown"]

FORMATS = ("markdown", "html")


def _visible(text: str, limit: int | None = None) -> str:
    """Markdown's display: capped (saying how much was dropped), unsafe characters escaped."""
    return escaped(cap(text, chars=limit) if limit is not None else text)


@contextmanager
def _folded(path: str | Path) -> Iterator[tuple[RunView, JournalIndex]]:
    """The run's view at its end, folded as the replay viewer folds it (streamed text stays in
    the file until the report reads it, so the journal is open while the report is made)."""
    replay = JournalReplay(path)
    try:
        replay.read_through()
        yield replay.state_at(len(replay), share=True), replay.index
    finally:
        replay.close()


def _hard_breaks(text: str) -> str:
    """Markdown text whose single line breaks stay line breaks (two trailing spaces), except
    inside fenced code blocks, where lines are kept as they are anyway."""
    out: list[str] = []
    fence: str | None = None
    lines = text.split("\n")
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        marker_ = stripped[:3]
        if marker_ in ("```", "~~~"):
            fence = None if fence == marker_ else (fence or marker_)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if fence is None and marker_ not in ("```", "~~~") and line.strip() \
                and following.strip() and not line.endswith("  "):
            line += "  "
        out.append(line)
    return "\n".join(out)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render_markdown(view: RunView, result: ExportResult) -> str:
    """The report as Markdown."""
    out: list[str] = []
    add = out.append
    if result.changed:
        add(f"> **{CHANGED_MARK}:** {_visible(result.chain, 2_000)}. What follows is what the "
            "file holds now, not what the run wrote.")
        add("")
    add(f"# Run report: {_visible(view.task or '(no task)', 300)}")
    add("")
    head, rest = status_lines(view)
    add(f"- **Status:** {_visible(head, 2_000)}")
    if rest:
        body = _visible("\n".join(rest))
        fence = _fence(body)
        add(f"\n  {fence}\n" + "\n".join("  " + line for line in body.split("\n"))
            + f"\n  {fence}\n")
    add(f"- **Engine:** {engine_text(view, _visible)}")
    add(f"- **Started:** {when(view.started_ts)} · **ended:** {when(view.ended_ts)}")
    add(f"- **Events:** {result.events:,} · turns {len(view.turns)} · tool calls "
        f"{len(view.tool_calls)}")
    add(f"- **Usage:** {usage_text(view)}")
    for problem in problems(result):
        add(f"- **Journal:** {problem}")
    add("")
    changes = changes_lines(task_changes(view.items))
    if changes:
        add("## Changed files")
        add("")
        body = _visible("\n".join(changes))
        fence = _fence(body)
        add(f"{fence}\n{body}\n{fence}")
        add("")
    turn: tuple[int, int | None] | None = None
    for item in view.items:
        key = (item.task, item.turn)
        if item.turn and key != turn and not isinstance(item, EndItem):
            turn = key
            add(f"## Turn {item.turn}")
            add("")
        add(_markdown_item(item, view))
        add("")
    add("## Verification")
    add("")
    if not view.checks:
        add("No verification plan.")
    for check in view.checks.values():
        mark = {"passed": "✓", "failed": "✗", "running": "…"}.get(check.status, "○")
        add(f"- {mark} **{_visible(check.name)}** ({check.status})"
            + (f": `{_visible(check.command)}`" if check.command else ""))
        if check.output and check.status == "failed":
            body = _visible(trim(check.output))
            fence = _fence(body)
            add(f"\n  {fence}\n" + "\n".join("  " + line for line in body.split("\n"))
                + f"\n  {fence}")
    add("")
    if view.grants:
        add("## Grants in force")
        add("")
        for grant in view.grants:
            add(f"- {_visible(grant.tool)} `{_visible(grant.prefix)}` up to tier {grant.tier}")
        add("")
    return "\n".join(out)


def _markdown_end(item: EndItem, view: RunView) -> str:
    told = task_end_of(view.items, item)
    head, *rest = told.lines
    lines = [f"**■ {_visible(head, 2_000)}**"]
    if rest:
        body = _visible(trim("\n".join(rest), lines=END_LINES, chars=8_000))
        fence = _fence(body)
        lines += ["", fence, body, fence]
    if told.reply_note:
        lines += ["", f"*{told.reply_note[:1].upper()}{told.reply_note[1:]}.*"]
    elif told.reply:
        lines += ["", "**Partial reply:**" if told.partial else "**Reply:**", "",
                  _hard_breaks(_visible(told.reply, TEXT_CHARS))]
    return "\n".join(lines)


def _markdown_item(item: Item, view: RunView) -> str:
    if isinstance(item, MessageItem):
        text = _visible(item.text, TEXT_CHARS)
        if item.channel == "thought":
            return "\n".join("> " + line + "  " for line in text.split("\n"))
        return _hard_breaks(text)
    if isinstance(item, DecisionItem):
        tool = f" `{_visible(item.tool)}`" if item.tool else ""
        why = f" — {_visible(item.rationale, 500)}" if item.rationale else ""
        return f"*Decision:* {_visible(item.action)}{tool}{why}"
    if isinstance(item, ToolCallItem):
        timing = call_timing(item, HUMAN)
        lines = [f"**Tool call** `{_visible(item.tool)}` ({call_tier(item)}) — {item.status}"
                 + (f" · {timing}" if timing else ""), ""]
        shown = _visible(call_input(item))
        if shown:
            fence = _fence(shown)
            lines += ["Input:", "", fence, shown, fence, ""]
        approval = approval_text(item)
        if approval:
            lines.append(f"Approval: {_visible(approval)}")
        if item.error:
            lines.append(f"Error: {_visible(item.error, 500)}")
        if item.diff:
            body = _visible(call_diff(item))
            fence = _fence(body)
            lines += ["", f"{fence}diff", body, fence]
        if item.output:
            body = _visible(trim(item.output))
            fence = _fence(body)
            lines += ["", fence, body, fence]
        return "\n".join(lines)
    if isinstance(item, QuestionItem):
        return f"**Question:** {_visible(question_text(item), 4_000)}"
    if isinstance(item, EndItem):
        return _markdown_end(item, view)
    if isinstance(item, NoticeItem):
        prefix = {"error": "**Error:** ", "warning": "**Note:** "}.get(item.level, "")
        return f"{prefix}{_visible(item.text, 2_000)}"
    return f"({_visible(item.kind)})"


def export_journal(path: str | Path, fmt: str = "markdown") -> ExportResult:
    """Fold the journal at `path` and render it as `fmt` ("markdown" or "html").

    Raises `engine_adapter.JournalError` for a missing file or a directory, `ValueError` for an
    unknown format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    with _folded(path) as (view, index):
        for item in view.items:  # read the streamed text now: it may find a corrupt line
            if isinstance(item, MessageItem):
                item.text  # noqa: B018 - reads and keeps it
        result = ExportResult("", events=view.events,
                              corrupt_lines=sorted(index.corrupt.values()),
                              unknown_events=index.unknown, torn_tail=index.torn_tail)
        try:
            verdict = check_file(path)
        except OSError:
            pass  # (read a moment ago: the report stands without the chain's word)
        else:
            result.chain, result.changed = verdict.summary(), verdict.tampered
        result.text = render_markdown(view, result) if fmt == "markdown" else render_html(
            view, result)
    return result
