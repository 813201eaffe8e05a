"""The headless view: one readable line per event, for a pipe, a log, or a terminal without the
live cockpit (`--headless`, or whenever stdout is not a terminal).

Each event reads as its one description (`engine_adapter.view.describe`, shared with the transcript
and the export). Streamed model text is the exception that proves the rule: its deltas continue
one line (a message, or a thought) until another event arrives, its own line breaks kept as
indented lines. A run's end says its error first (never the reply in its place), then the rest
of the error and the agent's stderr tail, the reply when it was not streamed, and the files the
task changed, each on an indented line: an indented line has no label, so nothing shown can
pass for another event's line. Everything shown is untrusted (the model, the tools and the
files they read chose it): every character `engine_adapter.text` calls unsafe is shown as its
escape (`\x1b`, `\u200b`), line breaks elsewhere become spaces (`⏎` inside a tool's input, so a
second command cannot pass for an argument), and every line is capped, saying how much it
dropped. Colour only on a terminal, never with `NO_COLOR`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from cockpit.terminate import hurry_if_hung_up, on_terminate
from engine_adapter import Session, TaskState
from engine_adapter.sandbox import UNAVAILABLE
from engine_adapter.text import MIN_CAP, Cut, byte_size, cap, escaped, plural
from engine_adapter.view import (
    FileChange,
    changed_files,
    changes_lines,
    describe,
    duration_text,
    merge_changes,
    reply_in_text,
)

__all__ = ["MAX_LINE", "LinePrinter", "approval_mode", "format_event", "run_headless",
           "sanitize", "use_color"]

MAX_LINE = 300
"""Characters of one line's text, beyond its label; the rest is counted, not shown."""
ASK_LINE = 4_000
"""Characters of an approval's line: the whole input of the call is on it."""
MESSAGE_CHARS = 20_000
"""Characters of one streamed message shown (its line breaks kept); the rest is counted."""
THOUGHT_CHARS = 2_000
"""Characters of one streamed thought shown."""
REPLY_CHARS = 20_000
REPLY_LINES = 400
"""What the end shows of a reply that was not streamed (the built-in engine's result)."""
DETAIL_LINES = 40  # indented lines under one event (an error's, a stderr tail)
SAID_CHARS = 1_000_000  # characters of a turn's messages kept to spot the reply in them

_LABEL = 9
_INDENT = " " * (_LABEL + 1)
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


_COLOURS = {"plain": "", "strong": "bold", "dim": "dim", "good": "green", "bad": "red",
            "warn": "yellow", "info": "cyan", "accent": "magenta"}


def format_event(event: Any) -> tuple[str, str, str]:
    """`(label, text, colour)` of one event (not streamed text), from its one description
    (`engine_adapter.view.describe`); the text is not yet clipped."""
    said = describe(event)
    return said.label, said.text, _COLOURS.get(said.tone, "")


