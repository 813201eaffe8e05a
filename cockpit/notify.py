"""Attention: the bell, a desktop notification through the terminal (OSC 9 / OSC 777) and the
window title, when a run needs the human (an approval, a question) or ends.

What goes out is configured in `config.toml`:

```toml
[notify]            # each: true (every kind), false (none), or a list of kinds
bell = ["approval", "failed"]
osc = ["approval", "failed"]
title = ["approval", "failed"]
```

Kinds: `approval`, `question`, `done` (a run completed, or was cancelled by someone other than
the user), `failed`. By default only approvals and failures alert. The bell and the notification
are skipped only when the terminal has reported that the window has focus (Textual turns focus
reporting on; a focus-in seen and no focus-out since): a terminal that sends no focus reports
always gets them. The title is a state, not an interruption: it is set whatever the focus.

Sequences go through the running driver's public `write` (`cockpit.base_app.writer_driver`
wraps the driver class `App.get_driver_class` returns, so the app gets hold of it without
private API), in the event loop, so they never land inside a frame. Textual ends its own OSC
sequences with BEL, so the bell is a separate BEL (`App.bell()`), never the end of an OSC. Text
in a sequence is untrusted (a tool name, a task): every control character is dropped and it is
capped. Nothing here imports Textual (`cockpit.config` reads these settings for the command
line).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["ALERT_KINDS", "Attention", "NotifySettings", "TerminalWriter", "notification",
           "parse_notify", "title_sequence"]

ALERT_KINDS = ("approval", "question", "done", "failed")
DEFAULT_KINDS = frozenset({"approval", "failed"})
CHANNELS = ("bell", "osc", "title")
TITLE = "cockpit"
TEXT_LIMIT = 160  # characters of a notification's body

PUSH_TITLE = "\x1b[22;2t"  # xterm: save the window title (restored at exit)
POP_TITLE = "\x1b[23;2t"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e"
                      r"\u2066-\u2069\ufeff]")


@dataclass(frozen=True)
class NotifySettings:
    """Which kinds of moment each channel alerts for."""

    bell: frozenset[str] = DEFAULT_KINDS
    osc: frozenset[str] = DEFAULT_KINDS
    title: frozenset[str] = DEFAULT_KINDS


def parse_notify(raw: object) -> tuple[NotifySettings, list[str]]:
    """The `[notify]` table as settings, and a sentence for each value that was ignored."""
    if raw is None:
        return NotifySettings(), []
    if not isinstance(raw, dict):
        return NotifySettings(), ["[notify] in config.toml must be a table; using defaults"]
    problems: list[str] = []
    chosen: dict[str, frozenset[str]] = {}
    for channel in CHANNELS:
        value = raw.get(channel)
        if value is None:
            continue
        if isinstance(value, bool):
            chosen[channel] = frozenset(ALERT_KINDS) if value else frozenset()
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            unknown = [v for v in value if v not in ALERT_KINDS]
            if unknown:
                problems.append(f"[notify] {channel}: unknown kinds {unknown!r} ignored; "
                                f"kinds are {', '.join(ALERT_KINDS)}")
            chosen[channel] = frozenset(v for v in value if v in ALERT_KINDS)
        else:
            problems.append(f"[notify] {channel} must be true, false or a list of kinds "
                            f"({', '.join(ALERT_KINDS)}); using the default")
    extra = sorted(str(k) for k in raw if k not in CHANNELS)
    if extra:
        problems.append(f"[notify] has unknown settings {extra!r}; known: "
                        + ", ".join(CHANNELS))
    return NotifySettings(**chosen), problems


def _safe(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text` fit for the inside of an OSC sequence: no control characters, capped."""
    text = _CONTROL.sub(" ", text[: limit * 4])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tmux_wrap(sequence: str) -> str:
    """Pass `sequence` through tmux to the outer terminal (tmux drops it unless its
    `allow-passthrough` is on, which is harmless)."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def notification(title: str, body: str, env: Mapping[str, str] | None = None) -> str:
    """The desktop notification sequence for this terminal: OSC 777 where that is the known
    form (foot, urxvt, VTE-based terminals), OSC 9 otherwise (iTerm2, WezTerm, ghostty, kitty,
    Windows Terminal, ConEmu; others ignore an OSC they do not know)."""
    env = os.environ if env is None else env
    title, body = _safe(title, 60).replace(";", ","), _safe(body)
    term = env.get("TERM", "")
    if term.startswith(("foot", "rxvt")) or env.get("VTE_VERSION"):
        sequence = f"\x1b]777;notify;{title};{body}\x07"
    else:
        # ConEmu reads `OSC 9 ; <digit> ;` as a command: the text never starts with a digit.
        sequence = f"\x1b]9;{title}: {body}\x07"
    return _tmux_wrap(sequence) if env.get("TMUX") else sequence


def title_sequence(title: str) -> str:
    """OSC 2: set the window title."""
    return f"\x1b]2;{_safe(title, 80)}\x07"


class TerminalWriter:
    """Where escape sequences go: the running driver's `write`, once
    `cockpit.base_app.writer_driver` has handed it over; nowhere before that (or headless,
    where there is no terminal), nor once the terminal is gone (`hang_up`)."""

    def __init__(self) -> None:
        self._write: Callable[[str], None] | None = None
        self.gone = False  # the terminal hung up: nothing may be written to it any more

    def attach(self, write: Callable[[str], None] | None) -> None:
        """Send to `write` from now on (None: send nowhere)."""
        self._write = write

    def hang_up(self) -> None:
        """The terminal is gone (its window closed): from now on nothing is sent, and the
        driver (`cockpit.base_app.writer_driver`) writes nothing either."""
        self.gone = True

    @property
    def attached(self) -> bool:
        """Whether sequences reach a terminal."""
        return self._write is not None and not self.gone

    def __call__(self, data: str) -> None:
        if self._write is not None and not self.gone:
            self._write(data)


class Attention:
    """Decides whether a moment alerts, and sends it: `alert(kind, message)`.

    `bell` rings the terminal bell (the app's `bell`), `write` sends escape sequences (a
    `TerminalWriter`). `sent` records what went out, for the curious and for tests.
    """

    def __init__(self, settings: NotifySettings, *, bell: Callable[[], None],
                 write: Callable[[str], None], env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self._bell = bell
        self._write = write
        self._env = env
        self.focus_reported = False  # the terminal has sent a focus report
        self.focused = False  # ... and the last one said the window has focus
        self.title: str | None = None  # the title set, None = never touched
        self.sent: list[tuple[str, str]] = []  # (channel, kind)

    def focus(self, focused: bool) -> None:
        """The terminal reported focus in (True) or out (False)."""
        self.focus_reported = True
        self.focused = focused

    @property
    def window_has_focus(self) -> bool:
        """Whether the terminal has said the window has focus (a silent terminal has not)."""
        return self.focus_reported and self.focused

    def alert(self, kind: str, message: str, *, title: str | None = None) -> list[str]:
        """Alert for a moment of `kind` (one of `ALERT_KINDS`): the channels configured for
        it; the bell and the notification only when the window is not known to have focus.
        `title` is the window title to show (default: "⚠ <kind> · cockpit")."""
        used: list[str] = []
        settings = self.settings
        if kind in settings.title:
            self.set_title(title or f"⚠ {kind} · {TITLE}")
            used.append("title")
        if not self.window_has_focus:
            if kind in settings.bell:
                self._bell()
                used.append("bell")
            if kind in settings.osc:
                self._write(notification(TITLE, message, self._env))
                used.append("osc")
        self.sent.extend((channel, kind) for channel in used)
        return used

    def set_title(self, title: str) -> None:
        """Set the window title (the first time, saving the user's to restore at exit)."""
        if title == self.title:
            return
        if self.title is None:
            self._write(PUSH_TITLE)
        self.title = title
        self._write(title_sequence(title))

    def clear(self) -> None:
        """The moment has passed (the approval was answered): the plain title again, if it was
        changed."""
        if self.title is not None:
            self.set_title(TITLE)

    def close(self) -> None:
        """At exit: give the window its title back (where the terminal keeps a title stack)."""
        if self.title is not None:
            self._write(POP_TITLE)
            self.title = None

