"""`KeyHints`: the footer line of keys that apply right now, drawn as one line of text.

Textual's `Footer` re-mounts a widget per key whenever the bindings change; the cockpit's
bindings change with every approval (the `y`/`a`/`n` hints come and go), and that re-mount cost
a visible part of a frame. This widget reads the same source (`Screen.active_bindings`, which
applies `check_action` and the user's keymap) and redraws one `Text` (drawn by Rich and kept,
`TextLines`: through Textual's `Content` it cost 3–4 ms a change at 160x48): no layout, no mounts.

The keys that answer a waiting request (`FOOTER_FIRST`) come first: a narrow terminal cuts the
line's end, never them.

Built once for any number of refreshes in a row, after the frame being drawn: one key's answer
refreshes the bindings two or three times (the answer delivered, the focus moved, the scope step
begun), and each build asks every binding's `check_action` (~0.5-1 ms at 160x48). The build
waits for the next frame to be drawn (`call_after_refresh`): the key's own answer (the bar
closing, the selection moving) is drawn first, without the build, the hints' repaint, or the
rows below the answer that a repaint of the footer row drags into the frame (issue 29); the
line follows a frame later, reading the state every refresh before it left.

A hint is shown only when its key does something now: a binding `check_action` disables is
left out (not dimmed), and a node may hide a key that is enabled only so that pressing it can
say why it does nothing (`a` on a call that cannot be granted) by answering False from
`hint_shown(action)`.
"""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen

from cockpit.keys import FOOTER_FIRST, key_label
from cockpit.styles import palette_for
from cockpit.widgets.frames import after_next_frame
from cockpit.widgets.text_lines import TextLines

__all__ = ["KeyHints"]


class KeyHints(TextLines):
    """The keys that apply now, each named as bound (the user's keymap applied)."""

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
        self._shown: tuple[object, ...] | None = None  # what `_text` was built from
        self._build_due = False  # a build is queued (`_bindings_refreshed`)
        self.builds = 0  # lines built (tests count them)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_refreshed)
        self._bindings_changed(self.screen)

    def _bindings_refreshed(self, screen: Screen[object]) -> None:
        """The bindings were refreshed: build the line once the next frame is drawn (however
        many refreshes come before it, see the module)."""
        if not self._build_due:
            self._build_due = True
            after_next_frame(self, self._build)

    def _build(self) -> None:
        self._build_due = False
        if self.is_mounted:
            self._bindings_changed(self.screen)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        self.builds += 1
        # Bindings are refreshed far more often than the keys that apply change (a selection
        # move, every approval): the line is rebuilt and repainted only when what it shows does.
        palette = palette_for(self.app)
        hints: list[tuple[bool, str, str]] = []
        seen: set[str] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if not binding.show or not active.enabled or binding.action in seen:
                continue
            hint_shown = getattr(active.node, "hint_shown", None)
            if hint_shown is not None and not hint_shown(binding.action):
                continue
            seen.add(binding.action)
            # Textual's keymap drops a remapped binding's `key_display`: this names its new key.
            hints.append((binding.id not in FOOTER_FIRST, self.app.get_key_display(binding),
                          binding.description))
        hints.sort(key=lambda hint: hint[0])  # (stable: otherwise in the bindings' order)
        shown = (palette, key_label(self.app, "palette"), *hints)
        if shown == self._shown:
            return
        self._shown = shown
        text = Text(no_wrap=True, overflow="ellipsis")
        for _, key, description in hints:
            if text:
                text.append("  ")
            text.append(key, palette.accent)
            text.append(f" {description}", palette.text)
        text.append(f"   {shown[1]} palette", palette.dim)
        self.update(text, layout=False)  # (one row whatever it says: drawn by Rich, kept)
