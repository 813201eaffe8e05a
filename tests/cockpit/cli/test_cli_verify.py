"""`cockpit verify JOURNAL`: its verdicts, exit codes and messages, on journals the real writer
wrote (and a real demo run's), edited the ways a person would edit them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.journals import fixture_events
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.cli.verify import EXIT_CHANGED, EXIT_INTACT, EXIT_UNCHAINED, EXIT_UNREADABLE
from engine_adapter import JsonlEventJournal

GOLDEN = Path(__file__).parents[2] / "golden"


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def journal(tmp_path) -> Path:
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path, fsync="never") as writer:
        for event in fixture_events():
            writer.write(event)
    return path


def test_an_intact_journal(journal) -> None:
    result = cli("verify", str(journal))
    assert result.exit_code == EXIT_INTACT, result.output
    assert result.stdout.strip() == f"{journal}: intact: {len(fixture_events())} lines"


def test_a_changed_line_is_named_with_how(journal) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[6] = lines[6][:20] + b"X" + lines[6][21:]  # one byte of line 7
    journal.write_bytes(b"".join(lines))
    result = cli("verify", str(journal))
    assert result.exit_code == EXIT_CHANGED
    assert result.stderr.startswith(f"{journal}: changed at line 7: ")
    assert "edited" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("edit", ["delete", "swap", "insert"])
def test_removed_moved_and_inserted_lines(journal, edit) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    if edit == "delete":
        del lines[4]
    elif edit == "swap":
        lines[4], lines[5] = lines[5], lines[4]
    else:
        lines.insert(4, lines[9])
    journal.write_bytes(b"".join(lines))
    result = cli("verify", str(journal))
    assert result.exit_code == EXIT_CHANGED
    assert "changed at line 5: " in result.stderr


def test_a_golden_journal_is_unchained_with_its_own_exit_code() -> None:
    path = GOLDEN / "v2-demo.jsonl"
    result = cli("verify", str(path))
    assert result.exit_code == EXIT_UNCHAINED
    assert "unchained: " in result.stdout and "written before journals were chained" in \
        result.stdout


def test_a_journal_cut_short_says_the_chain_cannot_tell(journal) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-3]))
    result = cli("verify", str(journal))
    assert result.exit_code == EXIT_INTACT
    assert "ends without agent_end" in result.stdout and "the chain cannot tell" in result.stdout


@pytest.mark.parametrize("make, says", [
    (lambda p: None, "no journal at"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b""), "is empty"),
])
def test_bad_paths_get_one_clear_line(tmp_path, make, says) -> None:
    path = tmp_path / "x.jsonl"
    make(path)
    result = cli("verify", str(path))
    assert result.exit_code == EXIT_UNREADABLE
    assert says in result.stderr and "Traceback" not in result.output


def test_help_names_the_exit_codes_and_what_is_not_detected() -> None:
    result = cli("verify", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "0 intact, 1 changed" in text and "3 unchained" in text
    assert "recomputes every hash is not detected" in text


def test_a_real_demo_run_s_journal_verifies_and_an_edit_is_found(tmp_path) -> None:
    path = tmp_path / "demo.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "cockpit", "demo", "--headless", "--auto-approve", "--speed", "0",
         "--journal", str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    result = cli("verify", str(path))
    assert result.exit_code == EXIT_INTACT and "intact: " in result.stdout, result.output
    data = path.read_bytes()
    assert b'"allowed":true' in data
    path.write_bytes(data.replace(b'"allowed":true', b'"allowed":false', 1))  # a yes made a no
    result = cli("verify", str(path))
    assert result.exit_code == EXIT_CHANGED, result.output
