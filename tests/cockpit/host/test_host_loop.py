"""The host builds a run off its loop: while a `start` is still importing a slow engine module
(it waits on a FIFO the test holds), the host answers every other client at once; once the
import goes on, the run starts."""

from __future__ import annotations

import os
import subprocess
import sys

from support.host import WAIT

ENGINE = '''
import os, sys
if "host" in sys.argv:  # (only in the host: the client does not import the engine)
    with open(os.environ["SLOW_FIFO"]) as fifo:
        fifo.read()
from engine_adapter import AgentEnd


class Quick:
    event_sink = approval_controller = cancel_token = None

    async def run(self, state):
        state.status = "completed"
        self.event_sink.emit(AgentEnd(status="completed", result="done", error=None))
        return state


def make(*, cwd, task):
    return Quick()
'''


def test_a_slow_start_does_not_stop_the_host_answering(host_home, tmp_path) -> None:
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    (tmp_path / "slow_engine.py").write_text(ENGINE, encoding="utf-8")
    host_home.env["SLOW_FIFO"] = str(fifo)
    host_home.start()
    starting = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "run", "go", "--engine", "slow_engine:make",
         "--cwd", str(tmp_path), "--detach"], env=host_home.env, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The start is in the host, blocked in the engine's import: (the host opened the FIFO
        # for reading; opening it for writing returns once it has.)
        with open(fifo, "w") as hold:
            with host_home.client() as client:  # answered while that start waits
                assert client.request("ps")["runs"] == []
                assert client.request("status")["pid"] == host_home.host_pid()
            hold.write("go")
        out, err = starting.communicate(timeout=WAIT)
    finally:
        if starting.poll() is None:
            starting.kill()
            starting.wait()
    assert starting.returncode == 0, err
    run = out.strip()
    with host_home.client() as client:
        [row] = client.request("ps")["runs"]
    assert row["id"] == run
