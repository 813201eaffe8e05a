"""Process scopes: what a command starts ends with it, exactly — never a process of another
scope or of the test itself — even when the command kills its holder or the cockpit dies."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.hostile import alive, gone, read_pids
from support.paths import ROOT

from engine_adapter.processes.scopes import MARKER, end_scope, start_in_scope

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux scopes")


async def _wait_pids(path: Path, count: int) -> list[int]:
    for _ in range(2000):
        if len(read_pids(path)) >= count:
            return read_pids(path)
        await asyncio.sleep(0.005)
    raise AssertionError(f"{path} never had {count} pids")


async def _start(line: str, cwd: Path):
    return await start_in_scope(["sh", "-c", line], cwd=cwd, env={"PATH": "/usr/bin:/bin"},
                                stdin=asyncio.subprocess.DEVNULL,
                                stdout=asyncio.subprocess.DEVNULL,
                                stderr=asyncio.subprocess.DEVNULL)


def test_two_scopes_at_once_are_never_confused(tmp_path):
    async def main():
        a_pids, b_pids = tmp_path / "a", tmp_path / "b"
        a, a_scope = await _start(f"setsid sleep 300 & echo $! >> {a_pids}; echo $$ >> {a_pids};"
                                  " exec sleep 300", tmp_path)
        b, b_scope = await _start(f"setsid sleep 300 & echo $! >> {b_pids}; nohup sleep 300 "
                                  f">/dev/null 2>&1 & echo $! >> {b_pids}", tmp_path)
        await b.wait()
        await end_scope(b_scope, b)
        left_a = await _wait_pids(a_pids, 2)
        left_b = await _wait_pids(b_pids, 2)
        b_gone = [await gone(pid) for pid in left_b]
        a_alive = [alive(pid) for pid in left_a]
        await end_scope(a_scope, a)  # kills the still-running scope
        a_gone = [await gone(pid) for pid in left_a]
        return b_gone, a_alive, a_gone, a.returncode

    b_gone, a_alive, a_gone, code = asyncio.run(main())
    assert b_gone == [True, True]
    assert a_alive == [True, True]  # the other scope's processes were left alone
    assert a_gone == [True, True]
    assert code == -9


@pytest.mark.parametrize("line", [
    "setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; kill -9 $PPID",
    "env -i sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; kill -9 $PPID",
    "sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; kill -9 $PPID; sleep 300",
], ids=["setsid", "env-cleared", "shell-stays"])
def test_a_command_that_kills_its_holder_is_still_swept(tmp_path, line):
    async def main():
        pids = tmp_path / "pids"
        proc, scope = await _start(line.format(pids=pids), tmp_path)
        left = await _wait_pids(pids, 1)
        await proc.wait()  # the holder, killed
        await end_scope(scope, proc)
        return proc.returncode, [pid for pid in left if not await gone(pid)]

    code, survivors = asyncio.run(main())
    assert code == -9 and survivors == []


def test_terminate_asks_everyone_gracefully(tmp_path):
    async def main():
        pids = tmp_path / "pids"
        line = (f"trap 'echo bye >> {tmp_path}/bye; exit 0' TERM; echo $$ >> {pids}; "
                "sleep 300 & wait")
        proc, scope = await _start(line, tmp_path)
        await _wait_pids(pids, 1)
        scope.terminate()
        await asyncio.wait_for(proc.wait(), 30)
        await end_scope(scope, proc)
        return proc.returncode

    assert asyncio.run(main()) == 0
    assert (tmp_path / "bye").read_text() == "bye\n"


def test_the_marker_is_in_every_process_and_loader_variables_reach_only_the_command(tmp_path):
    async def main():
        out = tmp_path / "env"
        proc, scope = await start_in_scope(
            ["sh", "-c", f"env > {out}"], cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/nowhere", "KEEP": "1"})
        await proc.wait()
        await end_scope(scope, proc)
        return scope.marker, dict(line.split("=", 1) for line in out.read_text().splitlines()
                                  if "=" in line)

    marker, env = asyncio.run(main())
    assert env[MARKER] == marker and env["KEEP"] == "1"
    assert env["LD_LIBRARY_PATH"] == "/nowhere"
    assert not any(name.startswith("COCKPIT_HELD_") for name in env)


@pytest.mark.parametrize("argv, error", [
    (["no-such-program-anywhere"], FileNotFoundError),
    (["./missing"], FileNotFoundError),
    (["./plain.txt"], PermissionError),
    (["/tmp"], PermissionError),
])
def test_a_program_that_cannot_run_raises_as_exec_would(tmp_path, argv, error):
    (tmp_path / "plain.txt").write_text("not a program\n")
    (tmp_path / "plain.txt").chmod(0o644)

    async def main():
        await start_in_scope(argv, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})

    with pytest.raises(error):
        asyncio.run(main())


COCKPIT_DIES = """
import asyncio, os, sys
sys.path.insert(0, {root!r})
from engine_adapter.processes.scopes import start_in_scope

async def main():
    await start_in_scope(["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!; sleep 300"],
                         cwd={cwd!r}, env={{"PATH": "/usr/bin:/bin"}},
                         stdout=asyncio.subprocess.PIPE)
    proc = None
    print(os.getpid(), flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def test_nothing_survives_a_killed_cockpit(tmp_path):
    """The cockpit dies without cleaning up: the holder's parent-death signal ends its scope."""
    code = COCKPIT_DIES.format(root=str(ROOT), cwd=str(tmp_path))
    cockpit = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        cockpit.stdout.readline()
        # The holder, the shell and the setsid'd sleep: find them by the cockpit's subtree.
        subtree = _subtree(cockpit.pid)
        for _ in range(2000):
            if len(subtree) >= 3:
                break
            asyncio.run(asyncio.sleep(0.005))
            subtree = _subtree(cockpit.pid)
        assert len(subtree) >= 3, subtree
        cockpit.kill()
        cockpit.wait()
        survivors = [pid for pid in subtree if not asyncio.run(gone(pid))]
        assert survivors == []
    finally:
        if cockpit.poll() is None:
            cockpit.kill()
            cockpit.wait()


def _subtree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found



HOLDER_MOVES = """
import json, os
from engine_adapter.processes import keep_holder_outside
from engine_adapter.processes.scopes import Scope
first = Scope().argv(["true"])[0] if Scope().held else None
root = os.path.dirname(first) if first else "/nowhere"
other = keep_holder_outside([root])
print(json.dumps([first, root, other, Scope().argv(["true"])]))
"""


def test_the_holders_interpreter_never_lies_in_a_writable_root():
    """A root holding the interpreter in use (a venv made with --copies in the workspace):
    the holder moves to another interpreter outside it, or goes (never one a command could
    replace). In a process of its own: the choice is for the process's life."""
    import json

    done = subprocess.run([sys.executable, "-c", HOLDER_MOVES], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=60)
    first, root, other, argv = json.loads(done.stdout)
    if first is None:
        pytest.skip("no holder on this platform")
    if other is None:
        assert argv == ["true"]
    else:
        assert not other.startswith(root + "/") and argv[0] == other
        assert os.path.realpath(other) == other and argv[-2:] == ["--", "true"]
