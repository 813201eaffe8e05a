"""`config.toml` is never lost: picking a theme edits the file in place (comments, layout and
every other setting kept), a file that does not read is never written (the theme holds for the
session only, and the human is told why), the write is atomic and keeps the file's mode and its
symbolic link; every command that reads the config says once, on stderr, when it is broken,
with the file, the line and what to do."""

from __future__ import annotations

import os
import stat
import sys
import tomllib
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_loop import run
from support.live_app import make_app, settle, turn
from typer.testing import CliRunner

from cockpit.cli.main import app as cli
from cockpit.config import config_path, load_config, save_theme

KEPT = [  # valid files, each with comments and settings that must survive a theme change
    '# my settings\ntheme = "cockpit-dark"  # the one I like\n\n[keymap]\n# keys\n'
    'approve = "Y"\n',
    '[providers.ollama]  # local\nbase_url = "http://localhost:11434/v1"\n'
    'context_window = 32768\n\n[models."gpt-4.1-mini"]\ninput_price = 0.4\n',
    '[notify]\nbell = ["approval", "failed"]  # not done\n# trailing comment\n',
    'a.b.c = 1  # dotted\n[[servers]]\nname = "one"\n[[servers]]\nname = "two"\n',
    'text = """\nmulti\nline # not a comment\n"""\n[sandbox]\nmode = "read-only"\n',
    'inline = { x = 1, y = [1, 2] }  # inline table\n',
    '# only a comment\n',
    '',
    'theme = "old"\r\n# windows line ends\r\n[keymap]\r\ndeny = "N"\r\n',
    '"ключ" = "значение"  # unicode\n[keymap]\n"ctrl+x" = "q"\n',
    '\n\n\n# blank lines first\n\n[sandbox]\n\nnetwork = false\n',
]

BROKEN = [  # files that do not read: each must be left exactly as it is
    b'theme = "a"\n[keymap]\napprove = \n',
    b'theme = [\n',
    b'theme = "a"\ntheme = "b"\n',  # a duplicate key
    b'[keymap]\n[keymap]\n',  # a duplicate table
    b'x = "\xff\xfe not utf-8"\n',
    b'[providers.x\nbase_url = "h"\n',
    b'x = 1 y = 2\n',
    b'\xef\xbb\xbf\x00\x00',
    b'key = "unterminated\n',
    b'[theme]\nname = "a"\n',  # `theme` is a table: setting it would drop the table
    b'theme = 3\n',
]


def _comments(text: str) -> list[str]:
    return [line[line.index("#"):].strip() for line in text.splitlines()
            if "#" in line and "not a comment" not in line]


@pytest.mark.parametrize("text", KEPT, ids=range(len(KEPT)))
def test_a_theme_change_keeps_every_setting_comment_and_line(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_bytes(text.encode("utf-8"))
    before = tomllib.loads(text)
    assert save_theme("cockpit-light", path) is None
    after = path.read_text(encoding="utf-8")
    assert tomllib.loads(after) == {**before, "theme": "cockpit-light"}
    assert _comments(after) == _comments(text)
    # Every other line as it was (a blank line may separate the new key from a table).
    def others(lines: str) -> list[str]:
        return [line for line in lines.splitlines() if line and not line.startswith("theme =")]
    assert others(after) == others(text)


@pytest.mark.parametrize("content", BROKEN, ids=range(len(BROKEN)))
def test_a_file_that_does_not_read_is_never_written(tmp_path, content):
    path = tmp_path / "config.toml"
    path.write_bytes(content)
    error = save_theme("cockpit-light", path)
    assert error is not None and str(path) in error
    assert "this session only" in error
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no stray temp file


_keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                max_size=8).filter(lambda k: k != "theme")
_scalars = st.one_of(st.integers(-10**6, 10**6), st.booleans(),
                     st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]),
                             max_size=12),
                     st.lists(st.integers(0, 9), max_size=3))
_documents = st.dictionaries(_keys, st.one_of(_scalars, st.dictionaries(_keys, _scalars,
                                                                      max_size=3)),
                             max_size=5)


