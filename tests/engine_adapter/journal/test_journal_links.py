"""A journal is never opened through a symbolic link: not the file's, not a folder's on the
way, not for writing and not for the repair of a torn last line — a repository that made
`logs/cockpit.jsonl -> ~/.bash_login` gets an error, and the user's file is left whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_adapter import AgentStart, JournalError, JsonlEventJournal

VICTIM = "export PATH=/usr/bin\nalias ll='ls -l'"  # no newline at the end: a "torn" line


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".bash_login"
    path.parent.mkdir()
    path.write_text(VICTIM)
    return path


def layouts(tmp_path: Path, victim: Path) -> list[Path]:
    """Journal paths that lead to the victim, or beside it, through links."""
    ws = tmp_path / "ws"
    (ws / "logs").mkdir(parents=True)
    (ws / "logs" / "cockpit.jsonl").symlink_to(victim)  # the file is a link
    (ws / "rel.jsonl").symlink_to("../home/.bash_login")  # a relative link
    (ws / "dangling.jsonl").symlink_to(tmp_path / "home" / ".zlogin")  # to a missing file
    (ws / "out").symlink_to(victim.parent)  # a folder that is a link
    (ws / "deep").mkdir()
    (ws / "deep" / "er").symlink_to(victim.parent)
    (ws / "chain.jsonl").symlink_to(ws / "logs" / "cockpit.jsonl")  # a link to a link
    return [ws / "logs" / "cockpit.jsonl", ws / "rel.jsonl", ws / "dangling.jsonl",
            ws / "out" / ".bash_login", ws / "out" / "new.jsonl", ws / "deep" / "er" / "x.jsonl",
            ws / "deep" / "er" / ".bash_login", ws / "chain.jsonl"]


@pytest.mark.parametrize("index", range(8))
def test_a_journal_path_through_a_link_is_refused(tmp_path, victim, index) -> None:
    path = layouts(tmp_path, victim)[index]
    with pytest.raises(JournalError, match="symbolic link"):
        JsonlEventJournal(path)
    assert victim.read_text() == VICTIM  # the torn-looking last line was not cut
    assert sorted(p.name for p in victim.parent.iterdir()) == [".bash_login"]


def test_a_real_path_still_works_and_its_torn_tail_is_repaired(tmp_path) -> None:
    path = tmp_path / "a" / "b" / "run.jsonl"
    with JsonlEventJournal(path) as journal:  # folders made, no link on the way
        journal.write(AgentStart(task="t", engine="e"))
    path.write_bytes(path.read_bytes() + b'{"type": "agent_e')  # a crash mid-line
    with JsonlEventJournal(path):
        pass
    assert path.read_bytes().count(b"\n") == 1 and path.read_bytes().endswith(b"\n")
