"""`ReplayApp`: review a run from its journal — the live screen's widgets at any event.

The screen composes the live cockpit's `RunDisplay` (status, transcript, verification, grants,
approval bar) and a `Timeline`. A thread worker indexes the journal (`JournalIndex`), folds it
once from the start to take checkpoints (`JournalReplay`), and then tails the file, so a journal
that another process is still writing is followed live. The screen shows the view after the
event under the cursor: stepping forward folds one event into the shown view; any other move
starts from the nearest checkpoint (in a worker thread when that is more than a blink of work).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from engine_adapter import JournalError
from engine_adapter.fold import Item, RunView
from engine_adapter.journal import decode_json
from engine_adapter.journal_index import CODE_NAMES, CORRUPT, FLAGS, TYPE_CODES, TYPE_MASK
from engine_adapter.replay import JournalReplay
from engine_adapter.timestamps import format_ts

from ..base_app import EventLookup, ThemedApp
from ..keys import bindings
from ..pump import ChangeSet
from ..screens import HelpScreen, PagerScreen
from ..widgets import RunDisplay, Transcript
from ..widgets.key_hints import KeyHints
from ..widgets.text import clean_line, styled
from .filter import FilterScreen
from .journal_facts import runs_an_agent_session
from .journals import CRASHED, CRASHED_TEXT, open_status
from .keys import REPLAY_SCOPE
from .picker import PickerScreen, request_resume
from .timeline import Timeline, code_class

__all__ = ["ReplayApp", "ReplayScreen"]

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0)
IDLE_CAP = 1.0  # seconds: a longer pause between two events plays as this long (before speed)
MIN_STEP = 0.01  # seconds between played events, however fast
SYNC_FOLD = 5_000  # a seek folding at most this many events (from a small view) runs inline
SYNC_ITEMS = 5_000  # ... and copying a checkpoint with fewer rows than this is inline too
POLL = 0.25  # seconds between looks at a followed journal's size (like `tail -f`)
INSPECT_LIMIT = 200_000  # characters of one raw event shown by the inspector

_TOOL = code_class({TYPE_CODES["tool_start"]})
_APPROVAL = code_class({TYPE_CODES["approval_requested"]})


class ReplayScreen(Screen[None]):
    """One journal: the run display at the cursor, the timeline, search and filter."""

    FIRST_SCAN = 256 << 10  # bytes indexed at once, for the first frame
    HELPER_MIN_BYTES = 32 << 20  # a journal with more left to index uses a helper process

    DEFAULT_CSS = """
    ReplayScreen #search { dock: bottom; display: none; }
    ReplayScreen #search.-shown { display: block; }
    ReplayScreen #replay-error { display: none; padding: 1 2; color: $error; }
    ReplayScreen #replay-error.-shown { display: block; }
    """

    BINDINGS = bindings(REPLAY_SCOPE)

    class Grew(Message):
        """The worker indexed more of the journal (or finished a stage)."""

    class Failed(Message):
        """Nothing could be read."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, path: str | Path, *, poll: float = POLL) -> None:
        super().__init__()
        self.path = Path(path)
        self.poll = poll
        self.replay: JournalReplay | None = None
        self.cursor = -1  # the event shown (0-based); -1 before the first frame
        self.view: RunView | None = None
        self.view_pos = 0  # events folded into `view` (it shows event `view_pos - 1`)
        self.position_shown = -1
        self.index_complete = False
        self.folded_complete = False
        self.live_tail = False  # the journal has no `agent_end` last: follow it
        self.crashed = False  # no `agent_end` last, and no run writes it any more
        self.playing = False
        self.speed = 1.0
        self.type_filter: set[int] | None = None
        self.search_term = ""
        self.matches: list[int] = []
        self._stop = threading.Event()
        self._resumable: bool | None = None  # an agent session's journal (`r` resumes it)
        self._seen_markers_corrupt = 0
        self._play_timer: Any = None
        self._seek_target: int | None = None
        self._was_at_end = False  # the cursor was on the last event: new events move it
        self._seeking_end = False  # the seek under way is to the last event indexed
        self._want_end = False  # `end` was pressed before the end was known

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
        self.live_tail = _looks_live(self.path)
        if self.live_tail and open_status(self.path) == CRASHED:
            self.live_tail, self.crashed = False, True  # nothing more will come
        self.timeline.update_state(following=self.live_tail)
        self.display_widget.show(RunView())
        self.query_one(Transcript).focus()
        self._index_worker()

    def on_unmount(self) -> None:
        self._stop.set()  # (the worker stops a helper process and closes the journal)

    def _fail(self, error: str) -> None:
        error_box = self.query_one("#replay-error", Static)
        error_box.update(styled(error, limit=2_000))  # Text: journal words are never markup
        error_box.add_class("-shown")
        self.timeline.update_state(indexing=False, problems=clean_line(error, 300))

    # The worker: index, fold pass, follow --------------------------------------------------------
    @work(thread=True, group="index", exit_on_error=False)
    def _index_worker(self) -> None:
        replay = self.replay
        assert replay is not None
        try:
            replay.index.scan(max_bytes=self.FIRST_SCAN)  # enough for the first frame, at once
            self.post_message(self.Grew())
            # The rest is indexed in another thread (a big file in a helper process, on
            # another core) while this one folds what is indexed: the end is ready sooner.
            if not replay.read_through(settle=not self.live_tail,
                                       helper_min_bytes=self.HELPER_MIN_BYTES,
                                       progress=lambda: self.post_message(self.Grew()),
                                       indexed=self._indexed, stop=self._stop):
                return
            self.folded_complete = True
            self.post_message(self.Grew())
            self._follow(replay)
        except (OSError, ValueError) as exc:  # the file vanished or was closed under us
            if not self._stop.is_set():
                self.post_message(self.Failed(f"stopped reading {self.path}: {exc}"))
        finally:
            if self._stop.is_set():  # the screen is gone: nothing reads the journal any more
                replay.close()

    def _indexed(self) -> None:
        """The whole journal is indexed (called from the indexing thread)."""
        self.index_complete = True
        self.post_message(self.Grew())

    def _follow(self, replay: JournalReplay) -> None:
        """Tail the file: index and fold what lands, like `tail -f` (poll its size)."""
        index = replay.index
        quiet = 0
        while not self._stop.wait(self.poll):
            if replay.advance():
                quiet = 0
                self.post_message(self.Grew())
                continue
            quiet += 1
            if index.pending and quiet == 4 and index.settle():  # no newline for a second
                replay.advance(scan=False)
                self.post_message(self.Grew())
            elif index.pending and quiet == 4:
                self.post_message(self.Grew())  # a torn tail: say so

    @on(Grew)
    def _grew(self) -> None:
        replay = self.replay
        if replay is None or not self.is_attached:
            return
        index = replay.index
        timeline = self.timeline
        if len(index.corrupt) != self._seen_markers_corrupt:
            self._seen_markers_corrupt = len(index.corrupt)
            timeline.markers.recount(index)
        else:
            timeline.markers.update(index)
        total = len(index)
        # Following while the run is live; an `agent_end` says it is over (tailing goes on: the
        # session may start another task in the same journal).
        ended = total > 0 and index.codes[total - 1] & TYPE_MASK == TYPE_CODES["agent_end"]
        timeline.update_state(total=total, indexing=not self.index_complete,
                              following=self.live_tail and not ended,
                              problems=self._problems(),
                              busy="" if self.folded_complete or not self.index_complete else
                              f"folding {replay.folded * 100 // max(1, total)}%")
        if self._want_end and self.index_complete and total:
            self._want_end = False
            self.seek(total - 1)
            return
        if total and self.cursor < 0:
            if self.live_tail and self.index_complete:
                self.seek(total - 1)  # a followed journal opens at its end
                return
            # The first event at once; a followed journal then moves to its end once known.
            self._want_end = self._want_end or self.live_tail  # (`end` may come first)
            self.seek(0)
            return
        if self.live_tail and self._was_at_end and total - 1 > self.cursor and not self.playing:
            self.seek(total - 1)  # following: show what landed
        if self._seek_target is not None and self._seek_target < total and \
                self._seek_target <= replay.folded:
            target, self._seek_target = self._seek_target, None
            self.seek(target)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self._fail(message.error)

    def _problems(self) -> str:
        replay = self.replay
        if replay is None:
            return ""
        index = replay.index
        problems = []
        if index.corrupt:
            lines = sorted(index.corrupt.values())
            shown = ", ".join(str(n) for n in lines[:3]) + (" …" if len(lines) > 3 else "")
            problems.append(f"⚠ {len(lines)} corrupt line{'s' if len(lines) > 1 else ''} "
                            f"skipped (line {shown})")
        if index.unknown:
            problems.append(f"⚠ {index.unknown} event{'s' if index.unknown > 1 else ''} of an "
                            "unknown type (newer cockpit?)")
        if index.torn_tail:
            problems.append("⚠ torn last line skipped")
        if self.crashed and self.index_complete and len(index):
            problems.append(f"⚠ {CRASHED_TEXT}")
        if self.index_complete and not len(index):
            size = index.size
            problems.append("the journal is empty" if not size else
                            "nothing in this file is a journal event")
        return "  ".join(problems)

    # Seeking -------------------------------------------------------------------------------------
    def seek(self, cursor: int) -> None:
        """Show the view after event `cursor` (clamped to what is indexed)."""
        replay = self.replay
        if replay is None or not len(replay):
            return
        total = len(replay)
        cursor = max(0, min(cursor, total - 1))
        target = cursor + 1
        self.cursor = cursor
        # Whether this shows the last event: decided now, as the follow thread may index more
        # before the view is shown (following stopped when `_shown` compared with that).
        self._seeking_end = cursor == total - 1
        view = self.view
        if view is not None and self.view_pos <= target <= self.view_pos + SYNC_FOLD:
            if target == self.view_pos:
                self._shown()
                return
            if replay.is_stored(view):  # a checkpoint shown as is: fold into a copy of it
                view = self.view = view.copy()
            changes = ChangeSet()
            distance = target - self.view_pos
            replay.fold_into(view, self.view_pos, target,
                             lambda _position, change: changes.add(change.parts, change.item))
            self.view_pos = target
            if distance > 200:  # a long way: one full redraw costs less than many small ones
                self.display_widget.show(view)
            else:
                self.display_widget.apply_changes(view, changes)
            self._shown()
            return
        base_position, base = replay.nearest(target)
        if (target - base_position <= SYNC_FOLD and len(base.items) < SYNC_ITEMS) or \
                target == base_position:
            self._show_view(replay.state_at(target, share=True), target)
            return
        if target > replay.folded and not self.folded_complete:
            self._seek_target = target  # the pass will get there; `_grew` seeks again
        self.timeline.update_state(busy="seeking…")
        self._seek_worker(target)

    @work(thread=True, group="seek", exclusive=True, exit_on_error=False)
    def _seek_worker(self, target: int) -> None:
        replay = self.replay
        assert replay is not None
        while not replay.wait_folded(target, timeout=0.1):
            if self._stop.is_set() or self._seek_target != target:
                return
        view = replay.state_at(target, share=True)
        if self.cursor + 1 == target and not self._stop.is_set():
            self.app.call_from_thread(self._show_view, view, target)

    def _show_view(self, view: RunView, target: int) -> None:
        if self.cursor + 1 != target:
            return  # the user moved on while this was folding
        if self._seek_target == target:
            self._seek_target = None
        self.view, self.view_pos = view, target
        self.display_widget.show(view)
        self._shown()

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

    def _shown(self) -> None:
        replay = self.replay
        assert replay is not None
        self.position_shown = self.cursor
        status = self.display_widget.status_line
        at_end = self.crashed and self.index_complete and self.cursor == len(replay.index) - 1
        if status.crashed != at_end and self.view is not None:
            status.crashed = at_end
            status.show(self.view)
        self._stick_to_bottom(8)
        self._was_at_end = self._seeking_end
        code = replay.index.codes[self.cursor]
        kind = CODE_NAMES.get(code & TYPE_MASK, "?") if code != CORRUPT else "corrupt line"
        when = ""
        if code != CORRUPT and self.view is not None and self.view.last_ts:
            when = format_ts(self.view.last_ts, millis=True)
        self.timeline.update_state(cursor=self.cursor, when=when, kind=kind,
                                   busy="" if self.folded_complete else self.timeline.state.busy,
                                   search_text=self._search_text(),
                                   problems=self._problems())

    # Moving ----------------------------------------------------------------------------------
    def _next_matching(self, start: int, step: int, pattern: Any = None) -> int | None:
        """The next position from `start` (exclusive) in direction `step` whose code matches
        `pattern` (a compiled byte class), or that passes the type filter."""
        replay = self.replay
        assert replay is not None
        codes = replay.index.codes
        if pattern is None:
            if self.type_filter is None:
                target = start + step
                return target if 0 <= target < len(codes) else None
            pattern = code_class({c | flag for c in self.type_filter for flag in FLAGS})
        data = codes.tobytes()
        if step > 0:
            found = pattern.search(data, start + 1)
            return found.start() if found else None
        # Backwards: search the reversed prefix (one C-speed copy), not every earlier match.
        found = pattern.search(data[max(0, start) - 1::-1]) if start > 0 else None
        return start - 1 - found.start() if found else None

    def _move(self, target: int | None, what: str) -> None:
        if target is None:
            self.app.notify(f"no {what}", timeout=1.5)
            return
        self.seek(target)

    def action_step(self, step: int) -> None:
        """One event back or forward (of the filtered types, with a filter)."""
        self._move(self._next_matching(self.cursor, step), "earlier event" if step < 0 else
                   "later event")

    def action_jump(self, kind: str, step: int) -> None:
        """To the previous or next tool call, approval, or error/failure."""
        from .timeline import MARKER_KINDS

        pattern = {"tool": _TOOL, "approval": _APPROVAL}.get(kind)
        if pattern is None:
            codes = {c for k in ("error", "failure", "denial") for c in MARKER_KINDS[k][1]}
            pattern = code_class(codes)
        names = {"tool": "tool call", "approval": "approval", "error": "error or failure"}
        self._move(self._next_matching(self.cursor, step, pattern),
                   f"{'earlier' if step < 0 else 'later'} {names.get(kind, kind)}")

    def action_first(self) -> None:
        """The first event."""
        self.seek(0)

    def action_last(self) -> None:
        """The last event (as soon as the index knows where that is)."""
        if self.replay is None:
            return
        if not self.index_complete:
            self._want_end = True  # `_grew` jumps once the whole file is indexed
            self.timeline.update_state(busy="finding the end…")
            return
        if len(self.replay):
            self.seek(len(self.replay) - 1)

    # Play --------------------------------------------------------------------------------------
    def action_play_pause(self) -> None:
        """Play from the cursor, paced by the events' own timestamps, or pause."""
        self.playing = not self.playing
        self.timeline.update_state(playing=self.playing)
        if self.playing:
            self._schedule_play()
        elif self._play_timer is not None:
            self._play_timer.stop()
            self._play_timer = None

    def _schedule_play(self) -> None:
        replay = self.replay
        if replay is None or not self.playing:
            return
        after = self._next_matching(self.cursor, 1)
        if after is None:
            if not self.live_tail:
                self.playing = False
                self.timeline.update_state(playing=False)
                return
            self._play_timer = self.set_timer(self.poll, self._schedule_play)
            return
        gap = MIN_STEP
        now_event, next_event = replay.index.event(self.cursor), replay.index.event(after)
        if now_event is not None and next_event is not None:
            gap = min(max(0.0, next_event.ts - now_event.ts), IDLE_CAP)
        self._play_timer = self.set_timer(max(MIN_STEP, gap / self.speed),
                                          lambda: self._play_step(after))

    def _play_step(self, target: int) -> None:
        if not self.playing:
            return
        self.seek(target)
        self._schedule_play()

    def action_speed(self, step: int) -> None:
        """Play faster or slower."""
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.speed))
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        self.timeline.update_state(speed=self.speed)

    # Search ----------------------------------------------------------------------------------
    def action_search(self) -> None:
        """Open the search box."""
        box = self.query_one("#search", Input)
        box.add_class("-shown")
        box.value = self.search_term
        box.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, message: Input.Submitted) -> None:
        box = message.input
        box.remove_class("-shown")
        self.query_one(Transcript).focus()
        self.search_term = message.value
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

    def on_key(self, event: Any) -> None:
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_class("-shown"):
            box.remove_class("-shown")
            self.query_one(Transcript).focus()
            event.stop()

    def action_match(self, step: int, from_current: bool = False) -> None:
        """The next (or previous) event that matches the search."""
        if not self.matches:
            self.app.notify("no search: press / to search", timeout=1.5)
            return
        import bisect

        if step > 0:
            i = bisect.bisect_left(self.matches, self.cursor if from_current else self.cursor + 1)
            i = i if i < len(self.matches) else 0  # wrap around
        else:
            i = bisect.bisect_left(self.matches, self.cursor) - 1
            i = i if i >= 0 else len(self.matches) - 1
        self.seek(self.matches[i])

    def _search_text(self) -> str:
        if not self.search_term:
            return ""
        term = clean_line(self.search_term, 30)
        if not self.matches:
            return f"/{term}: no match"
        import bisect

        i = bisect.bisect_left(self.matches, self.cursor)
        here = i + 1 if i < len(self.matches) and self.matches[i] == self.cursor else None
        where = f"{here}/" if here else ""
        return f"/{term}: {where}{len(self.matches):,} match{'es' if len(self.matches) > 1 else ''}"

    # Filter ------------------------------------------------------------------------------------
    def action_filter(self) -> None:
        """Choose which event types stepping and playing visit."""
        replay = self.replay
        if replay is None:
            return
        counts: dict[int, int] = {}
        data = replay.index.codes.tobytes()
        for code in set(data):
            counts[code & TYPE_MASK] = counts.get(code & TYPE_MASK, 0) + data.count(bytes([code]))
        self.app.push_screen(FilterScreen(counts, self.type_filter), self._filter_chosen)

    def _filter_chosen(self, chosen: set[int] | None) -> None:
        if chosen is None:
            return
        all_codes = set(CODE_NAMES)
        self.type_filter = None if chosen >= all_codes or not chosen else chosen
        text = ""
        if self.type_filter is not None:
            names = sorted(CODE_NAMES[c] for c in self.type_filter)
            text = "filter: " + (", ".join(names[:3]) + (f" +{len(names) - 3}"
                                                          if len(names) > 3 else ""))
        self.timeline.update_state(filter_text=text)

    # Inspect, help, quit -----------------------------------------------------------------------
    def action_inspect_event(self) -> None:
        """The raw event under the cursor, pretty-printed (or the bytes of a corrupt line)."""
        replay = self.replay
        if replay is None or self.cursor < 0:
            return
        index = replay.index
        raw = index.raw(self.cursor)
        line = index.line_number(self.cursor)
        try:
            text = json.dumps(decode_json(raw), indent=2, ensure_ascii=False)
            title = f"event {self.cursor + 1:,} (journal line {line:,})"
        except ValueError:
            text = repr(raw[:INSPECT_LIMIT])
            title = f"journal line {line:,} is corrupt: not an event (shown as bytes)"
        if len(text) > INSPECT_LIMIT:
            text = text[:INSPECT_LIMIT] + f"\n… {len(text) - INSPECT_LIMIT:,} more characters"
        self.app.push_screen(PagerScreen(title, text))

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
        if self.query("#search") and self.query_one("#search", Input).has_focus:
            return action in ("quit_replay",)
        if action == "resume":
            if self._resumable is None:
                self._resumable = runs_an_agent_session(self.path)
            return self._resumable
        return True


