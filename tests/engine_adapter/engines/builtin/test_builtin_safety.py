"""The built-in engine against hostile paths and commands, through a real Session: special files
never block the loop, bad paths are tool errors (never a failed run), nothing is written through
a hard link, big diffs are computed off the loop and cut, and no process outlives its call."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys

import pytest
from support.builtin_runs import end, runner, tool_ends
from support.hostile import alive, fifo_guard, gone, plant, read_pids, while_ticking

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin.process import run_process
from engine_adapter.sandbox import SandboxSettings

SWITCH = {"tool": "switch_to_editing", "input": {"reason": "r"}}
DECLARE = {"tool": "declare_verification", "input": {"checks": [{"name": "ok", "command": "true"}]}}


def _run(workspace, steps, **engine):
    """Run the steps auto-approved, with a ticker beside; returns (session, ticks)."""
    session = Session(runner(workspace, steps, **engine), TaskState(task="t"), unattended=True,
                      auto_approve=True)
    return asyncio.run(asyncio.wait_for(while_ticking(session.run()), 120))[1], session


@pytest.fixture
def planted(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    found = plant(ws, tmp_path / "outside")
    yield found
    found.close()


def test_special_files_and_bad_paths_are_tool_errors_never_a_hang_or_a_failed_run(planted):
    names = list(planted.refusals)
    steps = [SWITCH, DECLARE]
    for name in names:
        steps += [{"tool": "read_file", "input": {"path": name}},
                  {"tool": "write_file", "input": {"path": name, "content": "x\n"}},
                  {"tool": "edit", "input": {"path": name, "old": "a", "new": "b"}}]
    steps += [{"tool": "search", "input": {"pattern": "one"}},
              {"tool": "list_dir", "input": {}}, {"finish": "done"}]
    with fifo_guard(planted) as fired:
        ticks, session = _run(planted.workspace, steps)
    assert not fired[0], "a FIFO blocked the engine"
    assert ticks > 0
    assert end(session).status == "completed"
    ends = tool_ends(session)[2:]  # after the switch and the plan
    for i, name in enumerate(names):
        for kind, row in zip(("read", "write", "edit"), ends[3 * i: 3 * i + 3], strict=True):
            assert not row.ok, (name, kind)
            assert planted.refusals[name].lower() in row.error.lower(), (name, kind, row.error)
    search, listing = ends[-2:]
    assert search.ok and search.output == "a.txt:1: one"
    assert listing.ok and "fifo" in listing.output
    assert (planted.outside / "secret.txt").read_text() == "outside\n"


@pytest.mark.parametrize("make", [
    lambda ws, out: os.link(out / "secret.txt", ws / "linked"),
    lambda ws, out: os.link(out / "secret.txt", ws / "sub" / "deep" / "linked"),
    lambda ws, out: (os.link(out / "secret.txt", ws / "first"),
                     os.link(ws / "first", ws / "linked")),
], ids=["link-to-outside", "deeper", "two-names-inside"])
@pytest.mark.parametrize("tool", ["write_file", "edit"])
def test_no_write_through_a_hard_link(tmp_path, make, tool):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub" / "deep").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    make(ws, outside)
    path = next(str(p.relative_to(ws)) for p in ws.rglob("linked"))
    call = {"path": path, "content": "pwned\n"} if tool == "write_file" else {
        "path": path, "old": "outside", "new": "pwned"}
    _, session = _run(ws, [SWITCH, DECLARE, {"tool": tool, "input": call},
                               {"finish": "done"}])
    row = tool_ends(session)[-1]
    assert not row.ok and "hard links" in row.error
    assert (outside / "secret.txt").read_text() == "outside\n"
    assert end(session).status == "completed"


def test_a_plain_file_and_a_new_file_are_still_written(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    _, session = _run(tmp_path, [SWITCH, DECLARE,
                                 {"tool": "write_file", "input": {"path": "n/new.txt",
                                                                  "content": "new\n"}},
                                 {"tool": "edit", "input": {"path": "a.txt", "old": "one",
                                                            "new": "two"}},
                                 {"finish": "done"}])
    created, edited = tool_ends(session)[-2:]
    assert created.ok and edited.ok
    assert (tmp_path / "n" / "new.txt").read_text() == "new\n"
    assert (tmp_path / "a.txt").read_text() == "two\n"
    assert os.stat(tmp_path / "a.txt").st_nlink == 1


def test_a_big_permuted_write_is_diffed_off_the_loop_and_cut(tmp_path):
    lines = [f"line {i}\n" for i in range(50_000)]
    (tmp_path / "big.txt").write_text("".join(lines))
    random.Random(3).shuffle(lines)
    ticks, session = _run(tmp_path, [SWITCH, DECLARE,
                                     {"tool": "write_file", "input": {
                                         "path": "big.txt", "content": "".join(lines)}},
                                     {"finish": "done"}])
    start = [e for e in session.history if e.type == "tool_start"][-1]
    assert "diff cut at" in start.tool_input["diff"]
    assert tool_ends(session)[-1].ok
    assert ticks > 10  # the loop went on while the diff was computed


# -- processes -----------------------------------------------------------------------------------

LEFTOVERS = {
    "background": "sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "background-holding-the-pipe": "sleep 300 & echo $! >> {pids}",
    "nohup": "nohup sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "subshell": "( sleep 300 >/dev/null 2>&1 & echo $! >> {pids} )",
    "double-fork": "( ( sleep 300 >/dev/null 2>&1 & echo $! >> {pids} ) & ) ; sleep 0.05",
    "setsid": "setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "setsid-fork": "setsid -f sh -c 'echo $$ >> {pids}; exec sleep 300' >/dev/null 2>&1;"
                   " sleep 0.05",
    "env-cleared-setsid": "env -i setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "disown": "bash -c 'sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; disown'",
    "python-daemon": f"{sys.executable} -c \"import os,sys,time\nif os.fork(): sys.exit()\n"
                     "os.setsid()\nif os.fork(): sys.exit()\nopen(sys.argv[1],'a').write("
                     "str(os.getpid())+'\\\\n')\nos.closerange(0,3)\ntime.sleep(300)\" {pids};"
                     " sleep 0.1",
    "kills-its-holder": "sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; kill -9 $PPID",
    "many": "for i in 1 2 3 4 5; do sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; done",
}


def test_nothing_a_command_starts_outlives_it(tmp_path):
    """Every variant at once, concurrently (their scopes must not be confused), beside a
    process the test started itself, which must be left alone."""
    bystander = subprocess.Popen(["sleep", "300"])
    try:
        async def one(name: str, line: str):
            pids = tmp_path / f"{name}.pids"
            done = await run_process(["sh", "-c", line.format(pids=pids)], cwd=tmp_path,
                                     timeout=60, output_cap=10_000)
            left = read_pids(pids)
            return name, done, left, [pid for pid in left if not await gone(pid)]

        async def main():
            return await while_ticking(asyncio.gather(*(
                one(name, line) for name, line in LEFTOVERS.items())))

        results, ticks = asyncio.run(main())
        assert ticks > 0
        for name, done, left, survivors in results:
            assert left, f"{name}: the command did not start its leftover"
            assert not done.timed_out, f"{name}: the call waited for its leftover"
            assert survivors == [], f"{name}: {survivors} outlived the call"
        assert alive(bystander.pid), "a process outside every scope was killed"
    finally:
        bystander.kill()
        bystander.wait()


def test_exit_status_passes_through_the_scope(tmp_path):
    async def main():
        return [await run_process(["sh", "-c", line], cwd=tmp_path, timeout=30,
                                  output_cap=100)
                for line in ("exit 7", "kill -TERM $$", "echo hi", "exit 0")]

    codes = [(r.exit_code, r.output) for r in asyncio.run(main())]
    assert codes == [(7, ""), (-15, ""), (0, "hi\n"), (0, "")]


def test_a_cancelled_call_ends_its_setsid_children_too(tmp_path):
    from engine_adapter.session.cancel import SessionCancelToken

    async def main():
        token = SessionCancelToken()
        pids = tmp_path / "pids"
        task = asyncio.ensure_future(run_process(
            ["sh", "-c", f"setsid sleep 300 & echo $! >> {pids}; sleep 300 & echo $! >> {pids};"
                         " wait"], cwd=tmp_path, timeout=300, output_cap=100,
            cancel_token=token))
        for _ in range(2000):
            if len(read_pids(pids)) == 2:
                break
            await asyncio.sleep(0.005)
        token.trip("stop")
        done = await asyncio.wait_for(task, 30)
        return done, [pid for pid in read_pids(pids) if not await gone(pid)]

    done, survivors = asyncio.run(main())
    assert done.cancelled and survivors == []


def test_a_shell_call_through_the_engine_returns_with_its_background_child_gone(tmp_path):
    line = "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo started"
    # `$!` in the sandbox's PID namespace is not the host's pid: the scope alone here
    # (test_sandbox_runs.py does the same through the sandbox).
    _, session = _run(tmp_path, [{"tool": "shell", "input": {"command": line}},
                                 {"finish": "done"}], sandbox=SandboxSettings(mode="off"))
    row = tool_ends(session)[-1]
    assert row.ok and row.output.strip() == "started"
    (pid,) = read_pids(tmp_path / "bg.pid")
    assert asyncio.run(gone(pid))
