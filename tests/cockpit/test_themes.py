"""Themes as data files: the shipped three, a user's own, the remembered choice, `--theme`."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import make_app, settle, turn

from cockpit.config import load_config, save_theme
from cockpit.styles import Palette
from cockpit.themes import (
    DEFAULT_THEME,
    VARIABLE_DEFAULTS,
    ThemeError,
    builtin_theme_dir,
    load_theme_file,
    load_themes,
    user_theme_dir,
)
from cockpit.widgets import Transcript


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def test_three_shipped_themes_with_every_variable():
    themes = load_themes()
    assert {"cockpit-dark", "cockpit-light", "cockpit-high-contrast"} <= set(themes)
    assert DEFAULT_THEME == "cockpit-dark" and themes["cockpit-dark"].dark
    assert not themes["cockpit-light"].dark
    for path in builtin_theme_dir().glob("*.toml"):
        theme = load_theme_file(path)
        assert set(VARIABLE_DEFAULTS) <= set(theme.variables), path


def test_a_user_theme_dropped_in_the_config_dir_is_loaded_and_selectable():
    user_theme_dir().mkdir(parents=True)
    (user_theme_dir() / "mine.toml").write_text(
        'name = "mine"\ndark = false\n[colors]\nprimary = "#ff00aa"\n'
        '[variables]\ntier-4 = "#123456"\n', encoding="utf-8")
    themes = load_themes()
    assert themes["mine"].variables["tier-4"] == "#123456"
    assert themes["mine"].variables["tier-1"] == VARIABLE_DEFAULTS["tier-1"]

    async def main():
        app = make_app(turn(1), theme="mine")
        async with app.run_test() as pilot:
            await settle(pilot, lambda: app.session.done)
            assert app.theme == "mine"
    run(main())


def test_broken_theme_files_are_reported_not_fatal():
    user_theme_dir().mkdir(parents=True)
    (user_theme_dir() / "bad.toml").write_text("name = [", encoding="utf-8")
    (user_theme_dir() / "nocolor.toml").write_text('name = "x"\n[colors]\nprimary = "nope"\n',
                                                    encoding="utf-8")
    errors: list[str] = []
    themes = load_themes(errors)
    assert "cockpit-dark" in themes and len(errors) == 2
    assert any("bad.toml" in e for e in errors) and any("nocolor.toml" in e for e in errors)
    with pytest.raises(ThemeError, match="primary"):
        (user_theme_dir() / "empty.toml").write_text('name = "e"\n', encoding="utf-8")
        load_theme_file(user_theme_dir() / "empty.toml")


def test_colour_defaults_live_in_the_theme_model_alone():
    # The shipped default theme says the same as the defaults (it is the file users copy).
    assert load_themes()[DEFAULT_THEME].variables == VARIABLE_DEFAULTS
    # A Textual theme knows none of the cockpit's variables: the palette takes the defaults.
    from textual.theme import BUILTIN_THEMES

    palette = Palette(BUILTIN_THEMES["textual-dark"])
    assert palette.tier_style(4).color.name == VARIABLE_DEFAULTS["tier-4"]
    assert palette.diff_add.color.name == VARIABLE_DEFAULTS["diff-add"]


BROKEN = {
    "unreadable.toml": ("name = [", "cannot read theme"),
    "not-utf8.toml": (b"name = \"\xff\"\n", "cannot read theme"),
    "no-colors.toml": ('name = "x"\n', "[colors] is missing: a theme needs at least `primary`"),
    "no-primary.toml": ('[colors]\nsecondary = "#ffffff"\n', "[colors] primary: is missing"),
    "bad-colour.toml": ('[colors]\nprimary = "nope"\n', "[colors] primary: 'nope' is not a colour"),
    "unknown-colour.toml": ('[colors]\nprimary = "#fff"\nprimery = "#fff"\n',
                            "[colors] primery: is not a known key (known: primary, secondary"),
    "bad-variable.toml": ('[colors]\nprimary = "#fff"\n[variables]\ntier-1 = "blue-ish"\n',
                          "[variables] tier-1: 'blue-ish' is not a colour"),
    "number-variable.toml": ('[colors]\nprimary = "#fff"\n[variables]\ntier-2 = 3\n',
                             "[variables] tier-2: Input should be a valid string"),
    "bad-other-variable.toml": ('[colors]\nprimary = "#fff"\n[variables]\nfooter-key = "x"\n',
                                "footer-key: 'x' is not a colour"),
    "bad-dark.toml": ('dark = "maybe"\n[colors]\nprimary = "#fff"\n', "dark: Input should be"),
    "blank-name.toml": ('name = "  "\n[colors]\nprimary = "#fff"\n', "name: String should"),
    "unknown-section.toml": ('[colours]\nprimary = "#fff"\n',
                             "colours: is not a known key (known: name, dark, colors, variables)"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_theme_file_is_reported_with_what_is_wrong_and_skipped(name):
    content, problem = BROKEN[name]
    user_theme_dir().mkdir(parents=True)
    path = user_theme_dir() / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    (user_theme_dir() / "fine.toml").write_text('[colors]\nprimary = "#ff00aa"\n',
                                                encoding="utf-8")
    errors: list[str] = []
    themes = load_themes(errors)
    assert len(errors) == 1 and errors[0].startswith(f"{path}: ") and problem in errors[0], errors
    assert "\n" not in errors[0]
    assert "fine" in themes and DEFAULT_THEME in themes  # the rest still load
    assert path.stem not in themes


def test_the_replay_viewer_reports_broken_theme_files_too(tmp_path):
    from cockpit.replay import ReplayApp

    user_theme_dir().mkdir(parents=True)
    (user_theme_dir() / "bad.toml").write_text('[colors]\nprimary = "nope"\n', encoding="utf-8")
    shown: list[str] = []

    class Watched(ReplayApp):
        def notify(self, message, **kwargs):
            shown.append(str(message))
            super().notify(message, **kwargs)

    async def main():
        app = Watched(journal_dir=tmp_path, remember_theme=False)
        async with app.run_test() as pilot:
            await pilot.pause()
            assert any("bad.toml" in m and "[colors] primary" in m for m in shown), shown
    run(main())


def test_unknown_theme_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown theme 'nope'; available: cockpit-dark"):
        make_app(turn(1), theme="nope")


def test_theme_choice_is_remembered_in_the_config_file():
    async def main():
        app = make_app(turn(1), theme=None, remember_theme=True)
        async with app.run_test() as pilot:
            await settle(pilot, lambda: app.session.done)
            assert app.theme == DEFAULT_THEME
            app.theme = "cockpit-light"
            await pilot.pause()
        assert load_config().theme == "cockpit-light"
        again = make_app(turn(1), theme=None)
        assert again.theme == "cockpit-light"
    run(main())


def test_switching_theme_rerenders_the_transcript_in_its_colours():
    async def main():
        app = make_app(turn(1, "hello"))
        async with app.run_test() as pilot:
            await settle(pilot, lambda: app.session.done)
            transcript = app.query_one(Transcript)
            before = transcript.render_line(1)
            app.theme = "cockpit-high-contrast"
            await pilot.pause()
            assert transcript.render_line(1) != before
    run(main())


def test_the_command_palette_offers_each_theme():
    async def main():
        app = make_app(turn(1))
        async with app.run_test() as pilot:
            await settle(pilot, lambda: app.session.done)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert {"Theme: cockpit-dark", "Theme: cockpit-light",
                    "Theme: cockpit-high-contrast"} <= set(titles)
            command = next(c for c in app.get_system_commands(app.screen)
                           if c.title == "Theme: cockpit-light")
            command.callback()
            assert app.theme == "cockpit-light"
    run(main())


def test_config_keeps_unknown_keys_and_survives_a_broken_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('theme = "a"\nother = 3\n[keymap]\napprove = "Y"\n', encoding="utf-8")
    assert save_theme("b", path) is None
    config = load_config(path)
    assert config.theme == "b" and config.keymap == {"approve": "Y"}
    assert "other = 3" in path.read_text(encoding="utf-8")
    path.write_text("theme = [", encoding="utf-8")
    assert load_config(path).error and load_config(path).theme is None


@pytest.mark.parametrize("name", ["cockpit-light", "cockpit-dark", "cockpit-high-contrast"])
@pytest.mark.parametrize("reply", ["use `ls -l` here", "**bold** and `code`", "- a `b` item",
                                   "| h |\n|---|\n| `c` |", "```py\nx = 1\n```"])
def test_code_in_a_reply_is_drawn_in_the_themes_colours(name, reply) -> None:
    """Issue 26 §4: Rich's default inline code is "bold cyan on black", a black bar on the
    light theme; the transcript draws code on the theme's panel, fences in a matching style."""
    from rich.color import Color
    from rich.console import Console

    from cockpit.widgets.transcript.rows import markdown, wrapped

    theme = load_themes()[name]
    palette = Palette(theme)
    code = [seg for strip in wrapped(Console(width=80), markdown(reply, palette), 80)
            for seg in strip if seg.text.strip() in ("ls -l", "code", "b", "c", "x")]
    assert code, reply
    for segment in code:
        background = segment.style.bgcolor if segment.style else None
        assert background is not None, segment
        triplet = background.get_truecolor()
        luminance = (0.2126 * triplet.red + 0.7152 * triplet.green + 0.0722 * triplet.blue) / 255
        page = Color.parse(theme.background).get_truecolor()
        page_luminance = (0.2126 * page.red + 0.7152 * page.green + 0.0722 * page.blue) / 255
        assert abs(luminance - page_luminance) < 0.35, (name, segment)  # same kind as the page
