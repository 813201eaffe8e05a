"""The one text policy (`engine_adapter.text`): which characters are unsafe, and how a cut
says what it dropped. Table tests pin the decision; hypothesis checks the rules."""

from __future__ import annotations

import itertools
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine_adapter.text import (
    MIN_CAP,
    UNSAFE_RANGES,
    Cut,
    cap,
    cut,
    escape,
    escaped,
    find_unsafe,
    has_unsafe,
    line_count,
    marked,
    marker,
    plural,
    replace_unsafe,
    split_unsafe,
    unsafe_at,
)

SELECTORS = [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x180B, 0x180C, 0x180D, 0x180F]
# Default-ignorable code points that are neither control nor format characters: unsafe too.
IGNORABLE_LETTERS_AND_MARKS = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}


def alone(ch: str) -> bool:
    """Whether `ch` is unsafe between two ASCII letters (no context can make it safe)."""
    return unsafe_at(f"a{ch}a", 1)


# The decision, pinned ------------------------------------------------------------------------

def test_the_unsafe_set_is_exactly_the_documented_one() -> None:
    """Re-derived from this Python's Unicode data, every code point checked: each control,
    format, separator and surrogate character is unsafe (a newer Unicode with a new format
    character fails here until the table has it), and beyond those only the listed
    default-ignorables are: no letter, digit, symbol, punctuation, space or private-use
    character ever is (a variation selector is, in an ASCII context)."""
    # Every code point between two ASCII letters, found the way every view finds them.
    every = "a" + "a".join(map(chr, range(0x110000))) + "a"
    unsafe = {ord(every[i]) for i in find_unsafe(every)}
    controls = {cp for cp in range(0x110000)
                if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp")}
    assert sorted(f"U+{cp:04X}" for cp in controls - unsafe) == ["U+0009", "U+000A"]
    extra = unsafe - controls
    unassigned = {cp for cp in extra if unicodedata.category(chr(cp)) == "Cn"}
    assert extra - unassigned == IGNORABLE_LETTERS_AND_MARKS | set(SELECTORS)
    # The unassigned ones are reserved default-ignorables (a future format character).
    assert all(0x2060 <= cp <= 0x206F or 0xFFF0 <= cp <= 0xFFF8 or 0x13430 <= cp <= 0x1343F
               or 0xE0000 <= cp <= 0xE0FFF for cp in unassigned)


@pytest.mark.parametrize("cp", [
    0x1B, 0x00, 0x07, 0x08, 0x0B, 0x0C, 0x7F, 0x85, 0x9B,  # C0, DEL, C1 (NEL, CSI)
    0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,  # bidi controls
    0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF,  # zero-width characters, word joiner, BOM
    0x200E, 0x200F, 0x061C,  # LRM, RLM, ALM
    0x00AD,  # soft hyphen
    0xE0001, 0xE0020, 0xE0041, 0xE007F,  # tag characters
    0x2028, 0x2029,  # line and paragraph separators
    0xFE0F, 0xE0100,  # variation selectors after ASCII
    0xFFF9, 0xFFFA, 0xFFFB,  # interlinear annotation
    0x180E, 0x3164, 0x115F, 0xFFA0, 0x034F,  # Mongolian vowel separator, Hangul fillers, CGJ
    0xD800, 0xDFFF,  # lone surrogates
])
def test_the_named_classes_are_unsafe(cp: int) -> None:
    assert alone(chr(cp)) and has_unsafe(f"git status{chr(cp)}")


@pytest.mark.parametrize("text", [
    "plain ascii, tabs\tand\nlines", "crlf\r\nline", "héllo 世界 ✔ naïve", "no\xa0break\u3000wide",
    "e\u0301 a\u0308", "⚠️ warning", "❤️ 👍🏽 👩‍💻 🏳️‍🌈 🐻‍❄️ 🏃‍♂️", "葛\U000e0100",
    "\ue000 private use", "\U0001fae8 a newer emoji", "Ω≈ç√∫", "ᠠ\u180b",
])
def test_ordinary_text_is_safe(text: str) -> None:
    assert not has_unsafe(text) and list(find_unsafe(text)) == []
    assert escaped(text) == marked(text) == text


@pytest.mark.parametrize(("text", "positions"), [
    ("a\ufe0f", [1]),  # a selector after ASCII hides nothing visible: unsafe
    ("\ufe0f", [0]),  # at the start
    ("⚠\ufe0f\ufe0f", [2]),  # a second one ("emoji smuggling" hides data in runs of them)
    ("⚠\ufe0f" + "\U000e0100" * 3, [2, 3, 4]),
    ("\u200b\ufe0f", [0, 1]),  # after an unsafe character
    ("\u3164\ufe0f", [0, 1]),  # after an invisible letter
    ("a\u200db", [1]), ("👩\u200d", [1]), ("\u200d💻", [0]),  # ZWJ outside an emoji sequence
    ("👩\u200db", [1]), ("1\ufe0f\u20e3", [1]),  # a keycap: shown with its marker
    ("👩\u200d💻", []), ("❤\ufe0f\u200d🔥", []), ("👍🏽\u200d🔥", []),
    ("x\ry", [1]), ("x\r", [1]), ("x\r\r\ny", [1]), ("x\r\ny", []),
])
def test_context_decides_joiners_selectors_and_carriage_returns(text: str,
                                                               positions: list[int]) -> None:
    assert list(find_unsafe(text)) == positions


def test_each_view_display() -> None:
    assert escape("\x1b") == "\\x1b" and escape("\u200b") == "\\u200b"
    assert escape("\U000e0041") == "\\U000e0041"
    assert marker("\x1b") == "␛" and marker("\x00") == "␀" and marker("\x7f") == "␡"
    assert marker("\u200b") == "⟨U+200B⟩" and marker("\U000e0041") == "⟨U+E0041⟩"
    assert marked("git status\u200b") == "git status⟨U+200B⟩"
    assert escaped("git status\u200b") == "git status\\u200b"


def test_the_ranges_are_sorted_and_disjoint() -> None:
    for (a, b), (c, _) in itertools.pairwise(UNSAFE_RANGES):
        assert a <= b < c


# The rules, by property ----------------------------------------------------------------------

SPECIAL = [chr(cp) for cp in (
    0x1B, 0x00, 0x7F, 0x85, 0x9B, 0x0D, 0x0A, 0x09, 0x0B, 0x202E, 0x2066, 0x200B, 0x200C,
    0x200D, 0x200E, 0x2060, 0xFEFF, 0x00AD, 0x061C, 0xE0041, 0xE007F, 0x2028, 0x2029, 0xFE0F,
    0xFE0E, 0xE0100, 0xFFF9, 0x3164, 0xD800, 0x1F469, 0x1F4BB, 0x2764, 0x1F3FD, 0x26A0, 0x8449,
    0xA0, 0x3000, 0x301, 0xE000, 0x5B, 0x5C, 0x3C, 0x26, 0x27E8, 0x241B, 0x60)]
texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(SPECIAL)), max_size=60)


