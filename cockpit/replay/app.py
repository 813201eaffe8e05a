"""`ReplayApp`: review a run from its journal — the live screen's widgets at any event.

The app opens one journal in a `ReplayScreen` (or, without a path, a picker of recent ones
first); the screen and its `Navigator` do the rest.
"""

from __future__ import annotations

from pathlib import Path

from cockpit.base_app import EventLookup, ThemedApp
from cockpit.replay.picker import PickerScreen, ResumeCheck
from cockpit.replay.screen import POLL, ReplayScreen
from cockpit.rewinds import JournalRewinder, Rewinder
from engine_adapter.replay import JournalReplay
from engine_adapter.view import Item

__all__ = ["ReplayApp"]


class ReplayApp(ThemedApp):
    """The journal viewer. `path`: the journal; `None` opens a picker of recent journals.

    Args:
        path: A journal file.
        theme: A theme name; `None` = the remembered one.
        resume_check: Why a journal's run cannot be resumed, or None when it can (`r`, in the
            picker and the viewer: the app then exits with a `ResumeRequest`); without one,
            `r` says to use `cockpit resume`.
        journal_dir: Where the picker looks (default: where runs write their journals).
        remember_theme: Whether a theme switch is saved to `config.toml`.
        poll: Seconds between looks at a followed journal.
    """

    TITLE = "cockpit replay"

    def __init__(self, path: str | Path | None = None, *, theme: str | None = None,
                 resume_check: ResumeCheck | None = None,
                 journal_dir: str | Path | None = None, remember_theme: bool = True,
                 poll: float = POLL) -> None:
        super().__init__(theme=theme, remember_theme=remember_theme)
        self.path = Path(path) if path is not None else None
        self.resume_check = resume_check
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
        """Whether the whole journal has been read once."""
        screen = self.replay_screen
        return bool(screen and screen.complete)

    def item_events(self, item: Item) -> EventLookup | None:
        """The events behind `item`, read back from the journal by seq (as of the event shown)."""
        screen = self.replay_screen
        navigator = screen.navigator if screen is not None else None
        if navigator is None:
            return None
        replay, shown = navigator.replay, navigator.view_pos
        return lambda seq: replay.event_with_seq(seq, before=shown)

    def rewinder(self) -> Rewinder | None:
        """The open journal's run (the journal says why when it cannot be rewound)."""
        return JournalRewinder(self.path) if self.path is not None else None

    def rewound(self, task: int, turn: int) -> str:
        """The journal grew by the rewind's event: open it again, at its end (the rewind)."""
        if self.path is not None and self.replay_screen is self.screen:
            self.switch_screen(ReplayScreen(self.path, poll=self.poll, at_end=True))
        return "`cockpit rewind --undo` puts it back"

    def refresh_theme(self) -> None:
        """Re-render the run display in the new theme's colours."""
        screen = self.replay_screen
        if screen is not None and screen.is_mounted:
            screen.display_widget.refresh_theme()
            screen.timeline.refresh()
