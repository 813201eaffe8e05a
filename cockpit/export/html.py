"""`cockpit export --format html`: the run report as one standalone HTML page.

Everything from the journal is escaped; each unsafe character is shown as a visible marker
(`⟨U+200B⟩`) in a highlighted `<mark class="unsafe">`, never as itself (a bidi override would
reorder the page). A reply's Markdown is rendered (`cockpit.export.reply_html`: raw HTML stays
text, links and images become text, code is monospace and highlighted). Diffs are coloured line
by line; what the report says comes from
`cockpit.export.contents`, as the Markdown report's does.
"""

from __future__ import annotations

import html
from collections.abc import Callable

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
from cockpit.export.reply_html import code_css, reply_html
from engine_adapter.text import cap, marker, split_unsafe
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
    line_kinds,
    task_changes,
    task_end_of,
)

__all__ = ["render_html"]


def _html(text: str | None, limit: int | None = None) -> str:
    """HTML's display: capped, escaped, each unsafe character a visible marker in a
    highlighted `<mark class="unsafe">` (never the character itself: a bidi override would
    reorder the page)."""
    text = cap(text or "", chars=limit) if limit is not None else (text or "")
    return "".join(
        f"<mark class='unsafe' title='unsafe character U+{ord(run):04X}'>{marker(run)}</mark>"
        if unsafe else html.escape(run) for run, unsafe in split_unsafe(text))