def brute(text: str, show) -> str:
    """The specification, one character at a time."""
    return "".join(show(ch) if unsafe_at(text, i) else ch for i, ch in enumerate(text))


@given(texts)
def test_finding_matches_the_rule_at_every_position(text: str) -> None:
    assert list(find_unsafe(text)) == [i for i in range(len(text)) if unsafe_at(text, i)]
    assert has_unsafe(text) == any(unsafe_at(text, i) for i in range(len(text)))
    runs = list(split_unsafe(text))
    assert "".join(run for run, _ in runs) == text
    assert all(len(run) == 1 for run, unsafe in runs if unsafe)


@given(texts)
def test_replacing_leaves_a_trace_of_each_and_nothing_unsafe(text: str) -> None:
    for show in (escape, marker):
        shown = replace_unsafe(text, show)
        assert shown == brute(text, show)
        assert not has_unsafe(shown)


# Capping -------------------------------------------------------------------------------------

NOTE = re.compile(r"… ([\d,]+) (more|earlier) (line|lines|character|characters)"
                  r"(?: \(([\d,]+) characters?\))?( dropped)?")
lines_text = st.text(alphabet=st.sampled_from("ab\n\r é世"), max_size=300)


def test_plural_grammar() -> None:
    assert plural(1, "line") == "1 line" and plural(2, "line") == "2 lines"
    assert plural(1234, "line") == "1,234 lines" and plural(0, "character") == "0 characters"
    assert Cut("a", 1, 1).note() == "… 1 more line dropped"
    assert Cut("a", 1234, 1234, earlier=True).note() == "… 1,234 earlier lines dropped"
    assert Cut("a", 1, 0).note(gone=False, hint="enter to expand") == \
        "… 1 more character · enter to expand"
    assert Cut("a", 0, 0).note() == ""


