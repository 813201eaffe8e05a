"""`@` mentions: written and read back the same way (a property), found only where they start a
word, and read only when the file is a regular text file inside the workspace, within the caps;
each attack a human could be tricked into (a path out, a link out, the git folder, a FIFO, a
growing file, a hostile name, a sparse giant, a huge token) refused with one line, never hung."""

from __future__ import annotations

import asyncio
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_adapter.files import safe_io
from engine_adapter.files.mentions import (
    FILE_LIMIT,
    MAX_MENTIONS,
    TOTAL_LIMIT,
    context_text,
    find_mentions,
    mention_at,
    mention_token,
    read_mentions,
)

# -- writing and finding -------------------------------------------------------------------------

@given(st.text(min_size=1, max_size=60).filter(lambda p: "\0" not in p))
def test_a_token_reads_back_as_its_path_alone(path):
    token = mention_token(path)
    assert find_mentions(token) == [path]
    assert find_mentions(f"look at {token}, then fix it") == [path]
    assert mention_at(token, len(token)) == (0, path)
    assert mention_at(f"fix {token}", len(token) + 4) == (4, path)


@given(st.text(min_size=1, max_size=60))
def test_a_token_holds_no_raw_control_or_space_character(path):
    token = mention_token(path)
    assert "\n" not in token and "\x1b" not in token and "\t" not in token


@pytest.mark.parametrize(("text", "found"), [
    ("explain @src/app.py", ["src/app.py"]),
    ("see @README.md.", ["README.md"]),
    ("(@a.py) and @b.py, @c.py; @d.py!", ["a.py", "b.py", "c.py", "d.py"]),
    ('@"my notes.md" please', ["my notes.md"]),
    ('@"a \\"quoted\\" name"', ['a "quoted" name']),
    ("mail ada@example.com or x@y", []),
    ("@", []),
    ("@ alone", []),
    ('@"never closed', []),
    ("@a.py and @a.py again", ["a.py"]),
    ("@.git/config", [".git/config"]),
    ("@../x @/etc/passwd", ["../x", "/etc/passwd"]),
])
def test_find_mentions(text, found):
    assert find_mentions(text) == found


def test_at_most_max_mentions_are_taken():
    text = " ".join(f"@f{i}.py" for i in range(MAX_MENTIONS + 5))
    assert len(find_mentions(text)) == MAX_MENTIONS


@pytest.mark.parametrize(("text", "cursor", "typed"), [
    ("fix @src", 8, (4, "src")),
    ("@", 1, (0, "")),
    ("ada@exam", 8, None),
    ("fix @src now", 12, None),
    ('@"my no', 7, (0, "my no")),
    ('@"my notes.md" ', 15, None),
    ('@"a @b"', 7, (0, "a @b")),
    ("@src/app.", 9, (0, "src/app.")),
    ("fix @src now", 8, (4, "src")),
])
def test_the_mention_being_typed(text, cursor, typed):
    assert mention_at(text, cursor) == typed


def test_a_ten_thousand_letter_token_is_found_and_refused_without_a_lookup(tmp_path):
    path = "a" * 10_000
    assert find_mentions("@" + path) == [path]
    [read] = read_mentions(tmp_path, [path])
    assert not read.sent and "file name" in read.reason


# -- reading --------------------------------------------------------------------------------------

def _one(root, path):
    [read] = read_mentions(root, [path])
    assert read.reason is None or "\n" not in read.reason
    return read


def test_a_text_file_is_read_with_its_size_and_uri(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    read = _one(tmp_path, "src/app.py")
    assert read.sent and read.text == "print('hi')\n" and read.size == 12
    assert read.uri == (tmp_path / "src" / "app.py").resolve().as_uri()


def test_a_link_inside_the_workspace_is_followed(tmp_path):
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "alias.md").symlink_to("real.md")
    read = _one(tmp_path, "alias.md")
    assert read.sent and read.uri.endswith("/real.md")


