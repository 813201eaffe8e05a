"""What the next host does with a dead one's record: each journal with no end gets one
(`failed`, the host died), continuing its seq and chain; anything else is left as it is."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cockpit.host.record import HOST_DIED, RunRecord, end_journal, recover, remember
from engine_adapter import JsonlEventJournal, read_journal
from tests.support.journals import fixture_events


def _journal(path: Path, events) -> None:
    journal = JsonlEventJournal(path)
    for event in events:
        journal.write(event)
    journal.close()


UNENDED = fixture_events()[:-1]


def test_a_journal_with_no_end_is_ended_failed_continuing_its_seq(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    _journal(path, UNENDED)
    assert end_journal(str(path))
    events = list(read_journal(path))  # strict: whole
    assert [e.seq for e in events[:-1]] == [e.seq for e in UNENDED]
    end = events[-1]
    assert (end.type, end.status, end.error) == ("agent_end", "failed", HOST_DIED)
    assert end.seq == UNENDED[-1].seq + 1 and end.session_id == UNENDED[-1].session_id
    assert not end_journal(str(path))  # once ended, never again


def test_the_end_continues_the_hash_chain(tmp_path) -> None:
    from engine_adapter.journal.chain import check_file

    path = tmp_path / "run.jsonl"
    _journal(path, UNENDED)
    end_journal(str(path))
    verdict = check_file(path)
    assert verdict.status == "intact" and verdict.ended


@pytest.mark.parametrize("case", ["ended", "missing", "directory", "being-written"])
def test_what_needs_no_end_is_left_as_it_is(tmp_path, case) -> None:
    path = tmp_path / "run.jsonl"
    writer = None
    if case == "ended":
        _journal(path, fixture_events())
    elif case == "directory":
        path.mkdir()
    elif case == "being-written":  # a live process holds its lock: its run goes on
        writer = JsonlEventJournal(path)
        for event in UNENDED:
            writer.write(event)
    before = path.read_bytes() if path.is_file() else None
    try:
        assert not end_journal(str(path))
        assert (path.read_bytes() if path.is_file() else None) == before
    finally:
        if writer is not None:
            writer.close()


@pytest.mark.parametrize("tail", [b'{"type":"tool_st', b"\xff\xfe torn", b"{", b"   "])
def test_a_torn_last_line_is_cut_and_the_end_follows_what_was_whole(tmp_path, tail) -> None:
    path = tmp_path / "run.jsonl"
    _journal(path, UNENDED)
    with path.open("ab") as f:
        f.write(tail)
    assert end_journal(str(path))
    events = list(read_journal(path))
    assert events[-1].type == "agent_end" and events[-1].seq == UNENDED[-1].seq + 1


def test_an_empty_journal_is_ended_at_seq_0(tmp_path) -> None:
    path = tmp_path / "20261202-000000-abc.jsonl"
    path.write_bytes(b"")
    assert end_journal(str(path))
    [end] = list(read_journal(path))
    assert end.seq == 0 and end.status == "failed"


def test_recover_lists_unended_runs_lost_and_forgets_every_record(tmp_path) -> None:
    records = tmp_path / "records"
    unended, ended = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _journal(unended, UNENDED)
    _journal(ended, fixture_events())
    now = time.time()
    remember(records, RunRecord(id="a", task="t", engine="demo", started=now,
                                journal=str(unended)))
    remember(records, RunRecord(id="b", task="t", engine="demo", started=now,
                                journal=str(ended), status="completed"))
    (records / "broken.json").write_text("{not json")
    lost = recover(records)
    assert [(r.id, r.status) for r in lost] == [("a", "lost")]
    assert lost[0].summary()["status"] == "lost"
    assert sorted(p.name for p in records.iterdir()) == ["broken.json"]  # unreadable: kept
    assert recover(records) == []
