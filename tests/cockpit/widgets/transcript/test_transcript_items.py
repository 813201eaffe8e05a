"""Rendering one transcript item (no app needed)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.themes import load_themes
from cockpit.widgets import styled
from cockpit.widgets.transcript.items import (
    STREAM_STEP,
    STREAM_TAIL,
    render_item,
    row_count,
    stream_tail,
)
from cockpit.widgets.transcript.rows import one, warn_style, wrapped
from engine_adapter.view import Item, MessageItem, ToolCallItem


def rows(item: ToolCallItem) -> list[str]:
    palette = Palette(load_themes()["cockpit-dark"])
    strips = render_item(item, None, width=80, expanded=False, palette=palette,
                         console=Console(width=80))
    return [strip.text for strip in strips]


def test_a_failure_whose_output_is_its_error_says_it_once() -> None:
    item = ToolCallItem(1, 1, 0, "c1", "search", {"query": "x"}, 1)
    item.status, item.error, item.output = "failed", "no such thing", "no such thing"
    assert sum("no such thing" in row for row in rows(item)) == 1


def test_a_failure_with_its_own_output_shows_both() -> None:
    item = ToolCallItem(1, 1, 0, "c1", "shell", {"command": "make"}, 3)
    item.status, item.error, item.output = "failed", "exit 2", "make: *** no rule"
    text = rows(item)
    assert any("error: exit 2" in row for row in text)
    assert any("no rule" in row for row in text)


def test_raw_events_are_indented_when_few_and_one_a_line_when_many() -> None:
    from cockpit.widgets.transcript.items import PRETTY_UP_TO, raw_events_text
    from engine_adapter import ModelUpdate
    from engine_adapter.view import MessageItem

    events = {i: ModelUpdate(text=f"t{i}", turn=1, seq=i) for i in range(100)}
    few = MessageItem(1, 1, 0, "message")
    few.seqs = [0, 1]
    text = raw_events_text(few, events.get)
    assert '"text": "t1"' in text and text.count("\n") > 4
    many = MessageItem(1, 1, 0, "message")
    many.seqs = list(range(PRETTY_UP_TO + 5))
    assert raw_events_text(many, events.get).count("\n") == PRETTY_UP_TO + 4
    gone = MessageItem(1, 1, 999, "message")
    assert "not available" in raw_events_text(gone, events.get)


# The row count the transcript lays out with, instead of rendering, must be the rows drawn.
_texts = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from("ab \n\t*#`-1.\u200b\x1b漢"), max_size=200),
    st.integers(0, 30).map(lambda n: "".join(f"{i}: def f(): return {i}\n" for i in range(n))),
)


@st.composite
def _items(draw: st.DrawFn) -> tuple[Item, Item | None]:
    turn = draw(st.sampled_from([None, 1, 2]))
    if draw(st.booleans()):
        item: Item = ToolCallItem(1, turn, 0, "c1", draw(st.sampled_from(["shell", "read_file"])),
                                  {"command": draw(st.text(max_size=40))}, draw(st.integers(0, 4)))
        item.status = draw(st.sampled_from(["running", "ok", "failed", "awaiting", "denied"]))
        item.output = draw(st.none() | _texts)
        item.error = draw(st.none() | _texts)
    else:
        item = MessageItem(1, turn, 0, draw(st.sampled_from(["message", "thought"])))
        item.parts = [draw(_texts | st.text(alphabet="ab c.", max_size=160))]
        item._text = None
        item.complete = draw(st.booleans())
    previous = draw(st.none() | st.builds(
        lambda t, task: MessageItem(task, t, 0, "message"),
        st.sampled_from([None, 1, 2]), st.sampled_from([1, 2])))
    return item, previous


@settings(max_examples=300, deadline=None)
@given(_items(), st.integers(4, 160), st.booleans())
def test_the_row_count_without_rendering_is_the_rows_rendered(
        case: tuple[Item, Item | None], width: int, expanded: bool) -> None:
    item, previous = case
    count = row_count(item, previous, width=width, expanded=expanded)
    if count is not None:
        palette = Palette(load_themes()["cockpit-dark"])
        strips = render_item(item, previous, width=width, expanded=expanded, palette=palette,
                             console=Console(width=width))
        assert count == len(strips)


def test_a_flood_s_tool_calls_and_short_replies_are_counted_without_rendering() -> None:
    call = ToolCallItem(1, 1, 0, "c1", "shell", {"command": "cat m.py"}, 1)
    call.status, call.output = "ok", "".join(f"line {n}\n" for n in range(20))
    reply = MessageItem(1, 1, 0, "message")
    reply.parts, reply._text, reply.complete = ["checking file 12 "], None, True
    assert row_count(call, reply, width=120, expanded=False) == 5  # head, 3 lines, the note
    assert row_count(reply, None, width=120, expanded=False) == 2  # the turn's rule, the text
    assert row_count(reply, call, width=120, expanded=False) == 1
    reply.complete = False  # still streaming: rendered (it is drawn, and it changes)
    assert row_count(reply, call, width=120, expanded=False) is None


def test_a_reply_at_the_edge_of_the_width_is_counted_as_drawn() -> None:
    palette = Palette(load_themes()["cockpit-dark"])
    for width in (10, 41, 120):
        for length in range(width - 4, width + 2):
            for text in ("x" * length, "ab " * (length // 3) + "c" * (length % 3),
                         "y" * (length - 1) + " "):
                reply = MessageItem(1, None, 0, "message")
                reply.parts, reply._text, reply.complete = [text], None, True
                count = row_count(reply, None, width=width, expanded=False)
                drawn = render_item(reply, None, width=width, expanded=False, palette=palette,
                                    console=Console(width=width))
                assert count in (None, len(drawn)), (width, text)
                if length <= width - 2:  # the gutter takes two
                    assert count == 1


def _cells(strip: Strip) -> list[tuple[str, Style | None]]:
    """What a row draws, a character at a time (how it is cut into segments does not show)."""
    return [(ch, segment.style) for segment in strip for ch in segment.text]


def _streaming_whole(text: str, width: int, palette: Palette, console: Console) -> list[Strip]:
    """The streaming tail wrapped as one text (how it was drawn before its lines were cached)."""
    piece = stream_tail(text)
    body = Text()
    if piece.was_cut:
        body.append(piece.note(gone=False) + "\n", palette.dim)
    body.append_text(styled(piece.kept, palette.text, marker_style=warn_style(palette)))
    body.append("▍", palette.primary)
    return [Strip([Segment("  "), *strip], strip.cell_length + 2)
            for strip in wrapped(console, body, max(1, width - 2))]


@settings(max_examples=40, deadline=None)
@given(st.lists(_texts | st.text(alphabet="ab c\n\r\t\u200b漢", max_size=60), max_size=4),
       st.integers(4, 140), st.booleans())
def test_a_streaming_reply_is_drawn_line_by_line_as_it_was_drawn_whole(
        deltas: list[str], width: int, long: bool) -> None:
    palette = Palette(load_themes()["cockpit-dark"])
    console = Console(width=width)
    reply = MessageItem(1, None, 0, "message")
    text = "a few words\n" * (STREAM_TAIL // 12 + 1) if long else ""  # past the tail's cut
    for delta in ["", *deltas]:  # drawn as it grows: the cache is used, not only filled
        text += delta
        reply.parts, reply._text = [text], None
        drawn = render_item(reply, None, width=width, expanded=False, palette=palette,
                            console=console)
        assert [_cells(s) for s in drawn] == \
            [_cells(s) for s in _streaming_whole(text, width, palette, console)]


@given(st.integers(0, 5 * STREAM_STEP + STREAM_TAIL), st.integers(1, 3 * STREAM_STEP))
def test_a_streaming_replys_cut_moves_only_in_steps(length: int, more: int) -> None:
    """Between two steps a growing reply only grows at its end (its rows are then wrapped
    incrementally); the tail shown is never shorter than `STREAM_TAIL` nor a step longer."""
    text = "".join(chr(ord("a") + i % 26) for i in range(length + more))
    before, after = stream_tail(text[:length]), stream_tail(text)
    for piece, whole in ((before, text[:length]), (after, text)):
        assert whole.endswith(piece.kept)
        assert min(len(whole), STREAM_TAIL) <= len(piece.kept) < STREAM_TAIL + STREAM_STEP
        assert piece.dropped_chars % STREAM_STEP == 0
    if before.dropped_chars == after.dropped_chars:
        assert after.kept.startswith(before.kept)


def test_a_long_line_streaming_past_the_cut_is_drawn_as_it_was_drawn_whole() -> None:
    """A reply with no line break at all, past the cut and across a step (bench_model's)."""
    palette = Palette(load_themes()["cockpit-dark"])
    console = Console(width=80)
    reply = MessageItem(1, None, 0, "message")
    text = " ".join(f"word{i}" for i in range(STREAM_TAIL // 6))
    for delta in [" more"] * 3 + [" x" * STREAM_STEP, " end"]:
        text += delta
        reply.parts, reply._text = [text], None
        drawn = render_item(reply, None, width=80, expanded=False, palette=palette,
                            console=console)
        assert [_cells(s) for s in drawn] == \
            [_cells(s) for s in _streaming_whole(text, 80, palette, console)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab c│é\u0301漢\t\u200b\x1b[]*_", max_size=50), st.integers(1, 60),
       st.sampled_from(["plain", "styled", "spans", "prefixed"]))
def test_a_row_is_drawn_as_rich_draws_it(text: str, width: int, how: str) -> None:
    """`one` and `wrapped` build a plain one-style line as its segment (not through Rich):
    what they draw, cell by cell, is what Rich draws."""
    console = Console(width=200)
    style = Style(color="#d8dee9", bold=True)

    def make() -> Text:
        if how == "plain":
            return Text(text)
        if how == "styled":
            return Text(text, style)
        if how == "spans":
            return styled(text, style)
        return Text("  │ ", style).append_text(styled(text, style))

    rich_one = make()
    rich_one.no_wrap, rich_one.overflow = True, "ellipsis"
    strip = Strip(list(rich_one.render(console)))
    drawn = one(console, make(), width)
    if strip.cell_length <= width:
        assert _cells(drawn) == _cells(strip)
    elif not "".join(seg.text for seg in strip.crop(width, strip.cell_length)).strip():
        assert _cells(drawn) == _cells(strip.crop(0, width))  # only blanks cut: no mark
    else:  # cut: as Rich's own ellipsis truncation reads (issue 26 §4), cell for cell
        cut = make()
        cut.truncate(width, overflow="ellipsis")
        def seen(row: str) -> str:  # what takes cells (a raw control character takes none)
            return "".join(ch for ch in row if cell_len(ch) > 0)

        assert seen(drawn.text) == seen(Strip(list(cut.render(console))).text)
        assert drawn.cell_length == width
        assert _cells(drawn.crop(0, width - 1)) == _cells(strip.crop(0, width - 1)) or \
            drawn.text.endswith(" …")  # (a wide character that did not fit: a blank)
    options = console.options.update(width=width, min_width=width, max_width=width,
                                     highlight=False, markup=False)
    expected_rows = [Strip(line) for line in console.render_lines(make(), options, pad=False)]
    assert [_cells(s) for s in wrapped(console, make(), width)] == \
        [_cells(s) for s in expected_rows]


def test_a_growing_line_hands_back_the_same_rows_but_its_last() -> None:
    """Drawn again after a delta, a long line still streaming is the same row objects but for
    its last ones (they are guttered once): the transcript keeps what it drew by the row, so
    only those are drawn anew, and no row is built again for nothing."""
    palette = Palette(load_themes()["cockpit-dark"])
    console = Console(width=120)
    reply = MessageItem(1, None, 0, "message")
    text = " ".join(f"word{i}" for i in range(1_000))
    drawn = []
    for delta in ["", " more", " and", " more"]:
        text += delta
        reply.parts, reply._text = [text], None
        rows = render_item(reply, None, width=120, expanded=False, palette=palette,
                           console=console)
        assert [_cells(s) for s in rows] == \
            [_cells(s) for s in _streaming_whole(text, 120, palette, console)]
        drawn.append(rows)
    for before, after in pairwise(drawn[1:]):
        assert len(after) > 40
        new = [row for row, strip in enumerate(after)
               if row >= len(before) or strip is not before[row]]
        assert new and min(new) >= len(after) - 3, new
