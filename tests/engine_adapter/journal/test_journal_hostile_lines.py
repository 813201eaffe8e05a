"""Hostile journal lines against every reader: `read_journal`, the index and fold (replay, follow
mode), `export`, `journals` and the viewer. A line nested past any parser's limit, a timestamp
no clock can show, garbage around lines, CRLF, a byte order mark: each is a bad line (reported,
with its number, the same by every reader) or read as it should be, never a traceback."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.journals import fixture_events
from support.pilot import until_shown
from typer.testing import CliRunner

from cockpit.cli.journals import check_journal
from cockpit.cli.main import app as cli_app
from cockpit.export import export_journal
from cockpit.journals import list_journals, summarize
from cockpit.replay import ReplayApp
from engine_adapter import JournalError, read_journal
from engine_adapter.events import (
    BAD_TIME,
    MAX_TS,
    EventParseError,
    TurnStart,
    dump_event,
    format_ts,
    is_valid_ts,
    parse_event,
)
from engine_adapter.journal import BOM, decode_json, is_blank
from engine_adapter.replay import JournalReplay

BAD_TS = ["1e300", "NaN", "-NaN", "Infinity", "-Infinity", "-1e18", "-1", "-0.001", "1e20",
          str(int(MAX_TS)), "253402300800.0", "1" + "0" * 400, "1e400", "-1e400", '"1700000000"',
          "true", "false", "null", "[]", "{}", '"now"']
GOOD_TS = ["0", "0.0", "-0.0", "1", "1700000000", "1700000000.123456", "253402300799.999",
           "1.7e9", "17E8"]


def deep_lines(levels: int) -> list[bytes]:
    """Lines nested `levels` deep, in the shapes that reach different parsers."""
    opening, closing = b"[" * levels, b"]" * levels
    head = b'{"type":"tool_start","session_id":"s","seq":2,"ts":1002.0,"call_id":"c","tool":"t",'
    return [
        opening + closing,  # not even an object
        b'{"x":' + b'{"y":' * levels + b"1" + b"}" * levels + b"}",
        head + b'"tool_input":{"a":' + opening + closing + b"}}",  # looks like pydantic's own
        b'{"type": "tool_start", "tool_input": ' + opening + closing + b"}",  # spaced: decoded
        b'{"type":"model_update","text":"x","extra":' + opening + closing + b"}",
        b'{"type":"from_the_future","deep":' + opening + closing + b"}",
    ]


def ts_line(ts: str, kind: str = "model_update") -> bytes:
    if kind == "agent_start":
        return b'{"type":"agent_start","session_id":"s","seq":0,"ts":%s,"task":"t","engine":"e"}' \
            % ts.encode()
    if kind == "agent_end":
        return b'{"type":"agent_end","session_id":"s","seq":9,"ts":%s,"status":"completed"}' \
            % ts.encode()
    return b'{"type":"model_update","session_id":"s","seq":5,"ts":%s,"text":"x","turn":1}' \
        % ts.encode()


GARBAGE = [
    b"\x00\x01\x02", b"\xff\xfe\xfd", b"\xc0\xaf", b"{", b"}", b"null", b"[]", b'"text"', b"42",
    b"{} trailing", b'{"type":"turn_start","turn":1}{"type":"turn_start","turn":2}',
    b'{"type":7}', b'{"type":null}', b'{"no_type":1}', b"\x1b[2J\x1b]0;pwned\x07",
    b"x" * 200_000, b"\x00" * 10, b"\xef\xbb", b'{"type":"turn_start","turn":1,"ts":"\\ud800"}',
    b'{"type":"turn_start","turn":"\\u0000"}', b'{"type":"tool_end","ok":false}',
    b"\x0c", b"\x0b", b" \x0c ", b"\x0c{}",
]


def assemble(tmp_path, middle: list[bytes], *, name: str = "run.jsonl", crlf: bool = False,
             bom: bool = False) -> tuple:
    """A journal: the fixture run's events with `middle` lines after its 4th; returns the path
    and the 1-based line numbers of the `middle` lines."""
    good = [dump_event(e) for e in fixture_events(2)]
    lines = good[:4] + middle + good[4:]
    end = b"\r\n" if crlf else b"\n"
    path = tmp_path / name
    path.write_bytes((BOM if bom else b"") + end.join(lines) + end)
    return path, list(range(5, 5 + len(middle)))


def readers_agree(path, bad: list[int]) -> None:
    """Every reader reads the journal, and they agree on which lines are bad."""
    reader = read_journal(path, strict=False)
    events = list(reader)
    assert reader.bad_lines == bad and not reader.torn_tail
    if bad:
        with pytest.raises(JournalError) as caught:
            list(read_journal(path))
        assert caught.value.line == bad[0] and f"line {bad[0]}" in str(caught.value)
    else:
        assert len(list(read_journal(path))) == len(events)
    for fmt in ("markdown", "html"):
        result = export_journal(path, fmt)
        assert result.corrupt_lines == bad and result.events == len(events)
    replay = JournalReplay(path)
    try:
        replay.read_through()
        assert sorted(replay.index.corrupt.values()) == bad
        assert replay.state_at(len(replay)).events == len(events)
    finally:
        replay.close()
    assert check_journal(str(path)) is None  # some events: replayable
    summarize(path)


# -- deep lines ---------------------------------------------------------------------------------

@pytest.mark.parametrize("levels", [201, 202, 256, 999, 1_000, 5_000, 50_000, 200_000])
def test_a_line_nested_past_any_parsers_limit_is_a_bad_line(tmp_path, levels) -> None:
    path, numbers = assemble(tmp_path, deep_lines(levels))
    # The two shapes of an unknown or valid-looking type that are not too deep for the event
    # parser would be events; at these depths each one is a bad line.
    readers_agree(path, numbers)


@pytest.mark.parametrize("levels", [1, 50, 150, 197])
def test_a_line_nested_within_the_readers_limit_reads(tmp_path, levels) -> None:
    # (a tool_input 197 deep is the deepest the strict reader takes: 199 levels in all)
    path, _ = assemble(tmp_path, deep_lines(levels)[2:3])
    readers_agree(path, [])
    assert any(e.type == "tool_start" and e.call_id == "c" for e in read_journal(path))


@pytest.mark.parametrize("levels", [1_000, 50_000])
def test_cli_commands_on_a_deep_line_say_so_in_one_line(tmp_path, monkeypatch, levels) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    path, numbers = assemble(folder, deep_lines(levels))
    first_deep = folder / "first.jsonl"  # a deep first line: the listing reads it
    first_deep.write_bytes(deep_lines(levels)[0] + b"\n")
    result = CliRunner().invoke(cli_app, ["export", str(path)])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert f"line {numbers[0]} of" in result.output and "corrupt" in result.output
    result = CliRunner().invoke(cli_app, ["journals"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "unreadable" in result.output and "completed" in result.output
    result = CliRunner().invoke(cli_app, ["export", str(first_deep)])
    assert result.exit_code == 1 and "no line is an event" in result.output


# -- timestamps ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ts", BAD_TS)
def test_the_schema_rejects_every_bad_timestamp(ts) -> None:
    with pytest.raises(EventParseError, match=r"\.ts|Invalid JSON"):
        parse_event(ts_line(ts))


@pytest.mark.parametrize("ts", GOOD_TS)
def test_the_schema_takes_every_valid_timestamp(ts) -> None:
    event = parse_event(ts_line(ts))
    assert is_valid_ts(event.ts) and format_ts(event.ts) != BAD_TIME


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, MAX_TS, 1e300, 10**400])
def test_an_event_built_with_a_bad_timestamp_is_refused(value) -> None:
    with pytest.raises(ValueError, match="ts"):
        TurnStart(turn=1, ts=value)


@pytest.mark.parametrize("ts", BAD_TS)
@pytest.mark.parametrize("kind", ["agent_start", "model_update", "agent_end"])
def test_a_bad_timestamp_is_a_bad_line_for_every_reader(tmp_path, ts, kind) -> None:
    path, numbers = assemble(tmp_path, [ts_line(ts, kind)])
    readers_agree(path, numbers)


@pytest.mark.parametrize("ts", [*BAD_TS, "1e-300", "9e15"])
def test_journals_shows_a_first_lines_bad_time_as_bad_time(tmp_path, ts) -> None:
    (tmp_path / "a.jsonl").write_bytes(ts_line(ts, "agent_start") + b"\n"
                                       + ts_line("1700000000", "agent_end") + b"\n")
    (tmp_path / "b.jsonl").write_bytes(ts_line("1700000000", "agent_start") + b"\n")
    listed = {s.path.name: s for s in list_journals(tmp_path)}
    assert set(listed) == {"a.jsonl", "b.jsonl"}
    summary = listed["a.jsonl"]
    shown = format_ts(summary.started)
    if ts == "-NaN":  # not JSON at all: the first line is unreadable, the file's time is shown
        assert summary.status == "unreadable" and shown != BAD_TIME
        return
    assert shown == (BAD_TIME if ts != "1e-300" else format_ts(0))
    assert summary.status == "completed" and summary.task == "t"
    assert list(listed) == ["b.jsonl", "a.jsonl"]  # a bad time sorts as the oldest


@pytest.mark.parametrize("value", [None, "1", True, False, float("nan"), float("inf"),
                                   float("-inf"), -1, -1e-9, MAX_TS, 1e300, 10**400, -(10**400),
                                   [], object()])
def test_format_ts_shows_anything_invalid_as_bad_time(value) -> None:
    assert format_ts(value) == BAD_TIME
    assert format_ts(value, "%H:%M", millis=True) == BAD_TIME


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(), st.integers(), st.booleans(), st.none(), st.text(max_size=3)))
def test_format_ts_never_raises(value) -> None:
    shown = format_ts(value, millis=True)
    assert (shown == BAD_TIME) != is_valid_ts(value) or shown == BAD_TIME
    if isinstance(value, float) and not math.isfinite(value):
        assert shown == BAD_TIME


def test_the_cli_lists_bad_times_without_a_traceback(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    for i, ts in enumerate(BAD_TS):
        (folder / f"{i}.jsonl").write_bytes(ts_line(ts, "agent_start") + b"\n")
    result = CliRunner().invoke(cli_app, ["journals", "--limit", "100"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert result.output.count(BAD_TIME) == len(BAD_TS) - 1  # -NaN is not JSON: unreadable
    assert result.output.count("unreadable") == 1
    for i in range(len(BAD_TS)):  # export of each: the line is named as corrupt, no traceback
        result = CliRunner().invoke(cli_app, ["export", str(folder / f"{i}.jsonl")])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "line 1 of" in result.output or "no line is an event" in result.output


# -- garbage, line endings, byte order marks ----------------------------------------------------

@pytest.mark.parametrize("garbage", GARBAGE)
def test_garbage_between_events_is_a_bad_line(tmp_path, garbage) -> None:
    path, numbers = assemble(tmp_path, [garbage])
    readers_agree(path, numbers)


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("bom", [False, True])
def test_crlf_and_a_byte_order_mark_read_like_plain_lines(tmp_path, crlf, bom) -> None:
    path, _ = assemble(tmp_path, [], crlf=crlf, bom=bom)
    readers_agree(path, [])
    events = list(read_journal(path))
    assert [e.seq for e in events] == list(range(len(events)))
    assert summarize(path).task == "fix the bug"


def test_a_byte_order_mark_on_every_line_is_skipped(tmp_path) -> None:
    # Files saved by an editor and then concatenated: each starts with a BOM.
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(BOM + dump_event(e) + b"\n" for e in fixture_events(1)))
    readers_agree(path, [])


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf{}", b"\xef\xbb\xbf[1]", b"{}", b" {} \r\n"])
def test_decode_json_skips_a_byte_order_mark(raw) -> None:
    assert decode_json(raw) in ({}, [1])


@pytest.mark.parametrize("raw", [b"[" * 50_000, b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf{}",
                                 b"\xff", b"{} x", b"", b"1" * 5_000])
def test_decode_json_raises_only_value_error(raw) -> None:
    with pytest.raises(ValueError):  # the one error readers catch
        decode_json(raw)


LINE_KINDS = st.one_of(
    st.just("good"),
    st.sampled_from(GARBAGE[:12]),
    st.builds(lambda ts, kind: ts_line(ts, kind), st.sampled_from(BAD_TS),
              st.sampled_from(["agent_start", "model_update", "agent_end"])),
    st.builds(lambda levels, shape: deep_lines(levels)[shape],
              st.sampled_from([201, 1_000, 20_000]), st.integers(0, 5)),
    st.sampled_from([b"", b"   ", b"\t", b" \r ", b"\x0c", b"\x0b", b" \x0c "]),
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(kinds=st.lists(LINE_KINDS, max_size=12), crlf=st.booleans(), bom=st.booleans())
def test_any_mix_of_bad_lines_is_read_alike_by_every_reader(tmp_path, kinds, crlf, bom) -> None:
    good = iter(dump_event(e) for e in fixture_events(3))
    lines = [next(good, dump_event(fixture_events(1)[1])) if k == "good" else k for k in kinds]
    lines = [dump_event(fixture_events(1)[0]), *lines]  # a first event: something to read
    end = b"\r\n" if crlf else b"\n"
    path = tmp_path / f"mix-{abs(hash((tuple(lines), crlf, bom)))}.jsonl"
    path.write_bytes((BOM if bom else b"") + end.join(lines) + end)
    expected = [n for n, line in enumerate(lines, 1)
                if not is_blank(line) and not _is_event(line)]
    readers_agree(path, expected)


def _is_event(line: bytes) -> bool:
    try:
        parse_event(line.removeprefix(BOM))
    except EventParseError:
        return False
    return True


# -- the viewer -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["deep", "bad_ts", "garbage"])
def test_the_viewer_steps_through_hostile_lines_and_inspects_them(tmp_path, case) -> None:
    middle = {"deep": deep_lines(50_000)[:4],
              "bad_ts": [ts_line("NaN", "agent_start"), ts_line("1e300"),
                         ts_line("-1e18", "agent_end"), ts_line("Infinity")],
              "garbage": [GARBAGE[1], GARBAGE[11], GARBAGE[14], GARBAGE[-1]]}[case]
    path, numbers = assemble(tmp_path, middle)

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: app.replay_screen.complete
                        and app.position_shown >= 0)
            problems = app.replay_screen.timeline.state.problems
            assert f"{len(numbers)} corrupt lines skipped" in problems
            await pilot.press(*["right"] * 3)
            for number in numbers:  # each bad line: shown, and its bytes inspected
                await pilot.press("right", "enter")
                assert f"journal line {number}" in app.screen._title
                await pilot.press("escape")
            assert BAD_TIME not in str(app.replay_screen.timeline.state.when)
            await pilot.press("end")
            assert app.replay_screen.view.status == "completed"

    asyncio.run(main())


# -- a reader folding while the index grows ------------------------------------------------------

@pytest.mark.parametrize("middle", [[], deep_lines(300), GARBAGE[:6], [b"x" * (9 << 20)]])
def test_a_position_is_readable_the_moment_it_counts(tmp_path, monkeypatch, middle) -> None:
    """Whenever the index grows (line by line, a long line, a clean chunk), every position it
    already counts reads back whole: the replay viewer folds those while the scan goes on."""
    from engine_adapter.journal.index import JournalIndex, classify_lines

    path, _ = assemble(tmp_path, middle)
    expected = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    checked = []

    def check_visible(index) -> None:
        for position in range(len(index)):
            assert index.raw(position) == expected[position]
            assert index.codes[position] is not None
        checked.append(len(index))

    original_add = JournalIndex._add

    def add(self, *args):
        check_visible(self)
        original_add(self, *args)
        check_visible(self)

    def classify(chunk):  # (called while a chunk is added: its positions do not count yet)
        check_visible(index)
        return classify_lines(chunk)

    monkeypatch.setattr(JournalIndex, "_add", add)
    with JournalIndex(path) as index:
        index.scan(classify=classify)
        check_visible(index)
        assert len(index) == len(expected)
    assert checked


def test_a_listed_file_whose_first_line_is_no_event_does_not_count_its_lines(tmp_path,
                                                                            monkeypatch) -> None:
    """Lines of a file that is not (or no longer) a journal are not known to be events."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.journals import describe_length, summarize
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    notes = folder / "notes.jsonl"
    notes.write_text("".join(f"line {i} of prose\n" for i in range(7)))
    summary = summarize(notes)
    assert summary.status == "unreadable" and describe_length(summary) == "?"
    result = CliRunner().invoke(cli_app, ["journals"])
    assert result.exit_code == 0 and "? events" in result.output
    assert "7 events" not in result.output
