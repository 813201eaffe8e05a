"""Export and the journal's chain: a report of a journal edited after its run says so at the
top (Markdown and HTML), an intact one says nothing alarming, an old one nothing at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.journals import fixture_events

from cockpit.export import export_journal
from cockpit.export.contents import CHANGED_MARK
from engine_adapter import JsonlEventJournal

GOLDEN = Path(__file__).parents[2] / "golden"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


@pytest.fixture
def journal(tmp_path) -> Path:
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path, fsync="never") as writer:
        for event in fixture_events():
            writer.write(event)
    return path


def _edit(path: Path) -> None:
    """A denied call made an allowed one, as someone with an editor would."""
    data = path.read_bytes()
    assert b'"allowed":false' in data
    path.write_bytes(data.replace(b'"allowed":false', b'"allowed":true', 1))


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_a_changed_journal_is_marked_at_the_top(journal, fmt) -> None:
    _edit(journal)
    result = export_journal(journal, fmt)
    assert result.changed
    top = result.text[:600] if fmt == "markdown" else result.text.split("<body>", 1)[1][:600]
    assert CHANGED_MARK in top
    assert "changed at line " in top
    assert top.index(CHANGED_MARK) < top.index("Run report")


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_an_intact_journal_is_not_marked_and_its_chain_is_named(journal, fmt) -> None:
    result = export_journal(journal, fmt)
    assert not result.changed and CHANGED_MARK not in result.text
    assert result.chain.startswith("intact: ")
    assert "chain intact: " in result.text


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_an_old_journal_reads_as_before(fmt) -> None:
    result = export_journal(GOLDEN / "v3-demo.jsonl", fmt)
    assert not result.changed and CHANGED_MARK not in result.text
    assert result.chain.startswith("unchained: ")
    assert "unchained" not in result.text


def test_the_export_command_warns_of_a_changed_journal(journal) -> None:
    from typer.testing import CliRunner

    from cockpit.cli.main import app

    _edit(journal)
    result = CliRunner().invoke(app, ["export", str(journal)])
    assert result.exit_code == 0
    assert f"warning: {journal} was changed after the run: changed at line " in result.stderr
    assert result.stdout.startswith(f"> **{CHANGED_MARK}:**")
