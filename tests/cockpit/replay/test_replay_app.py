"""The replay viewer driven by keys (Pilot): navigation, search, filter, inspector, follow."""

from __future__ import annotations

import asyncio

import pytest
from support.journals import fixture_events, write
from support.pilot import until_shown
from support.replay_app import opened, shown_equals_fold

from cockpit.replay import ReplayApp
from engine_adapter import JsonlEventJournal
from engine_adapter.journal import TYPE_CODES


@pytest.fixture
def journal(tmp_path):
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    write(path, events)
    return path, events


def test_opens_at_the_first_event_and_steps(journal) -> None:
    path, events = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            assert app.position_shown == 0
            await pilot.press("right", "right", "right")
            assert app.position_shown == 3 and shown_equals_fold(app, events, 3)
            await pilot.press("left")
            assert app.position_shown == 2 and shown_equals_fold(app, events, 2)
            await pilot.press("end")
            assert app.position_shown == len(events) - 1
            assert shown_equals_fold(app, events, len(events) - 1)
            await pilot.press("right")  # past the end: stays
            assert app.position_shown == len(events) - 1
            await pilot.press("home")
            assert app.position_shown == 0 and shown_equals_fold(app, events, 0)

    asyncio.run(main())


def test_jumps_between_tool_calls_approvals_and_errors(journal) -> None:
    path, events = journal
    tools = [i for i, e in enumerate(events) if e.type == "tool_start"]
    approvals = [i for i, e in enumerate(events) if e.type == "approval_requested"]
    bad = [i for i, e in enumerate(events)
           if e.type == "decision_error" or (e.type == "tool_end" and not e.ok)
           or (e.type == "approval_resolved" and not e.allowed)]

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("right_square_bracket")
            assert app.position_shown == tools[0]
            await pilot.press("right_square_bracket")
            assert app.position_shown == tools[1]
            await pilot.press("left_square_bracket")
            assert app.position_shown == tools[0]
            await pilot.press("right_curly_bracket")
            assert app.position_shown == approvals[0]
            await pilot.press("right_curly_bracket")
            assert app.position_shown == approvals[1]
            await pilot.press("left_curly_bracket")
            assert app.position_shown == approvals[0]
            await pilot.press("home")
            for expected in bad:
                await pilot.press("e")
                assert app.position_shown == expected
            await pilot.press("E")
            assert app.position_shown == bad[-2]
            assert shown_equals_fold(app, events, bad[-2])

    asyncio.run(main())


def test_search_with_match_count_and_n_N(journal) -> None:
    path, events = journal
    hits = [i for i, e in enumerate(events) if "thinking 3" in getattr(e, "text", "")]

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("slash", *"thinking 3", "enter")
            screen = app.replay_screen
            assert app.position_shown == hits[0]
            assert screen.timeline.state.search_text == "/thinking 3: 1/3 matches"
            await pilot.press("n")
            assert app.position_shown == hits[1]
            assert screen.timeline.state.search_text == "/thinking 3: 2/3 matches"
            await pilot.press("N", "N")
            assert app.position_shown == hits[-1]  # wraps around
            await pilot.press("slash", *"zzz", "enter")
            assert screen.timeline.state.search_text == "/zzz: no match"

    asyncio.run(main())


def _marked_rows(transcript) -> list[str]:
    """The transcript's rows on screen that hold a search mark (reverse video), as the text
    marked."""
    found = []
    for y in range(transcript.scrollable_content_region.height):
        marked = "".join(seg.text for seg in transcript.render_line(y)
                         if seg.style is not None and seg.style.reverse)
        if marked.strip():
            found.append(marked)
    return found


def test_search_marks_the_term_where_the_transcript_shows_it(journal) -> None:
    """Issue 26 §4: replay's search went to the matching event but marked nothing."""
    path, _events = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            from cockpit.widgets import Transcript

            transcript = app.replay_screen.query_one(Transcript)
            assert _marked_rows(transcript) == []
            await pilot.press("slash", *"out 1", "enter")
            await pilot.pause()
            assert _marked_rows(transcript) and set(_marked_rows(transcript)) == {"out 1"}
            await pilot.press("slash", *"OUT 1", "enter")  # upper case: matches that case only
            await pilot.pause()
            assert _marked_rows(transcript) == []
            await pilot.press("slash", "ctrl+a", "backspace", "enter")  # cleared: no marks
            await pilot.pause()
            assert _marked_rows(transcript) == []

    asyncio.run(main())


