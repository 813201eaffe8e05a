"""`cockpit export`: a readable report of a run from its journal, as Markdown or HTML.

The report is built from the same fold the cockpit shows (`RunFold`, run as replay runs it): the
task, each turn with its messages, decisions and tool calls (outputs trimmed), approvals with
who decided, the verification checks, and token usage. Journal contents are untrusted: every
character `engine_adapter.text` calls unsafe is shown — in Markdown as its escape (`\u200b`), in
HTML as a marker (`⟨U+200B⟩`) in a highlighted `<mark class="unsafe">` — Markdown code fences are
made long enough not to be closed by the content, HTML is escaped, and every cut says how much
it dropped. Each tool call shows its whole input, every key of it.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from engine_adapter.fold import (
    DecisionItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    RunView,
    ToolCallItem,
)
from engine_adapter.journal_index import JournalIndex
from engine_adapter.questions import answer_text, fields_text
from engine_adapter.replay import JournalReplay
from engine_adapter.text import cap, escaped, marker, split_unsafe

from .input_fields import input_text

__all__ = ["FORMATS", "ExportResult", "export_journal", "render_html", "render_markdown"]

FORMATS = ("markdown", "html")
OUTPUT_LINES = 20  # lines of a tool output kept in the report
OUTPUT_CHARS = 4_000  # characters of a tool output kept
TEXT_CHARS = 20_000  # characters of one message kept
INPUT_CHARS = 8_000  # characters of a tool call's whole input kept
INPUT_LINES = 60  # lines of it


def _visible(text: str, limit: int | None = None) -> str:
    """Markdown's display: capped (saying how much was dropped), unsafe characters escaped."""
    return escaped(cap(text, chars=limit) if limit is not None else text)


def _trim(text: str, lines: int = OUTPUT_LINES, chars: int = OUTPUT_CHARS) -> str:
    return cap(text, chars=chars, lines=lines)


def _html(text: str | None, limit: int | None = None) -> str:
    """HTML's display: capped, escaped, each unsafe character a visible marker in a
    highlighted `<mark class="unsafe">` (never the character itself: a bidi override would
    reorder the page)."""
    text = cap(text or "", chars=limit) if limit is not None else (text or "")
    return "".join(
        f"<mark class='unsafe' title='unsafe character U+{ord(run):04X}'>{marker(run)}</mark>"
        if unsafe else html.escape(run) for run, unsafe in split_unsafe(text))


@dataclass
class ExportResult:
    """The report's text and what reading the journal ran into."""

    text: str
    events: int
    corrupt_lines: list[int] = field(default_factory=list)
    unknown_events: int = 0
    torn_tail: bool = False


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


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def _input(item: ToolCallItem) -> str:
    """The call's whole input (every key: the command, env, cwd, the diff…), capped."""
    data = item.approval.tool_input if item.approval and item.approval.tool_input \
        else item.tool_input
    return _trim(input_text(data), lines=INPUT_LINES, chars=INPUT_CHARS)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _engine_text(view: RunView, show: Callable[..., str]) -> str:
    """The engine, the external agent (name and version, and the command that started it) and
    the model, in one line; `show(text, limit)` is the format's display (`_visible`, `_html`)."""
    parts = [show(view.engine or "?", 200)]
    if view.agent:
        parts.append(f"agent {show(view.agent, 200)}")
    if view.agent_command:
        parts.append(f"started with {show(view.agent_command, 300)}")
    if view.model:
        parts.append(f"model {show(view.model, 200)}")
    return " · ".join(parts)


def _usage_text(view: RunView) -> str:
    """Tokens, cost and how full the context window got, in one line of plain text."""
    cached = f" ({view.cached_tokens:,} from cache)" if view.cached_tokens else ""
    thought = f", {view.thought_tokens:,} thinking" if view.thought_tokens else ""
    cost = f" · ${view.cost_usd:.4f}" if view.cost_usd is not None else ""
    text = (f"{view.input_tokens:,} input{cached} + {view.output_tokens:,} output tokens"
            f"{thought} over {view.model_calls} model calls{cost}")
    if view.context is not None:
        text += f" · context window {view.context[0]:,} of {view.context[1]:,} tokens"
    return text