class LinePrinter:
    """Writes events to `out`, one line each: streamed text continues its line (a message's
    own line breaks kept, as indented lines), and a few events add indented lines under theirs
    (a run's end: the rest of its error, the stderr tail, the reply unless it was streamed, the
    files the task changed)."""

    def __init__(self, out: TextIO, *, color: bool = False, max_line: int = MAX_LINE) -> None:
        self.out = out
        self.color = color
        self.max_line = max_line
        self._stream: tuple[int | None, str] | None = None  # (turn, channel) of the open line
        self._shown = 0
        self._hidden = 0
        self._hidden_breaks = 0
        self._breaks = 0  # line breaks streamed but not written yet (a last one never is)
        self._said: list[str] = []  # the turn's message text as streamed (to spot the reply)
        self._said_chars = 0
        self._said_whole = True  # every character of it was shown
        self._diffs: dict[str, str] = {}  # call id -> the diff its input carries
        self._changes: list[FileChange] = []  # files the task's calls changed
        self._started: dict[str, float] = {}  # call id -> when it began running
        self._asked: dict[str, float] = {}  # approval id -> when it was asked
        self._waited: dict[str, float] = {}  # call id -> ms it waited for you while running
        # Checkpoints taken as they should be: summed up at the run's end, not a line each
        # (one that failed, or left files over the size cap, has its own line).
        self._checkpoints = 0
        self._checkpoint_bytes = 0

    def _paint(self, text: str, colour: str) -> str:
        return f"{_COLORS[colour]}{text}{_RESET}" if self.color and colour else text

    def _label(self, label: str, colour: str) -> str:
        return self._paint(label.ljust(_LABEL), colour)

    def line(self, label: str, text: str, colour: str = "", *, limit: int | None = None) -> None:
        """Write one line: a label, then the text, sanitized and clipped."""
        self._close_stream()
        self.out.write(f"{self._label(label, colour)} {_clip(text, limit or self.max_line)}\n")
        self.out.flush()

    def more(self, text: str, colour: str = "", *, limit: int | None = None) -> None:
        """Write one indented line under the last (no label: it cannot pass for an event)."""
        self.out.write(_INDENT + self._paint(_clip(text, limit or self.max_line), colour) + "\n")

    def handle(self, event: Any) -> None:
        """Show one event (an approval with its whole input)."""
        kind = event.type
        if kind == "model_update":
            self._stream_text(event.turn, event.channel, event.text)
            return
        self._follow(event)
        if kind == "agent_end":
            self._end(event)
            return
        if kind == "checkpoint_taken" and event.error is None and not event.large_count:
            self._checkpoints += 1
            self._checkpoint_bytes += event.stored_bytes
            return
        if kind == "tool_end" and event.call_id in self._waited and event.duration_ms:
            # Its clock ran while it waited for you: the line says how long it worked.
            work = max(0.0, event.duration_ms - self._waited.pop(event.call_id))
            event = event.model_copy(update={"duration_ms": work})
        said = describe(event)
        limit = max(ASK_LINE, self.max_line) if kind == "approval_requested" else None
        text = said.text
        if kind == "approval_resolved":
            text += self._wait_text(event)
        self.line(said.label, text, _COLOURS.get(said.tone, ""), limit=limit)
        for detail in said.details[:DETAIL_LINES]:
            self.more(detail, "dim")
        self.out.flush()

    def _follow(self, event: Any) -> None:
        """Keep what the end will need: the turn's text, and the diffs of calls that ran."""
        kind = event.type
        if kind in ("turn_start", "agent_start"):
            self._said, self._said_chars, self._said_whole = [], 0, True
            if kind == "agent_start":
                self._diffs, self._changes = {}, []
        elif kind in ("tool_start", "approval_requested"):
            if kind == "tool_start":
                if not getattr(event, "revision", None):  # a new input is not a new start
                    self._started[event.call_id] = event.ts
            else:
                self._asked[event.approval_id] = event.ts
            diff = event.tool_input.get("diff") if isinstance(event.tool_input, dict) else None
            if isinstance(diff, str) and diff:
                key = event.call_id if kind == "tool_start" else event.approval_id
                self._diffs[key] = diff
        elif kind == "tool_end":
            self._started.pop(event.call_id, None)
            diff = event.diff or self._diffs.pop(event.call_id, None)
            if event.ok and isinstance(diff, str) and diff:
                self._changes += changed_files(diff)

    def _wait_text(self, event: Any) -> str:
        """` after 12.0 s` when someone was waited for (a human, or nobody for a second or
        more); remembers the wait when it fell inside the call's run."""
        asked = self._asked.pop(event.approval_id, None)
        if asked is None:
            return ""
        waited = max(0.0, (event.ts - asked) * 1000.0)
        if not (event.via == "human" or (event.via == "auto" and waited >= 1_000)):
            return ""
        started = self._started.get(event.approval_id)
        if started is not None and started <= asked:
            self._waited[event.approval_id] = waited
        return f" after {duration_text(waited)}"

    def _end(self, event: Any) -> None:
        said = describe(event)
        colour = _COLOURS.get(said.tone, "")
        reply = event.result if event.result and event.result.strip() else None
        partial = event.status != "completed"
        shown = reply is not None and self._said_whole and reply_in_text(
            reply, "".join(self._said))
        text = said.text
        if shown:
            text += " · the partial reply is above" if partial else " · the reply is above"
        self.line("end", text, colour, limit=max(self.max_line, 2_000))
        for detail in said.details[:DETAIL_LINES]:
            self.more(detail, "dim", limit=2_000)
        if reply is not None and not shown:
            self.more("partial reply:" if partial else "reply:", "dim")
            for line in cap(reply, chars=REPLY_CHARS, lines=REPLY_LINES).split("\n"):
                self.more(line, limit=2_000)
        for line in changes_lines(merge_changes(self._changes)):
            self.more(f"changed {line}", "dim")
        if self._checkpoints:
            self.more(f"{plural(self._checkpoints, 'checkpoint')} of the workspace, "
                      f"{byte_size(self._checkpoint_bytes)} stored (`cockpit checkpoints` "
                      "lists them, `cockpit rewind --to N` goes back to a turn)", "dim")
            self._checkpoints = self._checkpoint_bytes = 0
        self.out.flush()

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
            self._hidden_breaks = self._breaks = 0
            text = text.lstrip(" \t\n")  # blanks only: an unsafe character stays to be shown
        message = channel == "message"
        if message and self._said_chars < SAID_CHARS:
            self._said.append(text)
            self._said_chars += len(text)
        text = escaped(text)
        if "\r" in text:  # only `\r\n` line breaks are left: every other CR is escaped
            text = text.replace("\r\n", "\n")
        text = text.replace("\t", " ")
        limit = MESSAGE_CHARS if message else THOUGHT_CHARS
        room = max(0, limit - self._shown)
        shown, hidden = text[:room], text[room:]
        if hidden:
            self._hidden += len(hidden)
            self._hidden_breaks += hidden.count("\n")
            if message:
                self._said_whole = False
        self._shown += len(shown)
        colour = "dim" if channel == "thought" else ""
        for index, piece in enumerate(shown.split("\n")):
            if index:
                self._breaks += 1
            if piece:
                if self._breaks:  # a line break only once text follows it
                    self.out.write("\n" * self._breaks + _INDENT)
                    self._breaks = 0
                self.out.write(self._paint(piece, colour))
        self.out.flush()

    def _close_stream(self) -> None:
        if self._stream is None:
            return
        if self._hidden:
            lines = self._hidden_breaks
            self.out.write(" " + Cut("", self._hidden, lines, whole_lines=not lines).note())
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
    first = session.gate.describe()  # deny rules, a policy, grants: who answers before anyone
    first = f"{first}, then " if first else ""
    if session.unattended:
        if session.auto_approve:
            sandbox = getattr(session.runner, "sandbox", None)
            if getattr(sandbox, "state", None) == UNAVAILABLE:
                return (f"approvals: {first}no human present; tiers 1-3 allowed automatically "
                        "but no command (there is no sandbox), tier 4 denied")
            return (f"approvals: {first}no human present; tiers 1-3 allowed automatically, "
                    "tier 4 denied")
        return (f"approvals: {first}no human present; every ask is denied automatically "
                "(--auto-approve allows tiers up to 3)")
    if session.approval_timeout is not None:
        return (f"approvals: {first}wait for a human, denied after "
                f"{session.approval_timeout:g} s")
    return f"approvals: {first}wait for a human"


@contextlib.contextmanager
def _cancel_on_interrupt(session: Session) -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP cancel the run cleanly (journal closed, `agent_end` written); a
    second Ctrl-C interrupts as usual."""
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        loop.remove_signal_handler(signal.SIGINT)
        session.cancel("interrupted (Ctrl-C)")

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    def terminated(reason: str) -> None:
        hurry_if_hung_up(session.runner, reason)
        session.cancel(reason)

    remove = on_terminate(loop, terminated)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        remove()


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
            store = session.gate.store
            for problem in store.problems if store is not None else []:
                printer.line("cockpit", f"saved grants: {problem}", "yellow")
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
