"""The streaming line wrapped incrementally draws exactly what wrapping it whole draws, after
every delivery of any text (words, runs of spaces, words longer than a row, wide characters,
unsafe characters, tabs), at any width; and it really reuses rows while a line only grows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style

from cockpit.widgets import styled
from cockpit.widgets.transcript import stream_rows
from cockpit.widgets.transcript.rows import wrapped
from cockpit.widgets.transcript.stream_rows import CURSOR, streaming_line_rows

TEXT, WARN, CURSOR_STYLE = Style(color="white"), Style(reverse=True), Style(color="cyan")
CONSOLE = Console(width=200, color_system="truecolor", force_terminal=True)

pieces = st.one_of(
    st.sampled_from(["the ", "quick ", "brown ", "fox", " ", "  ", "   ", "\t", "-", "jumps",
                     "over ", "漢字", "カタカナ ", "é", "a" * 30, "b" * 75, ".", ", ",
                     "\x1b[31m", "\u200b", "https://example.com/a/very/long/path/to/x "]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
)


def whole(line: str, width: int) -> list[list[tuple[str, Style | None]]]:
    body = styled(line, TEXT, marker_style=WARN)
    body.append(CURSOR, CURSOR_STYLE)
    return rows_of(wrapped(CONSOLE, body, width))


def rows_of(strips) -> list[list[tuple[str, Style | None]]]:
    return [[(segment.text, segment.style) for segment in strip] for strip in strips]


def flat(rows) -> list[str]:
    return ["".join(text for text, _ in row) for row in rows]


@settings(max_examples=500, deadline=None)
@given(width=st.integers(min_value=1, max_value=90), deliveries=st.lists(pieces, max_size=40))
def test_each_delivery_draws_what_a_whole_wrap_draws(width, deliveries):
    stream_rows._cache.clear()
    line = ""
    for piece in deliveries:
        line += piece.replace("\n", " ")  # the last line of a reply holds no line break
        got = rows_of(streaming_line_rows(line, width, TEXT, WARN, CURSOR_STYLE, CONSOLE))
        want = whole(line, width)
        assert flat(got) == flat(want)
        assert got == want


def test_a_long_growing_line_reuses_its_rows():
    stream_rows._cache.clear()
    line, width = "", 40
    for n in range(300):
        line += f"word{n} "
        streaming_line_rows(line, width, TEXT, WARN, CURSOR_STYLE, CONSOLE)
    kept = stream_rows._cache[(width, TEXT, WARN, CURSOR_STYLE, id(CONSOLE))]
    assert kept.line == line and len(kept.head) >= len(whole(line, width)) - 2 - 1
    assert line.startswith("".join(s.text for row in kept.head for s in row))


def test_text_that_did_not_only_grow_is_wrapped_whole():
    stream_rows._cache.clear()
    first = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu " * 3
    streaming_line_rows(first, 20, TEXT, WARN, CURSOR_STYLE, CONSOLE)
    other = "omega " * 30
    got = rows_of(streaming_line_rows(other, 20, TEXT, WARN, CURSOR_STYLE, CONSOLE))
    assert got == whole(other, 20)


def test_a_leading_space_at_width_one_is_wrapped_as_rich_wraps_it():
    """Found by the property test above: at width 1 Rich gives a leading space a row of its
    own, so rows kept from ' 0' do not hold for ' 0 '."""
    stream_rows._cache.clear()
    for line in (" 0", " 0 "):
        got = rows_of(streaming_line_rows(line, 1, TEXT, WARN, CURSOR_STYLE, CONSOLE))
        assert got == whole(line, 1)


def test_rows_that_lost_their_trailing_space_are_reused_too():
    """A word that fills its row to the last cell loses the space after it (Rich drops what
    runs past the width): the rows drawn then hold fewer characters than the line. Counting
    only what they draw, no row was ever kept, and each delivery wrapped the whole line again
    (bench_model's 9,000-character tail at width 112)."""
    stream_rows._cache.clear()
    line, width = "", 10
    for n in range(60):
        line += f"{n:>010} "  # ten cells a word: every row is full, its space dropped
        got = rows_of(streaming_line_rows(line, width, TEXT, WARN, CURSOR_STYLE, CONSOLE))
        assert got == whole(line, width)
    kept = stream_rows._cache[(width, TEXT, WARN, CURSOR_STYLE, id(CONSOLE))]
    assert len(kept.head) >= len(whole(line, width)) - 3