_comment = st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs", "Zl", "Zp"]),
                   max_size=20)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=_documents, comment=_comment, theme=st.sampled_from(["", "x", "a\"b", "é"]))
def test_any_document_reads_back_the_same_but_the_theme(tmp_path, raw, comment, theme):
    path = tmp_path / "config.toml"
    document = tomlkit.document()
    document.add(tomlkit.comment(comment))
    for key, value in raw.items():
        document[key] = value
    text = tomlkit.dumps(document)
    path.write_text(text, encoding="utf-8")
    before = tomllib.loads(text)
    assert save_theme(theme or "t", path) is None
    after = path.read_text(encoding="utf-8")
    assert tomllib.loads(after) == {**before, "theme": theme or "t"}
    assert after.startswith(text.split("\n", 1)[0])  # the comment is where it was


def test_the_write_keeps_the_files_mode_and_its_symbolic_link(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "cockpit.toml"
    real.write_text('# mine\n[keymap]\napprove = "Y"\n', encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    assert save_theme("cockpit-light", link) is None
    assert link.is_symlink() and link.resolve() == real
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert real.read_text(encoding="utf-8").startswith("# mine\n")
    assert load_config(link).theme == "cockpit-light"
    assert sorted(p.name for p in dotfiles.iterdir()) == ["cockpit.toml"]


def test_a_new_file_is_the_owners_only_and_made_with_its_folder(tmp_path):
    path = tmp_path / "new" / "config.toml"
    assert save_theme("cockpit-light", path) is None
    assert path.read_text(encoding="utf-8") == 'theme = "cockpit-light"\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() == 0 and sys.platform != "linux", reason="permissions")
def test_a_folder_that_cannot_be_written_is_an_error_and_the_file_stays(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('theme = "a"  # mine\n', encoding="utf-8")
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    error = save_theme("b", blocker / "config.toml")
    assert error is not None and "this session only" in error
    assert path.read_text(encoding="utf-8") == 'theme = "a"  # mine\n'


def test_the_broken_file_is_named_with_its_line_and_what_to_do(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('theme = "a"\n[keymap]\napprove = \n', encoding="utf-8")
    error = load_config(path).error
    assert error is not None
    assert error.startswith(f"{path}: line 3, column ")
    assert "fix it" in error and "defaults apply" in error


# Every command that reads the config says it is broken: once, on stderr ----------------------

BROKEN_CONFIG = '# mine\n[sandbox]\nmode = "read-only"\n[providers.x\n'


def _write_broken(home: Path) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(BROKEN_CONFIG, encoding="utf-8")
    return path


@pytest.mark.parametrize("args", [
    ["demo", "--headless", "--speed", "0", "--auto-approve"],
    ["run", "hello", "--model", "nope:x", "--headless"],
    ["models", "--base-url", "http://127.0.0.1:9/v1"],
    ["replay", "/nonexistent/journal.jsonl"],
], ids=["demo", "run-model", "models", "replay"])
def test_a_broken_config_is_said_once_on_stderr(tmp_path, monkeypatch, args):
    home = tmp_path / "home"
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    monkeypatch.setenv("COCKPIT_SANDBOX", "off")
    path = _write_broken(home)
    result = CliRunner().invoke(cli, args)
    said = f"cockpit: warning: {path}: line 4, column "
    assert result.stderr.count(said) == 1, result.stderr
    assert "fix it" in result.stderr and "Traceback" not in result.output
    assert path.read_text(encoding="utf-8") == BROKEN_CONFIG


def test_picking_a_theme_over_a_broken_config_keeps_it_for_the_session_and_says_why(
        tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    path = _write_broken(tmp_path / "home")
    assert config_path() == path

    async def main():
        app = make_app(turn(1), theme=None, remember_theme=True)
        async with app.run_test() as pilot:
            await settle(pilot, lambda: app.session.done)
            app.theme = "cockpit-light"
            await pilot.pause()
            assert app.theme == "cockpit-light"
            said = [n.message for n in app._notifications]
            assert any("this session only" in m and str(path) in m for m in said), said
    run(main())
    assert path.read_text(encoding="utf-8") == BROKEN_CONFIG