def _approval_text(item: ToolCallItem) -> str | None:
    approval = item.approval
    if approval is None:
        return f"covered by {_visible(item.permitted_by, 200)}" if item.permitted_by else None
    who = {"human": "by a human", "grant": "by a standing grant", "auto": "automatically"}.get(
        approval.via or "", f"by {approval.via or 'nobody yet'}")
    verdict = {"allowed": "allowed", "denied": "denied"}.get(approval.state, "pending")
    extra = " (and granted always)" if approval.remember else ""
    if approval.answer_reason:
        extra += f": {_visible(approval.answer_reason, 500)}"
    return f"{verdict} {who}{extra}" if verdict != "pending" else "awaiting a decision"


def _question_text(item: QuestionItem) -> str:
    """An agent's question, its form and its answer, in one line."""
    form = fields_text(item.fields)
    answer = "awaiting an answer" if item.state == "pending" else answer_text(
        item.fields, item.state, item.values, via=item.via or "human", reason=item.reason,
        human="a human")
    return f"the agent asks: {item.message}" + (f" ({form})" if form else "") + f" → {answer}"


def render_markdown(view: RunView, result: ExportResult) -> str:
    """The report as Markdown."""
    out: list[str] = []
    add = out.append
    add(f"# Run report: {_visible(view.task or '(no task)', 300)}")
    add("")
    add(f"- **Status:** {view.status}" + (f" — {_visible(view.result or view.error or '', 500)}"
                                            if view.result or view.error else ""))
    add(f"- **Engine:** {_engine_text(view, _visible)}")
    add(f"- **Started:** {_when(view.started_ts)} · **ended:** {_when(view.ended_ts)}")
    add(f"- **Events:** {result.events:,} · turns {len(view.turns)} · tool calls "
        f"{len(view.tool_calls)}")
    add(f"- **Usage:** {_usage_text(view)}")
    for problem in _problems(result):
        add(f"- **Journal:** {problem}")
    add("")
    turn: tuple[int, int | None] | None = None
    for item in view.items:
        key = (item.task, item.turn)
        if item.turn and key != turn:
            turn = key
            add(f"## Turn {item.turn}")
            add("")
        add(_markdown_item(item))
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
            body = _visible(_trim(check.output))
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


def _markdown_item(item: Item) -> str:
    if isinstance(item, MessageItem):
        text = _visible(item.text, TEXT_CHARS)
        if item.channel == "thought":
            return "\n".join("> " + line for line in text.split("\n"))
        return text
    if isinstance(item, DecisionItem):
        tool = f" `{_visible(item.tool)}`" if item.tool else ""
        why = f" — {_visible(item.rationale, 500)}" if item.rationale else ""
        return f"*Decision:* {_visible(item.action)}{tool}{why}"
    if isinstance(item, ToolCallItem):
        lines = [f"**Tool call** `{_visible(item.tool)}` (tier {item.tier}) — {item.status}",
                 ""]
        shown = _visible(_input(item))
        if shown:
            fence = _fence(shown)
            lines += ["Input:", "", fence, shown, fence, ""]
        approval = _approval_text(item)
        if approval:
            lines.append(f"Approval: {approval}")
        if item.error:
            lines.append(f"Error: {_visible(item.error, 500)}")
        if item.output:
            body = _visible(_trim(item.output))
            fence = _fence(body)
            lines += ["", fence, body, fence]
        return "\n".join(lines)
    if isinstance(item, QuestionItem):
        return f"**Question:** {_visible(_question_text(item), 4_000)}"
    if isinstance(item, NoticeItem):
        prefix = {"error": "**Error:** ", "warning": "**Note:** "}.get(item.level, "")
        return f"{prefix}{_visible(item.kind)}: {_visible(item.text, 2_000)}"
    return f"({_visible(item.kind)})"


def _problems(result: ExportResult) -> list[str]:
    problems = []
    if result.corrupt_lines:
        shown = ", ".join(str(n) for n in result.corrupt_lines[:10])
        problems.append(f"{len(result.corrupt_lines)} corrupt line(s) skipped (line {shown})")
    if result.unknown_events:
        problems.append(f"{result.unknown_events} event(s) of unknown type (a newer cockpit?)")
    if result.torn_tail:
        problems.append("the last line was torn (a crash mid-write) and skipped")
    return problems


