"""`ThemedApp`: what the live cockpit and the replay viewer share — themes, the user's settings
and keymap, and the transcript's pager and raw-event inspector.

Both apps subclass it; neither imports the other. What differs between them is only where the
events behind a transcript item come from (a Session's history, or the journal): each says so
in `item_events`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from textual import on
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.theme import Theme

from engine_adapter.events import BaseEvent
from engine_adapter.fold import Item, ToolCallItem

from .config import load_config, save_theme
from .screens import PagerScreen
from .themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from .widgets import Transcript
from .widgets.items import item_text, raw_events_text
from .widgets.text import clean, clean_line

__all__ = ["EventLookup", "ThemedApp", "item_title"]

# The event with a given `seq`, or None when it cannot be had.
EventLookup = Callable[[int], BaseEvent | None]


def item_title(item: Item) -> str:
    """How the pager and the inspector name a transcript item."""
    if isinstance(item, ToolCallItem):
        return f"{clean_line(item.tool, 60)} call {clean_line(item.call_id, 60)}"
    return f"{item.kind} #{item.index}"


class ThemedApp(App[Any]):
    """An app with the cockpit's themes registered, the chosen one applied and remembered, the
    user's keymap applied, and the transcript's `enter` pager and `i` inspector.

    `theme`: a theme name; else the one remembered in `config.toml`; else `cockpit-dark`.
    An unknown name raises `ValueError` listing the available ones. Broken theme files and a
    broken `config.toml` are reported as notifications once mounted, never fatal.
    """

    def __init__(self, *, theme: str | None = None, remember_theme: bool = True) -> None:
        super().__init__()
        self.theme_errors: list[str] = []
        self.cockpit_themes = load_themes(self.theme_errors)
        for registered in self.cockpit_themes.values():
            self.register_theme(registered)
        self.config = load_config()
        self._remember_theme = remember_theme
        if theme is not None and theme not in self.available_themes:
            names = ", ".join(sorted(self.cockpit_themes))
            raise ValueError(f"unknown theme {theme!r}; available: {names}")
        chosen = theme or self.config.theme
        if chosen not in self.available_themes:
            if chosen:
                self.theme_errors.append(f"remembered theme {chosen!r} is not installed")
            chosen = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = chosen

    def on_mount(self) -> None:
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        for problem in self.theme_errors + ([self.config.error] if self.config.error else []):
            self.notify(clean(problem, 500), severity="warning", markup=False)
        # Subscribing needs a running app; the initial choice above is not a switch to save.
        self.theme_changed_signal.subscribe(self, self._theme_switched)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Defaults for the cockpit's own variables, so any Textual theme works too."""
        return dict(VARIABLE_DEFAULTS)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands plus one entry per cockpit theme."""
        yield from super().get_system_commands(screen)
        for name in sorted(self.cockpit_themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme (remembered)",
                                lambda name=name: setattr(self, "theme", name))

    def _theme_switched(self, theme: Theme) -> None:
        if self._remember_theme:
            error = save_theme(theme.name)
            if error:
                self.notify(error, severity="warning")
        self.refresh_theme()

    def refresh_theme(self) -> None:
        """Redraw what caches colours (each app knows its own widgets)."""

    # The pager and the inspector -------------------------------------------------------------
    def item_events(self, item: Item) -> EventLookup | None:
        """Where the events behind `item` can be read, by `seq` (None: nowhere)."""
        return None

    def raw_events(self, item: Item) -> str:
        """The events behind `item`, as JSON (what the inspector shows)."""
        lookup = self.item_events(item)
        if lookup is None:
            return "(the events behind this item are not available here)"
        return raw_events_text(item, lookup)

    @on(Transcript.OpenPager)
    def _open_pager(self, message: Transcript.OpenPager) -> None:
        item = message.item
        self.push_screen(PagerScreen(item_title(item), item_text(item)))

    @on(Transcript.Inspect)
    def _inspect(self, message: Transcript.Inspect) -> None:
        item = message.item
        self.push_screen(PagerScreen(f"raw events behind {item_title(item)}",
                                     self.raw_events(item)))
