"""The journal commands: `cockpit export` writes a report and `cockpit journals` lists the runs,
and `replay` and `export` answer a bad journal in one line (what a report holds is in
tests/cockpit/export/test_export.py)."""

from __future__ import annotations

import pytest
from support.journals import fixture_events, write
from typer.testing import CliRunner

from cockpit.cli.journals import check_journal
from cockpit.cli.main import app


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "run.jsonl"
    write(path, fixture_events())
    return path


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_export_command_writes_a_file(journal, tmp_path) -> None:
    out = tmp_path / "report.html"
    result = cli("export", str(journal), "--format", "html", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "Run report: fix the bug" in out.read_text()


def test_export_command_rejects_an_unknown_format(journal) -> None:
    result = cli("export", str(journal), "--format", "pdf")
    assert result.exit_code == 2
    assert "unknown format 'pdf'" in result.output


def test_journals_lists_newest_first(tmp_path) -> None:
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    events = fixture_events()
    write(folder / "a.jsonl", events)
    write(folder / "b.jsonl", [e.model_copy(update={"ts": e.ts + 10_000}) for e in events[:4]])
    result = cli("journals")
    assert result.exit_code == 0
    header, *lines = result.output.strip().splitlines()
    assert header.split() == ["started", "status", "agent", "tokens", "in/out", "cost",
                              "events", "task", "path"]
    # b has no agent_end and no run holds its lock: it crashed (a legend says what that means)
    assert "crashed?" in lines[0] and "b.jsonl" in lines[0]
    assert "completed" in lines[1] and f"{len(events)} events" in lines[1]
    assert "fix the bug" in lines[1]
    assert lines[2].startswith("crashed? = ended without a final event")


def test_journals_with_none_says_how_to_get_one() -> None:
    result = cli("journals")
    assert result.exit_code == 0 and "cockpit demo" in result.output


# One test per bad input: a clear one-line message, never a traceback; non-zero only when
# nothing at all could be read.

def test_bad_input_missing_path(tmp_path) -> None:
    for command in ("replay", "export"):
        result = cli(command, str(tmp_path / "nope.jsonl"))
        assert result.exit_code == 1
        assert "no journal at" in result.output and "Traceback" not in result.output


def test_bad_input_directory(tmp_path) -> None:
    result = cli("replay", str(tmp_path))
    assert result.exit_code == 1 and "is a directory" in result.output


def test_bad_input_empty_file(tmp_path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = cli("export", str(path))
    assert result.exit_code == 1 and "is empty" in result.output


def test_bad_input_binary_garbage(tmp_path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(bytes(range(256)) * 40)
    result = cli("replay", str(path))
    assert result.exit_code == 1
    assert "no journal events" in result.output or "not a cockpit journal" in result.output


def test_bad_input_torn_last_line_is_readable(journal) -> None:
    with open(journal, "ab") as f:
        f.write(b'{"type":"tool_st')
    assert check_journal(str(journal)) is None
    result = cli("export", str(journal))
    assert result.exit_code == 0
    assert "the last line was torn" in result.output


def test_bad_input_corrupt_middle_line_is_readable(journal) -> None:
    lines = journal.read_bytes().splitlines()
    lines.insert(3, b"\xff\xfe garbage")
    journal.write_bytes(b"\n".join(lines) + b"\n")
    assert check_journal(str(journal)) is None
    result = cli("export", str(journal))
    assert result.exit_code == 0
    assert "1 corrupt line skipped (line 4)" in result.output


def test_bad_input_newer_event_types_are_readable(journal) -> None:
    with open(journal, "ab") as f:
        f.write(b'{"type":"warp_drive","session_id":"s","seq":99,"ts":3.0}\n')
    assert check_journal(str(journal)) is None
    result = cli("export", str(journal))
    assert result.exit_code == 0
    assert "1 event of unknown type" in result.output


