"""The prompt history file of one project: appended one line a prompt, read back oldest first,
compacted past twice `KEEP`; a file the cockpit did not write the way it writes — corrupt lines,
bytes that are not UTF-8, a huge file, a symbolic link, a FIFO, a directory — is never a crash:
what can be read is, and one note says what could not."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.prompt_history import KEEP, READ_LIMIT, TEXT_LIMIT, PromptHistory


@pytest.fixture
def history(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return PromptHistory.for_workspace(workspace)


def test_prompts_come_back_oldest_first_and_per_project(tmp_path, history):
    for text in ("first", "second\nwith two lines", "ünïcödé ✓"):
        assert history.add(text) is None
    assert history.load().prompts == ("first", "second\nwith two lines", "ünïcödé ✓")
    other = tmp_path / "other"
    other.mkdir()
    assert PromptHistory.for_workspace(other).load().prompts == ()
    # the same project by another path (a symlink to it) is the same history
    (tmp_path / "alias").symlink_to(tmp_path / "ws")
    assert PromptHistory.for_workspace(tmp_path / "alias").path == history.path
    assert oct(history.path.stat().st_mode & 0o777) == "0o600"


def test_blank_prompts_are_not_kept_and_long_ones_are_cut(history):
    history.add("   \n")
    history.add("x" * (TEXT_LIMIT + 10))
    assert history.load().prompts == ("x" * TEXT_LIMIT,)


def test_past_twice_keep_it_is_compacted_to_the_newest(history):
    for n in range(2 * KEEP + 1):
        history.add(f"p{n}")
    lines = history.path.read_text().splitlines()
    assert len(lines) == KEEP
    assert history.load().prompts[-1] == f"p{2 * KEEP}"
    assert history.load().prompts[0] == f"p{KEEP + 1}"
    assert not [p for p in history.path.parent.iterdir() if p.name.endswith(".tmp")]


BAD_LINES = {
    "not json": b"{not json",
    "not utf-8": b'{"text": "\xff\xfe"}',
    "no text": b'{"ts": 1}',
    "text not a string": b'{"text": 5}',
    "a list": b'["text"]',
    "blank text": b'{"text": "  "}',
    "deep nesting": b"[" * 100_000,
    "nul bytes": b"\0\0\0",
}


@pytest.mark.parametrize("bad", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_a_bad_line_is_skipped_with_one_note(history, bad):
    history.path.parent.mkdir(parents=True)
    history.path.write_bytes(b'{"text": "before"}\n' + bad + b'\n{"text": "after"}\n')
    loaded = history.load()
    assert loaded.prompts == ("before", "after")
    assert loaded.note is not None and "1 unreadable line skipped" in loaded.note


def test_a_huge_file_is_not_read(history):
    history.path.parent.mkdir(parents=True)
    with history.path.open("wb") as out:
        out.truncate(READ_LIMIT + 1)
    loaded = history.load()
    assert loaded.prompts == () and "MB" in loaded.note and "remove it" in loaded.note


def test_a_symlink_in_its_place_is_neither_read_nor_written_through(tmp_path, history):
    secret = tmp_path / "secret.txt"
    secret.write_text('{"text": "from outside"}\n')
    history.path.parent.mkdir(parents=True)
    history.path.symlink_to(secret)
    loaded = history.load()
    assert loaded.prompts == () and loaded.note.startswith("prompt history not read")
    problem = history.add("a prompt")
    assert problem is not None and problem.startswith("prompt history not kept")
    assert secret.read_text() == '{"text": "from outside"}\n'


def test_a_fifo_or_a_directory_in_its_place_is_refused_at_once(history):
    history.path.parent.mkdir(parents=True)
    os.mkfifo(history.path)
    assert history.load().note.endswith("is not a regular file")
    assert history.add("x").startswith("prompt history not kept")  # (ENXIO: no reader)
    os.unlink(history.path)
    history.path.mkdir()
    assert history.load().note.startswith("prompt history not read")
    assert history.add("x").startswith("prompt history not kept")


def test_an_unwritable_data_dir_says_so(tmp_path, monkeypatch):
    (tmp_path / "home").write_text("a file, not a folder")
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    history = PromptHistory.for_workspace(tmp_path)
    assert history.load().prompts == ()
    assert history.add("x").startswith("prompt history not kept")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1).filter(str.strip), max_size=8))
def test_any_text_comes_back_as_it_was(tmp_path_factory, texts):
    home = tmp_path_factory.mktemp("h")
    history = PromptHistory(home / "h.jsonl", str(home))
    for text in texts:
        history.add(text)
    assert list(history.load().prompts) == [t[:TEXT_LIMIT] for t in texts]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_in_the_file_never_raise(tmp_path_factory, data):
    home = tmp_path_factory.mktemp("h")
    path = home / "h.jsonl"
    path.write_bytes(data)
    loaded = PromptHistory(path, str(home)).load()
    assert all(isinstance(p, str) and p.strip() for p in loaded.prompts)


def test_each_line_names_its_workspace(history):
    history.add("hello")
    record = json.loads(history.path.read_text())
    assert record["workspace"] == history.workspace and record["text"] == "hello"
