"""`RunScreen`: the live cockpit's default screen, whose focus moves repaint only what they
change.

Textual's `Screen.focused` is a reactive that repaints the whole screen whenever the focus
moves, on top of the widgets that lose and gain it repainting themselves (and restyling, for
their `:focus` rules). On the live cockpit a focus move is a key's answer (`n` into the reason
box, escape back to the transcript), and at 160x48 the whole-screen repaint was a third of the
key's frame (issue 29). The widgets' own repaints stay; only the redundant one goes.
"""

from __future__ import annotations

from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

__all__ = ["RunScreen"]


class RunScreen(Screen[None]):
    """The default screen of the live cockpit: a focus move is not a whole-screen repaint."""

    # The same reactive as Textual's (its watcher still refreshes the bindings), without
    # `repaint`: the widget blurred and the one focused repaint themselves (`on_blur`/`on_focus`
    # refresh them, and their `:focus` styles are applied to them alone).
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
