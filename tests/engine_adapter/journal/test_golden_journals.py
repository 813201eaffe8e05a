"""Old journals still replay: each journal in `tests/golden/` (one for each shape the journal has
had, written by an earlier cockpit) parses strictly, folds to what its `.expected.json` pins,
seeks to the same view from any checkpoint, and exports."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from support.paths import TESTS

from cockpit.export import export_journal
from engine_adapter import read_journal
from engine_adapter.replay import JournalReplay
from engine_adapter.view import (
    MessageItem,
    NoticeItem,
    RunView,
    ToolCallItem,
    fold_events,
)

GOLDEN = TESTS / "golden"
JOURNALS = sorted(GOLDEN.glob("*.jsonl"))


def _item(item: object) -> list[object]:
    if isinstance(item, ToolCallItem):
        return ["tool", item.tool, item.status, item.tier, bool(item.diff),
                item.approval.state if item.approval else None]
    if isinstance(item, MessageItem):
        return ["message", item.channel, len(item.text)]
    if isinstance(item, NoticeItem):
        return [item.kind, item.level, item.text[:80]]
    return [type(item).__name__]


def summary(view: RunView) -> dict[str, object]:
    """What a journal's fold says, in the terms the views read it by."""
    return {
        "status": view.status,
        "task": view.task,
        "engine": view.engine,
        "turns": view.turn,
        "tokens": [view.input_tokens, view.output_tokens],
        "grants": [[g.tool, g.prefix] for g in view.grants],
        "checks": {c.name: c.status for c in view.checks.values()},
        "items": [_item(item) for item in view.items],
    }


def test_there_is_a_golden_journal_for_each_shape() -> None:
    assert [p.name for p in JOURNALS] == ["v1-demo.jsonl", "v2-demo.jsonl", "v3-acp.jsonl",
                                          "v3-demo.jsonl", "v4-rewind.jsonl", "v5-acp.jsonl"]


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.stem)
def test_a_golden_journal_reads_as_pinned(path: Path) -> None:
    events = list(read_journal(path))  # strict: any bad line fails
    assert [e.seq for e in events] == list(range(len(events)))
    found = {"events": len(events), "types": dict(sorted(Counter(e.type for e in events).items())),
             **summary(fold_events(events))}
    pinned = path.with_suffix(".expected.json")
    if os.environ.get("COCKPIT_PIN_GOLDEN"):
        pinned.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", "utf-8")
    assert found == json.loads(pinned.read_text("utf-8"))
    assert found["status"] == "completed"


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.stem)
def test_a_golden_journal_seeks_to_the_same_view_from_any_checkpoint(path: Path) -> None:
    events = list(read_journal(path))
    replay = JournalReplay(path, spacing=7)  # many checkpoints
    try:
        assert replay.read_through()
        assert len(replay) == len(events)
        for position in (0, 1, len(events) // 3, len(events) // 2, len(events)):
            seen = summary(replay.state_at(position))  # the view after `position` events
            assert seen == summary(fold_events(events[:position])), position
    finally:
        replay.close()


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.stem)
def test_a_golden_journal_exports(path: Path) -> None:
    for fmt in ("markdown", "html"):
        report = export_journal(path, fmt)
        assert "completed" in report.text
