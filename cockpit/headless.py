"""The headless view: one readable line per event, for a pipe, a log, or a terminal without the
live cockpit (`--headless`, or whenever stdout is not a terminal).

Streamed model text is the exception that proves the rule: its deltas continue one line (a
message, or a thought) until another event arrives. Everything shown is untrusted (the model,
the tools and the files they read chose it): every character `engine_adapter.text` calls
unsafe is shown as its escape (`\x1b`, `\u200b`), line breaks become spaces (`⏎` inside a tool's
input, so a second command cannot pass for an argument), and every line is capped, saying how
much it dropped. Colour only on a terminal, never with `NO_COLOR`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from engine_adapter import Session, TaskState
from engine_adapter.questions import answer_text, fields_text
from engine_adapter.text import MIN_CAP, Cut, cap, escaped

from .input_fields import input_line

__all__ = ["MAX_LINE", "LinePrinter", "approval_mode", "format_event", "run_headless",
           "sanitize", "use_color"]

MAX_LINE = 300
"""Characters of one line's text, beyond its label; the rest is counted, not shown."""
ASK_LINE = 4_000
"""Characters of an approval's line: the whole input of the call is on it."""

_LABEL = 9
_RESET = "\x1b[0m"
_COLORS = {"green": "\x1b[32m", "red": "\x1b[31m", "yellow": "\x1b[33m", "cyan": "\x1b[36m",
           "magenta": "\x1b[35m", "bold": "\x1b[1m", "dim": "\x1b[2m"}


def sanitize(text: str) -> str:
    """`text` safe for one terminal line: unsafe characters escaped (`\\x1b`, `\\u200b`), line
    breaks (`\\n`, `\\r\\n`) and tabs shown as spaces."""
    text = escaped(text)
    if "\r" in text:  # only `\r\n` line breaks are left: every other CR is escaped
        text = text.replace("\r\n", "\n")
    if "\n" in text or "\t" in text:
        text = text.replace("\n", " ").replace("\t", " ")
    return text


def _clip(text: str, limit: int = MAX_LINE) -> str:
    return cap(sanitize(text), chars=max(MIN_CAP, limit))


def _blank_stripped(line: str) -> str:
    return line.removesuffix("\r").strip(" \t")


def _last_line(text: str) -> str:
    # Spaces and tabs only (and the CR of a `\r\n`): `str.strip` would also drop a U+2028, a
    # U+0085 or a lone CR without a trace.
    lines = [_blank_stripped(line) for line in text.split("\n") if _blank_stripped(line)]
    return lines[-1] if lines else ""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _summary(tool_input: dict[str, Any] | None, limit: int = MAX_LINE) -> str:
    """A tool call's whole input on one line (`$ git diff · env: A=1 · diff: +3 −1`), line
    breaks inside a value shown as `⏎` (the line's sanitizing escapes the rest)."""
    return input_line(tool_input, limit=limit)


def _output_gist(tool: str, output: str) -> str:
    """A command's last line (where test runners sum up); for other tools, a line count."""
    lines = [line for line in output.split("\n") if _blank_stripped(line)]
    if tool == "shell" or len(lines) <= 1:
        return _last_line(output)
    return f"{len(lines)} lines"


def _ms(duration: float | None) -> str:
    return "" if duration is None else f" {duration:.0f} ms"


