"""Rich styles derived from the current theme's variables (tier and status colours, …).

Line-API widgets build `Strip`s from Rich styles rather than CSS, so they ask here; the result
is cached per theme name and rebuilt when the theme changes.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from textual.color import Color

__all__ = ["Palette", "palette_for"]


def _color(variables: dict[str, str], name: str, fallback: str) -> str:
    value = variables.get(name, fallback)
    try:
        return Color.parse(value).hex6
    except Exception:  # a theme may give "auto 87%" or a variable reference: use the fallback
        return Color.parse(fallback).hex6


class Palette:
    """Named Rich styles for one theme."""

    def __init__(self, variables: dict[str, str], dark: bool) -> None:
        c = lambda name, fallback: _color(variables, name, fallback)  # noqa: E731
        self.dark = dark
        fg = c("foreground", "#d8dee9" if dark else "#1e2329")
        self.text = Style(color=fg)
        self.dim = Style(color=c("status-pending", "#8b95a5"))
        self.thought = Style(color=c("thought", "#7d8799"), italic=True)
        self.primary = Style(color=c("primary", "#4ea1ff"), bold=True)
        self.accent = Style(color=c("accent", "#ffb454"))
        self.success = Style(color=c("success", "#5fd77f"))
        self.warning = Style(color=c("warning", "#f0c25e"))
        self.error = Style(color=c("error", "#ff6b6b"), bold=True)
        self.error_line = Style(color=c("error", "#ff6b6b"), bold=True,
                                bgcolor=Color.parse(c("background", "#11151c"))
                                .blend(Color.parse(c("error", "#ff6b6b")), 0.2).hex6)
        self.selected = Style(bgcolor=c("selection", "#2c3a4f"))
        self.rule = Style(color=c("panel", "#232b37") if not dark else c("status-pending",
                                                                            "#8b95a5"), dim=True)
        self.tier = {n: Style(color=c(f"tier-{n}", "#f0c25e"), bold=True) for n in range(1, 5)}
        self.status = {
            "awaiting": Style(color=c("tier-3", "#f0c25e"), bold=True),
            "allowed": Style(color=c("status-running", "#4ea1ff")),
            "running": Style(color=c("status-running", "#4ea1ff")),
            "ok": Style(color=c("status-ok", "#5fd77f")),
            "passed": Style(color=c("status-ok", "#5fd77f")),
            "completed": Style(color=c("status-ok", "#5fd77f"), bold=True),
            "failed": Style(color=c("status-failed", "#ff6b6b"), bold=True),
            "denied": Style(color=c("status-denied", "#ff8f5f")),
            "cancelled": Style(color=c("status-denied", "#ff8f5f"), bold=True),
            "pending": Style(color=c("status-pending", "#8b95a5")),
            "idle": Style(color=c("status-pending", "#8b95a5")),
        }
        self.diff_add = Style(color=c("diff-add", "#5fd77f"))
        self.diff_remove = Style(color=c("diff-remove", "#ff6b6b"))
        self.diff_hunk = Style(color=c("diff-hunk", "#8a7dff"))
        self.level = {"info": self.text, "warning": self.warning, "error": self.error_line}

    def tier_style(self, tier: int) -> Style:
        """The style of a permission tier (clamped to 1–4)."""
        return self.tier[min(max(tier, 1), 4)]

    def status_style(self, status: str) -> Style:
        """The style of a run, call or check status."""
        return self.status.get(status, self.text)


_cache: dict[tuple[int, str], Palette] = {}


def palette_for(app: Any) -> Palette:
    """The palette of `app`'s current theme (cached per app and theme)."""
    key = (id(app), app.theme)
    palette = _cache.get(key)
    if palette is None:
        variables = dict(getattr(app, "theme_variables", None) or app.get_css_variables())
        theme = app.current_theme
        palette = _cache[key] = Palette(variables, theme.dark)
        if len(_cache) > 32:
            _cache.pop(next(iter(_cache)))
    return palette
