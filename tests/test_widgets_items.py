"""Rendering one transcript item (no app needed)."""

from __future__ import annotations

from rich.console import Console

from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets.items import render_item
from engine_adapter.fold import ToolCallItem


def rows(item: ToolCallItem) -> list[str]:
    palette = Palette(load_themes()["cockpit-dark"])
    strips = render_item(item, None, width=80, expanded=False, palette=palette,
                         console=Console(width=80))
    return [strip.text for strip in strips]


def test_a_failure_whose_output_is_its_error_says_it_once() -> None:
    item = ToolCallItem(1, 1, 0, "c1", "search", {"query": "x"}, 1)
    item.status, item.error, item.output = "failed", "no such thing", "no such thing"
    assert sum("no such thing" in row for row in rows(item)) == 1


def test_a_failure_with_its_own_output_shows_both() -> None:
    item = ToolCallItem(1, 1, 0, "c1", "shell", {"command": "make"}, 3)
    item.status, item.error, item.output = "failed", "exit 2", "make: *** no rule"
    text = rows(item)
    assert any("error: exit 2" in row for row in text)
    assert any("no rule" in row for row in text)


def test_raw_events_are_indented_when_few_and_one_a_line_when_many() -> None:
    from cockpit.widgets.items import PRETTY_UP_TO, raw_events_text
    from engine_adapter import ModelUpdate
    from engine_adapter.fold import MessageItem

    events = {i: ModelUpdate(text=f"t{i}", turn=1, seq=i) for i in range(100)}
    few = MessageItem(1, 1, 0, "message")
    few.seqs = [0, 1]
    text = raw_events_text(few, events.get)
    assert '"text": "t1"' in text and text.count("\n") > 4
    many = MessageItem(1, 1, 0, "message")
    many.seqs = list(range(PRETTY_UP_TO + 5))
    assert raw_events_text(many, events.get).count("\n") == PRETTY_UP_TO + 4
    gone = MessageItem(1, 1, 999, "message")
    assert "not available" in raw_events_text(gone, events.get)