def format_event(event: Any) -> tuple[str, str, str]:
    """`(label, text, colour)` of one event (not streamed text); the text is not yet clipped."""
    t = event.type
    if t == "agent_start":
        agent = event.agent
        version = f"{agent.title or agent.name} {agent.version}".strip() if agent else None
        parts = [event.engine, version, event.model, event.cwd]
        return "start", f"{event.task}  ({' · '.join(p for p in parts if p)})", "bold"
    if t == "agent_end":
        detail = event.result or event.error
        colour = {"completed": "green", "cancelled": "yellow"}.get(event.status, "red")
        return "end", f"{event.status}" + (f": {detail}" if detail else ""), colour
    if t == "turn_start":
        return "turn", f"{event.turn}", "dim"
    if t == "turn_end":
        return "turn end", f"{event.turn}" + (f" ({event.stop_reason})"
                                             if event.stop_reason else ""), "dim"
    if t == "phase_changed":
        return "phase", (f"{event.previous} → " if event.previous else "") + event.phase, "cyan"
    if t == "declaration_required":
        return "declare!", event.reason, "yellow"
    if t == "model_decision":
        what = event.tool or event.action
        summary = _summary(event.tool_input)
        why = f" — {event.rationale}" if event.rationale else ""
        return "decide", f"{what} {summary}".rstrip() + why, "magenta"
    if t == "tool_start":
        return "tool ▶", (f"{event.call_id} {event.tool} [tier {event.tier}] "
                          f"{_summary(event.tool_input)}"), ""
    if t == "tool_end":
        mark, colour = ("tool ✔", "green") if event.ok else ("tool ✘", "red")
        detail = " · ".join(p for p in (event.error, _output_gist(event.tool, event.output)) if p)
        return mark, f"{event.call_id} {event.tool}{_ms(event.duration_ms)}" + (
            f": {detail}" if detail else ""), colour
    if t == "approval_requested":
        if event.tier >= 4:
            always = "[a] always: never for tier 4"
        else:
            always = (f"[a] always would allow: {event.prefix}" if event.prefix
                      else "[a] always: not grantable")
        what = _summary(event.tool_input, ASK_LINE)
        return "ask ?", (f"{event.approval_id} {event.tool} [tier {event.tier}] "
                         + (f"{what} — " if what else "") + f"{event.reason} · {always}"), "yellow"
    if t == "approval_resolved":
        how = event.via + (", always" if event.remember else "")
        label, colour = ("allowed", "green") if event.allowed else ("denied", "red")
        said = f": {event.reason}" if event.reason else ""
        return label, f"{event.approval_id} {event.tool} ({how}){said}", colour
    if t == "question_asked":
        form = fields_text(event.fields)
        return "question", f"{event.question_id} {event.message}" + (
            f" — {form}" if form else ""), "yellow"
    if t == "question_answered":
        label, colour = {"accept": ("answered", "green"), "decline": ("declined", "red")}.get(
            event.action, ("cancelled", "yellow"))
        return label, f"{event.question_id} " + answer_text(
            (), event.action, event.values, via=event.via, reason=event.reason,
            human="a human"), colour
    if t == "commands_available":
        names = ", ".join(f"/{c.name}" for c in event.commands)
        return "commands", names or "(none)", "dim"
    if t == "prompt_note":
        how = "during the turn" if event.delivery == "in_turn" else "with the task"
        return "note", f"passed on to the agent {how}: {event.text}", "cyan"
    if t == "decision_error":
        raw = f" · raw: {event.raw}" if event.raw else ""
        return "error", f"malformed decision: {event.error}{raw}", "red"
    if t == "model_retry":
        return "retry", (f"{event.error} — retry {event.attempt} of {event.max_attempts} in "
                         f"{event.delay_s:g} s"), "yellow"
    if t == "model_usage":
        cost = f", ${event.cost_usd:.4f}" if event.cost_usd is not None else ""
        cached = f" ({event.cached_read_tokens} cached)" if event.cached_read_tokens else ""
        return "usage", (f"{event.input_tokens} in{cached} / {event.output_tokens} out tokens"
                         f"{cost}"
                         + (f" ({event.model})" if event.model else "")), "dim"
    if t == "verification_plan_frozen":
        checks = "; ".join(f"{c.name}: {c.command}" if c.command else c.name
                           for c in event.checks)
        return "plan", checks or "(no checks)", "cyan"
    if t == "verification_start":
        return "check ▶", event.name, ""
    if t == "verification_end":
        mark, colour = ("check ✔", "green") if event.passed else ("check ✘", "red")
        last = _last_line(event.output)
        return mark, f"{event.name}{_ms(event.duration_ms)}" + (f": {last}" if last else ""), colour
    if t == "cancellation_observed":
        turn = f" (turn {event.turn})" if event.turn else ""
        return "cancel", f"{event.reason}{turn}", "yellow"
    if t == "task_escalated":
        target = f"→ {event.target}: " if event.target else ""
        return "escalate", f"{target}{event.reason}", "yellow"
    return t, _compact(event.model_dump(exclude={"type", "session_id", "seq", "ts"})), ""


