"""The host's wire: every message survives its line; anything else is a `WireError`, never a
crash; a greeting of another protocol or version is refused with a line saying so."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.host.wire import MAX_LINE, VERSION, WireError, decode, encode, hello, hello_problem

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)
messages = st.dictionaries(st.text(), json_values, max_size=6)


@given(messages)
def test_every_message_is_one_line_and_reads_back(message) -> None:
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # text with newlines is escaped
    assert decode(line) == message


@given(st.binary(max_size=200))
def test_any_bytes_decode_to_a_message_or_a_wire_error(raw) -> None:
    try:
        message = decode(raw)
    except WireError:
        return
    assert isinstance(message, dict)


@pytest.mark.parametrize("line", [
    b"", b"\n", b"[]", b"1", b'"hello"', b"null", b"{", b'{"a":1}{"b":2}', b"\xff\xfe{}",
    b'{"a": NaN', b"\x00", b'{"op": "ps"', "{\"é\": 1".encode("latin-1"),
])
def test_what_is_not_one_json_object_is_a_wire_error(line) -> None:
    with pytest.raises(WireError):
        decode(line)


def test_a_line_longer_than_the_limit_is_refused_before_parsing() -> None:
    with pytest.raises(WireError, match="longer than"):
        decode(b" " * (MAX_LINE + 1))


@pytest.mark.parametrize(("greeting", "problem"), [
    (hello("host"), None),
    (hello("host", pid=1, since=2.0), None),
    (hello(), "not a cockpit host (it answered as 'client')"),  # `cat` echoing ours back
    ({"hello": "cockpit-host", "version": VERSION}, "answered as None"),
    ({"hello": "cockpit-host", "version": VERSION + 1, "role": "host"},
     "version 2 of the host protocol"),
    ({"hello": "cockpit-host", "version": "1"}, "version '1'"),
    ({"hello": "cockpit-host"}, "version None"),
    ({"hello": "ssh"}, "does not speak the cockpit host protocol"),
    ({}, "does not speak"),
    ({"error": "refused: this host serves uid 0 only"}, "refused: this host serves uid 0 only"),
    ({"version": VERSION}, "does not speak"),
])
def test_a_greeting_of_another_protocol_or_version_is_refused(greeting, problem) -> None:
    said = hello_problem(greeting)
    if problem is None:
        assert said is None
    else:
        assert said is not None and problem in said


def test_the_greeting_names_the_protocol_and_version() -> None:
    assert json.loads(encode(hello())) == {"hello": "cockpit-host", "version": VERSION,
                                           "role": "client"}
