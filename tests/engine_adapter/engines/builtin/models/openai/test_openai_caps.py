"""Everything read from the model server is capped (issue 24 §H), through the official `openai`
SDK against a real HTTP server on 127.0.0.1 (tests/fakes/openai_fake) sending endless hostile
streams: a huge tool-call name, a huge id, ever more tool calls, a huge unknown field, a line
that never ends, endless keep-alives, endless empty chunks, endless text. Each run ends
`failed` with the server named and what it sent, never a traceback, and the client stops
reading (the server sees it leave after a bounded number of bytes). The SSE reader itself is
checked by property: any split of a stream, any line end, the same events."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest
from fakes.openai_fake.helpers import run_against
from fakes.openai_fake.server import Raw
from hypothesis import given
from hypothesis import strategies as st
from support.builtin_runs import end

from engine_adapter.engines.builtin.models.openai import sse
from engine_adapter.engines.builtin.models.openai.sse import (
    MAX_LINE,
    MAX_REPLY_BYTES,
    ReplyLimit,
    SseLines,
)
from engine_adapter.engines.builtin.models.openai.stream import MAX_CALLS, MAX_ID, MAX_NAME

_PIECE = 64 * 1024
_SLACK = 48 * 1024 * 1024  # socket buffers on both sides, and the piece in flight


def _event(delta: dict) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _calls(**function) -> dict:
    return {"tool_calls": [{"index": 0, "function": function}]}


def endless(first: bytes, then: bytes) -> Iterator[bytes]:
    yield first
    yield from itertools.repeat(then)


HOSTILE = {
    "huge name": (lambda: endless(_event(_calls(name="n" * _PIECE)),
                                  _event(_calls(name="n" * _PIECE))),
                  f"tool-call name of more than {MAX_NAME:,}"),
    "huge name in many pieces": (lambda: itertools.cycle([_event(_calls(name="n" * 7)),
                                                          _event(_calls(name="m" * 7))]),
                                 "tool-call name of more than"),
    "a name repeated whole in every piece": (lambda: itertools.repeat(_event(_calls(name="n"))),
                                             "reply of more than"),
    "huge id": (lambda: itertools.repeat(_event({"tool_calls": [{"index": 0, "id": "i" * 999}]})),
                f"tool-call id of more than {MAX_ID:,}"),
    "many tool calls": (lambda: (_event({"tool_calls": [{"index": i, "id": f"c{i}", "function": {
        "name": "read_file", "arguments": "{}"}}]}) for i in itertools.count()),
                        f"more than {MAX_CALLS} tool calls"),
    "many calls without an index": (lambda: (_event({"tool_calls": [{"id": f"c{i}", "function": {
        "name": "x"}}]}) for i in itertools.count()), "tool calls"),
    "huge unknown field": (lambda: endless(b'data: {"junk": "', b"x" * _PIECE),
                           f"line of more than {MAX_LINE:,} bytes"),
    "no line end ever": (lambda: itertools.repeat(b"y" * _PIECE), "line of more than"),
    "one event of many data lines": (lambda: itertools.repeat(b"data: " + b"z" * 4096 + b"\n"),
                                     f"event of more than {MAX_LINE:,} bytes"),
    "endless keep-alives": (lambda: itertools.repeat(b": ping\n" * 8192),
                            f"reply of more than {MAX_REPLY_BYTES:,} bytes"),
    "endless empty chunks": (lambda: itertools.repeat(_event({}) * 256), "more than"),
    "endless text": (lambda: itertools.repeat(_event({"content": "t" * 4096})),
                     "reply of more than 4,000,000 characters"),
    "endless reasoning": (lambda: itertools.repeat(_event({"reasoning_content": "r" * 4096})),
                          "characters"),
    "not JSON": (lambda: iter([b"data: {not json\n\n"]), "not JSON"),
}


# Streams of many tiny lines are read at a few MB a second (a line of Python each): for these
# the whole-reply cap is lowered, so the test stays fast; the cap is the same code.
_MANY_LINES = {"a name repeated whole in every piece", "endless keep-alives",
               "endless empty chunks"}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_stream_ends_the_run_with_a_clear_error_and_is_not_read_on(tmp_path, name,
                                                                             monkeypatch) -> None:
    pieces, words = HOSTILE[name]
    if name in _MANY_LINES:
        monkeypatch.setattr(sse, "MAX_REPLY_BYTES", 2 * 1024 * 1024)
        words = words.replace(f"{MAX_REPLY_BYTES:,}", f"{2 * 1024 * 1024:,}")
    session, server = run_against(tmp_path, [Raw(pieces)])
    last = end(session)
    assert last.status == "failed"
    assert server.url in last.error and words in last.error, last.error
    assert "stopped reading it" in last.error
    assert "Traceback" not in last.error
    assert len(server.requests) == 1  # a cap is final: never asked again
    assert server.sent <= MAX_REPLY_BYTES + _SLACK


def test_a_big_but_honest_tool_call_in_one_chunk_still_reads(tmp_path) -> None:
    content = "x" * (2 * 1024 * 1024)  # a 2 MiB file written in one chunk, as Ollama sends it
    call = _event({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {
        "name": "finish", "arguments": json.dumps({"result": content})}}]})
    done = _event({}).replace(b'"finish_reason": null', b'"finish_reason": "tool_calls"')
    session, _ = run_against(tmp_path, [Raw(lambda: iter([call, done, b"data: [DONE]\n\n"]))])
    assert end(session).status == "completed"
    assert end(session).result == content


# -- the SSE reader ------------------------------------------------------------------------------

_DATA = st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n",
                                                blacklist_categories=("Cs",)), max_size=40),
                 min_size=1, max_size=3)


@given(events=st.lists(_DATA, max_size=6), ending=st.sampled_from([b"\n", b"\r\n", b"\r"]),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
       comments=st.booleans())
def test_any_split_and_line_end_gives_the_same_events(events, ending, cuts, comments) -> None:
    raw = b""
    for lines in events:
        if comments:
            raw += b": keep-alive" + ending
        for line in lines:
            raw += b"data: " + line.encode() + ending
        raw += b"event: x" + ending + ending
    reader = SseLines()
    got: list[str] = []
    bounds = sorted({min(c, len(raw)) for c in cuts} | {0, len(raw)})
    for a, b in itertools.pairwise(bounds):
        got += reader.feed(raw[a:b])
    got += reader.finish()
    assert got == ["\n".join(lines) for lines in events]


def test_the_reader_caps_lines_events_and_the_whole_reply() -> None:
    with pytest.raises(ReplyLimit, match="line of more than 100 bytes"):
        reader = SseLines(max_line=100)
        for _ in range(20):
            reader.feed(b"data: " + b"x" * 10)
    with pytest.raises(ReplyLimit, match="event of more than 100 bytes"):
        reader = SseLines(max_line=100)
        for _ in range(20):
            reader.feed(b"data: " + b"x" * 10 + b"\n")
    with pytest.raises(ReplyLimit, match="reply of more than 1,000 bytes"):
        reader = SseLines(max_total=1000)
        for _ in range(200):
            reader.feed(b": ping\n")
    reader = SseLines(max_line=100)
    assert reader.feed(b"data: " + b"x" * 90 + b"\n\n") == ["x" * 90]  # at the cap: read
