"""The headless line of a link question: the agent's URL escaped (control, bidi and zero-width
characters as their escapes, never raw), and a long one cut."""

from __future__ import annotations

import io

import pytest

from cockpit.headless import LinePrinter
from engine_adapter.events import QuestionAsked
from engine_adapter.text import has_unsafe


@pytest.mark.parametrize("url", [
    "https://example.com/\x1b[2J\x1b]0;owned\x07",
    "https://example.com/\u202etxt.exe",
    "https://exa\u200bmple.com/",
    "https://example.com/\r\nfake: line",
    "javascript:\x08\x08\x08alert(1)",
    "https://example.com/\x9b31m",
])
def test_a_hostile_link_reads_escaped_on_one_line(url):
    out = io.StringIO()
    LinePrinter(out).handle(QuestionAsked(question_id="q-1", message="Log in", url=url))
    written = out.getvalue()
    assert written.count("\n") == 1 and written.startswith("question")
    assert not has_unsafe(written.rstrip("\n")) and "\r" not in written
    assert "link: " in written


def test_a_ten_thousand_character_link_is_cut():
    out = io.StringIO()
    url = "https://example.com/" + "x" * 10_000
    LinePrinter(out).handle(QuestionAsked(question_id="q-1", message="Log in", url=url))
    assert len(out.getvalue()) < 1_200 and "more characters" in out.getvalue()
