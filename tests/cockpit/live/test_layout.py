"""Layout at any size (Pilot): panels keep within their room and scroll, the side column folds into
the status line on a narrow terminal, a marker says when new output arrives below, the working
directory is in the status line."""

from __future__ import annotations

import asyncio
import os

import pytest
from rich.text import Text
from support.event_loop import run
from support.live_app import (
    LONG_REPLY,
    gated,
    hold,
    make_app,
    pending,
    plain,
    reply,
    settle,
    turn,
    verify,
)
from textual import events

from cockpit.keys import key_label
from cockpit.widgets import EndPanel, Transcript
from cockpit.widgets.panels import StatusLine, short_path, side_summary
from cockpit.widgets.scroll_box import ScrollBox
from engine_adapter.view import RunView
from engine_adapter.view.records import CheckView, GrantView

SIZES = [(160, 48), (80, 24), (40, 12)]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def ask(call_id: str, reason: str, command: str = "git status --short"):
    """A gated shell call with the given reason."""
    async def step(r) -> None:
        allowed = await r.approval_controller.request_approval(
            call_id, "shell", reason, {"command": command}, tier=3)
        r.answers.append(allowed)
    return step


def gate(event: asyncio.Event):
    async def step(r) -> None:
        await event.wait()
    return step


def rendered(widget) -> str:
    shown = widget.render()
    return shown.plain if isinstance(shown, Text) else str(shown)


LONG_ERROR = ("agent exited with status 1: " + "the tool failed again. " * 80
              + "\n" + "\n".join(f"  File \"x.py\", line {i}, in step" for i in range(30)))


