"""One writer per journal: a second writer (another process, or this one) is refused with the
first one's pid, and never cuts the first one's line in flight; readers neither lock nor repair."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import AgentStart, JournalError, JsonlEventJournal, ModelUpdate, read_journal
from engine_adapter.events import dump_event
from engine_adapter.journal import JournalIndex
from engine_adapter.journal import jsonl as journal_module

# A writer in another process: opens the journal, writes whole events and then half of one
# (a line in flight), says so, and holds the journal open until its stdin closes (or it is
# killed).
HOLDER = textwrap.dedent("""
    import os, sys
    from engine_adapter import JsonlEventJournal, AgentStart
    journal = JsonlEventJournal(sys.argv[1], fsync="never")
    journal.write(AgentStart(task="first writer", engine="e", seq=0, session_id="s"))
    os.write(journal._fd, sys.argv[2].encode())  # half a line, still being written
    print("holding", os.getpid(), flush=True)
    sys.stdin.read()
    journal.close()
""")

HALF_LINE = '{"type":"model_update","session_id":"s","seq":1,"ts":1.0,"te'


class Holder:
    """The HOLDER script, running: `pid`, and `stop()` (a clean close) or `kill()`."""

    def __init__(self, path, half_line: str = HALF_LINE) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), half_line],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        word, pid = self.proc.stdout.readline().split()
        assert word == b"holding"
        self.pid = int(pid)

    def stop(self) -> None:
        self.proc.communicate(b"")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def holder(tmp_path):
    held = Holder(tmp_path / "run.jsonl")
    yield held
    if held.proc.poll() is None:
        held.kill()


def test_a_second_writer_is_refused_with_the_first_ones_pid(tmp_path, holder) -> None:
    path = tmp_path / "run.jsonl"
    before = path.read_bytes()
    with pytest.raises(JournalError) as caught:
        JsonlEventJournal(path)
    message = str(caught.value)
    assert f"is being written by another process (pid {holder.pid})" in message
    assert "--journal" in message and "\n" not in message
    assert caught.value.path == str(path)
    # The first writer's line in flight is still there, byte for byte.
    assert path.read_bytes() == before and before.endswith(HALF_LINE.encode())


@pytest.mark.parametrize("fsync", ["always", "boundary", "never"])
def test_every_fsync_policy_locks(tmp_path, holder, fsync) -> None:
    with pytest.raises(JournalError, match="being written by another process"):
        JsonlEventJournal(tmp_path / "run.jsonl", fsync=fsync)


def test_the_first_writer_finishes_its_line_after_a_refused_second(tmp_path, holder) -> None:
    path = tmp_path / "run.jsonl"
    for _ in range(3):  # however many times someone tries
        with pytest.raises(JournalError):
            JsonlEventJournal(path)
    with open(path, "ab") as f:  # the holder's own line goes on (as its next write would)
        f.write(b'xt":"hi"}\n')
    holder.stop()
    events = list(read_journal(path))
    assert [e.type for e in events] == ["agent_start", "model_update"]
    assert events[1].text == "hi"


def test_a_path_reached_another_way_is_the_same_journal(tmp_path, holder) -> None:
    path = tmp_path / "run.jsonl"
    (tmp_path / "sub").mkdir()
    os.symlink(path, tmp_path / "link.jsonl")
    os.link(path, tmp_path / "hard.jsonl")
    for other in (tmp_path / "hard.jsonl", tmp_path / "sub" / ".." / "run.jsonl"):
        with pytest.raises(JournalError, match=f"pid {holder.pid}"):
            JsonlEventJournal(other)
    with pytest.raises(JournalError, match="symbolic link"):  # never through a link at all
        JsonlEventJournal(tmp_path / "link.jsonl")


def test_readers_neither_lock_nor_repair_a_journal_being_written(tmp_path, holder) -> None:
    path = tmp_path / "run.jsonl"
    before = path.read_bytes()
    reader = read_journal(path)
    assert [e.type for e in reader] == ["agent_start"] and reader.torn_tail
    with JournalIndex(path) as index:
        index.scan()
        assert len(index) == 1 and index.pending == len(HALF_LINE)
    from cockpit.export import export_journal
    from cockpit.journals import summarize

    assert export_journal(path, "markdown").events == 1
    assert summarize(path).task == "first writer"
    assert path.read_bytes() == before
    with pytest.raises(JournalError, match=f"pid {holder.pid}"):  # still locked by the holder
        JsonlEventJournal(path)


def test_a_killed_writer_leaves_the_journal_to_the_next_which_cuts_its_torn_line(tmp_path,
                                                                                 holder) -> None:
    path = tmp_path / "run.jsonl"
    holder.kill()  # mid-line: the kernel drops its lock with it
    with JsonlEventJournal(path) as journal:
        journal.write(ModelUpdate(text="after", seq=1, session_id="s"))
    events = list(read_journal(path))
    assert [e.type for e in events] == ["agent_start", "model_update"]
    assert events[1].text == "after"
    assert HALF_LINE.encode() not in path.read_bytes()


def test_a_cleanly_closed_writer_lets_the_next_one_in(tmp_path, holder) -> None:
    holder.stop()
    with JsonlEventJournal(tmp_path / "run.jsonl") as journal:
        journal.write(ModelUpdate(text="second run", seq=1, session_id="s"))


def test_one_process_cannot_open_its_own_journal_twice(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    first = JsonlEventJournal(path)
    with pytest.raises(JournalError, match=f"pid {os.getpid()}"):
        JsonlEventJournal(path)
    first.close()
    JsonlEventJournal(path).close()  # closing releases it


def test_a_journal_that_fails_to_open_holds_no_lock(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    first = JsonlEventJournal(path)
    for _ in range(5):
        with pytest.raises(JournalError):
            JsonlEventJournal(path)
    first.close()
    with JsonlEventJournal(path) as journal:  # none of the refused opens left a lock behind
        journal.write(AgentStart(task="t", engine="e"))


def test_without_the_kernels_lock_table_the_refusal_names_no_pid(tmp_path, holder,
                                                                 monkeypatch) -> None:
    monkeypatch.setattr(journal_module, "PROC_LOCKS", str(tmp_path / "no-such-table"))
    with pytest.raises(JournalError) as caught:
        JsonlEventJournal(tmp_path / "run.jsonl")
    assert "being written by another process;" in str(caught.value)


def _table_for(path, rows: list[str], tmp_path):
    """A fake /proc/locks holding `rows`, where `{dev}` and `{ino}` stand for `path`'s."""
    info = os.stat(path)
    dev = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}"
    table = tmp_path / "locks"
    table.write_text("".join(r.format(dev=dev, ino=info.st_ino) + "\n" for r in rows))
    return table


