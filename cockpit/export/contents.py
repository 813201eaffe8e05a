"""What a run report says, whatever its format: the run's status (the error first), its usage,
what reading the journal ran into, and each call's input, diff, verdict and timing, each capped
saying how much it dropped. `cockpit.export.markdown` writes it as Markdown, `cockpit.export.html`
as HTML."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine_adapter.events import answer_text, fields_text, format_ts, link_text
from engine_adapter.sandbox import sandbox_label
from engine_adapter.text import cap, plural
from engine_adapter.view import (
    EndItem,
    QuestionItem,
    RunView,
    TaskEnd,
    ToolCallItem,
    approval_verdict,
    input_changed_text,
    input_text,
    task_end_of,
)

__all__ = [
    "CHANGED_MARK",
    "DIFF_CHARS",
    "DIFF_LINES",
    "END_LINES",
    "HUMAN",
    "INPUT_CHARS",
    "INPUT_LINES",
    "OUTPUT_CHARS",
    "OUTPUT_LINES",
    "TEXT_CHARS",
    "ExportResult",
    "approval_text",
    "call_diff",
    "call_input",
    "call_tier",
    "engine_text",
    "last_end",
    "problems",
    "question_text",
    "status_lines",
    "trim",
    "usage_text",
    "when",
]

OUTPUT_LINES = 20  # lines of a tool output kept in the report
OUTPUT_CHARS = 4_000  # characters of a tool output kept
DIFF_LINES = 400  # lines of one call's diff kept
DIFF_CHARS = 40_000  # characters of it
END_LINES = 60  # lines of an end's error and stderr tail kept
HUMAN = "a human"  # who answered an approval, for a report read later by anyone
TEXT_CHARS = 20_000  # characters of one message kept
INPUT_CHARS = 8_000  # characters of a tool call's whole input kept
INPUT_LINES = 60  # lines of it


def trim(text: str, lines: int = OUTPUT_LINES, chars: int = OUTPUT_CHARS) -> str:
    """`text` capped (saying how much was dropped)."""
    return cap(text, chars=chars, lines=lines)


@dataclass
class ExportResult:
    """The report's text and what reading the journal ran into."""

    text: str
    events: int
    corrupt_lines: list[int] = field(default_factory=list)
    unknown_events: int = 0
    torn_tail: bool = False
    chain: str = ""
    """The journal's chain verdict (`cockpit verify`), one line; "" when it could not be read."""
    changed: bool = False
    """Whether the chain says the journal was edited after the run (the report says so on top)."""


def when(ts: float | None) -> str:
    """A time stamp as a report shows it (`?` when unknown)."""
    return format_ts(ts) if ts else "?"


def call_input(item: ToolCallItem) -> str:
    """The call's whole input (every key: the command, env, cwd…), capped; its diff is shown
    in a block of its own (`call_diff`)."""
    # The approval's input, unless the engine reported another one after it: then what ran.
    data = item.approval.tool_input if item.approval and item.approval.tool_input \
        and item.approved_input is None else item.tool_input
    if "diff" in data:
        data = {k: v for k, v in data.items() if k != "diff"}
    return trim(input_text(data), lines=INPUT_LINES, chars=INPUT_CHARS)


def call_tier(item: ToolCallItem) -> str:
    """`tier 3`, and where a command ran: `tier 3, sandbox`, `tier 3, no sandbox (off)`."""
    where = sandbox_label(item.sandbox, item.sandbox_network)
    return f"tier {item.tier}" + (f", {where}" if where else "")


def call_diff(item: ToolCallItem) -> str:
    """The call's diff, capped (saying how much was dropped)."""
    return trim((item.diff or "").rstrip("\n"), lines=DIFF_LINES, chars=DIFF_CHARS)


def last_end(view: RunView) -> tuple[EndItem | None, TaskEnd | None]:
    """The last task's end and how it reads (None while it has not ended)."""
    for item in reversed(view.items):
        if isinstance(item, EndItem):
            return item, task_end_of(view.items, item)
        if item.kind == "task":
            break
    return None, None


def approval_text(item: ToolCallItem) -> str | None:
    """Whether the input changed after it was approved (first: it matters most), who decided
    the call, in the views' words, and what `[a] always` would have done (the
    verdict its request carried); or what covered it when nobody was asked (None: nothing).
    Plain text: each format displays it."""
    changed = input_changed_text(item.approved_input, limit=500)
    said = _approval_text(item)
    if changed is None:
        return said
    return f"{changed}; {said}" if said else changed