class LinePrinter:
    """Writes events to `out`, one line each (streamed text: one line a message)."""

    def __init__(self, out: TextIO, *, color: bool = False, max_line: int = MAX_LINE) -> None:
        self.out = out
        self.color = color
        self.max_line = max_line
        self._stream: tuple[int | None, str] | None = None  # (turn, channel) of the open line
        self._shown = 0
        self._hidden = 0

    def _paint(self, text: str, colour: str) -> str:
        return f"{_COLORS[colour]}{text}{_RESET}" if self.color and colour else text

    def _label(self, label: str, colour: str) -> str:
        return self._paint(label.ljust(_LABEL), colour)

    def line(self, label: str, text: str, colour: str = "", *, limit: int | None = None) -> None:
        """Write one line: a label, then the text, sanitized and clipped."""
        self._close_stream()
        self.out.write(f"{self._label(label, colour)} {_clip(text, limit or self.max_line)}\n")
        self.out.flush()

    def handle(self, event: Any) -> None:
        """Show one event (an approval with its whole input)."""
        if event.type == "model_update":
            self._stream_text(event.turn, event.channel, event.text)
        else:
            limit = max(ASK_LINE, self.max_line) if event.type == "approval_requested" else None
            self.line(*format_event(event), limit=limit)

    def close(self) -> None:
        """End an open streamed line."""
        self._close_stream()
        self.out.flush()

    def _stream_text(self, turn: int | None, channel: str, text: str) -> None:
        key = (turn, channel)
        if self._stream != key:
            self._close_stream()
            label = "thinking" if channel == "thought" else "model"
            self.out.write(self._label(label, "dim" if channel == "thought" else "bold") + " ")
            self._stream, self._shown, self._hidden = key, 0, 0
            text = text.lstrip(" \t\n")  # blanks only: an unsafe character stays to be shown
        text = sanitize(text)
        room = max(0, self.max_line - self._shown)
        shown, hidden = text[:room], text[room:]
        if shown:
            self.out.write(self._paint(shown, "dim") if channel == "thought" else shown)
        self._shown += len(shown)
        self._hidden += len(hidden)
        self.out.flush()

    def _close_stream(self) -> None:
        if self._stream is None:
            return
        if self._hidden:
            self.out.write(" " + Cut("", self._hidden, 0).note())
        self.out.write("\n")
        self._stream = None


_BATCH_CHARS = 64 * 1024


def _write(out: TextIO, text: str) -> None:
    out.write(text)
    out.flush()


def use_color(out: TextIO) -> bool:
    """Colour only on a terminal, and never with `NO_COLOR` set or `TERM=dumb`."""
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty() and "NO_COLOR" not in os.environ
                and os.environ.get("TERM") != "dumb")


def approval_mode(session: Session) -> str:
    """How this session answers approvals, in one line."""
    if session.unattended:
        if session.auto_approve:
            return "approvals: no human present; tiers 1-3 allowed automatically, tier 4 denied"
        return ("approvals: no human present; every ask is denied automatically "
                "(--auto-approve allows tiers up to 3)")
    if session.approval_timeout is not None:
        return f"approvals: wait for a human, denied after {session.approval_timeout:g} s"
    return "approvals: wait for a human"


@contextlib.contextmanager
def _cancel_on_interrupt(session: Session) -> Iterator[None]:
    """Ctrl-C cancels the run cleanly (journal closed, `agent_end` written); a second one
    interrupts as usual."""
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        loop.remove_signal_handler(signal.SIGINT)
        session.cancel("interrupted (Ctrl-C)")

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def run_headless(session: Session, *, out: TextIO | None = None,
                       color: bool | None = None) -> TaskState:
    """Run the session, printing each event as a line to `out` (stdout); returns the final
    `TaskState`. A printer that fails (a closed pipe) stops printing; the run goes on.

    Lines are written from a worker thread, a batch at a time: a reader that stops reading
    (a paused pager, a full pipe) blocks only the printer, which then lags behind its own
    cursor, never the event loop the run is on."""
    out = out if out is not None else sys.stdout
    buffer = io.StringIO()
    printer = LinePrinter(buffer, color=use_color(out) if color is None else color)
    stream = session.events()
    history = session.history

    async def drain() -> None:
        text = buffer.getvalue()
        if text:
            buffer.seek(0)
            buffer.truncate()
            await asyncio.to_thread(_write, out, text)

    async def show() -> None:
        try:
            printer.line("cockpit", approval_mode(session), "dim")
            shown = 0
            async for event in stream:
                printer.handle(event)
                shown += 1
                # Caught up, or a good batch waiting: hand it to the writer thread.
                if shown >= len(history) or buffer.tell() >= _BATCH_CHARS:
                    await drain()
            printer.close()
            await drain()
        except OSError:  # the reader went away (`| head`): stop showing, never stop the run
            pass

    watcher = asyncio.create_task(show())
    with _cancel_on_interrupt(session):
        state = await session.run()
    await watcher
    return state
