"""A link an agent asks the human to open: which ones the cockpit may open (plain http and https
to a named ASCII host, nothing that can disguise where it goes), how one reads cut, and the
`url` of `question_asked` in old and new journals."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_adapter import parse_event
from engine_adapter.events import QuestionAsked, link_host, link_refusal, link_text
from engine_adapter.text import has_unsafe

OPENABLE = [
    "https://example.com/login",
    "http://example.com",
    "HTTPS://EXAMPLE.COM/Path?q=1#frag",
    "https://example.com:8443/a%20b?x=%E2%80%AE",  # percent-encoded bidi: inert in a URL
    "http://127.0.0.1:8080/cb",
    "http://[::1]:9000/",
    "https://xn--80ak6aa92e.com/",  # punycode: shown as the ASCII it is
]

REFUSED = [
    ("javascript:alert(1)", "not a javascript: link"),
    ("JavaScript:alert(document.cookie)", "not a javascript: link"),
    (" javascript:alert(1)", "only http and https"),  # a leading space: no scheme at all
    ("file:///etc/passwd", "not a file: link"),
    ("data:text/html,<script>alert(1)</script>", "not a data: link"),
    ("vbscript:msgbox(1)", "not a vbscript: link"),
    ("ftp://example.com/x", "not a ftp: link"),
    ("mailto:a@example.com", "not a mailto: link"),
    ("ssh://host", "not a ssh: link"),
    ("//evil.com/x", "only http and https"),
    ("example.com/login", "only http and https"),
    ("", "only http and https"),
    ("https:evil.com", "names no host"),
    ("https:///path", "names no host"),
    ("https://[::1/", "names no host"),
    ("https://bank.com@evil.com/", "a name before its host"),
    ("https://user:pw@example.com/", "a name before its host"),
    ("https://аpple.com/", "non-ASCII letters"),  # a Cyrillic а
    ("https://example.com/\x1b[2J", "hidden or control characters"),
    ("https://example.com/\x07", "hidden or control characters"),
    ("https://exam\u200bple.com/", "hidden or control characters"),
    ("https://example.com/\u202etxt.exe", "hidden or control characters"),
    ("https://example.com/\u2066x\u2069", "hidden or control characters"),
    ("https://example.com/a b", "hidden or control characters"),
    ("https://example.com/\nhttps://other.com", "hidden or control characters"),
    ("https://example.com/\t", "hidden or control characters"),
    ("https://example.com/\x00", "hidden or control characters"),
    ("https://example.com/\u0085", "hidden or control characters"),
]


@pytest.mark.parametrize("url", OPENABLE)
def test_plain_http_links_may_be_opened(url):
    assert link_refusal(url) is None


@pytest.mark.parametrize(("url", "says"), REFUSED)
def test_links_that_could_open_something_else_are_refused(url, says):
    refusal = link_refusal(url)
    assert refusal is not None and says in refusal
    assert not has_unsafe(refusal)  # the reason never echoes the agent's characters


@given(st.text(max_size=40), st.text(max_size=40))
def test_any_other_scheme_is_refused(scheme, rest):
    url = f"{scheme}:{rest}"
    if url.split(":", 1)[0].lower() not in ("http", "https"):
        assert link_refusal(url) is not None


@given(st.text(min_size=1, max_size=40).filter(has_unsafe), st.text(max_size=20))
def test_an_unsafe_character_anywhere_refuses_the_link(hidden, rest):
    assert link_refusal(f"https://example.com/{rest}{hidden}") is not None
    assert link_refusal(f"https://{hidden}example.com/") is not None


@pytest.mark.parametrize(("url", "host"), [
    ("https://bank.com@evil.com/login", "evil.com"),
    ("https://EXAMPLE.com:443/", "example.com"),
    ("javascript:alert(1)", None),
    ("https://[::1/", None),
])
def test_the_host_is_where_the_link_really_goes(url, host):
    assert link_host(url) == host


@given(st.text(max_size=2_000), st.integers(min_value=1, max_value=500))
def test_a_cut_link_keeps_its_head_and_counts_the_rest(url, limit):
    shown = link_text(url, limit)
    if len(url) <= limit:
        assert shown == url
    else:
        assert shown.startswith(url[:limit])
        assert shown.endswith(f"… ({len(url) - limit} more characters)")


def test_an_old_question_without_a_url_still_reads():
    line = json.dumps({"type": "question_asked", "session_id": "s", "seq": 3, "ts": 1.0,
                       "question_id": "q-1", "message": "which?", "fields": []})
    event = parse_event(line)
    assert isinstance(event, QuestionAsked) and event.url is None


def test_a_link_question_round_trips_its_url_as_sent():
    url = "https://example.com/\x1b[2J\u202e" + "x" * 10_000
    event = QuestionAsked(question_id="q-1", message="Log in", url=url)
    back = parse_event(event.model_dump_json())
    assert isinstance(back, QuestionAsked) and back.url == url