def _looks_live(path: Path) -> bool:
    """Whether the journal's last event is not an `agent_end` (a run still writing it)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 65_536))
            tail = f.read()
    except OSError:
        return False
    lines = tail.split(b"\n")
    torn = lines.pop() if lines and lines[-1].strip() else b""  # unterminated: maybe torn
    for line in reversed(lines):
        if line.strip():
            try:
                data = decode_json(line)
            except ValueError:
                return True  # damaged: keep watching rather than guess
            return not (isinstance(data, dict) and data.get("type") == "agent_end")
    if torn:
        return True  # a first line still being written
    return size == 0  # an empty file: a run that is just starting, perhaps


class ReplayApp(ThemedApp):
    """The journal viewer. `path`: the journal; `None` opens a picker of recent journals.

    Args:
        path: A journal file.
        theme: A theme name; `None` = the remembered one.
        journal_dir: Where the picker looks (default: where runs write their journals).
        remember_theme: Whether a theme switch is saved to `config.toml`.
        poll: Seconds between looks at a followed journal.
    """

    TITLE = "cockpit replay"

    def __init__(self, path: str | Path | None = None, *, theme: str | None = None,
                 journal_dir: str | Path | None = None, remember_theme: bool = True,
                 poll: float = POLL) -> None:
        super().__init__(theme=theme, remember_theme=remember_theme)
        self.path = Path(path) if path is not None else None
        self.journal_dir = journal_dir
        self.poll = poll

    def on_mount(self) -> None:
        if self.path is None:
            self.push_screen(PickerScreen(self.journal_dir), self._picked)
        else:
            self.push_screen(ReplayScreen(self.path, poll=self.poll))

    def _picked(self, path: Path | None) -> None:
        if path is None:
            self.exit()
            return
        self.path = path
        self.push_screen(ReplayScreen(path, poll=self.poll))

    @property
    def replay_screen(self) -> ReplayScreen | None:
        """The open journal's screen, if any."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ReplayScreen):
                return screen
        return None

    @property
    def replay(self) -> JournalReplay:
        """The open journal (for tests and the benchmark)."""
        screen = self.replay_screen
        if screen is None or screen.replay is None:
            raise RuntimeError("no journal is open")
        return screen.replay

    @property
    def position_shown(self) -> int:
        """The event on screen (0-based), -1 before the first frame."""
        screen = self.replay_screen
        return screen.position_shown if screen is not None else -1

    @property
    def index_complete(self) -> bool:
        """Whether the whole journal has been indexed once."""
        screen = self.replay_screen
        return bool(screen and screen.index_complete)

    def item_events(self, item: Item) -> EventLookup | None:
        """The events behind `item`, read back from the journal by seq (as of the event shown)."""
        screen = self.replay_screen
        replay = screen.replay if screen is not None else None
        if screen is None or replay is None:
            return None
        shown = screen.view_pos
        return lambda seq: replay.event_with_seq(seq, before=shown)

    def refresh_theme(self) -> None:
        """Re-render the run display in the new theme's colours."""
        screen = self.replay_screen
        if screen is not None and screen.is_mounted:
            screen.display_widget.refresh_theme()
            screen.timeline.refresh()
