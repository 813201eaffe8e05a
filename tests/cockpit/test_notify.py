"""Attention: the bell, OSC 9 / 777 notifications and the window title when an approval is needed
or a run ends — configurable, skipped only when the terminal said the window has focus."""

from __future__ import annotations

import re

import pytest
from support.event_loop import run
from support.live_app import gated, make_app, pending, reply, settle, turn
from support.user_config import write_config
from textual import events
from textual.driver import Driver

from cockpit.base_app import writer_driver
from cockpit.config import load_config
from cockpit.notify import (
    POP_TITLE,
    PUSH_TITLE,
    Attention,
    NotifySettings,
    TerminalWriter,
    notification,
    parse_notify,
    title_sequence,
)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


class Recorder:
    """What the app sent to the terminal: escape sequences and bells, in order."""

    def __init__(self, app) -> None:
        self.out: list[str] = []
        app.terminal_writer.attach(self.out.append)
        app.bell = lambda: self.out.append("BEL")

    def notifications(self) -> list[str]:
        return [s for s in self.out if s.startswith(("\x1b]9;", "\x1b]777;"))]

    def titles(self) -> list[str]:
        return [s[4:-1] for s in self.out if s.startswith("\x1b]2;")]


# Settings ------------------------------------------------------------------------------------
def test_defaults_alert_only_for_approvals_and_failures():
    settings, problems = parse_notify(None)
    assert settings == NotifySettings() and not problems
    for channel in (settings.bell, settings.osc, settings.title):
        assert channel == {"approval", "failed"}


def test_each_channel_is_configurable(tmp_path):
    write_config(tmp_path, '[notify]\nbell = false\nosc = true\ntitle = ["done", "bogus"]\n'
                      'sound = 1\n')
    config = load_config()
    assert config.notify.bell == frozenset()
    assert config.notify.osc == {"approval", "question", "done", "failed"}
    assert config.notify.title == {"done"}
    assert any("bogus" in w for w in config.problems)
    assert any("sound" in w for w in config.problems)


@pytest.mark.parametrize("raw", [{"bell": "yes"}, {"bell": 3}, {"osc": [1, 2]}, "loud"])
def test_a_bad_value_falls_back_to_the_default_and_says_so(raw):
    settings, problems = parse_notify(raw)
    assert problems
    assert settings.bell == {"approval", "failed"}  # (a bad value: the default stands)


# Sequences -----------------------------------------------------------------------------------
def test_osc_9_by_default_and_777_where_that_is_the_known_form():
    assert notification("cockpit", "approval needed", env={}) == \
        "\x1b]9;cockpit: approval needed\x07"
    for env in ({"TERM": "foot"}, {"TERM": "rxvt-unicode-256color"}, {"VTE_VERSION": "7600"}):
        assert notification("cockpit", "run failed", env=env) == \
            "\x1b]777;notify;cockpit;run failed\x07"


def test_inside_tmux_the_notification_passes_through():
    sequence = notification("cockpit", "hi", env={"TMUX": "/tmp/tmux-0/default,1,0"})
    assert sequence == "\x1bPtmux;\x1b\x1b]9;cockpit: hi\x07\x1b\\"


HOSTILE = [
    "\x07", "\x1b\\", "\x1b]0;pwned\x07", "\x9c", "\x9d8;;http://x\x9c", "line\nbreak",
    "\r\x1b[2J", "\u2028", "\u202e", "\x00", "\x1b[?1049l", "\x1bP+q\x1b\\",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_cannot_end_or_inject_a_sequence(text):
    for env in ({}, {"TERM": "foot"}, {"TMUX": "x"}):
        sequence = notification("cockpit", f"approval needed: {text} tool", env=env)
        inner = sequence.removeprefix("\x1bPtmux;").removesuffix("\x1b\\")
        inner = inner.replace("\x1b\x1b", "\x1b")
        body = inner[len("\x1b]9;"):] if inner.startswith("\x1b]9;") else \
            inner[len("\x1b]777;"):]
        assert body.endswith("\x07")
        assert not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u202e]", body[:-1]), repr(sequence)
    title = title_sequence(f"⚠ {text} · cockpit")
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", title[4:-1])


def test_a_notification_never_starts_with_a_conemu_command():
    # ConEmu reads `OSC 9 ; <digit> ;` as a command (a message box, a progress bar…).
    assert notification("cockpit", "2;evil", env={}).startswith("\x1b]9;cockpit: ")


def test_a_long_text_is_capped():
    sequence = notification("cockpit", "x" * 100_000, env={})
    assert len(sequence) < 300 and sequence.endswith("…\x07")


# The decision --------------------------------------------------------------------------------
def _attention(settings=None):
    out: list[str] = []
    attention = Attention(settings or NotifySettings(), bell=lambda: out.append("BEL"),
                          write=out.append, env={})
    return attention, out


def test_a_terminal_that_sends_no_focus_reports_always_gets_the_alert():
    attention, out = _attention()
    assert attention.alert("approval", "approval needed") == ["title", "bell", "osc"]
    assert out[0] == PUSH_TITLE and out[1] == title_sequence("⚠ approval · cockpit")
    assert "BEL" in out and any(s.startswith("\x1b]9;") for s in out)


def test_focus_in_skips_the_bell_and_the_notification_and_focus_out_brings_them_back():
    attention, out = _attention()
    attention.focus(True)
    assert attention.alert("approval", "approval needed") == ["title"]
    assert "BEL" not in out
    attention.focus(False)
    assert attention.alert("failed", "run failed") == ["title", "bell", "osc"]


