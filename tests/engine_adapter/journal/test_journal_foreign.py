"""Other tools' session files recognised from their head (`engine_adapter.journal.foreign`): a
fixture of each format, the same cut anywhere, hostile values kept out of the hint, cockpit's own
journals never taken for one, and any bytes at all never a crash (hypothesis)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import TESTS

from engine_adapter.journal import ForeignSession, detect_foreign, detect_foreign_bytes

FOREIGN = TESTS / "golden" / "foreign"
GOLDEN = sorted((TESTS / "golden").glob("*.jsonl"))

EXPECTED = {
    "claude-code-session.jsonl": ("Claude Code", "claude",
                                  "3f2b8c1a-7d4e-4f6a-9b2c-1e5d7a9c0b3f", "/home/dev/project"),
    "codex-rollout.jsonl": ("Codex", "codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                            "/home/dev/project"),
    "codex-rollout-old.jsonl": ("Codex", "codex", "5e6f7a8b-1c2d-4e3f-9a0b-c1d2e3f4a5b6", None),
    "gemini-chat-session.json": ("Gemini CLI", "gemini",
                                 "7c9e6679-7425-40de-944b-e07fc1f90ae7", None),
    "gemini-chat-session.jsonl": ("Gemini CLI", "gemini",
                                  "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e", None),
    "checkpoint-refactor.json": ("Gemini CLI", None, None, None),
    "inspect-log.json": ("inspect_ai", None, None, None),
}


def eval_zip() -> bytes:
    """An inspect_ai `.eval` log: a zip of JSON members, as inspect writes them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {
            "task": "arc_easy", "model": "openai/gpt-4o-mini"}}))
        archive.writestr("samples/1_epoch_1.json", json.dumps({"id": 1, "epoch": 1}))
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
    return buffer.getvalue()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_is_recognised_with_its_id_and_directory(name):
    tool, agent, session, cwd = EXPECTED[name]
    found = detect_foreign(FOREIGN / name)
    assert found is not None
    assert (found.tool, found.agent, found.session_id, found.cwd) == (tool, agent, session, cwd)
    message = found.message(name)
    assert message.startswith(f"{name} is ") and "not a cockpit journal" in message
    assert "crashed" not in message and "corrupt" not in message
    if agent is not None:
        assert f"`cockpit replay --agent {agent} --session {session}" in message


def test_the_hints_name_each_tools_own_way():
    checkpoint = detect_foreign(FOREIGN / "checkpoint-refactor.json")
    assert checkpoint is not None and "`/chat resume refactor` in Gemini CLI" in \
        checkpoint.message("x")
    inspect = detect_foreign(FOREIGN / "inspect-log.json")
    assert inspect is not None and "`inspect view`" in inspect.message("x")
    claude = detect_foreign(FOREIGN / "claude-code-session.jsonl")
    assert claude is not None and claude.message("s.jsonl") == (
        "s.jsonl is a Claude Code session, not a cockpit journal; view it with `cockpit "
        "replay --agent claude --session 3f2b8c1a-7d4e-4f6a-9b2c-1e5d7a9c0b3f --cwd "
        "/home/dev/project`")


