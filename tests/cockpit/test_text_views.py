"""Every view displays untrusted text through the one policy (`engine_adapter.text`): no unsafe
character survives into its output, each leaves a visible trace (the view's marker or escape),
and text without one is shown as it is (only laid out: line breaks, tabs, caps)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.style import Style

from cockpit.export.html import _html
from cockpit.export.markdown import _visible
from cockpit.headless import LinePrinter, sanitize
from cockpit.widgets.safe_text import MARKER_STYLE, clean, clean_line, styled, styled_line
from engine_adapter.engines.acp.text import clean as acp_clean
from engine_adapter.text import escape, has_unsafe, marker, printable, unsafe_at
from engine_adapter.view.input_fields import _value, input_line, input_text, one_row

SPECIAL = [chr(cp) for cp in (
    0x1B, 0x00, 0x7F, 0x85, 0x9B, 0x0D, 0x0A, 0x09, 0x0B, 0x0C, 0x202E, 0x2067, 0x200B,
    0x200C, 0x200D, 0x200F, 0x2060, 0xFEFF, 0x00AD, 0x061C, 0xE0041, 0x2028, 0x2029, 0xFE0F,
    0xE0100, 0xFFFA, 0x3164, 0xD800, 0x1F469, 0x1F4BB, 0x26A0, 0xA0, 0x3000, 0x301, 0xE000,
    0x5B, 0x5C, 0x3C, 0x26, 0x27, 0x22, 0x60, 0x20)]
texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(SPECIAL)), max_size=80)
safe_texts = texts.filter(lambda t: not has_unsafe(t))


def spec(text: str, show: Callable[[str], str]) -> str:
    """What a view must show before its layout: each unsafe character as `show` displays it."""
    return "".join(show(ch) if unsafe_at(text, i) else ch for i, ch in enumerate(text))


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n")


def tabs(text: str) -> str:
    """Tabs expanded by cells, every 4 (a wide character takes two)."""
    out = []
    for line in text.split("\n"):
        row, cells = "", 0
        for ch in line:
            if ch == "\t":
                pad = 4 - cells % 4
                row, cells = row + " " * pad, cells + pad
            else:
                row, cells = row + ch, cells + cell_len(ch)
        out.append(row)
    return "\n".join(out)


def mark_html(ch: str) -> str:
    return f"<mark class='unsafe' title='unsafe character U+{ord(ch):04X}'>{marker(ch)}</mark>"


def html_spec(text: str) -> str:
    return "".join(mark_html(ch) if unsafe_at(text, i) else html.escape(ch)
                   for i, ch in enumerate(text))


def printer_line(text: str) -> str:
    out = __import__("io").StringIO()
    LinePrinter(out, max_line=10_000).line("label", text)
    return out.getvalue()[len("label     "):-1]


# (the view, what it must equal for any text)
VIEWS: dict[str, tuple[Callable[[str], str], Callable[[str], str]]] = {
    "tui": (clean, lambda t: tabs(crlf(spec(t, marker)))),
    "tui one row": (clean_line, lambda t: tabs(crlf(spec(t, marker))).replace("\n", "⏎")),
    "tui styled": (lambda t: styled(t).plain, lambda t: tabs(crlf(spec(t, marker)))),
    "headless": (sanitize, lambda t: crlf(spec(t, escape)).replace("\n", " ")
                 .replace("\t", " ")),
    "headless line": (printer_line, lambda t: crlf(spec(t, escape)).replace("\n", " ")
                      .replace("\t", " ")),
    "acp journal boundary": (acp_clean, lambda t: crlf(spec(t, escape))),
    "export markdown": (_visible, lambda t: spec(t, escape)),
    "export html": (_html, html_spec),
    "cockpit journals": (printable,
                        lambda t: re.sub(r"[ \t\r\n]+", " ", spec(t, escape)).strip()),
}


@settings(max_examples=150)
@given(texts)
def test_every_view_shows_each_unsafe_character_and_lets_none_through(text: str) -> None:
    for name, (view, expected) in VIEWS.items():
        shown = view(text)
        assert shown == expected(text), name
        assert not has_unsafe(shown), name
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown.replace("\r\n", "")), name


@settings(max_examples=100)
@given(safe_texts)
def test_text_without_unsafe_characters_is_unchanged_but_for_layout(text: str) -> None:
    assert clean(text) == tabs(crlf(text))
    assert acp_clean(text) == crlf(text)
    assert _visible(text) == text
    assert _html(text) == html.escape(text)
    assert sanitize(text) == crlf(text).replace("\n", " ").replace("\t", " ")


@given(texts)
def test_tui_markers_stand_out(text: str) -> None:
    warn = Style(color="yellow", reverse=True)
    shown = styled(text, "white", marker_style=warn)
    marked = {(span.start, span.end) for span in shown.spans if span.style == warn}
    # Each marker is one span in the warning style, and nothing else is in it.
    count = sum(1 for i in range(len(text)) if unsafe_at(text, i))
    assert len(marked) == count
    for start, end in marked:
        assert shown.plain[start:end].startswith(("⟨U+", *map(chr, range(0x2400, 0x2420)),
                                                 "␡"))
    line = styled_line(text, marker_style=MARKER_STYLE)
    assert "\n" not in line.plain and not has_unsafe(line.plain)


def _value_lines(value) -> list[str]:
    return _value(value).split("\n")


@settings(max_examples=100)
@given(st.dictionaries(texts, st.one_of(texts, st.lists(texts, max_size=3),
                                        st.dictionaries(texts, texts, max_size=3)),
                       max_size=4).filter(lambda d: not {"command", "argv"} & set(d)))
def test_every_key_of_an_input_is_laid_out_and_displayed_safely(tool_input) -> None:
    whole = input_text(tool_input)
    one = input_line(tool_input)
    assert "\n" not in one
    for key in tool_input:
        label = one_row(key)  # in quotes when it could pass for the command or a continuation
        if not label or label[0].isspace() or label.startswith("$"):
            label = f'"{label}"'
        assert f"{label}:" in whole and f"{label}:" in one
    # A key cannot break a line: each line of the whole input is a key's, a value's or the
    # command's (so a key "x: 1\ncommand" cannot pass for a second key).
    assert len(whole.split("\n")) == sum(
        1 + (len(_value_lines(v)) if len(_value_lines(v)) > 1 else 0)
        for v in tool_input.values()) if tool_input else whole == ""
    for view in (clean, sanitize, acp_clean, _visible):
        assert not has_unsafe(view(whole)) and not has_unsafe(view(one))
