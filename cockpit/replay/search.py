"""The replay screen's search and type filter: the `/` box and `n`/`N`, and `f`'s choice of the
event types that stepping and playing visit (a part of `ReplayScreen`, kept apart for size)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from textual.widgets import Input

from cockpit.replay.filter import FilterScreen
from cockpit.replay.screen_text import filter_text, match_after, search_text, type_counts
from cockpit.widgets import Transcript, clean_line
from engine_adapter.journal import CODE_NAMES, FLAGS
from engine_adapter.replay import JournalReplay, Navigator, code_class

if TYPE_CHECKING:
    from cockpit.replay.timeline import Timeline

__all__ = ["JournalSearch"]


class JournalSearch:
    """Search and filter keys, mixed into `ReplayScreen` (which provides what is declared
    here: the journal, its navigator, the timeline, `seek` and the Textual screen's own)."""

    replay: JournalReplay | None
    navigator: Navigator | None
    timeline: Timeline
    position_shown: int
    app: Any
    query_one: Any
    seek: Any

    def _init_search(self) -> None:
        """No search and no filter yet (`ReplayScreen.__init__` calls this)."""
        self.type_filter: set[int] | None = None
        self.search_term = ""
        self.matches: list[int] = []

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
