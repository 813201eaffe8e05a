"""Keys that tell the truth: every label comes from the active bindings, a hint is shown only when
its key does something, `a` on an ungrantable call says why, replay shows no answer keys, and the
help lists every key once."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text
from support.event_loop import run
from support.journals import fixture_events, write
from support.live_app import gated, make_app, pending, settle, turn
from support.pilot import until_shown
from support.replay_app import opened
from support.user_config import write_config
from textual.widgets import Static

from cockpit.keys import KEYS, help_rows, key_label, unknown_keymap_ids
from cockpit.replay import ReplayApp
from cockpit.screens import HelpScreen


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _keymap(tmp_path, text: str) -> None:
    write_config(tmp_path, f"[keymap]\n{text}")


def plain(widget) -> str:
    shown = widget.render()
    return shown.plain if isinstance(shown, Text) else str(shown)


def test_remapped_keys_are_named_as_remapped_in_the_bar_the_hints_and_the_end_panel(tmp_path):
    _keymap(tmp_path, 'approve = "Y"\napprove-always = "A"\ndeny = "x"\nquit = "ctrl+x"\n'
                      'compose = "f5"\n')

    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}),
                       next_steps=lambda text: [])
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            keys = plain(app.query_one("#approval-keys"))
            assert "[Y] allow once" in keys and "[A] always allow" in keys and "[x] deny" in keys
            assert "[y]" not in keys and "[n]" not in keys
            assert "[A] always allow shell `git status …`" in plain(
                app.query_one("#approval-always"))
            hints = plain(app.query_one("#keys"))
            assert "Y allow once" in hints and "A always allow" in hints and "x deny" in hints
            assert "^x quit" in hints
            await pilot.press("x", "enter")  # x asks for a reason; enter denies without one
            await settle(pilot, lambda: app.session.done)
            await pilot.pause()
            end_keys = plain(app.query_one("#end-keys"))
            assert "^x quits" in end_keys
            assert "f5" in end_keys  # the message box's key, as remapped
    run(main())


def test_unknown_keymap_ids_are_reported_at_start(tmp_path):
    _keymap(tmp_path, 'aprove = "Y"\npalette = "ctrl+o"\nreplay-play = "p"\n')

    async def main():
        app = make_app(turn(1))
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(message)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: app.session.done)
        problems = [m for m in said if "[keymap]" in m]
        assert any("'aprove'" in m for m in problems)
        assert any("'palette'" in m and "Textual" in m for m in problems)
        assert not any("replay-play" in m for m in problems)  # a replay key is known
    run(main())


def test_unknown_keymap_ids_function():
    assert unknown_keymap_ids({"approve": "Y"}) == []
    assert "'nope'" in unknown_keymap_ids({"nope": "x"})[0]


def test_a_shows_only_when_the_call_can_be_granted_and_says_why_when_not():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "ls | wc -l"}),
                       gated("c2", "shell", {"command": "git status"}))
        said: list[str] = []
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            original = app.notify
            app.notify = lambda message, **kw: (said.append(message), original(message, **kw))
            assert "always" not in plain(app.query_one("#keys"))
            assert "[a]" not in plain(app.query_one("#approval-keys"))
            await pilot.press("a")
            await pilot.pause()
            assert pending(app) == ["c1"]  # nothing was answered
            assert any("cannot be granted" in m and "y allows it once" in m for m in said)
            await pilot.press("y")
            await settle(pilot, lambda: pending(app) == ["c2"])
            await pilot.pause()
            assert "a always allow" in plain(app.query_one("#keys"))
            assert "[a] always allow" in plain(app.query_one("#approval-keys"))
            await pilot.press("a")  # the scope step; `a` again: this session
            await pilot.pause()
            hints = plain(app.query_one("#keys"))
            assert "always allow" not in hints  # as the bar: the scope keys say where
            assert "s this session" in hints and "esc back" in hints
            await pilot.press("a")
            await settle(pilot, lambda: app.session.done)
            assert [g.prefix for g in app.view.grants] == ["git status"]
    run(main())


def test_hints_leave_out_keys_that_do_nothing_now():
    async def main():
        app = make_app(turn(1))
        async with app.run_test(size=(160, 30)) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.pause()
            hints = plain(app.query_one("#keys"))
            for gone in ("allow once", "deny", "cancel run", "checks & grants", "more below"):
                assert gone not in hints
            assert "^q quit" in hints and "? help" in hints and "^p palette" in hints
    run(main())


def test_replays_approval_bar_shows_no_answer_keys(tmp_path):
    path = tmp_path / "run.jsonl"
    write(path, fixture_events())

    async def main():
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 34)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("right_curly_bracket")  # the next approval request
            screen = app.replay_screen
            await until_shown(pilot, lambda: screen.query_one("#approval").approval_id is not None)
            await pilot.pause()
            keys = plain(screen.query_one("#approval-keys"))
            assert "[y]" not in keys and "[n]" not in keys and "[a]" not in keys
            assert "recorded request" in keys
            always = plain(screen.query_one("#approval-always"))
            assert not always.startswith("[a]")
            hints = plain(screen.query_one("KeyHints"))
            assert "allow once" not in hints and "deny" not in hints
            await pilot.press("q")
            await until_shown(pilot, lambda: not app.is_running)

    asyncio.run(main())


def _keys_of(rows):
    # "q/ctrl+q" is two keys; "/" alone is the slash key.
    return Counter(key for _, shown, _ in rows for key in re.split(r"(?<=.)/(?=.)", shown))


def test_help_lists_every_binding_once_textuals_own_included():
    rows = help_rows(["app", "general", "transcript"])
    keys = _keys_of(rows)
    assert max(keys.values()) == 1, keys
    for key in ("ctrl+p", "tab", "shift+tab", "ctrl+c", "y", "a", "n", "esc", "ctrl+q", "?",
                "v", "shift+down", "shift+up", "↑", "↓", "home", "end", "pgup", "pgdn", "⏎",
                "i"):
        assert key in keys, key
    wanted = {spec.id for spec in KEYS if spec.scope in ("app", "general", "transcript")}
    # every binding of those scopes has its row, but esc is one key: "cancel run" (and, after
    # `a`, "back" to the approval) shares the row
    assert len(rows) == len(wanted) - 1


def test_replays_help_lists_each_key_once():
    rows = help_rows(["replay", "general", "transcript"])
    keys = _keys_of(rows)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    assert any(shown == "q/ctrl+q" for _, shown, _ in rows)  # one action, one row


def test_the_help_screen_shows_keys_as_the_app_does_remapped_ones_as_bound(tmp_path):
    _keymap(tmp_path, 'approve = "Y"\ndeny = "x"\n')

    async def main():
        app = make_app(turn(1))
        async with app.run_test(size=(120, 50)) as pilot:
            await settle(pilot, lambda: app.session.done)
            await pilot.press("question_mark")
            await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
            table = next(w.content for w in app.screen.query(Static)
                         if isinstance(w.content, Table))  # what the screen shows
            console = Console(width=110, record=True)
            console.print(table)
            out = console.export_text()
            assert "^q" in out and "^p" in out and "tab" in out and "shift+↓" in out
            rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
            assert "allow" in rows["Y"].lower() and "deny" in rows["x"].lower()
            assert "y" not in rows and "n" not in rows  # the unbound defaults are not listed
            await pilot.press("escape")
    run(main())


def test_key_label_names_the_remapped_key():
    class Fake:
        def __init__(self) -> None:
            self.config = type("Config", (), {})()
            self.config.keymap = {"approve": "Y,ctrl+y"}

    assert key_label(Fake(), "approve") == "Y/ctrl+y"
    assert key_label(Fake(), "cancel") == "esc"


def test_every_binding_is_in_the_one_table_without_importing_anything_else():
    """The keys table is the only registration: a fresh interpreter that imports nothing but
    `cockpit.keys` knows the message box's, the question's and the replay viewer's keys."""
    import subprocess
    import sys

    code = ("import sys\nfrom cockpit.keys import KEYS\n"
            "print(sorted({k.scope for k in KEYS}))\n"
            "print(sorted(m for m in sys.modules if m.startswith('cockpit.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == str(sorted({"app", "general", "transcript", "pager", "pager-text", "grants",
                                 "steer", "composer", "queue", "question", "replay", "picker",
                                 "fleet"}))
    assert out[1] == "['cockpit.keys']"
