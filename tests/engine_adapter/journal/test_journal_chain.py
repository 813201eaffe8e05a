"""Tamper evidence: the hash chain the writer puts in each line, and what `check_lines` says
of a journal that was edited after the run: any single change, removal, insertion, duplicate
or move of a line is found at the line where the file stops following its chain."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_adapter import (
    AgentEnd,
    AgentStart,
    JsonlEventJournal,
    ModelUpdate,
    ToolEnd,
    ToolStart,
    read_journal,
)
from engine_adapter.events import dump_event
from engine_adapter.journal import ChainVerdict, chain_of, check_lines

GOLDEN = Path(__file__).parents[2] / "golden"
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

texts = st.one_of(st.text(max_size=20), st.sampled_from(
    ['","chain":"0123456789abcdef"}', ',"chain":"', '"}', "\n", "\r\n", "\\", '"', "é—✓",
     '{"type":"agent_end"}']))


def events_of(texts_: list[str], *, end: bool = True) -> list:
    events: list = [AgentStart(task="t", engine="e")]
    for i, text in enumerate(texts_):
        if i % 3 == 2:
            events += [ToolStart(call_id=f"c{i}", tool="shell", tool_input={"command": text}),
                       ToolEnd(call_id=f"c{i}", tool="shell", ok=True, output=text)]
        else:
            events.append(ModelUpdate(text=text, turn=1))
    if end:
        events.append(AgentEnd(status="completed", result="done"))
    return [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
            for i, e in enumerate(events)]


def written(path: Path, events: list) -> list[bytes]:
    """The lines the real journal writer writes for `events`."""
    with JsonlEventJournal(path, fsync="never") as journal:
        for event in events:
            journal.write(event)
    return path.read_bytes().splitlines(keepends=True)


def check(lines: list[bytes]) -> ChainVerdict:
    return check_lines(lines)


@SETTINGS
@given(texts_=st.lists(texts, max_size=12))
def test_an_intact_journal_always_verifies_and_reads_back_the_same(tmp_path, texts_) -> None:
    path = tmp_path / "run.jsonl"
    path.unlink(missing_ok=True)
    events = events_of(texts_)
    lines = written(path, events)
    verdict = check(lines)
    assert verdict.status == "intact", verdict.summary()
    assert verdict.lines == len(events) and verdict.ended
    assert verdict.summary() == f"intact: {len(events)} lines"
    assert all(chain_of(line) is not None for line in lines)
    assert list(read_journal(path)) == events  # the mark is never an event's extra field


@st.composite
def tampered(draw):
    """A chained journal and one edit of it: `(lines, edited lines, the 1-based first line that
    differs)`. Only the last line may not be removed (that is a cut-off end: see below)."""
    events = events_of(draw(st.lists(texts, min_size=2, max_size=10)))
    lines = b"".join(
        _chained(events)).splitlines(keepends=True)
    n = len(lines)
    kind = draw(st.sampled_from(["edit", "mark", "delete", "insert", "duplicate", "swap",
                                 "move", "foreign", "unchained", "crlf", "space"]))
    k = draw(st.integers(0, n - 1))
    out = list(lines)
    if kind == "edit":  # one byte of the event changed (not its newline)
        line = out[k]
        at = draw(st.integers(0, len(line) - 30))
        byte = draw(st.integers(0x20, 0x7e).filter(lambda b: b != line[at]))
        out[k] = line[:at] + bytes([byte]) + line[at + 1:]
    elif kind == "mark":  # the chain value itself changed
        line = out[k]
        digit = draw(st.sampled_from(b"0123456789abcdef").filter(lambda b: b != line[-5]))
        out[k] = line[:-5] + bytes([digit]) + line[-4:]
    elif kind == "delete":
        k = draw(st.integers(0, n - 2))
        del out[k]
    elif kind == "insert":  # a line of the same run, copied anywhere
        out.insert(k, lines[draw(st.integers(0, n - 1))])
    elif kind == "duplicate":
        out.insert(k + 1, lines[k])
        k += 1
    elif kind == "swap":
        j = draw(st.integers(0, n - 1).filter(lambda j: j != k))
        k, j = min(k, j), max(k, j)
        out[k], out[j] = out[j], out[k]
    elif kind == "move":
        j = draw(st.integers(0, n - 1).filter(lambda j: j != k))
        out.insert(j, out.pop(k))
        k = min(k, j)
    elif kind == "foreign":  # a line of another chained journal, with its own genuine mark
        # (of another session: a run that shares this one's first lines continues it genuinely)
        other = b"".join(_chained([e.model_copy(update={"session_id": "other"})
                                   for e in events_of(["other run"])])).splitlines(keepends=True)
        # (another journal's first line on top starts a chain of its own: see the test below)
        out.insert(k, other[draw(st.integers(1 if k == 0 else 0, len(other) - 1))])
    elif kind == "unchained":  # the line as an older version wrote it (no mark)
        out[k] = dump_event(events[k]) + b"\n"
    elif kind == "crlf":
        out[k] = out[k][:-1] + b"\r\n"
    else:
        out[k] = out[k][:-2] + b' }\n'
    # The first line where the edited file differs from the journal (an insertion of a line
    # equal to the one there differs only after it).
    first = next(i for i in range(len(out) + 1) if i >= len(lines) or out[i] != lines[i])
    return lines, out, first + 1


def _chained(events: list) -> list[bytes]:
    from engine_adapter.journal import SEED, mark_line

    link, out = SEED, []
    for event in events:
        line, link = mark_line(dump_event(event) + b"\n", link)
        out.append(line)
    return out


@SETTINGS
@given(case=tampered())
def test_any_single_edit_is_found_at_its_line(case) -> None:
    lines, edited, first = case
    assert check(lines).status == "intact"
    verdict = check(edited)
    assert verdict.status == "changed", (verdict.summary(), first)
    assert verdict.line == first, verdict.summary()
    assert verdict.summary().startswith(f"changed at line {first}: ")


def test_the_writer_and_mark_line_agree(tmp_path) -> None:
    events = events_of(["a", "b", "c"])
    assert written(tmp_path / "run.jsonl", events) == _chained(events)


def test_lines_cut_off_the_end_read_as_a_run_that_stopped(tmp_path) -> None:
    """Whole lines removed from the end leave a chain that holds: the chain cannot tell that
    from a crash, and the verdict says the run has no end rather than calling it intact."""
    lines = written(tmp_path / "run.jsonl", events_of(["a", "b", "c", "d"]))
    verdict = check(lines[:-2])
    assert verdict.status == "intact" and not verdict.ended
    assert "ends without agent_end" in verdict.summary()
    assert "the chain cannot tell" in verdict.summary()


@pytest.mark.parametrize("cut", [2, 5, 20, 40, 120])
def test_a_torn_last_line_is_a_crash_not_tampering(tmp_path, cut) -> None:
    lines = written(tmp_path / "run.jsonl", events_of(["a", "b"], end=False))
    verdict = check([*lines[:-1], lines[-1][:-cut]])
    assert verdict.status == "intact" and verdict.torn_tail, verdict.summary()
    assert verdict.lines == len(lines) - 1
    assert "torn last line" in verdict.summary()


def test_a_whole_last_line_without_its_newline_verifies(tmp_path) -> None:
    lines = written(tmp_path / "run.jsonl", events_of(["a"]))
    verdict = check([*lines[:-1], lines[-1][:-1]])
    assert verdict.status == "intact" and not verdict.torn_tail and verdict.ended


def test_blank_lines_and_a_byte_order_mark_change_nothing(tmp_path) -> None:
    lines = written(tmp_path / "run.jsonl", events_of(["a", "b"]))
    verdict = check([b"\xef\xbb\xbf" + lines[0], b"\n", *lines[1:], b"  \n"])
    assert verdict.status == "intact", verdict.summary()


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.jsonl")))
def test_golden_journals_read_as_unchained_never_as_tampered(name) -> None:
    """Journals from before the chain read as unchained; one written since (v4-rewind) as
    intact. Neither is ever called tampered."""
    lines = (GOLDEN / name).read_bytes().splitlines(keepends=True)
    verdict = check(lines)
    expected = "intact" if b'"chain":' in lines[0] else "unchained"
    assert verdict.status == expected, verdict.summary()
    assert verdict.summary().startswith(f"{expected}: ")


def test_an_empty_journal() -> None:
    assert check([]).status == "empty"
    assert check([b"\n", b"\n"]).status == "empty"


def test_a_resumed_journal_keeps_its_chain(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    events = events_of(["a", "b", "c", "d"])
    written(path, events[:3])
    with JsonlEventJournal(path, fsync="never") as journal:  # a second run appends
        for event in events[3:]:
            journal.write(event)
    verdict = check(path.read_bytes().splitlines(keepends=True))
    assert verdict.status == "intact" and verdict.lines == len(events), verdict.summary()


def test_a_resumed_journal_after_a_torn_tail_keeps_its_chain(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    events = events_of(["a", "b", "c"])
    written(path, events[:3])
    with path.open("ab") as f:
        f.write(b'{"type":"model_update","session_id":"s","se')  # a crash mid-write
    with JsonlEventJournal(path, fsync="never") as journal:  # the writer cuts it, then appends
        for event in events[3:]:
            journal.write(event)
    verdict = check(path.read_bytes().splitlines(keepends=True))
    assert verdict.status == "intact" and verdict.lines == len(events), verdict.summary()


def test_a_journal_of_an_older_version_resumed_is_partly_unchained(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    old = (GOLDEN / "v3-demo.jsonl").read_bytes()
    path.write_bytes(old)
    with JsonlEventJournal(path, fsync="never") as journal:
        journal.write(ModelUpdate(text="resumed", turn=1))
    verdict = check(path.read_bytes().splitlines(keepends=True))
    old_lines = len(old.splitlines())
    assert verdict.status == "partly-unchained", verdict.summary()
    assert verdict.unchained_lines == old_lines and verdict.chained_lines == 1
    assert f"lines 1-{old_lines} written before" in verdict.summary()


def test_unchained_lines_put_before_a_chained_journal_are_not_intact(tmp_path) -> None:
    """Forged lines of the old shape in front of a genuine journal: reported as unchained
    lines, never as an intact journal."""
    lines = written(tmp_path / "run.jsonl", events_of(["a"]))
    forged = dump_event(ModelUpdate(text="forged", turn=1, session_id="s")) + b"\n"
    verdict = check([forged, *lines])
    assert verdict.status == "partly-unchained" and verdict.unchained_lines == 1


def test_every_mark_stripped_after_the_first_line_is_found(tmp_path) -> None:
    lines = written(tmp_path / "run.jsonl", events_of(["a", "b"]))
    stripped = [lines[0], *(line[:-28] + b"}\n" for line in lines[1:])]
    verdict = check(stripped)
    assert verdict.status == "changed" and verdict.line == 2


@pytest.mark.parametrize("mark", [
    b',"chain": "0123456789abcdef"}\n', b', "chain":"0123456789abcdef"}\n',
    b',"chain":"0123456789ABCDEF"}\n', b',"chain":"0123456789abcde"}\n',
    b',"chain":""}\n', b',"chain":"0123456789abcdef" }\r\n'])
def test_a_reformatted_mark_is_a_change_even_with_no_chain_before_it(tmp_path, mark) -> None:
    """A tool that reformats lines (jq, an editor's line endings) must not turn a chained
    journal into one that reads as written before chains."""
    lines = written(tmp_path / "run.jsonl", events_of(["a"]))
    redone = [line[:-28] + mark for line in lines]
    verdict = check(redone)
    assert verdict.status == "changed" and verdict.line == 1, verdict.summary()
    assert "chain mark was altered" in verdict.how


def test_another_journal_s_first_line_on_top_breaks_the_chain_at_the_next_line(tmp_path) -> None:
    """A genuine first line of another run starts a chain of its own: the file stops following
    its chain at the line after it, the journal's own first line."""
    lines = written(tmp_path / "run.jsonl", events_of(["a"]))
    other = written(tmp_path / "other.jsonl", [e.model_copy(update={"session_id": "o"})
                                              for e in events_of(["b"])])
    verdict = check([other[0], *lines])
    assert verdict.status == "changed" and verdict.line == 2