@pytest.mark.parametrize("text, term, marked", [
    ("out 1 and OUT 1", "out 1", ["out 1", "OUT 1"]),  # smart case: lower matches any
    ("out 1 and OUT 1", "OUT 1", ["OUT 1"]),
    ("a.b axb", "a.b", ["a.b"]),  # literal, not a pattern
    ("(x) [y] *", "[y]", ["[y]"]),
    ("终端 ls 终端", "终端", ["终端", "终端"]),  # wide characters: cells, not characters
    ("no match here", "zzz", []),
    ("aaaa", "aa", ["aa", "aa"]),
])
def test_highlighted_marks_each_match_literally(text, term, marked) -> None:
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    from cockpit.widgets.transcript.rows import highlighted, search_pattern

    half = len(text) // 2  # two segments: a match may span both
    strip = Strip([Segment(text[:half], Style(color="red")),
                   Segment(text[half:], Style(color="red", bold=True))])
    result = highlighted(strip, search_pattern(term), Style(reverse=True))
    assert result.text == strip.text and result.cell_length == strip.cell_length
    runs, current = [], ""
    for seg in result:
        if seg.style is not None and seg.style.reverse:
            current += seg.text
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    assert "".join(runs) == "".join(marked)
    assert all(seg.style.color is not None and seg.style.color.name == "red"
               for seg in result if seg.style is not None and seg.style.reverse)  # its colour
    assert isinstance(result, Strip)


def test_typing_in_the_search_box_is_not_taken_as_keys(journal) -> None:
    path, _ = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("slash", "e", "n", "f", "right", "escape")
            assert app.position_shown == 0
            assert not app.replay_screen.query_one("#search").has_class("-shown")

    asyncio.run(main())


def test_the_filters_boxes_say_ticked_or_not_without_colour(journal) -> None:
    """Issue 26 §4: Textual draws `X` in every box, ticked or not (colour tells them apart);
    the filter draws `✓` in a ticked box and nothing in an unticked one, as keys change them."""
    path, _events = journal

    def boxes(selection) -> list[str]:
        marks = []
        for y in range(selection.option_count):
            segments = list(selection.render_line(y))
            marks.append(segments[1].text)
        return marks

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("f")
            from cockpit.replay.filter import FilterScreen, TypeList

            assert isinstance(app.screen, FilterScreen)
            selection = app.screen.query_one(TypeList)
            await pilot.pause()
            assert set(boxes(selection)) == {"✓"}  # no filter yet: every type shown
            await pilot.press("space")  # untick the first
            marks = boxes(selection)
            assert marks[0] == " " and set(marks[1:]) == {"✓"}
            await pilot.press("down", "space")
            assert boxes(selection)[:2] == [" ", " "]
            await pilot.press("space")  # tick it again
            assert boxes(selection)[:2] == [" ", "✓"]
            assert "X" not in boxes(selection)
            selection.deselect_all()
            await pilot.pause()
            assert set(boxes(selection)) == {" "}

    asyncio.run(main())


def test_filter_limits_stepping_to_chosen_types(journal) -> None:
    path, events = journal
    tool_ends = [i for i, e in enumerate(events) if e.type == "tool_end"]

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("f")
            from textual.widgets import SelectionList

            from cockpit.replay.filter import FilterScreen

            assert isinstance(app.screen, FilterScreen)
            selection = app.screen.query_one(SelectionList)
            selection.deselect_all()
            selection.select(TYPE_CODES["tool_end"])
            await pilot.press("enter")
            screen = app.replay_screen
            assert screen.type_filter == {TYPE_CODES["tool_end"]}
            assert "tool_end" in screen.timeline.state.filter_text
            await pilot.press("right")
            assert app.position_shown == tool_ends[0]
            await pilot.press("right")
            assert app.position_shown == tool_ends[1]
            assert shown_equals_fold(app, events, tool_ends[1])
            await pilot.press("left")
            assert app.position_shown == tool_ends[0]

    asyncio.run(main())


def test_enter_inspects_the_raw_event(journal) -> None:
    path, _events = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("enter")
            from cockpit.screens import PagerScreen

            assert isinstance(app.screen, PagerScreen)
            assert '"type": "agent_start"' in app.screen._text
            await pilot.press("escape")
            assert app.screen is app.replay_screen

    asyncio.run(main())


def test_enter_expands_a_selected_transcript_item_as_in_the_live_view(journal) -> None:
    path, events = journal
    from cockpit.widgets import Transcript

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("end")
            await until_shown(pilot, lambda: app.position_shown == len(events) - 1)
            transcript = app.replay_screen.query_one(Transcript)
            await pilot.press("up")  # select the last row
            selected = transcript.selected
            assert selected is not None
            await pilot.press("enter")
            assert app.screen is app.replay_screen  # no raw-event pager: the row expanded
            assert selected.index in transcript._expanded

    asyncio.run(main())


def test_play_advances_by_timestamps_and_stops_at_the_end(journal) -> None:
    path, events = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("space")  # at 1x the first one-second gap is still running
            screen = app.replay_screen
            assert screen.playing and screen.timeline.state.playing
            for _ in range(8):
                await pilot.press("plus")
            assert screen.speed == 256
            await until_shown(pilot, lambda: not screen.playing)
            assert app.position_shown == len(events) - 1

    asyncio.run(main())


