"""`export_beside`: the Markdown report written next to its journal, never over a file (a
second export is `-2`, a link planted under the name is not followed), and clear errors."""

from __future__ import annotations

import pytest

from cockpit.export import export_beside
from cockpit.export.beside import MAX_TRIES
from engine_adapter import AgentEnd, AgentStart, JournalError, JsonlEventJournal


def _journal(tmp_path, task="say hello"):
    path = tmp_path / "run.jsonl"
    journal = JsonlEventJournal(path)
    journal.write(AgentStart(task=task, engine="test", model=None, cwd=None))
    journal.write(AgentEnd(status="completed", result="hello", error=None, seq=1))
    journal.close()
    return path


def test_the_report_lands_next_to_the_journal_and_a_second_one_beside_it(tmp_path):
    journal = _journal(tmp_path)
    first = export_beside(journal)
    assert first == tmp_path / "run.md"
    assert "say hello" in first.read_text(encoding="utf-8")
    first.write_text("my notes", encoding="utf-8")
    assert export_beside(journal) == tmp_path / "run-2.md"
    assert first.read_text(encoding="utf-8") == "my notes"  # never replaced


@pytest.mark.parametrize("planted", ["file", "dangling"])
def test_a_link_planted_under_the_name_is_not_followed(tmp_path, planted):
    journal = _journal(tmp_path)
    outside = tmp_path / "outside.txt"
    if planted == "file":
        outside.write_text("keep", encoding="utf-8")
    (tmp_path / "run.md").symlink_to(outside)
    assert export_beside(journal) == tmp_path / "run-2.md"
    assert (outside.read_text(encoding="utf-8") == "keep") if planted == "file" \
        else not outside.exists()


def test_every_name_taken_is_a_clear_error(tmp_path):
    journal = _journal(tmp_path)
    for number in range(1, MAX_TRIES + 1):
        (tmp_path / ("run.md" if number == 1 else f"run-{number}.md")).touch()
    with pytest.raises(FileExistsError, match="cockpit export -o FILE"):
        export_beside(journal)


def test_a_missing_journal_is_a_journal_error(tmp_path):
    with pytest.raises(JournalError):
        export_beside(tmp_path / "gone.jsonl")
    assert not list(tmp_path.iterdir())