@pytest.mark.parametrize("size", SIZES)
def test_a_4kb_reply_and_a_long_error_never_hide_the_transcript_the_status_line_or_the_input(
        size):
    # The reply is in the transcript (once); the end panel holds the error and its tail, which
    # is longer than the panel's room at every size: it scrolls under a marker.
    height = size[1]

    async def main():
        app = make_app(turn(1, "Starting."), turn(1, LONG_REPLY),
                       reply("", "failed", LONG_ERROR), end=False, next_steps=lambda text: [])
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: app.session.done
                         and app.query_one(EndPanel).has_class("-shown"))
            await pilot.pause()
            panel = app.query_one(EndPanel)
            assert panel.region.height <= height // 2
            status = app.query_one(StatusLine)
            assert status.region.y == 0 and status.region.height == 2
            transcript = app.query_one(Transcript)
            assert transcript.region.height >= max(3, height // 4)
            next_task = app.query_one("#next-task")
            assert next_task.display and next_task.region.height == 1
            assert next_task.region.bottom <= height - 1  # above the key hints
            end_keys = app.query_one("#end-keys").content  # whole: the quit key in sight
            # the next task is typed in the message box below: the line names its key as bound
            assert key_label(app, "compose") in end_keys.plain and "^q quit" in end_keys.plain
            assert end_keys.cell_len <= size[0] - 4
            box = app.query_one("#end-body", ScrollBox)
            assert box.overflows
            marker = rendered(box.query_one(".scroll-more"))
            assert "more lines below" in marker and "shift+↓" in marker
            before = box.hidden_below
            await pilot.press("shift+down")
            assert box.body.scroll_y > 0 and box.hidden_below < before
            await pilot.press("shift+up")
            assert box.body.scroll_y == 0
    run(main())


def test_a_short_end_has_no_marker_and_the_panel_keys_do_nothing():
    async def main():
        app = make_app(turn(1, "hi"), reply("done, short"), end=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, lambda: app.session.done
                         and app.query_one(EndPanel).has_class("-shown"))
            await pilot.pause()
            box = app.query_one("#end-body", ScrollBox)
            assert not box.overflows and not box.has_class("-overflow")
            assert app.check_action("scroll_panel", (1,)) is False
            assert "more below" not in rendered(app.query_one("#keys"))
    run(main())


def test_at_40x12_the_approval_keys_stay_in_sight_whatever_the_reason():
    reason = "runs a long command. " * 30

    async def main():
        app = make_app(turn(1, "Checking."), ask("c1", reason))
        async with app.run_test(size=(40, 12)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            bar = app.query_one("#approval")
            keys = app.query_one("#approval-keys")
            assert bar.region.height <= 12 * 6 // 10 + 1
            assert keys.region.height == 1 and keys.region.bottom <= 12 - 1
            line = rendered(keys)
            assert "[y]" in line and "[n]" in line
            box = bar.box
            assert box.overflows and "more lines below" in rendered(box.query_one(".scroll-more"))
            await pilot.press("shift+down")
            assert box.body.scroll_y > 0
            await pilot.press("y")
            await settle(pilot, lambda: app.session.done)
            assert app.session.runner.answers == [True]
    run(main())


@pytest.mark.parametrize("size", SIZES)
def test_the_approval_bar_stays_within_60_percent(size):
    async def main():
        app = make_app(turn(1, "Checking."), ask("c1", "runs git. " * 100,
                                                 command="\n".join(f"echo {i}" for i in range(60))))
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            bar = app.query_one("#approval")
            assert bar.region.height <= size[1] * 6 // 10 + 1
            assert app.query_one("#approval-keys").region.bottom <= size[1] - 1
            assert app.query_one(StatusLine).region.y == 0
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_the_side_column_folds_into_the_status_line_below_110_columns():
    async def main():
        app = make_app(turn(1, "Checking."), verify(passed=False), end=False)
        async with app.run_test(size=(109, 30)) as pilot:
            await settle(pilot, lambda: app.view.checks and all(
                c.status in ("passed", "failed") for c in app.view.checks.values()))
            await pilot.pause()
            side = app.query_one("#run-side")
            assert not side.display
            status = rendered(app.query_one(StatusLine))
            assert "checks 1/2 ✓ 1 ✗" in status and "v shows" in status
            assert "checks & grants" in rendered(app.query_one("#keys"))
            transcript = app.query_one(Transcript)
            width = transcript.region.width
            await pilot.press("v")  # over the transcript: it keeps its width
            await pilot.pause()
            assert side.display and side.region.width > 0
            assert transcript.region.width == width
            status = rendered(app.query_one(StatusLine))
            assert "v hides" in status and "v shows" not in status
            assert "pytest" in rendered(app.query_one("#verification"))
            await pilot.press("v")
            await pilot.pause()
            assert not side.display
            assert "v shows" in rendered(app.query_one(StatusLine))
            await pilot.resize_terminal(110, 30)
            await pilot.pause()
            assert side.display and side.region.width > 0
            assert "v shows" not in rendered(app.query_one(StatusLine))
            assert app.check_action("toggle_side_panel", ()) is False  # nothing to show
            assert "checks & grants" not in rendered(app.query_one("#keys"))
            app.session.cancel("test over")
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_at_80x24_the_transcript_keeps_at_least_70_columns():
    async def main():
        app = make_app(turn(1, "hi"), gated("c1", "shell", {"command": "ls"}))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            assert app.query_one(Transcript).region.width >= 70
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)
    run(main())


CELL = 12.2  # one cell's width in Textual's screenshot (Rich's SVG export)


def _screen_row(app, needle: str) -> str:
    """The screen's row holding `needle`, as the terminal shows it (from Textual's own
    screenshot, so layers are composed as drawn)."""
    import html
    import re
    from collections import defaultdict

    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for x, y, text in re.findall(r'<text class="[^"]*" x="([^"]*)" y="([^"]*)"[^>]*>(.*?)</text>',
                                 app.export_screenshot()):
        rows[y].append((float(x), html.unescape(text).replace("\xa0", " ")))
    for parts in rows.values():
        line = [" "] * app.size.width
        for x, text in parts:
            start = round(x / CELL)
            for i, ch in enumerate(text):
                if 0 <= start + i < len(line):
                    line[start + i] = ch
        joined = "".join(line)
        if needle in joined:
            return joined
    raise AssertionError(f"{needle!r} is not on the screen")


def test_a_marker_says_new_output_arrives_below_until_end_follows_again():
    async def main():
        more = asyncio.Event()
        app = make_app(turn(1, "first"),
                       *[plain(f"r{i}", "read_file", {"path": f"f{i}.py"}, "x\n" * 3)
                         for i in range(12)],
                       gate(more),
                       *[plain(f"s{i}", "read_file", {"path": f"g{i}.py"}, "y")
                         for i in range(3)],
                       hold())
        async with app.run_test(size=(100, 24)) as pilot:
            await settle(pilot, lambda: "r11" in app.view.tool_calls)
            marker = app.query_one("#new-below")
            assert not marker.display
            await pilot.press("up", "up", "up")  # the user moves up: no longer following
            transcript = app.query_one(Transcript)
            assert not transcript.follow
            more.set()
            await settle(pilot, lambda: "s2" in app.view.tool_calls and marker.display)
            text = rendered(marker)
            assert "new items below" in text and "end follows" in text
            # Issue 26 §4: nothing of the transcript shows through the marker's row, nor runs
            # on beside it; and it is opaque.
            row = _screen_row(app, "new items below")
            span = transcript.region
            inside = row[span.x:span.x + span.width]
            assert inside.strip() == text.strip(), inside
            assert marker.styles.background.a == 1 and marker.region.width == span.width
            await pilot.press("end")
            await settle(pilot, lambda: not marker.display)
            assert transcript.follow
            app.session.cancel("test over")
            await settle(pilot, lambda: app.session.done)
    run(main())


def test_scrolling_up_with_the_mouse_stops_following():
    async def main():
        app = make_app(turn(1, "first"),
                       *[plain(f"r{i}", "read_file", {"path": f"f{i}.py"}, "x\n" * 3)
                         for i in range(20)])
        async with app.run_test(size=(100, 24)) as pilot:
            await settle(pilot, lambda: app.session.done)
            transcript = app.query_one(Transcript)
            assert transcript.follow and transcript.max_scroll_y > 0
            # What the terminal sends for a wheel turn over the transcript.
            transcript.post_message(events.MouseScrollUp(transcript, 5, 5, 0, -1, 0, False,
                                                         False, False))
            await settle(pilot, lambda: not transcript.follow)
            assert app.query_one("#new-below").display is False  # nothing new yet
    run(main())


def test_the_working_directory_is_in_the_status_line_shortened_with_a_tilde():
    cwd = os.path.join(os.path.expanduser("~"), "projects", "demo")

    async def main():
        app = make_app(turn(1, "hi"), cwd=cwd)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: app.session.done)
            assert "~/projects/demo" in rendered(app.query_one(StatusLine))
    run(main())


