"""Closing the terminal (a closed window, `tmux kill-session`) ends the cockpit: the run is
cancelled as a quit would (its journal ends with `agent_end`), the demo's workspace is removed,
the agent is stopped, and the process exits — after an approval was shown, during or after the
run, live or in replay — writing nothing to the terminal that is gone.

Real processes on a real pty: the test reads the pty until the approval is on screen, then
closes its end (the kernel hangs the terminal up and sends SIGHUP), sends SIGHUP itself, or
both. The product's bound is 2 s; the wait here is a generous guard against a hang, not a
timing assertion.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv

from cockpit.terminate import HUNG_UP, INTERRUPTED, silence_gone_terminal, terminal_gone

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pty")

GUARD = 60.0  # seconds: a hang, not a slow machine, fails this
APPROVAL_SHOWN = b"allow once"
CANCELLED_EXIT = 130


def _env(home: Path, size: tuple[int, int]) -> dict[str, str]:
    return {**os.environ, "COCKPIT_HOME": str(home), "COCKPIT_SANDBOX": "off",
            "TERM": "xterm-256color", "COLUMNS": str(size[0]), "LINES": str(size[1]),
            "TEXTUAL_ANIMATIONS": "none"}


@dataclass
class Cockpit:
    """`python -m cockpit …` on a pty: its pid, the pty's end, what it has shown so far."""

    pid: int
    fd: int
    shown: bytes = b""
    closed: bool = False

    def read_until(self, wanted: bytes) -> bytes:
        deadline = time.monotonic() + GUARD
        while wanted not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"{wanted!r} never showed; saw {self.shown[-600:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            assert chunk, f"the cockpit ended before showing {wanted!r}: {self.shown[-600:]!r}"
            self.shown += chunk
        return self.shown

    def close_terminal(self) -> None:
        os.close(self.fd)
        self.closed = True

    def wait_exit(self) -> int:
        """The exit status, once the process has exited (a pidfd: no polling)."""
        pidfd = os.pidfd_open(self.pid)
        deadline = time.monotonic() + GUARD
        try:
            while True:
                # A terminal still open is read meanwhile, as a real one is (unread, it fills
                # and blocks the writer).
                watched = [pidfd] if self.closed else [pidfd, self.fd]
                left = deadline - time.monotonic()
                ready, _, _ = select.select(watched, [], [], max(left, 0))
                assert ready, (f"the cockpit (pid {self.pid}) is still running after its "
                               "terminal closed")
                if pidfd in ready:
                    break
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:  # the terminal has no writer left: only the exit to wait for
                    os.close(self.fd)
                    self.closed = True
                self.shown += chunk
        finally:
            os.close(pidfd)
        _, status = os.waitpid(self.pid, 0)
        assert os.WIFEXITED(status), f"killed by signal {os.WTERMSIG(status)}"
        return os.WEXITSTATUS(status)


@contextmanager
def cockpit_on_a_pty(args: list[str], home: Path,
                     size: tuple[int, int] = (160, 48)) -> Iterator[Cockpit]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the cockpit, leading its session on the pty
        try:
            os.chdir(home)
            os.execve(sys.executable, [sys.executable, "-m", "cockpit", *args],
                      _env(home, size))
        finally:
            os._exit(127)
    running = Cockpit(pid, fd)
    try:
        yield running
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        if not running.closed:
            os.close(fd)


def hang_up(cockpit: Cockpit, how: str) -> None:
    """Close the terminal the way `how` says: the pty's end closed (what a window or tmux
    does), SIGHUP alone (a terminal that sends it and goes), or both, in that order."""
    if how in ("close", "both"):
        cockpit.close_terminal()
    if how in ("hup", "both"):
        os.kill(cockpit.pid, signal.SIGHUP)
    if how == "int":  # not a close: `kill -INT` (in the cockpit ctrl+c is a key) quits alike
        os.kill(cockpit.pid, signal.SIGINT)


def _journal(home: Path) -> list[dict]:
    (journal,) = (home / "data" / "journals").glob("*.jsonl")
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


def _journal_end(home: Path) -> dict:
    return _journal(home)[-1]


def _workspace(shown: bytes) -> Path:
    line = shown.split(b"demo workspace: ", 1)[1].split(b"\r", 1)[0].split(b"\n", 1)[0]
    return Path(line.decode().strip())


