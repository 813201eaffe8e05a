"""The ACP engine against a hostile agent (the SDK test agent, tests/fakes/acp_agent/agent.py)
through a real Session and journal: fs calls on special files are refused, journaled and never
block; nothing is written through a hard link; big diffs are rendered off the loop and cut; a
terminal/create is approved as the whole request; permissions cover no more than they showed;
duplicate ids are answered as shown; nothing an agent or its terminals start outlives them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from support.hostile import alive, fifo_guard, gone, plant, read_pids, while_ticking

from engine_adapter.engines.acp import AcpRunner
from engine_adapter.sandbox import SandboxSettings


@dataclass
class Agent:
    runner: AcpRunner
    loop: asyncio.AbstractEventLoop
    workspace: Path
    journals: Path
    count: int = 0

    def run(self, task: str, answer=None, **kwargs):
        """Run one task; returns (reply, journal events, ticks the loop gave a bystander)."""
        self.count += 1
        journal = self.journals / f"task-{self.count}.jsonl"
        (_state, events), ticks = self.loop.run_until_complete(while_ticking(asyncio.wait_for(
            drive(self.runner, task, journal, answer=answer or approve(), **kwargs), 120)))
        assert events[-1].type == "agent_end", events[-1]
        return events[-1].result or "", events, ticks


def _agent(base: Path, **runner: Any) -> Agent:
    workspace = base / "ws"
    workspace.mkdir()
    loop = asyncio.new_event_loop()
    return Agent(AcpRunner(agent_argv(), cwd=workspace, **runner), loop, workspace, base)


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    shared = _agent(tmp_path_factory.mktemp("acp-safety"))
    planted = plant(shared.workspace, shared.journals / "outside")
    shared.planted = planted  # type: ignore[attr-defined]
    yield shared
    shared.loop.run_until_complete(shared.runner.close())
    shared.loop.close()
    planted.close()


def _of(events, kind):
    return [e for e in events if e.type == kind]


# -- special files -------------------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["read", "write"])
def test_fs_on_special_files_is_refused_journaled_and_never_blocks(agent, verb):
    planted = agent.planted
    with fifo_guard(planted) as fired:
        for name, word in planted.refusals.items():
            reply, events, ticks = agent.run(f"{verb} {name}")
            assert reply.startswith(f"{verb} error:"), (name, reply)
            assert word.lower() in reply.lower(), (name, reply)
            assert not _of(events, "approval_requested"), name  # refused before anyone asks
            (start,), (end,) = _of(events, "tool_start"), _of(events, "tool_end")
            assert start.call_id == end.call_id and not end.ok
            assert word.lower() in end.error.lower(), (name, end.error)
            assert ticks > 0
    assert not fired[0], "a FIFO blocked the event loop"
    assert (planted.outside / "secret.txt").read_text() == "outside\n"


def test_a_plain_read_and_write_still_work(agent):
    (agent.workspace / "plain.txt").write_text("hello\n")
    reply, _, _ = agent.run("read plain.txt")
    assert reply == "read ok 6"
    reply, events, _ = agent.run("write plain.txt")
    assert reply == "write ok"
    # accept-edits: a plain edit runs unasked, journaled with its diff and why it ran
    assert not _of(events, "approval_requested")
    (ran,) = _of(events, "approval_resolved")
    assert ran.via == "mode" and ran.allowed
    assert "-hello" in ran.tool_input["diff"] and "+written" in ran.tool_input["diff"]
    (start,) = [e for e in _of(events, "tool_start") if e.tool == "edit"]
    assert start.tier == 2 and "+written" in start.tool_input["diff"]
    assert (agent.workspace / "plain.txt").read_text() == "written\n"


@pytest.mark.parametrize("link", ["to-outside", "inside-pair"])
def test_no_write_through_a_hard_link(agent, link):
    secret = agent.planted.outside / "secret.txt"
    name = f"hard-{link}"
    if link == "to-outside":
        os.link(secret, agent.workspace / name)
    else:
        (agent.workspace / f"{name}-a").write_text("mine\n")
        os.link(agent.workspace / f"{name}-a", agent.workspace / name)
    reply, events, _ = agent.run(f"write {name}")
    assert reply.startswith("write error:") and "hard links" in reply
    assert not _of(events, "approval_requested")
    assert secret.read_text() == "outside\n"


# -- diffs ---------------------------------------------------------------------------------------

def test_a_big_permuted_write_is_diffed_off_the_loop(agent):
    (agent.workspace / "big-target.txt").write_text("".join(f"line {i}\n" for i in range(50_000)))
    reply, events, ticks = agent.run("write big-target.txt 50000 shuffled", mode="ask")
    assert reply == "write ok"
    (asked,) = _of(events, "approval_requested")
    assert "diff cut at" in asked.tool_input["diff"]
    assert ticks > 10  # the loop went on while the diff was computed


def test_a_big_diff_update_is_rendered_off_the_loop_and_says_it_was_cut(agent):
    reply, events, ticks = agent.run("diff-update 50000")
    assert reply == "diffed"
    end = next(e for e in _of(events, "tool_end") if e.call_id == "t-big")
    assert end.diff.startswith("--- a/big.txt\n+++ b/big.txt\n@@")  # apart from the output
    assert "diff cut at" in end.diff and "+++" not in end.output
    assert ticks > 10


# -- approvals: whole requests, permits, duplicate ids -------------------------------------------

def _terminal(agent, request, answer=None, scenario="terminal-json"):
    return agent.run(f"{scenario} {json.dumps(request)}", answer=answer)


def test_terminal_create_is_approved_as_the_whole_request(agent):
    (agent.workspace / "sub").mkdir(exist_ok=True)
    request = {"command": "sh", "args": ["-c", "echo $A $GIT_EXTERNAL_DIFF; pwd"],
               "env": [{"name": "A", "value": "1"}, {"name": "GIT_EXTERNAL_DIFF",
                                                    "value": "/tmp/evil"},
                       {"name": "A", "value": "2"}],
               "cwd": str(agent.workspace / "sub"), "outputByteLimit": 100}
    reply, events, _ = _terminal(agent, request)
    (asked,) = _of(events, "approval_requested")
    assert asked.tool_input == {"argv": ["sh", "-c", "echo $A $GIT_EXTERNAL_DIFF; pwd"],
                                "env": {"A": "2", "GIT_EXTERNAL_DIFF": "/tmp/evil"},
                                "cwd": "sub", "outputByteLimit": 100}
    assert asked.prefix == ""  # an env or a cwd of its own is never grantable
    assert reply == f"exit 0: 2 /tmp/evil\n{os.path.realpath(agent.workspace / 'sub')}\n"
    start = next(e for e in _of(events, "tool_start") if e.source == "client")
    assert start.tool_input == asked.tool_input


@pytest.mark.parametrize("cwd", ["/", "..", "/tmp", "sub/../../..", "escape-dir"])
def test_terminal_create_outside_the_workspace_is_refused_and_journaled(agent, cwd):
    if cwd == "escape-dir" and not (agent.workspace / cwd).exists():
        (agent.workspace / cwd).symlink_to(agent.planted.outside)
    full = cwd if cwd.startswith("/") else str(agent.workspace / cwd)
    reply, events, _ = _terminal(agent, {"command": "touch", "args": ["made-here"],
                                         "cwd": full})
    assert reply.startswith("terminal error:") and "outside the workspace" in reply
    assert not _of(events, "approval_requested")
    (start,), (end,) = _of(events, "tool_start"), _of(events, "tool_end")
    assert start.tool_input == {"argv": ["touch", "made-here"], "cwd": full}
    assert not end.ok and "outside the workspace" in end.error
    assert not (agent.planted.outside / "made-here").exists()


@pytest.mark.parametrize("extra", [
    {"env": [{"name": "GIT_EXTERNAL_DIFF", "value": "/tmp/evil"}]},
    {"env": [{"name": "LD_PRELOAD", "value": "/tmp/evil.so"}]},
    {"cwd": "sub"},
], ids=["git-external-diff", "ld-preload", "cwd"])
def test_a_permission_for_a_command_does_not_cover_an_env_or_cwd_it_never_showed(agent, extra):
    (agent.workspace / "sub").mkdir(exist_ok=True)
    request = {"command": "echo", "args": ["hi"], **extra}
    if "cwd" in extra:
        request["cwd"] = str(agent.workspace / extra["cwd"])
    reply, events, _ = _terminal(agent, request, scenario="permit-terminal")
    asked = _of(events, "approval_requested")
    assert [a.tool for a in asked] == ["execute", "terminal"]  # the permission, then the run
    assert set(extra) <= set(asked[1].tool_input)
    assert reply.startswith("exit 0: ") and reply.endswith("hi\n")


def test_a_permission_covers_the_plain_command_once(agent):
    reply, events, _ = _terminal(agent, {"command": "echo", "args": ["hi"]},
                                 scenario="permit-terminal")
    assert reply == "exit 0: hi\n"
    assert len(_of(events, "approval_requested")) == 1
    start = next(e for e in _of(events, "tool_start") if e.source == "client")
    assert start.permitted_by == "agent permission"


@pytest.mark.parametrize("kind", ["delete", "move", "other", "read"])
def test_a_non_edit_permission_never_lets_a_write_through_unseen(agent, kind):
    target = agent.workspace / f"victim-{kind}.txt"
    target.write_text("keep me\n")

    def answer(session, event):
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=event.tool == kind)

    reply, events, _ = agent.run(f"permit {kind} {target.name}", answer=answer)
    asked = _of(events, "approval_requested")
    assert [a.tool for a in asked] == [kind, "edit"]  # the write asked again...
    assert "-keep me" in asked[1].tool_input["diff"]  # ...showing what it would do
    assert reply.startswith("allow_once; write error:")
    assert target.read_text() == "keep me\n"


def test_an_edit_permission_covers_one_write_of_the_content_it_showed(agent):
    target = agent.workspace / "victim-edit-shown.txt"
    target.write_text("keep me\n")
    reply, events, _ = agent.run(f"permit edit {target.name} diff")
    assert reply == "allow_once; write ok"
    (asked,) = _of(events, "approval_requested")
    assert asked.tool == "edit"  # the permission's own diff content is in its approval
    assert asked.tool_input["diff"] == (f"--- a/{target.name}\n+++ b/{target.name}\n"
                                        "@@ -1 +1 @@\n-keep me\n+via permit\n")
    start = next(e for e in _of(events, "tool_start") if e.source == "client")
    assert start.permitted_by == "agent permission"
    assert "-keep me" in start.tool_input["diff"] and "+via permit" in start.tool_input["diff"]


@pytest.mark.parametrize("shown", ["", " other"], ids=["no-diff-shown", "other-content-shown"])
def test_an_edit_permission_never_covers_content_the_human_did_not_see(agent, shown):
    target = agent.workspace / f"victim-edit{shown.strip()}.txt"
    target.write_text("keep me\n")
    seen = []

    def answer(session, event):
        if event.type == "approval_requested":
            seen.append(event)
            session.resolve_approval(event.approval_id, allow=len(seen) == 1)

    reply, _events, _ = agent.run(f"permit edit {target.name}{shown}", answer=answer)
    assert [a.tool for a in seen] == ["edit", "edit"]  # the write asked again...
    assert "+via permit" in seen[1].tool_input["diff"]  # ...showing what it would write
    assert reply.startswith("allow_once; write error:")
    assert target.read_text() == "keep me\n"


def test_two_requests_with_one_id_are_each_answered_as_shown(agent):
    shown: dict[str, str] = {}

    def answer(session, event):
        if event.type == "approval_requested":
            shown[event.approval_id] = event.tool_input["command"]
            session.resolve_approval(event.approval_id, allow=event.approval_id == "dup-1")

    reply, events, _ = agent.run("dup-permission", answer=answer)
    assert shown == {"dup-1": "echo first", "dup-1~2": "echo second"}
    assert reply == "first allow_once, second reject_once"
    resolved = {e.approval_id: e.allowed for e in _of(events, "approval_resolved")}
    assert resolved == {"dup-1": True, "dup-1~2": False}


def test_our_own_ids_never_take_an_agent_id(agent):
    from engine_adapter.engines.acp.client import AcpClient, Workspace

    client = AcpClient(Workspace(agent.workspace), env={}, agent_name="t")
    client.start_turn(1)
    client.mapper.tool_calls["fs-write-1"] = object()  # type: ignore[assignment]
    ops = client.operations
    taken = {ops.approval_id("fs-write-2"), ops.approval_id("t-1")}
    assert ops.op_id("fs-write") == "fs-write-3"
    assert ops.approval_id("t-1") == "t-1~2"
    assert taken == {"fs-write-2", "t-1"}


# -- processes -----------------------------------------------------------------------------------

LEFTOVERS = [
    "sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "nohup sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "( ( setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids} ) & )",
    "env -i setsid sleep 300 >/dev/null 2>&1 & echo $! >> {pids}",
    "setsid -f sh -c 'echo $$ >> {pids}; exec sleep 300' >/dev/null 2>&1",
]


def test_nothing_an_agent_starts_outlives_close(tmp_path):
    bystander = subprocess.Popen(["sleep", "300"])
    agent = _agent(tmp_path)
    pids = tmp_path / "agent.pids"
    try:
        for line in LEFTOVERS:
            reply, _, _ = agent.run(f"spawn {line.format(pids=pids)}")
            assert reply == "spawned, exit 0"
        for _ in range(2000):  # the last ones write their pid from a background process
            if len(read_pids(pids)) >= len(LEFTOVERS):
                break
            agent.loop.run_until_complete(asyncio.sleep(0.005))
        left = read_pids(pids)
        assert len(left) == len(LEFTOVERS) and all(alive(pid) for pid in left)
        agent.loop.run_until_complete(agent.runner.close())
        survivors = [pid for pid in left if not agent.loop.run_until_complete(gone(pid))]
        assert survivors == []
        assert alive(bystander.pid)
    finally:
        agent.loop.run_until_complete(agent.runner.close())
        agent.loop.close()
        bystander.kill()
        bystander.wait()


def test_nothing_a_terminal_starts_outlives_the_terminal(tmp_path):
    # `$!` in the sandbox's PID namespace is not the host's pid: the scope alone here
    # (test_sandbox_runs.py does the same through the sandbox).
    agent = _agent(tmp_path, sandbox=SandboxSettings(mode="off"))
    try:
        pids = agent.journals / "terminal.pids"
        for line in LEFTOVERS:
            reply, _, _ = _terminal(agent, {"command": "sh",
                                            "args": ["-c", line.format(pids=pids)]})
            assert reply.startswith("exit 0")
        left = read_pids(pids)
        # The shell itself echoes the first, second, third and fifth pid before it exits; the
        # backgrounded subshell and `setsid -f` may be ended by the scope before they write.
        assert len(left) >= len(LEFTOVERS) - 2
        survivors = [pid for pid in left if not agent.loop.run_until_complete(gone(pid))]
        assert survivors == []
    finally:
        agent.loop.run_until_complete(agent.runner.close())
        agent.loop.close()


def test_a_terminal_row_is_journaled_before_its_command_starts(agent, monkeypatch):
    """Write-ahead for terminals: when the process is spawned, the journal already holds its
    `tool_start` (a crash in between leaves a started row, never a command without one)."""
    from engine_adapter.engines.acp.client import terminals

    journal = agent.journals / f"task-{agent.count + 1}.jsonl"
    seen_at_spawn: list[list[dict]] = []
    spawn = terminals.start_in_scope

    async def spying(*args, **kwargs):
        lines = journal.read_text(encoding="utf-8").splitlines()
        seen_at_spawn.append([json.loads(line) for line in lines])
        return await spawn(*args, **kwargs)

    monkeypatch.setattr(terminals, "start_in_scope", spying)
    reply, events, _ = _terminal(agent, {"command": "echo", "args": ["written", "first"]})
    assert reply.startswith("exit 0: written first")
    (before,) = seen_at_spawn
    (start,) = [e for e in _of(events, "tool_start") if e.source == "client"]
    assert [e["call_id"] for e in before if e["type"] == "tool_start"] == [start.call_id]
    assert start.terminal_id is not None and before[-1]["terminal_id"] == start.terminal_id
    assert not [e for e in before if e["type"] == "tool_end"]


def test_a_terminal_that_cannot_start_ends_its_journaled_row(agent, monkeypatch):
    from engine_adapter.engines.acp.client import terminals

    async def refusing(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(terminals, "start_in_scope", refusing)
    reply, events, _ = _terminal(agent, {"command": "echo", "args": ["never"]})
    assert reply.startswith("terminal error:") and "Permission denied" in reply
    (start,) = [e for e in _of(events, "tool_start") if e.source == "client"]
    (end,) = [e for e in _of(events, "tool_end") if e.call_id == start.call_id]
    assert not end.ok and "cannot run echo: Permission denied" in end.error