@pytest.mark.parametrize("path, width, expected", [
    ("/home/u/projects/demo", 40, "~/projects/demo"),
    ("/home/u", 40, "~"),
    ("/home/user2/x", 40, "/home/user2/x"),  # a sibling of the home folder is not under it
    ("/srv/a/b/c/d/e", 8, "…/c/d/e"),
    ("/srv/a/b/c/d/e", 6, "…/d/e"),
    ("/home/u/a-very-long-folder-name", 10, "…lder-name"),
    ("/tmp/\x1b[31mred", 40, "/tmp/␛[31mred"),  # shown, never sent to the terminal
    ("/tmp/a\nb", 40, "/tmp/a⏎b"),
])
def test_short_path(path, width, expected):
    assert short_path(path, width, home="/home/u") == expected


def test_side_summary_words():
    view = RunView()
    assert side_summary(view) == "no checks yet"


def _summary(statuses: str, grants: str = "") -> str:
    """`statuses`: one letter a check (p passed, f failed, r running, w waiting); `grants`:
    one letter a grant (a allow, d deny rule)."""
    view = RunView()
    names = {"p": "passed", "f": "failed", "r": "running", "w": "pending"}
    view.checks = {str(i): CheckView(str(i), f"c{i}", None, 1, names[s])
                   for i, s in enumerate(statuses)}
    view.grants = [GrantView("shell", f"p{i}", 3, "project", deny=g == "d")
                   for i, g in enumerate(grants)]
    return side_summary(view)


@pytest.mark.parametrize("statuses, grants, expected", [
    ("ww", "", "checks 0 of 2 run"),  # issue 26 §4: never `0/2 ✓` before anything passed
    ("rw", "", "checks 0 of 2 run"),
    ("fw", "", "checks 1/2 ✗"),
    ("ff", "", "checks 2/2 ✗"),
    ("pw", "", "checks 1/2 ✓"),
    ("pfw", "", "checks 1/3 ✓ 1 ✗"),
    ("ppp", "", "checks 3/3 ✓"),
    ("", "d", "no checks yet · 1 deny rule"),  # a deny rule is no grant
    ("", "dd", "no checks yet · 2 deny rules"),
    ("", "a", "no checks yet · 1 grant"),
    ("p", "ada", "checks 1/1 ✓ · 2 grants · 1 deny rule"),
])
def test_side_summary_counts_what_is_so(statuses, grants, expected):
    summary = _summary(statuses, grants)
    assert summary == expected
    if "p" not in statuses:
        assert "✓" not in summary


def test_the_status_line_drops_the_least_important_fields_first():
    async def main():
        app = make_app(turn(1, "hi"), cwd="/srv/work/project", end=True)
        async with app.run_test(size=(40, 12)) as pilot:
            await settle(pilot, lambda: app.session.done)
            lines = rendered(app.query_one(StatusLine)).split("\n")
            assert len(lines) == 2 and all(len(line) <= 38 for line in lines)
            assert "checks" in lines[1]  # the folded side column comes first
            assert "1,200 in" not in lines[1]  # tokens gave way
    run(main())