def _left_behind(session: int, marker: str) -> list[str]:
    """Live processes of the cockpit's session, or whose command line names `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        state, sid = fields[0], int(fields[3])
        if state != "Z" and (sid == session or marker in cmdline):
            found.append(f"{entry}: {cmdline}")
    return found


HOW = ["close", "hup", "both"]


@pytest.mark.parametrize("how", [*HOW, "int"])
def test_closing_the_terminal_at_an_approval_ends_the_demo(tmp_path, how):
    with cockpit_on_a_pty(["demo", "--speed", "0"], tmp_path) as cockpit:
        workspace = _workspace(cockpit.read_until(b"demo workspace: ") + cockpit.read_until(
            b"\n"))
        cockpit.read_until(APPROVAL_SHOWN)
        assert workspace.is_dir()
        hang_up(cockpit, how)
        code = cockpit.wait_exit()
    assert code == CANCELLED_EXIT
    end = _journal_end(tmp_path)
    reason = INTERRUPTED if how == "int" else HUNG_UP
    assert (end["type"], end["status"], end["error"]) == ("agent_end", "cancelled", reason)
    assert not workspace.exists()
    assert _left_behind(cockpit.pid, str(workspace)) == []


def test_closing_the_terminal_after_the_run_ended_ends_the_demo(tmp_path):
    # Every approval times out (denied), so the run ends by itself after asking.
    with cockpit_on_a_pty(["demo", "--speed", "0", "--approval-timeout", "0.05"],
                          tmp_path, size=(80, 24)) as cockpit:
        workspace = _workspace(cockpit.read_until(b"demo workspace: ") + cockpit.read_until(
            b"\n"))
        cockpit.read_until(APPROVAL_SHOWN)
        deadline = time.monotonic() + GUARD
        while _journal_tail_type(tmp_path) != "agent_end":  # the run's end is journaled
            assert time.monotonic() < deadline, "the run never ended"
            # Keep reading what it draws (a terminal that is not read blocks its writer).
            if select.select([cockpit.fd], [], [], 0.05)[0]:
                cockpit.shown += os.read(cockpit.fd, 65536)
        hang_up(cockpit, "close")
        code = cockpit.wait_exit()
    assert code != CANCELLED_EXIT or _journal_end(tmp_path)["error"] != HUNG_UP
    assert _journal_end(tmp_path)["type"] == "agent_end"
    assert not workspace.exists()


def _journal_tail_type(home: Path) -> str | None:
    journals = list((home / "data" / "journals").glob("*.jsonl"))
    if not journals:
        return None
    lines = journals[0].read_text(encoding="utf-8").splitlines()
    try:
        return json.loads(lines[-1])["type"] if lines else None
    except ValueError:  # a line being written
        return None


@pytest.mark.parametrize("how", HOW)
def test_closing_the_terminal_at_an_agents_approval_stops_the_agent(tmp_path, how):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = shlex.join(agent_argv("--log", tmp_path / "agent.jsonl"))
    with cockpit_on_a_pty(["run", "wait-permission", "--agent", command, "--cwd",
                           str(workspace)], tmp_path) as cockpit:
        cockpit.read_until(APPROVAL_SHOWN)
        hang_up(cockpit, how)
        code = cockpit.wait_exit()
    assert code == CANCELLED_EXIT
    events = _journal(tmp_path)
    assert (events[-1]["type"], events[-1]["status"]) == ("agent_end", "cancelled")
    assert {"type": "cancellation_observed", "reason": HUNG_UP} in [
        {"type": e["type"], "reason": e.get("reason")} for e in events]
    assert _left_behind(cockpit.pid, str(tmp_path / "agent.jsonl")) == []


@pytest.mark.parametrize("how", HOW)
def test_closing_the_terminal_ends_the_replay_viewer_at_an_approval(tmp_path, how):
    journal = tmp_path / "run.jsonl"
    journal.write_text(
        '{"type":"agent_start","session_id":"s1","seq":0,"ts":1.0,"task":"look around",'
        '"engine":"test"}\n'
        '{"type":"approval_requested","session_id":"s1","seq":1,"ts":2.0,"approval_id":"a1",'
        '"tool":"run_command","reason":"runs a command","tool_input":{"command":"ls"},'
        '"tier":2,"prefix":"ls"}\n', encoding="utf-8")
    with cockpit_on_a_pty(["replay", str(journal)], tmp_path) as cockpit:
        cockpit.read_until(b"look around")
        hang_up(cockpit, how)
        code = cockpit.wait_exit()
    assert code == 0
    assert _left_behind(cockpit.pid, str(journal)) == []


# The parts, on their own -------------------------------------------------------------------

def test_a_hung_up_terminal_is_gone_and_a_pipe_or_a_live_one_is_not(tmp_path):
    read, write = os.pipe()
    master, slave = pty.openpty()
    try:
        assert not terminal_gone(write)
        assert not terminal_gone(slave)  # a live terminal
        assert not terminal_gone(os.open(tmp_path / "f", os.O_CREAT | os.O_WRONLY))
        assert not terminal_gone(10_000)  # not open at all
    finally:
        for fd in (read, write, master, slave):
            os.close(fd)


def test_after_a_hang_up_stdout_and_stderr_go_nowhere_and_never_fail(tmp_path):
    # In a child on its own pty: close the pty's end, then silence and write.
    pid, fd = pty.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            os.write(1, b"ready\n")  # the parent then closes its end
            while not terminal_gone(1):
                select.select([0], [], [], 0.01)
            silenced = silence_gone_terminal()
            os.write(1, b"x" * 100_000)
            os.write(2, b"y")
            os._exit(0 if silenced and not terminal_gone(1) else 3)
        finally:
            os._exit(4)
    Cockpit(pid, fd).read_until(b"ready")
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("how", ["close", "hup"])
def test_closing_the_terminal_stops_an_agent_that_ignores_cancel_at_once(tmp_path, how):
    """Gemini CLI ignores `session/cancel`: a closed terminal does not give it the cancel
    grace (2.5 s, over the 2 s bound) but kills it at once, and the journal says so, with
    what it wrote to stderr."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = shlex.join(agent_argv("--log", tmp_path / "agent.jsonl"))
    with cockpit_on_a_pty(["run", "deaf", "--agent", command, "--cwd", str(workspace)],
                          tmp_path) as cockpit:
        cockpit.read_until(b"thinking")
        hang_up(cockpit, how)
        code = cockpit.wait_exit()
    assert code == CANCELLED_EXIT
    events = _journal(tmp_path)
    observed = next(e for e in events if e["type"] == "cancellation_observed")
    assert observed["reason"].startswith(HUNG_UP)
    assert "did not stop at once and no one is left to wait for it" in observed["reason"]
    assert "test agent: thinking hard" in events[-1]["stderr"]
    assert _left_behind(cockpit.pid, str(tmp_path / "agent.jsonl")) == []