def test_an_inspect_eval_zip(tmp_path):
    path = tmp_path / "2026-03-04T14-00-00_arc-easy_Xk3p.eval"
    path.write_bytes(eval_zip())
    found = detect_foreign(path)
    assert found is not None and found.tool == "inspect_ai" and ".eval" in found.what
    other = tmp_path / "other.zip"  # a zip that is not one: not claimed
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert detect_foreign(other) is None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_big_file_is_read_only_by_its_head(name, tmp_path):
    """A session far larger than the head (its end cut mid-record) is still recognised, and
    only `HEAD_BYTES` of it are read."""
    from engine_adapter.journal.foreign import HEAD_BYTES

    data = (FOREIGN / name).read_bytes()
    if name.endswith(".jsonl"):
        lines = data.splitlines(keepends=True)
        data = data + b"".join(lines[1:]) * (3 * HEAD_BYTES // len(data))
    else:  # one JSON document: a long last member, cut by the head's limit
        data = data.rstrip()[:-1].rstrip().rstrip(b"]}") + b', "pad": "' + \
            b"x" * (2 * HEAD_BYTES)
    path = tmp_path / name
    path.write_bytes(data)
    found = detect_foreign(path)
    assert found is not None and found.tool == EXPECTED[name][0]


@pytest.mark.parametrize(("value", "kept"), [
    ("3f2b8c1a-7d4e", True),
    ("abc; rm -rf ~", False),
    ("$(touch /tmp/x)", False),
    ("id\nsecond line", False),
    ("\x1b[31mred", False),
    ("`whoami`", False),
    ("a" * 129, False),
    ("", False),
    ("-rf", False),  # would read as an option
    ("ok.id:1@x", True),
])
def test_a_hostile_session_id_is_left_out_of_the_hint(value, kept):
    line = json.dumps({"type": "user", "sessionId": value, "uuid": "u1", "cwd": "/w",
                       "message": {"role": "user", "content": "hi"}})
    found = detect_foreign_bytes(line.encode() + b"\n")
    assert found is not None and found.tool == "Claude Code"
    assert (found.session_id == value) is kept
    message = found.message("f")
    assert "\n" not in message and "\x1b" not in message
    if not kept:
        assert "--session ID" in message and "cockpit sessions --agent claude" in message


@pytest.mark.parametrize("cwd", ["/home/dev/my project", "/a'b", "/x\ny", "relative/dir",
                                 "/$(reboot)", "/ok/dir"])
def test_a_directory_in_the_hint_is_quoted_or_left_out(cwd):
    import shlex

    line = json.dumps({"type": "user", "sessionId": "s1", "uuid": "u1", "cwd": cwd})
    found = detect_foreign_bytes(line.encode())
    assert found is not None
    message = found.message("f")
    assert "\n" not in message
    if found.cwd is not None:
        assert f"--cwd {shlex.quote(found.cwd)}`" in message
        assert found.cwd.startswith("/") and "'" not in found.cwd and "$" not in found.cwd


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_cockpits_own_journals_are_never_foreign(path):
    assert detect_foreign(path) is None


@pytest.mark.parametrize("head", [
    b"",
    b"\n\n\n",
    b"not json at all\n",
    b'{"type": "user"}\n',  # a type alone is nobody's
    b'{"sessionId": "x"}\n',  # an id alone neither
    b"[]",
    b"[1, 2, 3]",
    b'{"version": 2}',
    b"\xff\xfe\x00garbage",
    b"PK\x03\x04" + b"\x00" * 40,
    # A cockpit journal whose event quotes another tool's record stays ours.
    json.dumps({"type": "tool_end", "seq": 0, "session_id": "s", "ts": 1.0, "output":
                '{"type":"user","sessionId":"x","uuid":"y"}'}).encode(),
    # A cockpit line first, then a foreign-looking line: still ours (perhaps damaged).
    b'{"type":"agent_start","seq":0,"session_id":"s","ts":1,"task":"t","engine":"e"}\n'
    b'{"type":"user","sessionId":"x","uuid":"y"}\n',
])
def test_what_is_none_of_them_is_not_claimed(head):
    assert detect_foreign_bytes(head) is None


def test_an_unreadable_path_is_none(tmp_path):
    assert detect_foreign(tmp_path / "missing.jsonl") is None
    assert detect_foreign(tmp_path) is None  # a directory


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=4096), st.text(max_size=40))
def test_any_bytes_never_crash_detection(head, name):
    found = detect_foreign_bytes(head, name)
    assert found is None or isinstance(found.message(name), str)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "sessionId", "uuid", "payload", "id", "timestamp", "role",
                         "parts", "messages", "eval", "version", "status", "cwd", "seq",
                         "session_id", "ts", "projectHash", "record_type", "instructions",
                         "leafUuid"]) | st.text(max_size=8), inner, max_size=6),
    max_leaves=20)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(_JSON, max_size=8))
def test_json_lines_of_any_shape_never_crash_detection(records):
    head = "\n".join(json.dumps(r) for r in records).encode()
    found = detect_foreign_bytes(head)
    assert found is None or isinstance(found, ForeignSession)
    if found is not None:
        message = found.message("f")
        assert "\n" not in message and "\r" not in message


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(EXPECTED)), st.integers(min_value=0, max_value=10_000))
def test_a_fixture_cut_anywhere_never_crashes(name, cut):
    data = (FOREIGN / name).read_bytes()
    found = detect_foreign_bytes(data[:cut], name)
    assert found is None or found.tool == EXPECTED[name][0]


def test_deeply_nested_json_is_not_a_crash():
    assert detect_foreign_bytes(b"[" * 100_000) is None
    assert detect_foreign_bytes(b'{"a":' * 50_000 + b"1" + b"}" * 50_000) is None