@pytest.mark.parametrize(("rows", "pid"), [
    (["1: FLOCK  ADVISORY  WRITE 4242 {dev}:{ino} 0 EOF"], 4242),
    (["1: POSIX  ADVISORY  WRITE 1 {dev}:{ino} 0 EOF",
      "2: FLOCK  ADVISORY  READ  2 {dev}:{ino} 0 EOF",
      "3: FLOCK  ADVISORY  WRITE 7 {dev}:{ino} 0 EOF"], 7),
    (["1: FLOCK  ADVISORY  WRITE 7 {dev}:{ino} 0 EOF",
      "1: -> FLOCK  ADVISORY  WRITE 9 {dev}:{ino} 0 EOF"], 7),  # a waiter is not the holder
    (["1: FLOCK  ADVISORY  WRITE 5 ab:cd:{ino} 0 EOF"], 5),  # another device number (btrfs)
    (["1: FLOCK  ADVISORY  WRITE 5 ab:cd:{ino} 0 EOF",
      "2: FLOCK  ADVISORY  WRITE 6 ef:01:{ino} 0 EOF"], None),  # two such: cannot tell
    (["1: FLOCK  ADVISORY  WRITE 0 {dev}:{ino} 0 EOF"], None),  # another pid namespace
    (["1: FLOCK  ADVISORY  WRITE x {dev}:{ino} 0 EOF", "garbage", ""], None),
    (["1: FLOCK  ADVISORY  WRITE 8 {dev}:1{ino} 0 EOF"], None),  # another file
    ([], None),
])
def test_the_writers_pid_comes_from_the_kernels_lock_table(tmp_path, monkeypatch, rows,
                                                           pid) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"")
    monkeypatch.setattr(journal_module, "PROC_LOCKS", str(_table_for(path, rows, tmp_path)))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert journal_module.writer_pid(fd) == pid
    finally:
        os.close(fd)


def test_a_device_is_a_stream_not_locked(tmp_path) -> None:
    # /dev/null is shared by every process: locking it would make two runs refuse each other.
    first, second = JsonlEventJournal("/dev/null"), JsonlEventJournal("/dev/null")
    first.write(AgentStart(task="t", engine="e"))
    second.write(AgentStart(task="t", engine="e"))
    first.close()
    second.close()


def test_the_cli_refuses_a_journal_another_run_is_writing(tmp_path, holder, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    path = tmp_path / "run.jsonl"
    before = path.read_bytes()
    result = CliRunner().invoke(app, ["demo", "--headless", "--speed", "0", "--journal",
                                      str(path)])
    assert result.exit_code == 2
    assert result.output.startswith("cockpit: error: journal ")
    assert f"being written by another process (pid {holder.pid})" in result.output
    assert "Traceback" not in result.output
    assert path.read_bytes() == before


def test_the_journal_holds_what_was_written_before_the_lock_was_taken(tmp_path) -> None:
    # An older cockpit (no lock) crashed mid-line: the first locked writer still repairs it.
    path = tmp_path / "run.jsonl"
    path.write_bytes(dump_event(AgentStart(task="t", engine="e")) + b"\n" + HALF_LINE.encode())
    with JsonlEventJournal(path) as journal:
        journal.write(ModelUpdate(text="x", seq=1))
    assert [e.type for e in read_journal(path)] == ["agent_start", "model_update"]
