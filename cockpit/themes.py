"""Themes as data files: the pydantic model a TOML theme file must fit, and loading them into
Textual `Theme`s.

Where themes come from, later ones winning on a name clash:

1. the shipped themes: the checkout's top-level `themes/` when it exists (a development
   install), else `cockpit/_themes/` (where the wheel carries them);
2. the user's themes: `*.toml` in `cockpit.paths.config_dir() / "themes"`.

A theme file (`ThemeFile`) holds `name`, `dark`, Textual's base colours under `[colors]`
(`ThemeColors`: `primary` is required, Textual derives the rest) and the cockpit's own variables
under `[variables]` (`CockpitVariables`: `tier-1` … `tier-4`, `status-*`, `diff-*`, `thought`,
`selection`). Every cockpit variable has its default in `CockpitVariables` and nowhere else, so a
user theme can be as small as a name and a primary colour. A file that does not fit is reported
(file, key, what is wrong) and skipped, never fatal.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    StringConstraints,
    ValidationError,
    model_validator,
)
from textual.color import Color, ColorParseError
from textual.theme import Theme

from cockpit.paths import config_dir

__all__ = [
    "DEFAULT_THEME",
    "VARIABLE_DEFAULTS",
    "CockpitVariables",
    "ThemeColors",
    "ThemeError",
    "ThemeFile",
    "builtin_theme_dir",
    "load_theme_file",
    "load_themes",
    "user_theme_dir",
]

DEFAULT_THEME = "cockpit-dark"


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


def _colour(value: str) -> str:
    """`value` if Textual can parse it as a colour (`#4ea1ff`, `rgb(…)`, `red`, …)."""
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"{value!r} is not a colour (e.g. \"#4ea1ff\")") from None
    return value


ColourValue = Annotated[str, AfterValidator(_colour)]


class ThemeColors(BaseModel):
    """Textual's base colours (`[colors]`): `primary` is required; Textual derives any other
    that is left out from it and `dark`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    primary: ColourValue
    secondary: ColourValue | None = None
    accent: ColourValue | None = None
    foreground: ColourValue | None = None
    background: ColourValue | None = None
    surface: ColourValue | None = None
    panel: ColourValue | None = None
    boost: ColourValue | None = None
    success: ColourValue | None = None
    warning: ColourValue | None = None
    error: ColourValue | None = None


class CockpitVariables(BaseModel):
    """The cockpit's own theme variables (`[variables]`), with their defaults: the one place
    they are written down. Other Textual variables may be given too; each must be a colour."""

    # Written as in the file (`tier-1`); any other Textual variable is kept as given.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True,
                              alias_generator=lambda field: field.replace("_", "-"))

    tier_1: ColourValue = "#7fb8ff"  # tier 1 (read-only) calls
    tier_2: ColourValue = "#5fd7af"  # tier 2 (workspace writes)
    tier_3: ColourValue = "#f0c25e"  # tier 3 (asks) and calls awaiting approval
    tier_4: ColourValue = "#ff5f87"  # tier 4 (destructive)
    status_running: ColourValue = "#4ea1ff"  # a running run or call
    status_ok: ColourValue = "#5fd77f"  # completed runs, ok calls, passed checks
    status_failed: ColourValue = "#ff6b6b"  # failed runs, calls and checks
    status_pending: ColourValue = "#8b95a5"  # pending and idle; dim text
    status_denied: ColourValue = "#ff8f5f"  # denied calls, cancelled runs
    thought: ColourValue = "#7d8799"  # the agent's thoughts
    diff_add: ColourValue = "#5fd77f"  # added diff lines
    diff_remove: ColourValue = "#ff6b6b"  # removed diff lines
    diff_hunk: ColourValue = "#8a7dff"  # diff hunk headers
    selection: ColourValue = "#2c3a4f"  # the selected transcript item

    @model_validator(mode="after")
    def _other_variables_are_colours(self) -> CockpitVariables:
        for name, value in (self.model_extra or {}).items():
            try:
                if not isinstance(value, str):
                    raise ValueError(f"a colour must be a string, not {value!r}")
                _colour(value)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return self


VARIABLE_DEFAULTS: dict[str, str] = CockpitVariables().model_dump(by_alias=True)


class ThemeFile(BaseModel):
    """One theme file as written: `name`, `dark`, `[colors]`, `[variables]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] | None = None
    dark: bool = True
    colors: ThemeColors
    variables: CockpitVariables = CockpitVariables()

    def to_textual(self, fallback_name: str) -> Theme:
        """The Textual `Theme`: every cockpit variable present (defaults filled in)."""
        return Theme(name=self.name or fallback_name, dark=self.dark,
                     variables=self.variables.model_dump(by_alias=True),
                     **self.colors.model_dump(exclude_none=True))


def _problem(error: Any) -> str:
    """One pydantic error as a reader of the TOML file would say it."""
    loc = [str(part) for part in error["loc"]]
    if error["type"] == "missing" and loc == ["colors"]:
        return "[colors] is missing: a theme needs at least `primary`"
    section = f"[{loc[0]}]" if loc[:1] in (["colors"], ["variables"]) else ".".join(loc[:1])
    where = " ".join([section, *loc[1:]]).strip()
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "missing":
        message = "is missing"
    elif error["type"] == "extra_forbidden":
        known = ThemeColors.model_fields if loc[:1] == ["colors"] else ThemeFile.model_fields
        message = f"is not a known key (known: {', '.join(known)})"
    return f"{where}: {message}" if where else message


def builtin_theme_dir() -> Path:
    """The shipped themes: the checkout's `themes/`, else the wheel's `cockpit/_themes/`."""
    package = Path(__file__).resolve().parent
    checkout = package.parent / "themes"
    return checkout if checkout.is_dir() else package / "_themes"


def user_theme_dir() -> Path:
    """Where a user drops their own theme files."""
    return config_dir() / "themes"


def load_theme_file(path: Path) -> Theme:
    """Read one theme file. Raises `ThemeError` naming the file and everything wrong in it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ThemeError(f"{path}: cannot read theme: {exc}") from exc
    try:
        theme = ThemeFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise ThemeError(f"{path}: {problems}") from None
    return theme.to_textual(path.stem)


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
