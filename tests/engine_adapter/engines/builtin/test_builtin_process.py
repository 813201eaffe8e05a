"""Commands run for real: timeout, output cap, and a cancel that kills the whole process group."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from support.builtin_runs import end, of_type, runner, tool_ends
from support.event_loop import run

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin.process import run_process
from engine_adapter.sandbox import SandboxSettings
from engine_adapter.session.cancel import SessionCancelToken

PY = sys.executable


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (a killed orphan may wait to be reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


async def gone(pid: int) -> bool:
    """Wait (a bound against hangs, not a timing assertion) for a killed process to go away."""
    for _ in range(500):
        if not alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


async def wait_for_file(path: Path) -> str:
    for _ in range(1000):
        if path.exists() and path.read_text().strip():
            return path.read_text()
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


def test_exit_code_and_output(tmp_path) -> None:
    done = run(run_process([PY, "-c", "print('out'); import sys; sys.exit(3)"], cwd=tmp_path,
                           timeout=30, output_cap=1000))
    assert (done.exit_code, done.output.strip(), done.ok) == (3, "out", False)
    assert done.describe() == "exit 3"


def test_stderr_is_interleaved(tmp_path) -> None:
    done = run(run_process([PY, "-c", "import sys; sys.stderr.write('err\\n')"], cwd=tmp_path,
                           timeout=30, output_cap=1000))
    assert done.output == "err\n" and done.ok


def test_timeout_kills_the_command(tmp_path) -> None:
    done = run(run_process(["sh", "-c", "sleep 100"], cwd=tmp_path, timeout=0.2,
                           output_cap=1000))
    assert done.timed_out and done.exit_code is None and not done.ok
    assert done.describe() == "timed out (killed)"


def test_output_cap_keeps_the_start_and_counts_the_rest(tmp_path) -> None:
    done = run(run_process([PY, "-c", "print('x' * 100_000)"], cwd=tmp_path, timeout=30,
                           output_cap=1000))
    assert done.ok
    assert done.output == "x" * 1000
    assert done.truncated == 100_001 - 1000


def test_cancel_during_sleep_kills_the_whole_group(tmp_path) -> None:
    async def main() -> tuple:
        token = SessionCancelToken()
        task = asyncio.create_task(run_process(
            ["sh", "-c", "echo $$ > shell.pid; sleep 100 & echo $! > child.pid; wait"],
            cwd=tmp_path, timeout=300, output_cap=1000, cancel_token=token))
        shell = int(await wait_for_file(tmp_path / "shell.pid"))
        child = int(await wait_for_file(tmp_path / "child.pid"))
        token.trip("stop")
        done = await asyncio.wait_for(task, 10)
        return done, await gone(shell), await gone(child)

    done, shell_gone, child_gone = run(main())
    assert done.cancelled and done.exit_code is None
    assert shell_gone and child_gone


def test_a_missing_program_is_an_os_error(tmp_path) -> None:
    async def main() -> None:
        await run_process(["no-such-program-here"], cwd=tmp_path, timeout=5, output_cap=100)

    try:
        run(main())
    except OSError:
        return
    raise AssertionError("expected OSError")


# -- through the engine --------------------------------------------------------------------------

def test_cancel_during_a_running_sleep_ends_the_run_cancelled(tmp_path) -> None:
    async def main() -> tuple:
        steps = [{"tool": "shell", "input": {"command": "echo $$ > sleep.pid; exec sleep 100"}},
                 {"finish": "done"}]
        # `$$` in the sandbox's PID namespace is not the host's pid: this watches the scope
        # alone (test_sandbox_runs.py does the same through the sandbox).
        session = Session(runner(tmp_path, steps, sandbox=SandboxSettings(mode="off")),
                          TaskState(task="t"), unattended=True, auto_approve=True)
        task = asyncio.create_task(session.run())
        pid = int(await wait_for_file(tmp_path / "sleep.pid"))
        session.cancel("stop it")
        state = await asyncio.wait_for(task, 10)
        return session, state, await gone(pid)

    session, state, sleep_gone = run(main())
    assert state.status == "cancelled" and sleep_gone
    (tool_end,) = tool_ends(session)
    assert not tool_end.ok and "cancelled" in tool_end.error
    (observed,) = of_type(session, "cancellation_observed")
    assert observed.reason == "stop it"
    assert end(session).status == "cancelled"


def test_shell_timeout_and_cap_through_the_engine(tmp_path) -> None:
    # Two runs: a short timeout for the sleeper, a long one for the loud script (a Python start
    # can take longer than 0.2 s on a loaded machine; only the sleeper is meant to time out).
    def one(command: dict, timeout: float):
        steps = [{"tool": "shell", "input": command}, {"finish": "done"}]
        session = Session(runner(tmp_path, steps, shell_timeout=timeout, output_cap=100),
                          TaskState(task="t"), unattended=True, auto_approve=True)
        run(asyncio.wait_for(session.run(), 60))
        (ended,) = tool_ends(session)
        return ended

    (tmp_path / "loud.py").write_text("print('y' * 5000)\n")  # inline code (-c) is tier 4
    slow = one({"command": "sleep 100"}, 0.2)
    loud = one({"argv": [PY, "loud.py"]}, 30)
    assert not slow.ok and slow.error == "timed out (killed)"
    assert loud.ok and loud.output.startswith("y" * 100)
    assert loud.output.endswith("[… 4901 more bytes of output not kept]")
