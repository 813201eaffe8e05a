"""The copy key (`c` on a selected transcript item): a reply's text, a command's command line,
a change's diff go to the clipboard (Textual's OSC 52 copy: `app.clipboard` holds what was
sent), and a notice says what was copied. Hostile text is copied as it was shown (markers for
unsafe characters), and a huge item is capped and says so. Pilot tests on the live cockpit."""

from __future__ import annotations

import pytest
from support.event_loop import run
from support.live_app import DIFF, make_app, plain, settle, turn

from cockpit.widgets import Transcript
from cockpit.widgets.transcript.copying import COPY_LIMIT

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


async def _copy(app, pilot, kind, nth=0):
    transcript = app.query_one(Transcript)
    transcript.focus()
    index = [i for i, item in enumerate(app.view.items) if item.kind == kind][nth]
    transcript.select(index)
    await pilot.press("c")
    return app.clipboard


def _notices(app):
    return [str(n.message) for n in app._notifications]


REPLY = "Fixed it.\n\n```py\nx = 1\n```"
CASES = {
    "reply": ([turn(1, REPLY)], "message", REPLY, "the reply"),
    "command": ([plain("c1", "run_command", {"command": "pytest -q tests/a.py"}, "1 passed")],
                "tool", "pytest -q tests/a.py", "the command"),
    "argv": ([plain("c1", "shell", {"argv": ["git", "commit", "-m", "a b"]}, "")], "tool",
             "git commit -m 'a b'", "the command"),
    "diff": ([plain("e1", "edit", {"path": "app.py", "diff": DIFF}, "ok")], "tool", DIFF,
             "the diff"),
    "tabs kept": ([plain("c1", "run_command", {"command": "printf 'a\tb'"}, "")], "tool",
                  "printf 'a\tb'", "the command"),
    "escape marked": ([turn(1, "run \x1b[31mrm -rf ~\x1b[0m now")], "message",
                      "run ␛[31mrm -rf ~␛[0m now", "the reply"),
    "bidi marked": ([plain("c1", "run_command", {"command": "ls \u202e; rm x"}, "")], "tool",
                    "ls ⟨U+202E⟩; rm x", "the command"),
    "zero width marked": ([turn(1, "pip install re\u200bquests")], "message",
                          "pip install re⟨U+200B⟩quests", "the reply"),
    "crlf": ([turn(1, "one\r\ntwo")], "message", "one\ntwo", "the reply"),
    "read call": ([plain("r1", "read_file", {"path": "a.py"}, "print(1)")], "tool", None,
                  "the read_file call"),
}


@pytest.mark.parametrize(("steps", "kind", "expected", "what"), CASES.values(), ids=CASES.keys())
def test_c_copies_the_selected_item_and_says_so(steps, kind, expected, what):
    async def main():
        app = make_app(*steps)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            copied = await _copy(app, pilot, kind)
            if expected is not None:
                assert copied == expected
            else:
                assert "read_file" in copied and "print(1)" in copied
            assert any(n.startswith(f"copied {what} (") for n in _notices(app))
    run(main())


def test_a_huge_reply_is_capped_and_the_notice_says_how_much():
    text = "x" * (COPY_LIMIT + 5000)

    async def main():
        app = make_app(turn(1, text))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            copied = await _copy(app, pilot, "message")
            assert copied == "x" * COPY_LIMIT
            assert any(f"the first {COPY_LIMIT:,} characters (of {len(text):,})" in n
                       for n in _notices(app))
    run(main())


def test_with_nothing_selected_c_copies_nothing():
    async def main():
        app = make_app(turn(1, "hello"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            transcript = app.query_one(Transcript)
            transcript.focus()
            assert transcript.selected is None
            assert transcript.check_action("copy_item", ()) is False
            await pilot.press("c")
            assert app.clipboard == ""
    run(main())


def test_a_tool_name_with_control_characters_is_marked_in_the_notice():
    async def main():
        app = make_app(plain("r1", "read\x1b]0;pwned\x07", {"path": "a"}, "out"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            await _copy(app, pilot, "tool")
            notice = next(n for n in _notices(app) if n.startswith("copied"))
            assert "\x1b" not in notice and "\x07" not in notice and "read␛]0;pwned" in notice
    run(main())
