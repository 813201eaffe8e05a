"""`TranscriptKeys`: what the transcript's keys do — move the selection, page, expand an item
(or ask for the pager), ask for an item's raw events — and when each applies.

Mixed into `Transcript` (first in its bases, so these actions and `check_action` are the ones
Textual finds); the selection itself (`select`) and the drawing stay in `transcript.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.widgets.transcript.items import needs_pager
from engine_adapter.view import Item

if TYPE_CHECKING:
    from cockpit.widgets.transcript.transcript import Transcript

__all__ = ["TranscriptKeys"]


class TranscriptKeys:
    """The transcript's key actions, for `Transcript`."""

    def action_cursor_up(self: Transcript) -> None:
        """Select the previous item (from following: the last one)."""
        self.select(self.item_count - 1 if self.cursor < 0 else self.cursor - 1)

    def action_cursor_down(self: Transcript) -> None:
        """Select the next item."""
        if self.cursor < 0:
            self.select(self.item_count - 1)
        else:
            self.select(self.cursor + 1)

    def action_cursor_first(self: Transcript) -> None:
        """Select the first item."""
        self.select(0)

    def action_cursor_last(self: Transcript) -> None:
        """Clear the selection and follow the run again."""
        self.cursor = -1
        self.follow = True
        self._after_change()
        self.refresh_bindings()

    def action_page_up(self: Transcript) -> None:
        """Scroll up a page."""
        self.follow = False
        self.scroll_page_up(animate=False)

    def action_page_down(self: Transcript) -> None:
        """Scroll down a page."""
        self.scroll_page_down(animate=False)

    def action_expand(self: Transcript) -> None:
        """Expand or collapse the selected item; ask for a pager when expanding cannot show it
        all."""
        item = self.selected
        if item is None:
            return
        if item.index in self._expanded and needs_pager(item):
            self.post_message(self.OpenPager(item))
            return
        if item.index in self._expanded:
            self._expanded.discard(item.index)
        else:
            self._expanded.add(item.index)
            if needs_pager(item):
                self.post_message(self.OpenPager(item))
        self._cache.pop(item.index, None)
        self._remeasure([item.index])
        self._set_virtual_height(self._total + self._reserve)
        self.select(item.index)
        self.refresh()  # the rows below it moved

    def _inspected(self: Transcript) -> Item | None:
        """The selected item; with none selected, the call awaiting approval (the bar says
        `i` shows its whole input)."""
        if self.selected is not None:
            return self.selected
        return next(iter(self._pending.values()), None)

    def action_inspect(self: Transcript) -> None:
        """Ask for the raw events behind the selected item (or the call awaiting approval)."""
        item = self._inspected()
        if item is not None:
            self.post_message(self.Inspect(item))

    def check_action(self: Transcript, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`enter` applies only with an item selected; `i` also to a pending approval."""
        if action == "expand":
            return self.selected is not None
        if action == "inspect":
            return self._inspected() is not None
        return True