def test_kinds_not_configured_do_not_alert():
    attention, out = _attention()
    assert attention.alert("done", "run completed") == []
    assert out == []


def test_the_title_comes_back_and_is_restored_at_exit():
    attention, out = _attention()
    attention.alert("approval", "x")
    attention.clear()
    assert out[-1] == title_sequence("cockpit")
    attention.close()
    assert out[-1] == POP_TITLE
    attention.close()
    assert out.count(POP_TITLE) == 1


def test_no_title_change_means_nothing_to_restore():
    attention, out = _attention(NotifySettings(title=frozenset()))
    attention.alert("approval", "x")
    attention.clear()
    attention.close()
    assert PUSH_TITLE not in out and POP_TITLE not in out


def test_the_driver_hands_over_its_public_write():
    written: list[str] = []

    class Base(Driver):
        def write(self, data: str) -> None:
            written.append(data)

        def start_application_mode(self) -> None: ...
        def disable_input(self) -> None: ...
        def stop_application_mode(self) -> None: ...

    writer = TerminalWriter()
    assert not writer.attached
    cls = writer_driver(Base, writer)
    assert issubclass(cls, Base)

    async def start() -> None:
        cls(object())  # what Textual does when the app starts (in its event loop)

    run(start())
    writer("\x1b]2;x\x07")
    assert writer.attached and written == ["\x1b]2;x\x07"]


def test_the_app_uses_textuals_driver_class_wrapped():
    app = make_app(turn(1))
    assert app.driver_class.__name__.startswith("Writer")


# In the app ----------------------------------------------------------------------------------
def test_an_approval_alerts_and_answering_it_gives_the_title_back():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        record = Recorder(app)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            assert "BEL" in record.out
            assert any("approval needed: shell" in n for n in record.notifications())
            assert record.titles() == ["⚠ approval · cockpit"]
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert record.titles()[-1] == "cockpit"
            assert len(record.notifications()) == 1  # a completed run does not alert
    run(main())


def test_a_focused_window_gets_no_bell_and_no_notification():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        record = Recorder(app)
        async with app.run_test(size=(120, 30)) as pilot:
            app.post_message(events.AppFocus())  # the terminal's focus-in report
            await settle(pilot, lambda: app.attention.window_has_focus)
            await settle(pilot, lambda: pending(app) == ["c1"])
            assert "BEL" not in record.out and not record.notifications()
            assert record.titles() == ["⚠ approval · cockpit"]  # the title is a state
            app.post_message(events.AppBlur())
            await settle(pilot, lambda: not app.attention.window_has_focus)
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_a_failed_run_alerts():
    async def main():
        app = make_app(turn(1, "Starting."), reply("partial", "failed", "agent exited: boom"),
                       end=False)
        record = Recorder(app)  # before it starts: the run fails at once
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: app.session.done and ("title", "failed")
                         in app.attention.sent)
            assert "BEL" in record.out
            assert any("run failed: agent exited: boom" in n for n in record.notifications())
            assert record.titles()[-1] == "✗ failed · cockpit"
    run(main())


def test_done_alerts_when_configured(tmp_path):
    write_config(tmp_path, '[notify]\nbell = ["done"]\nosc = ["done"]\ntitle = ["done"]\n')

    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        record = Recorder(app)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            assert record.out == []  # approvals are off here
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done and record.titles())
            assert record.titles() == ["✓ completed · cockpit"]
            assert "BEL" in record.out and record.notifications()
    run(main())


def test_a_cancel_by_the_user_does_not_alert():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "make deploy"}))
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            record = Recorder(app)
            await pilot.press("escape", "escape")
            await settle(pilot, lambda: app.session.done)
            await pilot.pause()
            assert record.out in ([], ["\x1b]2;cockpit\x07"])
    run(main())


def test_an_approval_timeout_counts_down_in_the_bar():
    now = [1000.0]

    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}),
                       approval_timeout=30, clock=lambda: now[0])
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            bar = app.query_one("#approval")
            keys = app.query_one("#approval-keys")
            assert "auto-deny in 0:30" in keys.render().plain
            now[0] += 12
            assert bar.seconds_left() == 18
            bar.show(app.view)
            assert "auto-deny in 0:18" in keys.render().plain
            now[0] += 15
            bar.show(app.view)
            assert "0:03" in keys.render().plain
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_no_timeout_no_countdown():
    async def main():
        app = make_app(turn(1), gated("c1", "shell", {"command": "git status"}))
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            assert "auto-deny" not in app.query_one("#approval-keys").render().plain
            assert app.query_one("#approval").seconds_left() is None
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_a_question_alerts_even_when_it_reuses_an_approvals_id(tmp_path):
    # An agent chooses its own ids: a question "q-1" after an approval "q-1" is still news.
    from support.live_app import asks

    write_config(tmp_path, '[notify]\ntitle = ["approval", "question"]\n')

    async def main():
        app = make_app(turn(1), gated("q-1", "shell", {"command": "git status"}), asks())
        record = Recorder(app)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: pending(app) == ["q-1"])
            await pilot.press("y")
            await settle(pilot, lambda: bool(app.view.questions))
            await settle(pilot, lambda: "? question · cockpit" in record.titles())
            assert record.titles()[:1] == ["⚠ approval · cockpit"]
            await pilot.press("escape")
            await settle(pilot, lambda: app.session.done)
    run(main())
