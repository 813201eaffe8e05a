"""A real host process for tests: its own short COCKPIT_HOME (a unix socket path is at most
107 bytes), the `cockpit` command line run against it, and clients on its real socket. Every
host a test starts is stopped (and waited for) in teardown: none is left behind."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cockpit.host import HostClient
from support.paths import ROOT, TESTS

__all__ = ["HostHome", "detach_demo", "follow", "until", "wait_gone"]

WAIT = 60.0  # the safety net of every wait on a real process (never the thing asserted)


def wait_gone(pid: int, timeout: float = WAIT) -> bool:
    """Wait for process `pid` (not necessarily our child) to exit, on its pidfd: True once it
    is gone."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


class HostHome:
    """A COCKPIT_HOME for one test, and the host(s) started in it."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="ck", dir="/tmp"))
        self.env = {**os.environ, "COCKPIT_HOME": str(self.home),
                    "PYTHONPATH": os.pathsep.join(filter(None, [
                        str(ROOT), str(TESTS), os.environ.get("PYTHONPATH")]))}
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket(self) -> Path:
        return self.home / "run" / "host.sock"

    @property
    def lock(self) -> Path:
        return self.home / "run" / "host.lock"

    def host_pid(self) -> int | None:
        """The pid the lock file names (the running host's, or the last one's)."""
        with contextlib.suppress(OSError, ValueError):
            return int(self.lock.read_text().strip())
        return None

    def cockpit(self, *args: str, timeout: float = WAIT,
                cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`cockpit ARGS` in a fresh interpreter, against this home's host."""
        return subprocess.run([sys.executable, "-m", "cockpit", *args], env=self.env,
                              cwd=cwd or self.home, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """`cockpit host [ARGS]` as our child; returns once it listens."""
        read_end, write_end = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cockpit", "host", "--ready-fd", str(write_end), *args],
            env=self.env, cwd=self.home, pass_fds=(write_end,), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        os.close(write_end)
        try:
            ready, _, _ = select.select([read_end], [], [], WAIT)
            said = os.read(read_end, 64) if ready else b""
        finally:
            os.close(read_end)
        assert said.strip() in (b"ready", b"running"), self.log()
        return self.process

    def client(self) -> HostClient:
        """A connection to this home's host."""
        return HostClient.connect(self.socket)

    def log(self) -> str:
        path = self.home / "state" / "host.log"
        return path.read_text(errors="replace") if path.exists() else "(no host log)"

    def kill9(self) -> None:
        """`kill -9` the host, and wait until it is gone."""
        pid = self.host_pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid)
        if self.process is not None and self.process.pid == pid:
            self.process.wait(WAIT)

    def stop(self) -> None:
        """Stop whatever host runs here (asked first, killed if it will not go) and wait."""
        pid = self.host_pid()
        if pid is not None and self.socket.exists():
            with contextlib.suppress(Exception), self.client() as client:
                client.request("stop")
                with contextlib.suppress(Exception):
                    while True:
                        client.read()
        if pid is not None and not wait_gone(pid, 30):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            wait_gone(pid)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(WAIT)
            if self.process.stderr is not None:
                self.process.stderr.close()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def detach_demo(home: HostHome, *more: str) -> str:
    """`cockpit demo --detach --speed 0` against `home`'s host: the run id it printed alone."""
    done = home.cockpit("demo", "--detach", "--speed", "0", *more)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) == 12, done.stdout
    return lines[0]


def follow(client: HostClient, run: str, *, cursor: int = 0,
           task: int | None = None) -> Iterator[dict[str, Any]]:
    """The run's events from `cursor` as dicts, over `client`, until its end (`task`: that
    task's, 1-based, instead of the latest's)."""
    request: dict[str, Any] = {"op": "follow", "id": "f", "run": run, "cursor": cursor}
    if task is not None:
        request["task"] = task
    client.send(request)
    while True:
        message = client.read()
        if "event" in message:
            yield message["event"]
        elif "end" in message:
            return
        elif message.get("id") == "f" and not message.get("ok"):
            raise AssertionError(message)


def until(events: Iterator[dict[str, Any]],
          wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first event `wanted` accepts."""
    for event in events:
        if wanted(event):
            return event
    raise AssertionError("the run ended first")
