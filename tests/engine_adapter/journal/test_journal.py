"""The write-ahead journal: writing, reading back, surviving crashes, clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_adapter import (
    AgentStart,
    JournalError,
    JsonlEventJournal,
    ModelUpdate,
    ToolEnd,
    read_journal,
)
from engine_adapter.events import dump_event


def sample_events(n: int = 5) -> list:
    events = [AgentStart(task="t", engine="e", seq=0, session_id="s")]
    for i in range(1, n):
        events.append(ModelUpdate(text=f"chunk {i} ünïcode ✓", turn=1, seq=i, session_id="s"))
    return events


def write_all(path, events) -> None:
    with JsonlEventJournal(path, fsync="never") as journal:
        for event in events:
            journal.write(event)


def test_round_trip(journal_path) -> None:
    events = sample_events()
    write_all(journal_path, events)
    assert list(read_journal(journal_path)) == events
    assert journal_path.read_bytes().count(b"\n") == len(events)


def test_each_event_is_in_the_file_as_soon_as_write_returns(journal_path) -> None:
    journal = JsonlEventJournal(journal_path, fsync="never")
    for i, event in enumerate(sample_events()):
        journal.write(event)
        assert journal_path.read_bytes().count(b"\n") == i + 1
    journal.close()


@pytest.mark.parametrize("policy", ["always", "boundary", "never"])
def test_every_fsync_policy_writes_the_same_bytes(tmp_path, policy) -> None:
    path = tmp_path / f"{policy}.jsonl"
    with JsonlEventJournal(path, fsync=policy) as journal:
        for event in sample_events():
            journal.write(event)
    assert len(list(read_journal(path))) == 5


def test_bad_fsync_policy_is_rejected(journal_path) -> None:
    with pytest.raises(ValueError, match="fsync"):
        JsonlEventJournal(journal_path, fsync="sometimes")  # type: ignore[arg-type]


def test_directory_path_fails_at_open_with_a_clear_error(tmp_path) -> None:
    with pytest.raises(JournalError, match="is a directory"):
        JsonlEventJournal(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere; covered by the next test")
def test_unwritable_path_fails_at_open(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    with pytest.raises(JournalError, match="cannot open journal"):
        JsonlEventJournal(locked / "run.jsonl")


def test_path_under_a_file_fails_at_open(tmp_path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(JournalError, match="cannot open journal") as info:
        JsonlEventJournal(blocker / "run.jsonl")
    assert "--journal" in str(info.value)


def test_read_missing_file_is_a_journal_error(tmp_path) -> None:
    with pytest.raises(JournalError, match="cannot read journal"):
        read_journal(tmp_path / "absent.jsonl")


def test_read_directory_is_a_journal_error(tmp_path) -> None:
    with pytest.raises(JournalError, match="directory"):
        read_journal(tmp_path)


def test_torn_last_line_is_skipped_and_reported(journal_path) -> None:
    events = sample_events()
    write_all(journal_path, events)
    with open(journal_path, "ab") as f:
        f.write(dump_event(events[1])[:17])
    reader = read_journal(journal_path)
    assert list(reader) == events
    assert reader.torn_tail


def test_bad_middle_line_names_its_line_number(journal_path) -> None:
    events = sample_events()
    lines = [dump_event(e) for e in events]
    lines[2] = b'{"type": "model_update", "text": 5'
    journal_path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(JournalError, match="line 3") as info:
        list(read_journal(journal_path))
    assert info.value.line == 3
    reader = read_journal(journal_path, strict=False)
    assert len(list(reader)) == 4 and reader.bad_lines == [3]


def test_non_utf8_bytes_are_a_bad_line_not_a_crash(journal_path) -> None:
    good = dump_event(sample_events()[0])
    journal_path.write_bytes(good + b"\n\xff\xfe\x00garbage\n" + good + b"\n")
    with pytest.raises(JournalError) as info:
        list(read_journal(journal_path))
    assert info.value.line == 2
    reader = read_journal(journal_path, strict=False)
    assert len(list(reader)) == 2 and reader.bad_lines == [2]


def test_unknown_event_type_is_a_bad_line(journal_path) -> None:
    good = dump_event(sample_events()[0])
    journal_path.write_bytes(good + b'\n{"type":"from_the_future","seq":1}\n' + good + b"\n")
    reader = read_journal(journal_path, strict=False)
    assert len(list(reader)) == 2 and reader.bad_lines == [2]


def test_unknown_extra_fields_are_kept(journal_path) -> None:
    line = b'{"type":"tool_end","call_id":"c","tool":"t","ok":true,"added_in_v2":[1,2]}\n'
    journal_path.write_bytes(line)
    (event,) = read_journal(journal_path)
    assert event.model_extra == {"added_in_v2": [1, 2]}
    assert b'"added_in_v2":[1,2]' in dump_event(event)


def test_appending_after_a_crash_cuts_the_torn_tail(journal_path) -> None:
    events = sample_events()
    write_all(journal_path, events[:3])
    with open(journal_path, "ab") as f:
        f.write(b'{"type":"model_upd')  # torn by a crash
    write_all(journal_path, events[3:])  # a new writer appends
    assert list(read_journal(journal_path)) == events  # strict: no corruption in the middle


def test_appending_after_a_missing_final_newline_keeps_the_event(journal_path) -> None:
    events = sample_events()
    journal_path.write_bytes(b"\n".join(dump_event(e) for e in events[:3]))  # no final newline
    write_all(journal_path, events[3:])
    assert list(read_journal(journal_path)) == events


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_journal_cut_at_any_byte_reads_back_every_complete_line(tmp_path, data) -> None:
    events = [*sample_events(8), ToolEnd(call_id="c", tool="shell", ok=False, output="ä" * 40,
                                         seq=8, session_id="s")]
    blob = b"".join(dump_event(e) + b"\n" for e in events)
    cut = data.draw(st.integers(min_value=0, max_value=len(blob)))
    path = tmp_path / f"cut-{cut}.jsonl"
    path.write_bytes(blob[:cut])
    complete = blob[:cut].count(b"\n")
    reader = read_journal(path)  # strict: a torn tail must never be an error
    got = list(reader)
    assert got[:complete] == events[:complete]
    assert len(got) in (complete, complete + 1)  # + the last event if only its newline was cut
    assert reader.torn_tail == (len(got) == complete and not blob[:cut].endswith(b"\n")
                                and cut > 0)


WRITER = textwrap.dedent("""
    import sys
    from engine_adapter import JsonlEventJournal, ModelUpdate, AgentStart
    journal = JsonlEventJournal(sys.argv[1], fsync="never")
    journal.write(AgentStart(task="t", engine="e", seq=0, session_id="s"))
    print("ready", flush=True)
    seq = 1
    while True:
        journal.write(ModelUpdate(text="x" * (seq % 300), turn=1, seq=seq, session_id="s"))
        seq += 1
""")


@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra_lines=st.integers(min_value=1, max_value=20_000))
def test_sigkill_while_writing_leaves_a_readable_gapless_journal(tmp_path, extra_lines) -> None:
    # tmp_path is shared by every example hypothesis draws: each needs a file of its own.
    path = tmp_path / f"killed-{uuid.uuid4().hex}.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    # Wait for the writer to get somewhere (a size, not a clock), then kill it mid-stream.
    start = path.stat().st_size  # the first event is on disk before "ready"
    while path.stat().st_size < start + extra_lines * 20:
        assert proc.poll() is None, "the writer died on its own"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    seqs = [event.seq for event in read_journal(path)]
    assert seqs == list(range(len(seqs)))
    assert len(seqs) >= 2


def test_path_on_a_read_only_filesystem_fails_at_open() -> None:
    # /proc refuses new files even to root, so this holds whoever runs the tests.
    with pytest.raises(JournalError, match="cannot open journal"):
        JsonlEventJournal("/proc/cockpit-journal-test.jsonl")