def _approval_text(item: ToolCallItem) -> str | None:
    approval = item.approval
    if approval is None:  # run unasked: say what covered it, when the engine said
        return f"covered by {cap(item.permitted_by, chars=200)}" if item.permitted_by else None
    decided = approval_verdict(approval, human=HUMAN)
    if approval.answer_reason:  # the human's words with the answer, passed on to the agent
        decided += f" (reason: {cap(approval.answer_reason, chars=500)})"
    if approval.via in ("grant", "deny-rule", "policy", "mode"):  # nobody was asked
        return decided
    # The verdict the request carried, as it was: the report decides nothing again.
    if approval.grantable:
        prefix = cap(approval.prefix, chars=200).replace("`", "ˋ")
        return f"{decided}; [a] always would allow `{prefix}`"
    why = approval.ungrantable_reason
    return f"{decided}; cannot be granted" + (f": {cap(why, chars=300)}" if why else "")


def question_text(item: QuestionItem) -> str:
    """An agent's question, its form and its answer, in one line of plain text."""
    form = fields_text(item.fields)
    answer = "awaiting an answer" if item.state == "pending" else answer_text(
        item.fields, item.state, item.values, via=item.via or "human", reason=item.reason,
        human=HUMAN)
    link = f" (link: {link_text(item.url, 500)})" if item.url is not None else ""
    return (f"the agent asks: {item.message}" + (f" ({form})" if form else "") + link
            + f" → {answer}")


def engine_text(view: RunView, show: Callable[..., str]) -> str:
    """The engine, the external agent (name and version, and the command that started it) and
    the model, in one line; `show(text, limit)` is the format's display (`_visible`, `_html`)."""
    parts = [show(view.engine or "?", 200)]
    if view.agent:
        parts.append(f"agent {show(view.agent, 200)}")
    if view.agent_command:
        parts.append(f"started with {show(view.agent_command, 300)}")
    if view.model:
        parts.append(f"model {show(view.model, 200)}")
    if view.sandbox:
        parts.append(sandbox_label(view.sandbox, view.sandbox_network))
    return " · ".join(parts)


def usage_text(view: RunView) -> str:
    """Tokens, cost and how full the context window got, in one line of plain text."""
    cached = f" ({view.cached_tokens:,} from cache)" if view.cached_tokens else ""
    thought = f", {view.thought_tokens:,} thinking" if view.thought_tokens else ""
    cost = f" · ${view.cost_usd:.4f}" if view.cost_usd is not None else ""
    text = (f"{view.input_tokens:,} input{cached} + {view.output_tokens:,} output tokens"
            f"{thought} over {plural(view.model_calls, 'model call')}{cost}"
            if view.tokens_reported else f"tokens unknown (none reported){cost}")
    if view.context is not None:
        text += f" · context window {view.context[0]:,} of {view.context[1]:,} tokens"
    return text


def status_lines(view: RunView) -> tuple[str, list[str]]:
    """The run's status line (the error first, never the reply in its place) and the rest of
    the error and the agent's stderr tail, capped."""
    _, told = last_end(view)
    if told is None:
        return view.status, []
    head, *rest = told.lines
    rest_text = trim("\n".join(rest), lines=END_LINES, chars=8_000) if rest else ""
    return head, rest_text.split("\n") if rest_text else []


def problems(result: ExportResult) -> list[str]:
    """What reading the journal ran into, one line each."""
    found = []
    if result.corrupt_lines:
        shown = ", ".join(str(n) for n in result.corrupt_lines[:10])
        found.append(f"{plural(len(result.corrupt_lines), 'corrupt line')} skipped "
                     f"(line {shown})")
    if result.unknown_events:
        found.append(f"{plural(result.unknown_events, 'event')} of unknown type "
                     "(a newer cockpit?)")
    if result.torn_tail:
        found.append("the last line was torn (a crash mid-write) and skipped")
    if result.chain and not result.changed and not result.chain.startswith("unchained"):
        found.append(f"chain {result.chain}")
    return found


CHANGED_MARK = "THIS JOURNAL WAS CHANGED AFTER THE RUN"
"""How a report of a journal whose chain is broken starts (then where and how)."""