@given(lines_text, st.none() | st.integers(0, 80), st.none() | st.integers(0, 12),
       st.sampled_from(["head", "tail"]))
def test_cut_keeps_the_most_it_may_and_counts_exactly(text, chars, lines, keep) -> None:
    piece = cut(text, chars=chars, lines=lines, keep=keep)
    kept = piece.kept
    assert text.startswith(kept) if keep == "head" else text.endswith(kept)
    assert piece.dropped_chars == len(text) - len(kept)
    assert piece.dropped_lines == line_count(text) - line_count(kept)
    assert chars is None or len(kept) <= chars
    assert lines is None or line_count(kept) <= lines
    # The most it may: whole lines up to `lines`, then characters up to `chars`.
    expected = text
    if lines is not None and line_count(text) > lines:
        parts = text.split("\n")
        if lines == 0:
            expected = ""
        elif keep == "head":
            expected = "\n".join(parts[:lines])
        else:
            expected = "\n".join(parts[-(lines + text.endswith("\n")):])
    if chars is not None and len(expected) > chars:
        expected = expected[:chars] if keep == "head" else expected[len(expected) - chars:]
    assert kept == expected
    assert piece.earlier == (keep == "tail")


def _note_numbers(note: str) -> tuple[int, int | None, str]:
    found = NOTE.search(note)
    assert found, note
    count = int(found.group(1).replace(",", ""))
    chars = int(found.group(4).replace(",", "")) if found.group(4) else None
    return count, chars, found.group(3)


@settings(max_examples=300)
@given(lines_text, st.none() | st.integers(MIN_CAP, 200), st.none() | st.integers(2, 12),
       st.sampled_from(["head", "tail"]))
# Found by hypothesis: the room reserved for a tail's note was sized for "more" lines, and
# "earlier" is longer.
@example("\n\naaaaaaaaaaaaaaaaaaaa\n\n\n\n\na", 64, 7, "tail")
def test_cap_fits_is_idempotent_and_says_exactly_what_it_dropped(text, chars, lines,
                                                                  keep) -> None:
    capped = cap(text, chars=chars, lines=lines, keep=keep)
    assert chars is None or len(capped) <= chars
    assert lines is None or line_count(capped) <= lines
    assert cap(capped, chars=chars, lines=lines, keep=keep) == capped
    if capped == text:
        return
    multi = line_count(text) > 1
    sep = "\n" if multi else " "
    if keep == "head":
        kept, note = capped.rsplit(sep, 1) if sep in capped else ("", capped)
        assert text.startswith(kept)
    else:
        note, kept = capped.split(sep, 1) if capped.count(sep) else (capped, "")
        assert text.endswith(kept)
    count, chars_said, unit = _note_numbers(note)
    dropped_chars = len(text) - len(kept)
    dropped_lines = line_count(text) - line_count(kept)
    if unit.startswith("line"):
        assert count == dropped_lines
        assert chars_said in (None, dropped_chars)
    else:
        assert count == dropped_chars and dropped_lines == 0
    assert ("earlier" in note) == (keep == "tail")


def test_cap_refuses_a_limit_that_cannot_hold_its_note() -> None:
    with pytest.raises(ValueError):
        cap("x" * 100, chars=10)
    with pytest.raises(ValueError):
        cap("a\nb\nc", lines=1)
    assert cap("short", chars=10) == "short"  # nothing to cut, nothing to say


def test_cap_on_a_huge_text_is_cheap_and_exact() -> None:
    big = "0123456789\n" * 1_000_000
    capped = cap(big, lines=4, keep="tail")
    assert capped.startswith("… 999,997 earlier lines dropped\n")
    assert capped.endswith("0123456789\n") and line_count(capped) == 4