_HTML_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; color: #222; }
pre { background: #f4f4f4; padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
.thought { color: #666; font-style: italic; }
.error { color: #b00020; } .warning { color: #8a6d00; }
.ok { color: #1a7f37; } .failed, .denied { color: #b00020; }
.meta td { padding: 0 1rem 0 0; }
mark.unsafe { background: #ffd54f; color: #000; font-weight: bold; }
"""


def render_html(view: RunView, result: ExportResult) -> str:
    """The report as a standalone HTML page (everything from the journal escaped)."""
    e = _html
    out: list[str] = []
    add = out.append
    add("<!doctype html><html><head><meta charset='utf-8'>")
    add(f"<title>Run report: {e(view.task, 200)}</title><style>{_HTML_STYLE}</style></head>")
    add("<body>")
    add(f"<h1>Run report: {e(view.task or '(no task)', 300)}</h1>")
    rows = [
        ("Status", f"<span class='{e(view.status)}'>{e(view.status)}</span> "
                   f"{e(view.result or view.error or '', 500)}"),
        ("Engine", _engine_text(view, e)),
        ("Started", e(_when(view.started_ts)) + " · ended " + e(_when(view.ended_ts))),
        ("Events", f"{result.events:,} · turns {len(view.turns)} · tool calls "
                   f"{len(view.tool_calls)}"),
        ("Usage", html.escape(_usage_text(view))),
        *[("Journal", e(p)) for p in _problems(result)],
    ]
    add("<table class='meta'>" + "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>"
                                         for k, v in rows) + "</table>")
    turn: tuple[int, int | None] | None = None
    for item in view.items:
        key = (item.task, item.turn)
        if item.turn and key != turn:
            turn = key
            add(f"<h2>Turn {item.turn}</h2>")
        add(_html_item(item, e))
    add("<h2>Verification</h2>")
    if not view.checks:
        add("<p>No verification plan.</p>")
    add("<ul>")
    for check in view.checks.values():
        add(f"<li class='{e(check.status)}'><b>{e(check.name)}</b> ({e(check.status)})"
            + (f" <code>{e(check.command)}</code>" if check.command else "")
            + (f"<pre>{e(_trim(check.output))}</pre>"
               if check.output and check.status == "failed" else "") + "</li>")
    add("</ul>")
    if view.grants:
        add("<h2>Grants in force</h2><ul>")
        for grant in view.grants:
            add(f"<li>{e(grant.tool)} <code>{e(grant.prefix)}</code> up to tier {grant.tier}</li>")
        add("</ul>")
    add("</body></html>")
    return "\n".join(out)


def _html_item(item: Item, e: Callable[..., str]) -> str:
    if isinstance(item, MessageItem):
        cls = "thought" if item.channel == "thought" else "message"
        return f"<p class='{cls}' style='white-space: pre-wrap'>{e(item.text, TEXT_CHARS)}</p>"
    if isinstance(item, DecisionItem):
        tool = f" <code>{e(item.tool)}</code>" if item.tool else ""
        why = f" — {e(item.rationale, 500)}" if item.rationale else ""
        return f"<p><i>Decision:</i> {e(item.action)}{tool}{why}</p>"
    if isinstance(item, ToolCallItem):
        parts = [f"<div class='tool'><p><b>Tool call</b> <code>{e(item.tool)}</code> "
                 f"(tier {item.tier}) — <span class='{e(item.status)}'>{e(item.status)}</span>"]
        shown = _input(item)
        if shown:
            parts.append(f"<br>Input:</p><pre class='input'>{e(shown)}</pre><p>")
        approval = _approval_text(item)
        if approval:
            parts.append(f"<br>Approval: {e(approval)}")
        if item.error:
            parts.append(f"<br><span class='error'>Error: {e(item.error, 500)}</span>")
        parts.append("</p>")
        if item.output:
            parts.append(f"<pre>{e(_trim(item.output))}</pre>")
        parts.append("</div>")
        return "".join(parts)
    if isinstance(item, QuestionItem):
        return f"<p><b>Question:</b> {e(_question_text(item), 4_000)}</p>"
    if isinstance(item, NoticeItem):
        return f"<p class='{e(item.level)}'>{e(item.kind)}: {e(item.text, 2_000)}</p>"
    return f"<p>({e(item.kind)})</p>"


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
        result.text = render_markdown(view, result) if fmt == "markdown" else render_html(
            view, result)
    return result
