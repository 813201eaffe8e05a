"""Hostile text in a run's changes and its end as the views show them (a diff, a file's text,
model text over several lines, an end's error and stderr, a changed file's name): every variant
is shown literally — unsafe characters as markers or escapes, no markup, no forged line — in the
transcript, the end panel's text, headless output and both exports (the parts of the views that
issue 13 added)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.style import Style
from support.journals import write

from cockpit.export import export_journal
from cockpit.headless import LinePrinter
from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets.end_panel import end_text
from cockpit.widgets.transcript.code_rows import code_rows, diff_preview, diff_rows
from cockpit.widgets.transcript.items import render_item
from engine_adapter import AgentEnd, AgentStart, ModelUpdate, ToolEnd, ToolStart, TurnStart
from engine_adapter.files import unified_diff
from engine_adapter.text import has_unsafe
from engine_adapter.view import RunFold

PALETTE = Palette(load_themes()["cockpit-dark"])
WARN = Style(reverse=True)

HOSTILE = [
    "\x1b[2J\x1b[31mred\x1b[0m",  # clear the screen, colour
    "\x1b]52;c;cGF3bmVk\x07",  # OSC 52: write the clipboard
    "\x1b]0;pwned\x07",  # set the window title
    "over\rwrite",  # a lone CR would overwrite the line
    "evil\u202etxt.exe",  # a bidi override
    "zero\u200bwidth\u2060joiner",  # invisible characters
    "line\u2028sep\u0085nel",  # breaks a line only for some readers
    "tag\U000e0041\U000e0042",  # tag characters (hidden text)
    "x\ufe0f\ufe0fselector",  # variation selectors after ASCII
    "[bold red]markup[/] and [link=http://x]link[/link]",  # Rich markup stays text
    "\x9b31mC1 CSI",  # an 8-bit CSI
]


def _safe(text: str) -> bool:
    return not has_unsafe(text) and "\x1b" not in text and "\x9b" not in text


def _view(bad: str):
    diff = unified_diff(f"a\n{bad}\n", f"a\n{bad}!\n", f"f{bad}.py")
    events = [AgentStart(task="t", engine="e"), TurnStart(turn=1),
              ModelUpdate(turn=1, text=f"one\n{bad}\nthree"),
              ToolStart(call_id="e1", tool="edit", tier=2,
                        tool_input={"path": f"f{bad}.py", "diff": diff}),
              ToolEnd(call_id="e1", tool="edit", ok=True, output="edited"),
              ToolStart(call_id="r1", tool="read_file", tool_input={"path": "m.py"}),
              ToolEnd(call_id="r1", tool="read_file", ok=True, output=f"x = '{bad}'\n"),
              AgentEnd(status="failed", result=f"partial {bad}", error=f"crashed {bad}\nmore",
                       stderr=[f"stderr {bad}"])]
    events = [e.model_copy(update={"seq": i, "ts": 10.0 + i, "session_id": "s"})
              for i, e in enumerate(events)]
    return events, RunFold().apply_all(events)


@pytest.mark.parametrize("bad", HOSTILE)
def test_the_transcript_shows_hostile_diffs_files_replies_and_errors_literally(bad) -> None:
    _, view = _view(bad)
    console = Console(width=120)
    for index, item in enumerate(view.items):
        for expanded in (False, True):
            strips = render_item(item, view.items[index - 1] if index else None, width=120,
                                 expanded=expanded, palette=PALETTE, console=console,
                                 items=view.items)
            text = "\n".join(strip.text for strip in strips)
            assert _safe(text), (item.kind, text)
            if "markup" in bad and item.kind == "tool":
                assert "[bold red]markup[/]" in text  # not interpreted
    panel = end_text(view, PALETTE, journal="/j", hint="keys").plain
    assert _safe(panel) and "crashed" in panel and "stderr" in panel


@pytest.mark.parametrize("bad", HOSTILE)
def test_code_and_diff_rows_mark_every_unsafe_character(bad) -> None:
    diff = unified_diff(f"{bad}\n", f"{bad}{bad}\n", "x.py")
    for rows in (diff_preview(diff, limit=5, palette=PALETTE, warn=WARN),
                 diff_rows(diff, "x.py", limit=50, palette=PALETTE, warn=WARN),
                 code_rows(f"{bad}\n{bad}\n", "x.py", limit=50, palette=PALETTE, warn=WARN),
                 code_rows(f"{bad}\n", "x.txt", limit=50, palette=PALETTE, warn=WARN)):
        for row in rows.rows:
            assert _safe(row.plain)
            for match in re.finditer(r"⟨U\+[0-9A-F]+⟩|[␀-␟␡]", row.plain):
                assert any(span.start <= match.start() < span.end and span.style == WARN
                           for span in row.spans), row.plain


@pytest.mark.parametrize("bad", HOSTILE)
def test_headless_lines_stay_lines(bad) -> None:
    events, _ = _view(bad)
    out = io.StringIO()
    printer = LinePrinter(out)
    for event in events:
        printer.handle(event)
    printer.close()
    text = out.getvalue()
    assert _safe(text)
    labels = [line[:10].rstrip() for line in text.split("\n") if line and line[0] != " "]
    assert labels == ["start", "turn", "model", "tool ▶", "tool ✔", "tool ▶", "tool ✔", "end"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_both_reports_show_it_literally(bad, tmp_path) -> None:
    events, _ = _view(bad)
    path = tmp_path / "run.jsonl"
    write(path, events)
    markdown = export_journal(path, "markdown").text
    page = export_journal(path, "html").text
    assert _safe(markdown) and _safe(page)
    assert "<script" not in page and "\u202e" not in page
    if "markup" in bad:
        assert "[bold red]markup[/]" in markdown


def test_a_diff_full_of_backticks_cannot_close_its_fence(tmp_path) -> None:
    diff = unified_diff("a\n", "```\n````\nb\n", "x.md")
    events = [AgentStart(task="t", engine="e"),
              ToolStart(call_id="e1", tool="edit", tool_input={"path": "x.md", "diff": diff}),
              ToolEnd(call_id="e1", tool="edit", ok=True), AgentEnd(status="completed")]
    path = tmp_path / "run.jsonl"
    write(path, [e.model_copy(update={"seq": i, "ts": 1.0 + i}) for i, e in enumerate(events)])
    text = export_journal(path, "markdown").text
    assert "`````diff\n--- a/x.md" in text  # longer than any run of backticks inside
    page = export_journal(path, "html").text
    assert "<span class='add'>+```</span>" in page
