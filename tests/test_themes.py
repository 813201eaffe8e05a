"""Themes as data files: the shipped three, a user's own, the remembered choice, `--theme`."""

from __future__ import annotations

import pytest
from conftest import run
from test_app_support import make_app, settle, turn

from cockpit.config import load_config, save_theme
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
