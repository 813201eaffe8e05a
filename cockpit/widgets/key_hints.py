"""`KeyHints`: the footer line of keys that apply right now, drawn as one line of text.

Textual's `Footer` re-mounts a widget per key whenever the bindings change; the cockpit's
bindings change with every approval (the `y`/`a`/`n` hints come and go), and that re-mount cost
a visible part of a frame. This widget reads the same source (`Screen.active_bindings`, which
applies `check_action` and the user's keymap) and redraws one `Text`: no layout, no mounts.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import RenderResult
from textual.screen import Screen
from textual.widget import Widget

from ..styles import palette_for

__all__ = ["KeyHints"]


class KeyHints(Widget):
    """The keys that apply now: shown ones only, disabled ones dimmed."""

    DEFAULT_CSS = """
    KeyHints {
        dock: bottom;
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = Text()

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        palette = palette_for(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        seen: set[str] = set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            display = self.app.get_key_display(binding)
            if text:
                text.append("  ")
            text.append(display, palette.accent if active.enabled else palette.dim)
            text.append(f" {binding.description}", palette.text if active.enabled
                        else palette.dim)
            del key
        text.append("   ^p palette", palette.dim)
        self._text = text
        self.refresh()

    def render(self) -> RenderResult:
        return self._text
