"""Themes as data files: one TOML file a theme, loaded into Textual `Theme`s.

Where themes come from, later ones winning on a name clash:

1. the shipped themes: the checkout's top-level `themes/` when it exists (a development
   install), else `cockpit/_themes/` (where the wheel carries them);
2. the user's themes: `*.toml` in `cockpit.paths.config_dir() / "themes"`.

A theme file holds `name`, `dark`, Textual's base colours under `[colors]` and the cockpit's own
variables under `[variables]` (`tier-1` … `tier-4`, `status-*`, `diff-*`, `thought`,
`selection`); any variable it leaves out falls back to `VARIABLE_DEFAULTS`, so a user theme can
be as small as a name and a primary colour.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.color import Color
from textual.theme import Theme

from .paths import config_dir

__all__ = [
    "DEFAULT_THEME",
    "VARIABLE_DEFAULTS",
    "ThemeError",
    "builtin_theme_dir",
    "load_theme_file",
    "load_themes",
    "user_theme_dir",
]

DEFAULT_THEME = "cockpit-dark"

# The cockpit's own theme variables (used in the stylesheet and for tier/status colours).
VARIABLE_DEFAULTS: dict[str, str] = {
    "tier-1": "#7fb8ff",
    "tier-2": "#5fd7af",
    "tier-3": "#f0c25e",
    "tier-4": "#ff5f87",
    "status-running": "#4ea1ff",
    "status-ok": "#5fd77f",
    "status-failed": "#ff6b6b",
    "status-pending": "#8b95a5",
    "status-denied": "#ff8f5f",
    "thought": "#7d8799",
    "diff-add": "#5fd77f",
    "diff-remove": "#ff6b6b",
    "diff-hunk": "#8a7dff",
    "selection": "#2c3a4f",
}

_COLOR_KEYS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
               "boost", "success", "warning", "error")


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class _Source:
    theme: Theme
    path: Path


def builtin_theme_dir() -> Path:
    """The shipped themes: the checkout's `themes/`, else the wheel's `cockpit/_themes/`."""
    package = Path(__file__).resolve().parent
    checkout = package.parent / "themes"
    return checkout if checkout.is_dir() else package / "_themes"


def user_theme_dir() -> Path:
    """Where a user drops their own theme files."""
    return config_dir() / "themes"


def load_theme_file(path: Path) -> Theme:
    """Read one theme file. Raises `ThemeError` with the file name and what is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ThemeError(f"{path}: cannot read theme: {exc}") from exc
    name = data.get("name") or path.stem
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"{path}: `name` must be a non-empty string")
    colors = data.get("colors", {})
    variables = data.get("variables", {})
    if not isinstance(colors, dict) or not isinstance(variables, dict):
        raise ThemeError(f"{path}: [colors] and [variables] must be tables")
    unknown = set(colors) - set(_COLOR_KEYS)
    if unknown:
        raise ThemeError(f"{path}: unknown colour(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(_COLOR_KEYS)}")
    if "primary" not in colors:
        raise ThemeError(f"{path}: [colors] needs at least `primary`")
    bad = [key for key, value in {**colors, **variables}.items() if not isinstance(value, str)]
    if bad:
        raise ThemeError(f"{path}: colour values must be strings: {', '.join(bad)}")
    for key, value in {**colors, **variables}.items():
        try:
            Color.parse(value)
        except Exception as exc:
            raise ThemeError(f"{path}: bad colour for {key!r}: {exc}") from exc
    return Theme(name=name.strip(), dark=bool(data.get("dark", True)),
                 variables={**VARIABLE_DEFAULTS, **variables}, **colors)


def _load_dir(directory: Path, errors: list[str]) -> list[Theme]:
    if not directory.is_dir():
        return []
    themes = []
    for path in sorted(directory.glob("*.toml")):
        try:
            themes.append(load_theme_file(path))
        except ThemeError as exc:  # one broken user file must not stop the cockpit
            errors.append(str(exc))
    return themes


def load_themes(errors: list[str] | None = None) -> dict[str, Theme]:
    """All themes by name: shipped ones, then the user's. Broken files are reported in
    `errors` (when given) and skipped."""
    sink = errors if errors is not None else []
    themes: dict[str, Theme] = {}
    for theme in _load_dir(builtin_theme_dir(), sink) + _load_dir(user_theme_dir(), sink):
        themes[theme.name] = theme
    return themes