def test_follow_mode_shows_events_as_a_writer_adds_them(tmp_path) -> None:
    """A writer task appends to the journal while the viewer is open; the viewer, at the end,
    says it is following and shows each new event."""
    events = fixture_events()
    path = tmp_path / "live.jsonl"
    journal = JsonlEventJournal(path, fsync="never")
    for event in events[:5]:
        journal.write(event)

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False, poll=0.01)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: app.position_shown == 4)
            screen = app.replay_screen
            assert screen.timeline.state.following

            async def writer() -> None:
                for event in events[5:]:
                    journal.write(event)
                    await asyncio.sleep(0)
                journal.close()

            await writer()
            await until_shown(pilot, lambda: app.position_shown == len(events) - 1)
            assert shown_equals_fold(app, events, len(events) - 1)
            assert screen.view.status == "completed"

    asyncio.run(main())


def test_bad_input_reports_in_the_viewer(tmp_path) -> None:
    events = fixture_events()
    path = tmp_path / "run.jsonl"
    lines = [e.model_dump_json().encode() for e in events]
    lines.insert(4, b"{ corrupt")
    lines.insert(7, b'{"type":"from_the_future","session_id":"s","seq":1,"ts":2}')
    path.write_bytes(b"\n".join(lines) + b"\n" + b'{"type":"tool_e')

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            problems = app.replay_screen.timeline.state.problems
            assert "1 corrupt line skipped (line 5)" in problems
            assert "1 event of an unknown type" in problems
            assert "torn last line" in problems
            await pilot.press("end")
            assert app.replay_screen.view.status == "completed"

    asyncio.run(main())


