"""SIGTERM (and SIGHUP) ends a run as a quit would: the run is cancelled cleanly (the journal
ends with `agent_end`), the demo's throw-away workspace is removed, and the exit code is a cancel's.
Real processes: `cockpit demo` headless through a pipe, the live cockpit and the replay viewer on
a pty (which must give the terminal back: leave the alternate screen)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.terminate import HUNG_UP, TERMINATED

CANCELLED_EXIT = 130


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "COCKPIT_HOME": str(home), "COCKPIT_SANDBOX": "off",
            "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}


def _last_event(home: Path) -> dict:
    (journal,) = (home / "data" / "journals").glob("*.jsonl")
    return json.loads(journal.read_text(encoding="utf-8").splitlines()[-1])


@pytest.mark.parametrize(("number", "reason"), [(signal.SIGTERM, TERMINATED),
                                                (signal.SIGHUP, HUNG_UP)], ids=["TERM", "HUP"])
def test_a_signal_cancels_a_headless_run_and_removes_the_demo_workspace(tmp_path, number,
                                                                         reason):
    proc = subprocess.Popen([sys.executable, "-m", "cockpit", "demo", "--headless"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tmp_path), cwd=tmp_path)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("demo workspace: "), first
        workspace = Path(first.removeprefix("demo workspace: ").strip())
        # An event line means the run is live (its signal handlers are in place).
        while not proc.stdout.readline().startswith("start"):
            pass
        assert workspace.is_dir()
        proc.send_signal(number)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == CANCELLED_EXIT, err
    assert not workspace.exists()
    end = _last_event(tmp_path)
    assert (end["type"], end["status"], end["error"]) == ("agent_end", "cancelled", reason)
    assert "journal: " in out


def _read_until(fd: int, wanted: bytes, deadline: float) -> bytes:
    seen = b""
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{wanted!r} never showed; saw {seen[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
    return seen


@contextlib.contextmanager
def _on_a_pty(args: list[str], home: Path) -> Iterator[tuple[int, int]]:
    """`python -m cockpit ARGS` on a pty, run in `home`; yields (pid, the pty's fd); the
    process is killed and reaped afterwards if it is still there."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the cockpit on the pty
        os.chdir(home)
        os.execve(sys.executable, [sys.executable, "-m", "cockpit", *args], _env(home))
    try:
        yield pid, fd
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


@pytest.mark.skipif(sys.platform == "win32", reason="a pty")
def test_sigterm_quits_the_live_cockpit_cleanly(tmp_path):
    with _on_a_pty(["demo"], tmp_path) as (pid, fd):
        deadline = time.monotonic() + 120
        shown = _read_until(fd, b"demo workspace: ", deadline)
        shown += _read_until(fd, b"\n", deadline)
        line = shown.split(b"demo workspace: ", 1)[1].split(b"\r", 1)[0].split(b"\n", 1)[0]
        workspace = Path(line.decode().strip())
        _read_until(fd, b"phase", deadline)  # the app has mounted: the run is live
        os.kill(pid, signal.SIGTERM)
        _read_until(fd, b"journal: ", deadline)
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == CANCELLED_EXIT
    assert not workspace.exists()
    end = _last_event(tmp_path)
    assert (end["type"], end["status"], end["error"]) == ("agent_end", "cancelled", TERMINATED)


LEAVE_ALT_SCREEN = b"\x1b[?1049l"


@pytest.mark.skipif(sys.platform == "win32", reason="a pty")
def test_sigterm_closes_the_replay_viewer_and_gives_the_terminal_back(tmp_path):
    journal = tmp_path / "run.jsonl"
    journal.write_text(
        '{"type":"agent_start","session_id":"s1","seq":0,"ts":1.0,"task":"look around",'
        '"engine":"test"}\n'
        '{"type":"agent_end","session_id":"s1","seq":1,"ts":2.0,"status":"completed"}\n',
        encoding="utf-8")
    with _on_a_pty(["replay", str(journal)], tmp_path) as (pid, fd):
        deadline = time.monotonic() + 120
        _read_until(fd, b"look around", deadline)
        os.kill(pid, signal.SIGTERM)
        after = _read_until(fd, LEAVE_ALT_SCREEN, deadline)
        _, status = os.waitpid(pid, 0)
    assert LEAVE_ALT_SCREEN in after
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_after_a_hang_up_sighup_never_finds_its_default_again(monkeypatch):
    """A closed terminal sends SIGHUP more than once: from the first on, SIGHUP is ignored and
    stays so (its default would kill the cockpit mid-quit), also once the handler is removed."""
    import asyncio

    from cockpit.terminate import on_terminate

    loop = asyncio.new_event_loop()
    kept = {n: signal.getsignal(n) for n in (signal.SIGHUP, signal.SIGTERM)}
    try:
        remove = on_terminate(loop, lambda reason: None)
        handler = signal.getsignal(signal.SIGHUP)
        assert callable(handler)
        calls: list[tuple[int, object]] = []
        real = signal.signal

        def recording(number, disposition):
            calls.append((number, disposition))
            return real(number, disposition)

        monkeypatch.setattr(signal, "signal", recording)
        handler(signal.SIGHUP, None)
        remove()
        assert calls[0] == (signal.SIGHUP, signal.SIG_IGN)
        assert (signal.SIGHUP, signal.SIG_DFL) not in calls
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == kept[signal.SIGTERM]  # the others restored
    finally:
        monkeypatch.undo()
        for number, disposition in kept.items():
            signal.signal(number, disposition)
        loop.close()


def test_a_signal_after_the_loop_closed_is_no_traceback_and_acts_as_before(monkeypatch):
    """A signal that arrives once the run's loop has closed (its handler still installed) does
    not raise out of the signal handler: SIGHUP is ignored, SIGTERM acts as it did before the
    cockpit installed its handler (here: a handler the test set, which records it)."""
    import asyncio

    from cockpit.terminate import on_terminate

    kept = {n: signal.getsignal(n) for n in (signal.SIGHUP, signal.SIGTERM)}
    seen: list[int] = []
    try:
        signal.signal(signal.SIGTERM, lambda number, frame: seen.append(number))
        for number in (signal.SIGHUP, signal.SIGTERM):
            loop = asyncio.new_event_loop()
            on_terminate(loop, lambda reason: None)
            handler = signal.getsignal(number)
            loop.close()
            handler(number, None)  # (no RuntimeError: the loop is closed)
        assert seen == [signal.SIGTERM]  # SIGTERM went to the disposition it had before
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        for number, disposition in kept.items():
            signal.signal(number, disposition)
