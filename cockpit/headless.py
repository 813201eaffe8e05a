"""The headless view: one readable line per event, for a pipe, a log, or a terminal without the
live cockpit (`--headless`, or whenever stdout is not a terminal).

Streamed model text is the exception that proves the rule: its deltas continue one line (a
message, or a thought) until another event arrives. Everything shown is untrusted (the model,
the tools and the files they read chose it), so control and format characters are escaped,
line breaks become spaces, and every line is capped. Colour only on a terminal, never with
`NO_COLOR`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import sys
import unicodedata
from collections.abc import Iterator
from typing import Any, TextIO

from engine_adapter import Session, TaskState

__all__ = ["MAX_LINE", "LinePrinter", "approval_mode", "format_event", "run_headless",
           "sanitize", "use_color"]

MAX_LINE = 300
"""Characters of one line's text, beyond its label; the rest is counted, not shown."""

_LABEL = 9
_RESET = "\x1b[0m"
_COLORS = {"green": "\x1b[32m", "red": "\x1b[31m", "yellow": "\x1b[33m", "cyan": "\x1b[36m",
           "magenta": "\x1b[35m", "bold": "\x1b[1m", "dim": "\x1b[2m"}


def sanitize(text: str) -> str:
    """`text` safe for one terminal line: line breaks, tabs and odd spaces become spaces; control,
    format (bidi overrides, zero-width) and surrogate characters are shown escaped (`\\x1b`)."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch in "\n\r\t\v\f\u2028\u2029\x85" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return "".join(out)


def _clip(text: str, limit: int = MAX_LINE) -> str:
    text = sanitize(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _summary(tool: str | None, tool_input: dict[str, Any] | None) -> str:
    """A tool call in a few words: the command of a shell, the path and size of an edit."""
    i = tool_input or {}
    if "command" in i:
        return str(i["command"])
    if isinstance(i.get("argv"), list):
        return " ".join(map(str, i["argv"]))
    if tool in ("edit", "write_file") and "path" in i:
        diff = str(i.get("diff", ""))
        added = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("++"))
        removed = sum(1 for ln in diff.splitlines()
                      if ln.startswith("-") and not ln.startswith("--"))
        return f"{i['path']} (+{added} −{removed})" if diff else str(i["path"])
    return _compact({k: v for k, v in i.items() if k != "diff"}) if i else ""


def _has_target(tool_input: dict[str, Any] | None) -> bool:
    """Whether an input names a command or a path (else its ask's reason says it all)."""
    return bool(tool_input) and any(k in tool_input for k in ("command", "argv", "path"))


def _output_gist(tool: str, output: str) -> str:
    """A command's last line (where test runners sum up); for other tools, a line count."""
    lines = [line for line in output.splitlines() if line.strip()]
    if tool == "shell" or len(lines) <= 1:
        return _last_line(output)
    return f"{len(lines)} lines"


def _ms(duration: float | None) -> str:
    return "" if duration is None else f" {duration:.0f} ms"


def format_event(event: Any) -> tuple[str, str, str]:
    """`(label, text, colour)` of one event (not streamed text); the text is not yet clipped."""
    t = event.type
    if t == "agent_start":
        parts = [event.engine, event.model, event.cwd]
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
        summary = _summary(event.tool, event.tool_input)
        why = f" — {event.rationale}" if event.rationale else ""
        return "decide", f"{what} {summary}".rstrip() + why, "magenta"
    if t == "tool_start":
        return "tool ▶", (f"{event.call_id} {event.tool} [tier {event.tier}] "
                          f"{_summary(event.tool, event.tool_input)}"), ""
    if t == "tool_end":
        mark, colour = ("tool ✔", "green") if event.ok else ("tool ✘", "red")
        detail = " · ".join(p for p in (event.error, _output_gist(event.tool, event.output)) if p)
        return mark, f"{event.call_id} {event.tool}{_ms(event.duration_ms)}" + (
            f": {detail}" if detail else ""), colour
    if t == "approval_requested":
        grantable, why = event.grant_verdict
        if grantable:
            always = f"[a] always would allow: {event.prefix}"
        else:
            always = "[a] always: cannot be granted" + (f": {why}" if why else "")
        what = _summary(event.tool, event.tool_input) if _has_target(event.tool_input) else ""
        return "ask ?", (f"{event.approval_id} {event.tool} [tier {event.tier}] "
                         + (f"{what} — " if what else "") + f"{event.reason} · {always}"), "yellow"
    if t == "approval_resolved":
        how = event.via + (", always" if event.remember else "")
        label, colour = ("allowed", "green") if event.allowed else ("denied", "red")
        return label, f"{event.approval_id} {event.tool} ({how})", colour
    if t == "decision_error":
        raw = f" · raw: {event.raw}" if event.raw else ""
        return "error", f"malformed decision: {event.error}{raw}", "red"
    if t == "model_usage":
        cost = f", ${event.cost_usd:.4f}" if event.cost_usd is not None else ""
        return "usage", (f"{event.input_tokens} in / {event.output_tokens} out tokens{cost}"
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

    def line(self, label: str, text: str, colour: str = "") -> None:
        """Write one line: a label, then the text, sanitized and clipped."""
        self._close_stream()
        self.out.write(f"{self._label(label, colour)} {_clip(text, self.max_line)}\n")
        self.out.flush()

    def handle(self, event: Any) -> None:
        """Show one event."""
        if event.type == "model_update":
            self._stream_text(event.turn, event.channel, event.text)
        else:
            self.line(*format_event(event))

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
            text = text.lstrip()
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
            self.out.write(f"… (+{self._hidden} chars)")
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
