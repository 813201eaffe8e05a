"""A `--via` command's stderr never lands on the terminal under a full-screen view (the fleet
view, an attached run): it goes to `via.log` in the state dir, and what it said last is part of
the reason the view shows. The command-line clients (`cockpit ps --via …`) keep it on the
terminal. Real commands, real pipes."""

from __future__ import annotations

import asyncio
import os

import pytest

from cockpit.host.stream import VIA_LOG_NAME, HostStream
from cockpit.host.via import ViaLog
from cockpit.paths import state_dir

SAYS = ("sh -c 'echo \"ssh: connect to host box port 22: Connection refused\" >&2; "
        "printf \"\\033[2J\\033]0;title\\007 last words\\n\" >&2; exit 255'")


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def test_the_commands_stderr_goes_to_the_log_and_into_the_reason(capfd) -> None:
    with pytest.raises(ConnectionError) as caught:
        asyncio.run(HostStream.open(state_dir() / "no.sock", SAYS))
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing over the view's rows
    reason = str(caught.value)
    assert "the --via command said: " in reason and reason.endswith(" last words)")
    assert "\x1b" not in reason and "\x07" not in reason  # its escapes are shown, never act
    assert "\\x1b[2J" in reason
    log = (state_dir() / VIA_LOG_NAME).read_text()
    assert "Connection refused" in log and "last words" in log
    assert (state_dir() / VIA_LOG_NAME).stat().st_mode & 0o077 == 0


def test_each_try_reads_only_what_it_wrote() -> None:
    for said in ("first", "second"):
        command = f"sh -c 'echo {said} >&2; exit 1'"
        with pytest.raises(ConnectionError) as caught:
            asyncio.run(HostStream.open(state_dir() / "no.sock", command))
        assert str(caught.value).endswith(f"said: {said})")
    with pytest.raises(ConnectionError) as caught:  # silent: the reason as before, no "said"
        asyncio.run(HostStream.open(state_dir() / "no.sock", "true"))
    assert "said" not in str(caught.value)


def test_a_huge_or_blank_log_gives_a_short_line_or_nothing(tmp_path) -> None:
    log = ViaLog(tmp_path / "via.log")
    fd, since = log.open()
    os.write(fd, b"x" * 100_000 + b"\n\n  \n")
    os.close(fd)
    said = log.said(since)
    assert len(said) == 200 and said.endswith("…")
    fd, since = log.open()
    os.write(fd, b"\x1b]52;c;ZXZpbA==\x07 copied\n")
    os.close(fd)
    assert log.said(since) == "\\x1b]52;c;ZXZpbA==\\x07 copied"
    assert log.said(os.path.getsize(tmp_path / "via.log")) == ""
    assert ViaLog(tmp_path / "missing" / "via.log").said(0) == ""


@pytest.mark.parametrize("where", ["starting", "connecting"])
def test_a_cancel_while_the_command_starts_leaves_no_process(monkeypatch, where) -> None:
    """A view closed while its `--via` command is being started (the start runs in a thread,
    which cannot be stopped part way): the command is ended once it has started, not left
    running in its own session."""
    import subprocess
    import threading

    from cockpit.host import via

    started, release = threading.Event(), threading.Event()
    processes: list[subprocess.Popen[bytes]] = []
    real = via.via_socket

    def slow(command, stderr=None):  # type: ignore[no-untyped-def]
        started.set()
        release.wait(10)
        sock, process = real(command, stderr)
        processes.append(process)
        return sock, process

    monkeypatch.setattr(via, "via_socket", slow)
    connecting: list[asyncio.Event] = []
    if where == "connecting":  # (cancelled right after the start, while connecting)
        release.set()

        async def never(*args, **kwargs):  # type: ignore[no-untyped-def]
            connecting[0].set()
            await asyncio.Event().wait()

        monkeypatch.setattr(asyncio, "open_unix_connection", never)

    async def cancelled() -> None:
        connecting.append(asyncio.Event())
        task = asyncio.create_task(HostStream.open(state_dir() / "no.sock", "sleep 60"))
        await asyncio.to_thread(started.wait, 10)
        if where == "connecting":
            await connecting[0].wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()

    try:
        asyncio.run(cancelled())
        [process] = processes
        assert process.wait(10) is not None  # ended (a TimeoutExpired: left running)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