_HTML_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; color: #222; }
pre { background: #f4f4f4; padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
.thought { color: #666; font-style: italic; }
.error { color: #b00020; } .warning { color: #8a6d00; }
.ok { color: #1a7f37; } .failed, .denied { color: #b00020; }
.meta td { padding: 0 1rem 0 0; vertical-align: top; }
pre.diff .add { color: #1a7f37; } pre.diff .remove { color: #b00020; }
pre.diff .hunk { color: #6f42c1; } pre.diff .file { font-weight: bold; }
pre.diff .note { color: #666; }
mark.unsafe { background: #ffd54f; color: #000; font-weight: bold; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.message code { background: #f0f0f0; padding: 0 .2em; border-radius: 3px; }
.message pre code { background: none; padding: 0; }
.message table { border-collapse: collapse; } .message .href { color: #666; }
.message th, .message td { border: 1px solid #ccc; padding: .2rem .5rem; }
.message blockquote { border-left: 3px solid #ccc; margin-left: 0; padding-left: 1rem; }
"""


def _html_diff(diff: str) -> str:
    """A diff as `<pre class='diff'>`, each line in a span named for its kind."""
    lines = diff.rstrip("\n").split("\n")
    return "<pre class='diff'>" + "\n".join(
        f"<span class='{kind}'>{_html(line)}</span>"
        for line, kind in zip(lines, line_kinds(lines), strict=True)) + "</pre>"


def render_html(view: RunView, result: ExportResult) -> str:
    """The report as a standalone HTML page (everything from the journal escaped)."""
    e = _html
    out: list[str] = []
    add = out.append
    add("<!doctype html><html><head><meta charset='utf-8'>")
    add(f"<title>Run report: {e(view.task, 200)}</title><style>{_HTML_STYLE}{code_css()}"
        "</style></head>")
    add("<body>")
    if result.changed:
        add(f"<p class='error changed'><b>{CHANGED_MARK}:</b> {e(result.chain, 2_000)}. What "
            "follows is what the file holds now, not what the run wrote.</p>")
    add(f"<h1>Run report: {e(view.task or '(no task)', 300)}</h1>")
    head, rest = status_lines(view)
    status, _, error = head.partition(": ")
    rows = [
        ("Status", f"<span class='{e(view.status)}'>{e(status)}</span>"
                   + (f": {e(error, 2_000)}" if error else "")
                   + (f"<pre>{e(chr(10).join(rest))}</pre>" if rest else "")),
        ("Engine", engine_text(view, e)),
        ("Started", e(when(view.started_ts)) + " · ended " + e(when(view.ended_ts))),
        ("Events", f"{result.events:,} · turns {len(view.turns)} · tool calls "
                   f"{len(view.tool_calls)}"),
        ("Usage", e(usage_text(view))),
        *[("Journal", e(p)) for p in problems(result)],
    ]
    add("<table class='meta'>" + "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>"
                                         for k, v in rows) + "</table>")
    changes = changes_lines(task_changes(view.items))
    if changes:
        add(f"<h2>Changed files</h2><pre class='changes'>{e(chr(10).join(changes))}</pre>")
    turn: tuple[int, int | None] | None = None
    for item in view.items:
        key = (item.task, item.turn)
        if item.turn and key != turn and not isinstance(item, EndItem):
            turn = key
            add(f"<h2>Turn {item.turn}</h2>")
        add(_html_item(item, view, e))
    add("<h2>Verification</h2>")
    if not view.checks:
        add("<p>No verification plan.</p>")
    add("<ul>")
    for check in view.checks.values():
        add(f"<li class='{e(check.status)}'><b>{e(check.name)}</b> ({e(check.status)})"
            + (f" <code>{e(check.command)}</code>" if check.command else "")
            + (f"<pre>{e(trim(check.output))}</pre>"
               if check.output and check.status == "failed" else "") + "</li>")
    add("</ul>")
    if view.grants:
        add("<h2>Grants in force</h2><ul>")
        for grant in view.grants:
            add(f"<li>{e(grant.tool)} <code>{e(grant.prefix)}</code> up to tier {grant.tier}</li>")
        add("</ul>")
    add("</body></html>")
    return "\n".join(out)


def _html_end(item: EndItem, view: RunView, e: Callable[..., str]) -> str:
    told = task_end_of(view.items, item)
    head, *rest = told.lines
    parts = [f"<div class='end'><p class='{e(item.level)}'><b>■ {e(head, 2_000)}</b></p>"]
    if rest:
        parts.append(f"<pre>{e(trim(chr(10).join(rest), lines=END_LINES, chars=8_000))}</pre>")
    if told.reply_note:
        parts.append(f"<p><i>{e(told.reply_note[:1].upper() + told.reply_note[1:])}.</i></p>")
    elif told.reply:
        parts.append(f"<p><b>{'Partial reply' if told.partial else 'Reply'}:</b></p>"
                     f"<div class='message'>{reply_html(cap(told.reply, chars=TEXT_CHARS))}"
                     "</div>")
    parts.append("</div>")
    return "".join(parts)


def _html_item(item: Item, view: RunView, e: Callable[..., str]) -> str:
    if isinstance(item, MessageItem):
        if item.channel == "thought":
            return (f"<p class='thought' style='white-space: pre-wrap'>"
                    f"{e(item.text, TEXT_CHARS)}</p>")
        return f"<div class='message'>{reply_html(cap(item.text, chars=TEXT_CHARS))}</div>"
    if isinstance(item, DecisionItem):
        tool = f" <code>{e(item.tool)}</code>" if item.tool else ""
        why = f" — {e(item.rationale, 500)}" if item.rationale else ""
        return f"<p><i>Decision:</i> {e(item.action)}{tool}{why}</p>"
    if isinstance(item, ToolCallItem):
        timing = call_timing(item, HUMAN)
        parts = [f"<div class='tool'><p><b>Tool call</b> <code>{e(item.tool)}</code> "
                 f"({e(call_tier(item))}) — "
                 f"<span class='{e(item.status)}'>{e(item.status)}</span>"
                 + (f" · {e(timing)}" if timing else "")]
        shown = call_input(item)
        if shown:
            parts.append(f"<br>Input:</p><pre class='input'>{e(shown)}</pre><p>")
        approval = approval_text(item)
        if approval:
            parts.append(f"<br>Approval: {e(approval)}")
        if item.error:
            parts.append(f"<br><span class='error'>Error: {e(item.error, 500)}</span>")
        parts.append("</p>")
        if item.diff:
            parts.append(_html_diff(call_diff(item)))
        if item.output:
            parts.append(f"<pre>{e(trim(item.output))}</pre>")
        parts.append("</div>")
        return "".join(parts)
    if isinstance(item, QuestionItem):
        return f"<p><b>Question:</b> {e(question_text(item), 4_000)}</p>"
    if isinstance(item, EndItem):
        return _html_end(item, view, e)
    if isinstance(item, NoticeItem):
        return f"<p class='{e(item.level)}'>{e(item.text, 2_000)}</p>"
    return f"<p>({e(item.kind)})</p>"
