"""The fleet view in tests: what its screen shows, as text, and a wait on its board."""

from __future__ import annotations

from typing import Any


def screen_text(app: Any) -> str:
    """Every row of the app's screen as plain text (what the terminal would show)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
