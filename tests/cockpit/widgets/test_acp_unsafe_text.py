"""Unsafe characters from an ACP agent (issue 26 §4): the agent's reply, thoughts, tool output
and diff keep them through the ACP boundary, as the built-in engine's text does, so every view
shows them as it shows any other: the transcript as the highlighted marker the README
describes (`␛[31m`, `⟨U+200B⟩`), never as the literal text `\\x1b[31m`; the headless view and
the reports escaped. An agent's own backslash text (`print("\\x1b")`) stays that text. The real
SDK test agent, through a real Session and journal."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, drive
from rich.console import Console
from test_liveview_hostile import HOSTILE, PALETTE

from cockpit.export import export_journal
from cockpit.headless import LinePrinter
from cockpit.widgets.safe_text import MARKER_STYLE
from cockpit.widgets.transcript.items import render_item
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.text import has_unsafe
from engine_adapter.view import RunFold

MARKS = re.compile(r"⟨U\+[0-9A-F]+⟩|[␀-␟␡]")


def _script(bad: str) -> str:
    text = {"type": "text", "text": f"reply {bad} end"}
    return "script " + json.dumps([
        {"update": {"sessionUpdate": "agent_thought_chunk", "content": {
            "type": "text", "text": f"thinking {bad}"}}},
        {"update": {"sessionUpdate": "agent_message_chunk", "content": text}},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "look",
                    "kind": "read", "status": "pending", "rawInput": {"path": "a.txt"}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                    "status": "completed", "content": [{"type": "content", "content": {
                        "type": "text", "text": f"output {bad}\nline two"}}]}},
    ])


def _run(tmp_path: Path, task: str):
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)

    async def main():
        async with AcpRunner(agent_argv("--log", tmp_path / "agent.jsonl"),
                             cwd=workspace) as runner:
            return await drive(runner, task, tmp_path / "j.jsonl")

    return asyncio.run(main())


def _transcript(events) -> list:
    view = RunFold().apply_all(events)
    console = Console(width=120)
    rows = []
    for index, item in enumerate(view.items):
        if item.kind == "task":
            continue  # the task is the script, as JSON: it holds `\\u001b` on purpose
        for expanded in (False, True):
            rows += render_item(item, view.items[index - 1] if index else None, width=120,
                                expanded=expanded, palette=PALETTE, console=console,
                                items=view.items)
    return rows


@pytest.mark.parametrize("bad", [b for b in HOSTILE if has_unsafe(b)])
def test_an_agents_unsafe_characters_show_as_markers(tmp_path, bad) -> None:
    state, events = _run(tmp_path, _script(bad))
    assert state.status == "completed", state.error
    texts = {e.channel: "" for e in events if e.type == "model_update"}
    for e in events:
        if e.type == "model_update":
            texts[e.channel] += e.text
    # The characters themselves arrived, not their escapes.
    assert f"reply {bad} end" in texts["message"] and f"thinking {bad}" in texts["thought"]
    output = next(e for e in events if e.type == "tool_end").output
    assert output.startswith(f"output {bad}")
    # The transcript: each one as its highlighted marker, never as the escape text.
    rows = _transcript(events)
    shown = "\n".join(strip.text for strip in rows)
    assert not has_unsafe(shown) and "\x1b" not in shown
    assert "\\x" not in shown and "\\u" not in shown and "\\U" not in shown, shown
    assert MARKS.search(shown) or "⏎" in shown, shown  # (a line separator: a line break)
    for strip in rows:
        for segment in strip:
            if MARKS.search(segment.text):
                assert segment.style is not None and segment.style.reverse, (strip.text, segment)
    # Headless and the reports: escaped, nothing raw reaches a terminal or a page.
    out = io.StringIO()
    printer = LinePrinter(out)
    for event in events:
        printer.handle(event)
    printer.close()
    assert not has_unsafe(out.getvalue()) and "\x1b" not in out.getvalue()
    for fmt in ("markdown", "html"):
        report = export_journal(tmp_path / "j.jsonl", fmt).text
        assert not has_unsafe(report) and "\x1b" not in report and "\x9b" not in report


def test_an_agents_backslash_text_stays_its_text(tmp_path) -> None:
    literal = 'print("\\x1b[31m") and "\\u200b"'  # the agent wrote backslashes, no escape
    state, events = _run(tmp_path, _script(literal))
    assert state.status == "completed", state.error
    shown = "\n".join(strip.text for strip in _transcript(events))
    assert literal in shown and "␛" not in shown and "⟨U+" not in shown


def test_the_marker_style_is_the_one_the_transcript_uses() -> None:
    assert MARKER_STYLE.reverse  # what the test above looks for