def test_missing_file_in_the_app_shows_a_message(tmp_path) -> None:
    async def main() -> None:
        app = ReplayApp(tmp_path / "nope.jsonl", remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            error = app.replay_screen.query_one("#replay-error")
            assert error.has_class("-shown")
            assert "no journal at" in str(error.render())

    asyncio.run(main())


def test_picker_lists_recent_journals_and_opens_one(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    events = fixture_events()
    write(folder / "20260101-000000-a.jsonl", events)
    write(folder / "20260102-000000-b.jsonl",
          [e.model_copy(update={"ts": e.ts + 86_400, "task": "second"})
           if e.type == "agent_start" else e.model_copy(update={"ts": e.ts + 86_400})
           for e in events[:5]])

    async def main() -> None:
        app = ReplayApp(remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            from textual.widgets import DataTable

            table = app.screen.query_one(DataTable)
            assert table.row_count == 2
            assert "second" in str(table.get_row_at(0)[3])  # newest first
            assert str(table.get_row_at(0)[1]) == "crashed?"  # no agent_end, no writer
            title = str(app.screen.query_one("#picker-title").render())
            assert "crashed? = ended without a final event" in title
            await pilot.press("down", "enter")
            await until_shown(pilot, lambda: opened(app))
            assert app.replay_screen.path.name == "20260101-000000-a.jsonl"

    asyncio.run(main())


def test_i_shows_the_raw_events_behind_a_transcript_row_and_help_lists_replay_keys(journal):
    path, _ = journal

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("end", "up", "i")  # the last transcript row: the run's end
            from cockpit.screens import HelpScreen, PagerScreen

            assert isinstance(app.screen, PagerScreen)
            assert '"type":"agent_end"' in app.screen._text.replace(" ", "")
            await pilot.press("escape", "question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape", "q")
            await until_shown(pilot, lambda: not app.is_running)

    asyncio.run(main())


def test_a_jump_to_the_end_shows_the_bottom_of_the_transcript(tmp_path) -> None:
    events = fixture_events(turns=30)
    path = tmp_path / "long.jsonl"
    write(path, events)

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("end")
            from cockpit.widgets import Transcript

            transcript = app.replay_screen.query_one(Transcript)
            await until_shown(pilot, lambda: transcript.max_scroll_y > 0
                        and transcript.scroll_y == transcript.max_scroll_y)

    asyncio.run(main())


def test_picker_shows_hostile_journal_text_as_text(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    (folder / "evil.jsonl").write_text(
        '{"type":"agent_start","task":"[/] [bold]x\\u001b[31m","engine":"e","seq":0,"ts":1}\n'
        '{"type":"agent_end","status":"[/]\\u001b]0;pwned\\u0007","seq":1,"ts":2}\n')

    async def main() -> None:
        app = ReplayApp(remember_theme=False)
        async with app.run_test(size=(120, 36)):
            from textual.widgets import DataTable

            row = app.screen.query_one(DataTable).get_row_at(0)
            assert str(row[1]) == "unknown"
            assert str(row[3]) == "[/] [bold]x␛[31m"

    asyncio.run(main())


def test_a_marker_found_everywhere_is_dim_except_where_it_is_densest() -> None:
    """Errors all along the run must not bury the one denial, nor the stretch where errors
    cluster."""
    from array import array
    from types import SimpleNamespace

    from cockpit.replay.timeline import Timeline

    palette = SimpleNamespace(error="red", warning="yellow", accent="blue", success="green",
                              dim="grey")
    timeline = Timeline()
    errors = [*range(0, 1000, 10), *range(500, 510)]  # one a cell, and a cluster in cell 50
    timeline.markers.positions["error"] = array("I", sorted(errors))
    timeline.markers.positions["denial"] = array("I", [255])
    cells, styles = timeline._marker_cells(100, 1000, palette)
    assert cells[50] == "✗" and styles[50] == "red"  # the cluster stands out
    assert cells[25] == "⊘" and styles[25] == "yellow"  # the denial shows through
    assert cells[10] == "✗" and styles[10] == "grey"  # errors elsewhere are dim


def test_a_journal_read_a_little_at_a_time_shows_the_same(tmp_path, monkeypatch) -> None:
    """The path a big journal takes (read a chunk at a time while the first frame is up,
    streams folded in one step with their text read when drawn), forced on a small one."""
    from cockpit.replay import ReplayScreen
    from engine_adapter.events import (
        AgentEnd,
        AgentStart,
        ModelUpdate,
        ToolEnd,
        ToolStart,
        TurnEnd,
        TurnStart,
    )
    from engine_adapter.journal import index as journal_index

    events = [AgentStart(task="t", engine="test"), TurnStart(turn=1),
              *(ModelUpdate(text=f"thinking {k} ", turn=1, channel="thought") for k in range(40)),
              *(ModelUpdate(text=f"word {k} ", turn=1) for k in range(60)),
              ToolStart(call_id="c", tool="shell", tool_input={"command": "ls"}),
              ToolEnd(call_id="c", tool="shell", ok=True, output="out"),
              *(ModelUpdate(text=f"more {k}\n", turn=1) for k in range(30)),
              TurnEnd(turn=1), AgentEnd(status="completed", result="done")]
    events = [e.model_copy(update={"seq": i, "ts": 100.0 + i, "session_id": "s"})
              for i, e in enumerate(events)]
    path = tmp_path / "run.jsonl"
    write(path, events)
    monkeypatch.setattr(ReplayScreen, "FIRST_SCAN", 1)
    monkeypatch.setattr(journal_index, "_CHUNK", 2_000)  # many steps

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("end")
            await until_shown(pilot, lambda: app.position_shown == len(events) - 1)
            assert shown_equals_fold(app, events, len(events) - 1)
            await pilot.press("home", "right", "right", "right")
            assert shown_equals_fold(app, events, 3)

    asyncio.run(main())


def test_a_bar_read_in_part_spans_the_whole_file_and_draws_the_unread_part() -> None:
    """While a tenth of the journal is read, its marks sit in the bar's first tenth (not
    stretched over it all), the rest is drawn as not read yet, and a provisional end's cursor
    is at the bar's end."""
    from array import array
    from types import SimpleNamespace

    from cockpit.replay.timeline import Timeline

    palette = SimpleNamespace(error="red", warning="yellow", accent="blue", success="green",
                              dim="grey", primary="b", selected="s")
    timeline = Timeline()
    timeline.markers.positions["error"] = array("I", [99])  # the last event read so far
    timeline.state.total, timeline.state.span, timeline.state.cursor = 100, 1000, 0
    strip = timeline._strip(50, palette).plain
    assert strip.index("✗") == 4 and strip[5:] == "┈" * 45
    timeline.state.provisional, timeline.state.cursor = True, -1
    strip = timeline._strip(50, palette).plain
    assert strip[-1] == "┃" and strip[0] == "─"
    timeline.state.span, timeline.state.provisional, timeline.state.cursor = 0, False, 99
    assert timeline._strip(50, palette).plain[-1] == "✗"  # read whole: the mark at the end


def test_an_input_changed_after_approval_is_marked_on_its_row(tmp_path) -> None:
    from support.changed_input import changed_input_events

    from cockpit.widgets import Transcript

    path = tmp_path / "changed.jsonl"
    write(path, changed_input_events())

    def shown(transcript) -> str:
        return "\n".join("".join(s.text for s in transcript.render_line(y))
                         for y in range(transcript.size.height))

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(140, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            await pilot.press("end")
            transcript = app.replay_screen.query_one(Transcript)
            await until_shown(pilot, lambda: "input changed" in shown(transcript))
            text = shown(transcript)
            assert "⚠ input changed after you approved it (approved: $ ls)" in text
            assert "rm -rf ~/work" in text

    asyncio.run(main())
