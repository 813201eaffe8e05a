"""fileio: only regular files are read or written, checked on the open descriptor (no race),
never through a hard link or a last-component symlink, and never blocking the event loop."""

from __future__ import annotations

import asyncio
import os
import socket
import stat

import pytest
from support.hostile import while_ticking

from engine_adapter.files import FileRefused, check_writable, off_loop, read_regular, write_regular


def _fifo(tmp_path, name="fifo"):
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _refused(call, *words):
    with pytest.raises(FileRefused) as caught:
        call()
    message = str(caught.value)
    assert all(word in message for word in words), message
    assert "\n" not in message
    return message


def test_regular_files_read_and_write(tmp_path):
    path = tmp_path / "a.txt"
    assert write_regular(str(path), "a.txt", b"one\n") is True
    assert write_regular(str(path), "a.txt", b"two\n") is False
    assert read_regular(str(path), "a.txt", max_bytes=100) == b"two\n"
    assert read_regular(str(tmp_path / "none"), "none", max_bytes=1, missing_ok=True) is None
    _refused(lambda: read_regular(str(tmp_path / "none"), "none", max_bytes=1), "does not exist")
    _refused(lambda: read_regular(str(path), "a.txt", max_bytes=2), "too big")


@pytest.mark.parametrize("writer", [False, True], ids=["no-writer", "writer-open"])
def test_a_fifo_is_refused_at_once_for_reading_and_writing(tmp_path, writer):
    fifo = _fifo(tmp_path)
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK) if writer else None
    try:
        _refused(lambda: read_regular(str(fifo), "fifo", max_bytes=100), "FIFO")
        _refused(lambda: write_regular(str(fifo), "fifo", b"x"), "FIFO")
        _refused(lambda: check_writable(str(fifo), "fifo"), "FIFO")
    finally:
        if held is not None:
            os.close(held)


def test_sockets_directories_and_devices_are_refused(tmp_path):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        for name, word in (("sock", "socket"), (".", "directory")):
            path = str(tmp_path / name)
            _refused(lambda p=path, n=name: read_regular(p, n, max_bytes=10), word)
            _refused(lambda p=path, n=name: write_regular(p, n, b"x"), word)
    finally:
        sock.close()
    for device in ("/dev/null", "/dev/zero", "/dev/urandom"):
        _refused(lambda d=device: read_regular(d, d, max_bytes=10), "character device")
        _refused(lambda d=device: write_regular(d, d, b"x"), "character device")


@pytest.mark.parametrize("swap", ["fifo", "fifo-with-reader", "symlink-out", "hard-link",
                                  "directory"])
def test_a_file_swapped_after_the_check_is_still_refused(tmp_path, swap):
    """The check that counts is on the opened file: swap the path between `check_writable`
    and `write_regular` (the window an approval leaves open)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    path = tmp_path / "target.txt"
    path.write_text("inside\n")
    assert check_writable(str(path), "target.txt") is True
    path.unlink()
    held = None
    if swap.startswith("fifo"):
        os.mkfifo(path)
        if swap == "fifo-with-reader":
            held = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    elif swap == "symlink-out":
        path.symlink_to(outside)
    elif swap == "hard-link":
        os.link(outside, path)
    else:
        path.mkdir()
    try:
        _refused(lambda: write_regular(str(path), "target.txt", b"pwned\n"))
    finally:
        if held is not None:
            os.close(held)
    assert outside.read_text() == "outside\n"


def test_hard_links_are_never_written_through(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    for i in range(3):
        link = tmp_path / f"link{i}"
        os.link(outside, link)
        _refused(lambda link=link: check_writable(str(link), link.name), "hard links")
        _refused(lambda link=link: write_regular(str(link), link.name, b"pwned"), "hard links")
        assert read_regular(str(link), link.name, max_bytes=100) == b"outside\n"  # reading is fine
    assert outside.read_text() == "outside\n"
    assert os.stat(outside).st_nlink == 4


@pytest.mark.parametrize("name, word", [
    ("x" * 256, "too long"), ("d/" * 2100 + "f", "too long"), ("missing-dir/f", "does not exist"),
    ("a.txt/f", "not a directory"), ("loop", "symbolic link"),
])
def test_bad_names_give_one_clear_line(tmp_path, name, word):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "loop").symlink_to("loop")
    message = _refused(lambda: write_regular(str(tmp_path / name), name, b"x"), word)
    assert len(message) < 400
    _refused(lambda: read_regular(str(tmp_path / name), name, max_bytes=10), word)


def test_off_loop_gives_up_on_a_stuck_operation_and_the_loop_goes_on(tmp_path):
    fifo = _fifo(tmp_path)

    def stuck() -> bytes:
        with open(fifo, "rb") as handle:  # blocks until a writer comes: what a FIFO does
            return handle.read()

    async def main():
        with pytest.raises(FileRefused, match=r"took longer than 0\.2 s"):
            await off_loop(stuck, seconds=0.2, what="reading fifo")

    try:
        _, ticks = asyncio.run(while_ticking(main()))
        assert ticks > 10
    finally:  # free the worker thread
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_new_files_get_the_usual_mode(tmp_path):
    path = tmp_path / "new.txt"
    write_regular(str(path), "new.txt", b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
