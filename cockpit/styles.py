"""The Rich styles of the current theme (`Palette`): tier, status, diff and text colours.

Line-API widgets build `Strip`s from Rich styles rather than CSS, so they ask here; the result
is cached per theme and rebuilt when the theme changes. Colours come from the theme's variables
as Textual computes them; a cockpit variable a theme cannot give falls back to its default in
`cockpit.themes.VARIABLE_DEFAULTS`, the one place those are written down.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from cockpit.themes import VARIABLE_DEFAULTS

__all__ = ["Palette", "palette_for", "theme_variables"]


def theme_variables(theme: Theme) -> dict[str, str]:
    """Every variable of `theme` as a cockpit app sees it: Textual's colour system, the theme's
    own variables, and the cockpit's defaults for any it leaves out."""
    return {**VARIABLE_DEFAULTS, **theme.to_color_system().generate(), **theme.variables}


class Palette:
    """Named Rich styles for one theme."""

    def __init__(self, theme: Theme) -> None:
        variables = theme_variables(theme)

        def c(name: str) -> str:
            try:
                return Color.parse(variables[name]).hex6
            except ColorParseError:  # a Textual theme may give "auto 87%" for a cockpit name
                return VARIABLE_DEFAULTS[name]

        dark = self.dark = theme.dark
        fg = c("foreground")
        self.text = Style(color=fg)
        self.dim = Style(color=c("status-pending"))
        self.thought = Style(color=c("thought"), italic=True)
        self.primary = Style(color=c("primary"), bold=True)
        self.accent = Style(color=c("accent"))
        self.success = Style(color=c("success"))
        self.warning = Style(color=c("warning"))
        self.error = Style(color=c("error"), bold=True)
        self.error_line = Style(color=c("error"), bold=True,
                                bgcolor=Color.parse(c("background"))
                                .blend(Color.parse(c("error")), 0.2).hex6)
        self.selected = Style(bgcolor=c("selection"))
        self.rule = Style(color=c("status-pending") if dark else c("panel"), dim=True)
        self.tier = {n: Style(color=c(f"tier-{n}"), bold=True) for n in range(1, 5)}
        self.status = {
            "awaiting": Style(color=c("tier-3"), bold=True),
            "allowed": Style(color=c("status-running")),
            "running": Style(color=c("status-running")),
            "ok": Style(color=c("status-ok")),
            "passed": Style(color=c("status-ok")),
            "completed": Style(color=c("status-ok"), bold=True),
            "failed": Style(color=c("status-failed"), bold=True),
            "denied": Style(color=c("status-denied")),
            "cancelled": Style(color=c("status-denied"), bold=True),
            "pending": Style(color=c("status-pending")),
            "idle": Style(color=c("status-pending")),
        }
        self.diff_add = Style(color=c("diff-add"))
        self.diff_remove = Style(color=c("diff-remove"))
        self.diff_hunk = Style(color=c("diff-hunk"))
        # Code in a reply on a light theme: on the theme's own panel colour (Rich's default,
        # "bold cyan on black", is a black bar there), fenced blocks in a light Pygments style.
        # Dark themes keep Rich's own, which suit them.
        self.code: Style | None = None if dark else Style(color=c("accent"), bgcolor=c("panel"),
                                                          bold=True)
        self.code_theme = "monokai" if dark else "default"
        self.level = {"info": self.text, "warning": self.warning, "error": self.error_line}

    def tier_style(self, tier: int) -> Style:
        """The style of a permission tier (clamped to 1–4)."""
        return self.tier[min(max(tier, 1), 4)]

    def status_style(self, status: str) -> Style:
        """The style of a run, call or check status."""
        return self.status.get(status, self.text)


_cache: dict[tuple[int, str], Palette] = {}


def palette_for(app: App[Any]) -> Palette:
    """The palette of `app`'s current theme (cached per app and theme)."""
    key = (id(app), app.theme)
    palette = _cache.get(key)
    if palette is None:
        palette = _cache[key] = Palette(app.current_theme)
        if len(_cache) > 32:
            _cache.pop(next(iter(_cache)))
    return palette