@pytest.mark.parametrize(("make", "words"), [
    ("dotdot", "outside the workspace"),
    ("absolute", "outside the workspace"),
    ("ssh link", "symbolic link out of the workspace"),
    ("git config", "git folder"),
    ("git in sub", "git folder"),
    ("fifo", "FIFO"),
    ("folder", "directory"),
    ("missing", "does not exist"),
    ("binary", "not text"),
    ("latin1", "not UTF-8"),
    ("sparse", "too big"),
    ("workspace", "workspace folder"),
])
def test_what_is_refused_and_why(tmp_path, make, words):
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret").write_text("id_rsa contents")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]")
    path = {
        "dotdot": "../secret",
        "absolute": "/etc/passwd",
        "ssh link": "key",
        "git config": ".git/config",
        "git in sub": "sub/.git/HEAD",
        "fifo": "pipe",
        "folder": "sub",
        "missing": "nope.py",
        "binary": "a.out",
        "latin1": "old.txt",
        "sparse": "huge.img",
        "workspace": ".",
    }[make]
    (root / "sub" / ".git").mkdir(parents=True)
    (root / "sub" / ".git" / "HEAD").write_text("ref")
    (root / "key").symlink_to(tmp_path / "secret")  # as ~/.ssh/id_rsa would be
    os.mkfifo(root / "pipe")
    (root / "a.out").write_bytes(b"\x7fELF\0\0\0")
    (root / "old.txt").write_bytes("caf\xe9".encode("latin-1"))
    with open(root / "huge.img", "wb") as handle:  # 1 GB, sparse: nothing is read
        handle.truncate(1 << 30)
    read = _one(root, path)
    assert not read.sent and read.text is None
    assert words in read.reason, read.reason
    assert "id_rsa" not in (read.reason or "")


def test_a_fifo_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "pipe")

    async def main():
        return await asyncio.wait_for(asyncio.to_thread(read_mentions, tmp_path, ["pipe"]), 5)

    [read] = asyncio.run(main())
    assert "FIFO" in read.reason


def test_the_caps_per_file_and_in_all(tmp_path):
    (tmp_path / "big.txt").write_text("x" * (FILE_LIMIT + 1))
    for i in range(5):
        (tmp_path / f"part{i}.txt").write_text("y" * FILE_LIMIT)
    [big] = read_mentions(tmp_path, ["big.txt"])
    assert "too big" in big.reason
    reads = read_mentions(tmp_path, [f"part{i}.txt" for i in range(5)])
    sent = [r for r in reads if r.sent]
    assert sum(r.size for r in sent) <= TOTAL_LIMIT and len(sent) == TOTAL_LIMIT // FILE_LIMIT
    assert "over 400,000 bytes" in reads[-1].reason


def test_a_file_that_grows_while_it_is_read(tmp_path, monkeypatch):
    target = tmp_path / "log.txt"
    target.write_text("a" * 1000)
    real_read = os.read
    grown = []

    def read_and_grow(fd, n):  # the file grows on disk between two reads of it
        chunk = real_read(fd, n)
        if not grown:
            grown.append(True)
            with open(target, "a") as handle:
                handle.write("b" * (FILE_LIMIT + 10))
        return chunk

    monkeypatch.setattr(safe_io.os, "read", read_and_grow)
    read = _one(tmp_path, "log.txt")
    assert not read.sent and "too big" in read.reason


@pytest.mark.parametrize("name", ["evil\x1b[31mred.txt", "two\nlines.txt", "rtl\u202eexe.txt"])
def test_a_hostile_name_is_read_by_its_token_and_shown_escaped(tmp_path, name):
    (tmp_path / name).write_text("data")
    [path] = find_mentions(f"look {mention_token(name)}")
    assert path == name and _one(tmp_path, path).sent
    os.remove(tmp_path / name)
    read = _one(tmp_path, name)
    assert not read.sent
    assert "\x1b" not in read.reason and "\n" not in read.reason and "\u202e" not in read.reason


def test_the_context_text_fences_each_file_so_it_cannot_close_its_fence(tmp_path):
    (tmp_path / "a.md").write_text("```\nnot the end\n````\n")
    (tmp_path / "b.txt").write_text("plain")
    text = context_text(read_mentions(tmp_path, ["a.md", "b.txt", "missing"]))
    assert "@a.md (21 bytes):\n`````\n```\nnot the end\n````\n`````" in text
    assert "@b.txt (5 bytes):\n```\nplain\n```" in text
    assert "missing" not in text
    assert context_text(read_mentions(tmp_path, ["missing"])) == ""

