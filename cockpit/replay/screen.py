"""`ReplayScreen`: one journal, drawn — the live screen's widgets at any event, and a timeline.

The screen composes the live cockpit's `RunDisplay` (status, transcript, verification, grants,
approval bar) and a `Timeline`, and renders what its `Navigator` (engine_adapter) says to show;
where the viewer is and what to fold is the navigator's business. A thread worker reads the
journal (`JournalReplay.read_through`, then `follow` for a journal another process is still
writing); a seek too long for the event loop runs in another worker.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from cockpit.journals import CRASHED, looks_live, open_status, runs_an_agent_session
from cockpit.keys import REPLAY_SCOPE, bindings
from cockpit.replay.filter import FilterScreen
from cockpit.replay.picker import request_resume
from cockpit.replay.screen_text import (
    JUMPS,
    SPEEDS,
    chain_text,
    filter_text,
    match_after,
    position_fields,
    problems_text,
    raw_event_page,
    search_text,
    type_counts,
)
from cockpit.replay.timeline import Timeline
from cockpit.screens import HelpScreen, PagerScreen
from cockpit.widgets import KeyHints, RunDisplay, Transcript, clean_line, styled
from engine_adapter import JournalError
from engine_adapter.journal import CODE_NAMES, FLAGS, ChainVerdict, check_lines
from engine_adapter.replay import (
    TAIL_BYTES,
    FoldTail,
    Frame,
    JournalReplay,
    Navigator,
    Seek,
    Tail,
    Wait,
    code_class,
)
from engine_adapter.view import RunView

__all__ = ["POLL", "ReplayScreen"]

_STOP_EVERY = 4096  # lines between looks at the stop flag while checking the chain

POLL = 0.25  # seconds between looks at a followed journal's size (like `tail -f`)

class ReplayScreen(Screen[None]):
    """One journal: the run display at the cursor, the timeline, search and filter."""

    FIRST_SCAN = 256 << 10  # bytes read at once, for the first frame
    GREW_EVERY = 0.25  # seconds between two progress reports of the first read
    FIRST_FRAME_WAIT = 1.0  # at most this long the reading waits for the first frame (seconds)
    TAIL_BYTES = TAIL_BYTES  # `end` before the whole journal is read shows this much of its end

    DEFAULT_CSS = """
    ReplayScreen #search { dock: bottom; display: none; }
    ReplayScreen #search.-shown { display: block; }
    ReplayScreen #replay-error { display: none; padding: 1 2; color: $error; }
    ReplayScreen #replay-error.-shown { display: block; }
    ReplayScreen RunDisplay.-provisional #run-side { display: none; }
    """

    BINDINGS = bindings(REPLAY_SCOPE)

    class Grew(Message):
        """The reading worker indexed more of the journal (`complete`: all of it, once)."""

        def __init__(self, complete: bool = False) -> None:
            super().__init__()
            self.complete = complete

    class Failed(Message):
        """Nothing could be read."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, path: str | Path, *, poll: float = POLL, at_end: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.poll = poll
        self.at_end = at_end  # open at the last event (once read), not the first
        self.replay: JournalReplay | None = None
        self.navigator: Navigator | None = None
        self.type_filter: set[int] | None = None  # the event types stepping visits (None: all)
        self.search_term = ""
        self.matches: list[int] = []  # the positions of the events that hold the term
        self._stop = threading.Event()
        self._seen_corrupt = 0
        self.crashed = False  # no `agent_end` last, and no run writes it any more
        self._resumable: bool | None = None  # an agent session's journal (`r` resumes it)
        self._play_timer: Any = None
        self._last_grew = -1e9
        # Set once the first frame is on screen: until then the reading thread waits after its
        # first step, so that it does not take the interpreter from the frame (the GIL).
        self._first_frame = threading.Event()
        # The journal's chain verdict (`cockpit verify`), once checked: after the first read,
        # in a thread of its own (a long journal takes seconds of hashing).
        self.chain_verdict: ChainVerdict | None = None
        self._chain_started = False

    # What the navigator knows, for tests and the app ----------------------------------------------
    @property
    def position_shown(self) -> int:
        """The event on screen (0-based), -1 before the first frame."""
        return self.navigator.shown if self.navigator is not None else -1

    @property
    def view(self) -> RunView | None:
        """The view on screen."""
        return self.navigator.view if self.navigator is not None else None

    @property
    def complete(self) -> bool:
        """Whether the whole journal has been read once."""
        return self.navigator is not None and self.navigator.complete

    @property
    def playing(self) -> bool:
        """Whether playback is running."""
        return self.navigator is not None and self.navigator.playing

    @property
    def speed(self) -> float:
        """The playback speed."""
        return self.navigator.speed if self.navigator is not None else 1.0

    # Building ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("", id="replay-error")
        yield RunDisplay(clock=None, id="run")
        yield Timeline(id="timeline")
        yield Input(placeholder="search the journal (enter searches, escape closes)",
                    id="search", max_length=500)
        yield KeyHints()

    @property
    def display_widget(self) -> RunDisplay:
        """The run display (the live cockpit's widgets)."""
        return self.query_one(RunDisplay)

    @property
    def timeline(self) -> Timeline:
        """The timeline bar."""
        return self.query_one(Timeline)

    def on_mount(self) -> None:
        try:
            self.replay = JournalReplay(self.path)
        except JournalError as exc:
            self._fail(str(exc))
            return
        live = looks_live(self.path)
        if live and open_status(self.path) == CRASHED:
            live, self.crashed = False, True  # no run writes it any more: nothing will come
        self.navigator = Navigator(self.replay, follow=live, tail_bytes=self.TAIL_BYTES)
        self.navigator.want_end = self.navigator.want_end or self.at_end
        self.timeline.update_state(following=self.navigator.follow)
        self.display_widget.show(RunView())
        self.query_one(Transcript).focus()
        self._read_worker()

    def on_unmount(self) -> None:
        self._stop.set()  # (the worker stops and closes the journal)
        self._first_frame.set()

    def _fail(self, error: str) -> None:
        error_box = self.query_one("#replay-error", Static)
        error_box.update(styled(error, limit=2_000))  # Text: journal words are never markup
        error_box.add_class("-shown")
        self.timeline.update_state(indexing=False, problems=clean_line(error, 300))

    # The workers: read the journal, fold a long seek ---------------------------------------------
    @work(thread=True, group="read", exit_on_error=False)
    def _read_worker(self) -> None:
        replay, navigator = self.replay, self.navigator
        assert replay is not None and navigator is not None
        try:
            if replay.read_through(settle=not navigator.follow, first_bytes=self.FIRST_SCAN,
                                   progress=self._progress, stop=self._stop):
                self.post_message(self.Grew(complete=True))
                replay.follow(self._stop, self._journal_grew, poll=self.poll)
        except (OSError, ValueError, RecursionError) as exc:  # vanished, closed, too deep
            if not self._stop.is_set():
                self.post_message(self.Failed(f"stopped reading {self.path}: {exc}"))
        finally:
            if self._stop.is_set():  # the screen is gone: nothing reads the journal any more
                replay.close()

    @work(thread=True, group="chain", exclusive=True, exit_on_error=False)
    def _chain_worker(self) -> None:
        stop = self._stop
        try:
            with open(self.path, "rb") as f:
                verdict = check_lines(_until(f, stop))
        except OSError:
            return  # (the reading thread says what is wrong with the file)
        if not stop.is_set():
            self.app.call_from_thread(self._chain_checked, verdict)

    def _chain_checked(self, verdict: ChainVerdict) -> None:
        if not self.is_attached:
            return
        self.chain_verdict = verdict
        if verdict.tampered:
            self.app.notify(f"This journal was changed after the run: {verdict.summary()}",
                            title="journal changed", severity="error", timeout=10)
        if self.replay is not None and self.navigator is not None:
            self._update_timeline()

    def _journal_grew(self) -> None:
        """(The reading thread) a followed journal grew: the screen looks."""
        self.post_message(self.Grew())

    def _progress(self) -> None:
        """The first read grew (reading thread): say so, at most every `GREW_EVERY` seconds
        (each costs the event loop a frame, taken from the reading)."""
        now = time.monotonic()
        if now - self._last_grew >= self.GREW_EVERY:
            self._last_grew = now
            self.post_message(self.Grew())
            if not self._first_frame.is_set():  # the first step: let the frame be drawn
                self._first_frame.wait(self.FIRST_FRAME_WAIT)
                self._last_grew = time.monotonic()

    @work(thread=True, group="seek", exclusive=True, exit_on_error=False)
    def _seek_worker(self, seek: Seek) -> None:
        navigator = self.navigator
        assert navigator is not None
        view = navigator.fold(seek)
        if not self._stop.is_set():
            self.app.call_from_thread(self._arrived, seek, view)

    def _arrived(self, seek: Seek, view: RunView) -> None:
        assert self.navigator is not None
        if not self.is_attached:  # (the screen was replaced meanwhile: a rewind reopens it)
            return
        self._show(self.navigator.arrived(seek, view))

    @work(thread=True, group="tail", exclusive=True, exit_on_error=False)
    def _tail_worker(self, step: FoldTail) -> None:
        navigator = self.navigator
        assert navigator is not None
        tail = navigator.fold_tail(step)  # (megabytes of JSON: never on the UI's thread)
        if not self._stop.is_set():
            self.app.call_from_thread(self._tail_arrived, tail)

    def _tail_arrived(self, tail: Tail | None) -> None:
        assert self.navigator is not None
        if not self.is_attached:
            return
        self._show(self.navigator.tail_arrived(tail))
        self._update_timeline()

    @on(Grew)
    def _grew(self, message: Grew) -> None:
        replay, navigator = self.replay, self.navigator
        if replay is None or navigator is None or not self.is_attached:
            return
        index = replay.index
        if len(index.corrupt) != self._seen_corrupt:
            self._seen_corrupt = len(index.corrupt)
            self.timeline.markers.recount(index)
        else:
            self.timeline.markers.update(index)
        step = navigator.grew(complete=message.complete)
        if message.complete and not self._chain_started:
            self._chain_started = True  # the first read is done: check the chain now
            self._chain_worker()
        if step is None and navigator.provisional is not None:
            self._show_status(navigator.view)  # (how far the reading is)
        self._show(step)
        self._update_timeline()
        if not self._first_frame.is_set():
            self.call_after_refresh(self._first_frame.set)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self._fail(message.error)

    # Rendering -----------------------------------------------------------------------------------
    def _show(self, step: Frame | Seek | FoldTail | Wait | bool | None) -> None:
        """Show what the navigator said to."""
        if isinstance(step, Wait):
            self.app.notify(step.reason, timeout=3)
        elif isinstance(step, FoldTail):
            self._tail_worker(step)
        elif isinstance(step, Seek):
            self.timeline.update_state(busy="seeking…")
            self._seek_worker(step)
        elif isinstance(step, Frame):
            if step.changes is None:
                self.display_widget.show(step.view)
            elif step.changes:
                self.display_widget.apply_changes(step.view, step.changes)
            self._show_status(step.view)
            self._stick_to_bottom(8)
            self._update_timeline()

    def _show_status(self, view: RunView | None) -> None:
        """The status line's flags: "crashed?" where the run stops, not before; the
        navigator's label while the view is provisional (it hides the run's totals, and the
        side column hides checks and grants, which the journal's last part cannot give)."""
        status, navigator = self.display_widget.status_line, self.navigator
        at_end = (self.crashed and self.complete and self.replay is not None
                  and self.position_shown == len(self.replay) - 1)
        label = navigator.provisional_label if navigator is not None else None
        self.display_widget.set_class(label is not None, "-provisional")
        if view is not None and (status.crashed != at_end or label or status.provisional):
            status.crashed, status.provisional = at_end, label
            status.show(view)

    def _update_timeline(self) -> None:
        replay, navigator = self.replay, self.navigator
        assert replay is not None and navigator is not None
        self.timeline.update_state(
            **position_fields(navigator), total=navigator.total, span=navigator.span,
            indexing=not navigator.complete, following=navigator.follow and not navigator.ended,
            search_text=self._search_text(), problems=self._problems(),
            playing=navigator.playing, speed=navigator.speed)

    def _stick_to_bottom(self, tries: int) -> None:
        """Keep a following transcript at its bottom after a jump. A jump from a short view to
        a long one makes the scrollbar appear, and Textual ignores a scroll until that layout
        is done: try again after each refresh until the scroll holds."""
        transcript = self.query_one(Transcript)
        if not transcript.follow:
            return
        bottom = transcript.max_scroll_y
        if transcript.scroll_y != bottom:
            transcript.scroll_to(y=bottom, animate=False, immediate=True)
        if tries and (transcript.scroll_y != bottom or not transcript.allow_vertical_scroll):
            self.call_after_refresh(self._stick_to_bottom, tries - 1)

    def _problems(self) -> str:
        replay = self.replay
        if replay is None:
            return ""
        text = problems_text(replay.index, crashed=self.crashed, complete=self.complete)
        return "  ".join(filter(None, (chain_text(self.chain_verdict), text)))

    # Moving ----------------------------------------------------------------------------------
    def seek(self, cursor: int) -> None:
        """Show the view after event `cursor` (clamped to what is indexed)."""
        if self.navigator is not None:
            self._show(self.navigator.seek(cursor))

    def _move(self, step: Frame | Seek | FoldTail | Wait | bool | None, what: str) -> None:
        if step is False:
            self.app.notify(f"no {what}" + ("" if self.complete else " yet (still reading)"),
                            timeout=1.5)
        self._show(step)

    def action_step(self, step: int) -> None:
        """One event back or forward (of the filtered types, with a filter)."""
        if self.navigator is not None:
            self._move(self.navigator.step(step, self._filter_class()),
                       "earlier event" if step < 0 else "later event")

    def action_jump(self, kind: str, step: int) -> None:
        """To the previous or next tool call, approval, or error/failure."""
        if self.navigator is not None:
            pattern, name = JUMPS[kind]
            self._move(self.navigator.step(step, pattern),
                       f"{'earlier' if step < 0 else 'later'} {name}")

    def action_first(self) -> None:
        """The first event."""
        self.seek(0)

    def action_last(self) -> None:
        """The last event (as soon as the whole journal has been read once)."""
        if self.navigator is not None:
            self._show(self.navigator.last())
            self._update_timeline()

    # Play --------------------------------------------------------------------------------------
    def action_play_pause(self) -> None:
        """Play from the cursor, paced by the events' own timestamps, or pause."""
        navigator = self.navigator
        if navigator is None:
            return
        if self._play_timer is not None:
            self._play_timer.stop()
            self._play_timer = None
        if navigator.provisional is not None:
            self._show(Wait(navigator.waiting))
        delay = navigator.play(not navigator.playing)
        if delay is not None:
            self._play_timer = self.set_timer(delay, self._play_tick)
        self._update_timeline()

    def _play_tick(self) -> None:
        navigator = self.navigator
        assert navigator is not None
        self._play_timer = None
        step, delay = navigator.play_tick(self._filter_class())
        self._show(step)
        if delay is not None:
            self._play_timer = self.set_timer(delay, self._play_tick)
        else:
            self._update_timeline()

    def action_speed(self, step: int) -> None:
        """Play faster or slower."""
        navigator = self.navigator
        if navigator is None:
            return
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - navigator.speed))
        navigator.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        self.timeline.update_state(speed=navigator.speed)

    # Inspect, help, quit -----------------------------------------------------------------------
    def action_inspect_event(self) -> None:
        """The raw event under the cursor, pretty-printed (or the bytes of a corrupt line)."""
        replay, cursor = self.replay, self.position_shown
        if self.navigator is not None and self.navigator.provisional is not None:
            self._show(Wait(self.navigator.waiting))
        if replay is not None and cursor >= 0:
            self.app.push_screen(PagerScreen(*raw_event_page(replay.index, cursor)))

    def action_help(self) -> None:
        """Every replay key."""
        config = getattr(self.app, "config", None)
        self.app.push_screen(HelpScreen(scopes=[REPLAY_SCOPE, "general", "transcript"],
                                        keymap=getattr(config, "keymap", None)))

    def action_quit_replay(self) -> None:
        """Close the viewer."""
        self._stop.set()
        self.app.exit()

    def action_resume(self) -> None:
        """Continue this agent run's conversation in the live cockpit (the viewer closes)."""
        request_resume(self.app, self.path)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that type into the search box are not replay keys while it has focus; `r`
        (resume) only on the journal of an agent session."""
        focused = self.focused  # (not a query: the key hints ask this for every key)
        if focused is not None and focused.id == "search":
            return action in ("quit_replay",)
        if action == "resume":
            if self._resumable is None:
                self._resumable = runs_an_agent_session(self.path)
            return self._resumable
        return True

    # Search and filter --------------------------------------------------------------------
    def _filter_class(self) -> re.Pattern[bytes] | None:
        if self.type_filter is None:
            return None
        return code_class({c | flag for c in self.type_filter for flag in FLAGS})

    # Search ----------------------------------------------------------------------------------
    def action_search(self) -> None:
        """Open the search box."""
        box = self.query_one("#search", Input)
        box.add_class("-shown")
        box.value = self.search_term
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """Enter in the search box: find every event that holds the term, go to the next."""
        if message.input.id != "search":
            return
        box = message.input
        box.remove_class("-shown")
        self.query_one(Transcript).focus()
        self.search_term = message.value
        self.query_one(Transcript).highlight(message.value)  # every match shown, marked
        replay = self.replay
        if replay is None or not message.value:
            self.matches = []
            self.timeline.update_state(search_text="")
            return
        self.matches = replay.index.search(message.value)
        if not self.matches:
            self.timeline.update_state(search_text=self._search_text())
            self.app.notify(f"no event contains {clean_line(message.value, 80)!r}", timeout=2)
            return
        self.action_match(1, from_current=True)

    def on_key(self, event: events.Key) -> None:
        """Escape closes the search box."""
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_class("-shown"):
            box.remove_class("-shown")
            self.query_one(Transcript).focus()
            event.stop()

    def action_match(self, step: int, from_current: bool = False) -> None:
        """The next (or previous) event that matches the search."""
        if not self.matches or self.navigator is None:
            self.app.notify("no search: press / to search", timeout=1.5)
            return
        self.seek(match_after(self.matches, self.navigator.cursor, step, from_current))

    def _search_text(self) -> str:
        return search_text(self.search_term, self.matches, self.position_shown)

    # Filter ------------------------------------------------------------------------------------
    def action_filter(self) -> None:
        """Choose which event types stepping and playing visit."""
        replay = self.replay
        if replay is None:
            return
        self.app.push_screen(FilterScreen(type_counts(replay.index, len(replay)),
                                          self.type_filter), self._filter_chosen)

    def _filter_chosen(self, chosen: set[int] | None) -> None:
        if chosen is None:
            return
        self.type_filter = None if chosen >= set(CODE_NAMES) or not chosen else chosen
        self.timeline.update_state(filter_text=filter_text(self.type_filter))


def _until(lines: Iterable[bytes], stop: threading.Event) -> Iterator[bytes]:
    """`lines` until `stop` is set (looked at every `_STOP_EVERY` lines)."""
    for number, line in enumerate(lines):
        if not number % _STOP_EVERY and stop.is_set():
            return
        yield line
