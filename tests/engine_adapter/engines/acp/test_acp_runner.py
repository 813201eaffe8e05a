"""The ACP runner against the SDK test agent (tests/fakes/acp_agent/agent.py), through a real
Session, with assertions on the journal. One agent process serves the well-behaved scenarios
(which is also the test that later tasks reuse the ACP session); the ones that kill or break the
agent get their own."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import (
    agent_argv,
    agent_log,
    approve,
    drive,
    group_gone,
    ready,
    types,
    wait_exited,
)
from support.paths import ROOT, TESTS

from engine_adapter import ApprovalGrant, SessionState, grant_prefix
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.view import fold_events

ALL_KINDS = "allow_once,allow_always,reject_once,reject_always"


@dataclass
class Shared:
    runner: AcpRunner
    loop: asyncio.AbstractEventLoop
    workspace: Path
    log: Path
    journals: Path

    def run(self, task: str, name: str, **kwargs):
        return self.loop.run_until_complete(
            drive(self.runner, task, self.journals / f"{name}.jsonl", **kwargs))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    base = tmp_path_factory.mktemp("acp")
    workspace = base / "ws"
    workspace.mkdir()
    (workspace / "input.txt").write_text("first line\nsecond line\n")
    log = base / "agent.jsonl"
    loop = asyncio.new_event_loop()
    runner = AcpRunner(agent_argv("--log", log), cwd=workspace)
    shared = Shared(runner, loop, workspace, log, base)
    yield shared
    pgid = runner.connection.process.pgid if runner.connection.process else None
    loop.run_until_complete(runner.close())
    loop.close()
    assert pgid is None or group_gone(pgid)


def _end(events):
    assert events[-1].type == "agent_end"
    return events[-1]


def test_hello_maps_start_turn_text_and_end(shared):
    state, events = shared.run("hello", "hello")
    assert state.status == "completed"
    start, said = events[0], ready(events)
    # At once, before the agent answered: the task and the command; then what it said.
    assert start.type == "agent_start" and start.ready is False and start.task == "hello"
    assert start.engine == f"acp:{Path(sys.executable).name}" and start.agent is None
    assert said.engine == "acp:cockpit-test-agent"  # the agent's own name, once it gave it
    assert said.agent is not None and said.agent.version == "1.0"
    assert [m.id for m in said.modes or []] == ["ask", "code"] and said.acp_session_id
    assert fold_events(events).engine == "acp:cockpit-test-agent"
    # The agent's commands arrive on their own (right after session/new): once, wherever.
    assert types(events).count("commands_available") == 1
    events = [e for e in events if e.type != "commands_available"]
    assert types(events) == ["agent_start", "agent_ready", "agent_config", "phase_changed",
                             "turn_start", "model_update", "model_update", "model_update",
                             "turn_end", "agent_end"]
    assert [o.id for o in events[2].options] == ["model", "effort", "verbose"]
    assert events[3].phase == "ask"
    thought, *message = [e for e in events if e.type == "model_update"]
    assert thought.channel == "thought" and {m.channel for m in message} == {"message"}
    assert events[-2].stop_reason == "end_turn"
    assert _end(events).result.startswith("Hello, world: prompt 1")


def test_further_tasks_reuse_the_agent_and_its_session(shared):
    first_pid = shared.runner.connection.process.pid
    _, before = shared.run("hello", "hello-before")
    _, events = shared.run("hello", "hello-again")
    assert shared.runner.connection.process.pid == first_pid
    agent_pid = _end(before).result.rsplit("pid ", 1)[1]
    assert _end(events).result.endswith(f"pid {agent_pid}")  # the same agent answered
    assert "phase_changed" not in types(events)  # the mode carries over: not a new session
    assert ready(events).new_session is False
    # The agent is known by its own name from the start of a later task.
    assert events[0].engine == "acp:cockpit-test-agent" and ready(events).engine is None
    assert [e["event"] for e in agent_log(shared.log)].count("new_session") == 1


def test_every_update_kind_and_client_capability(shared):
    state, events = shared.run("everything", "everything", answer=approve())
    assert state.status == "completed", state.error
    by_type = {}
    for event in events:
        by_type.setdefault(event.type, []).append(event)
    plan = by_type["agent_plan"][0]
    assert [(x.content, x.status, x.priority) for x in plan.entries] == [
        ("read the file", "in_progress", "high"), ("edit it", "pending", "medium")]
    assert [e.phase for e in by_type["phase_changed"]] == ["code"]
    ends = {e.call_id: e for e in by_type["tool_end"]}
    assert ends["t-read"].ok and ends["t-read"].output == "read 23 characters"
    assert "-old line\n+new line" in ends["t-edit"].diff  # the diff apart from the output
    assert ends["t-edit"].output == ""
    assert "a/input.txt" in ends["t-edit"].diff  # shown relative to the workspace
    assert ends["t-exec"].ok and "from terminal" in ends["t-exec"].output
    assert not ends["t-fail"].ok and ends["t-fail"].error == "no such thing"
    assert all(e.duration_ms is not None for e in ends.values())
    # The terminal ran under the agent's permission: one approval, not two.
    assert [e.approval_id for e in by_type["approval_requested"]] == ["t-exec"]
    terminal = next(e for e in by_type["tool_start"] if getattr(e, "source", "") == "client"
                    and e.tool == "terminal")
    assert terminal.permitted_by == "agent permission"
    # Cost deltas from cumulative usage updates, then the turn's tokens.
    usage = by_type["model_usage"]
    assert [u.cost_usd for u in usage[:2]] == [0.01, 0.02]
    assert (usage[-1].input_tokens, usage[-1].output_tokens) == (100, 20)
    # Untrusted text: the escape sequence arrives as it was sent, for every view to mark
    # (tests/cockpit/widgets/test_acp_unsafe_text.py), never escaped into literal text.
    text = "".join(e.text for e in by_type["model_update"] if e.channel == "message")
    assert "\x1b[31m" in text and "\\x1b" not in text
    # The fold joins each approval to its call and ends every tool row.
    view = fold_events(events)
    assert view.status == "completed" and not view.pending
    assert view.tool_calls["t-exec"].approval.state == "allowed"
    assert {row.status for row in view.tool_calls.values()} <= {"ok", "failed"}


def test_call_ids_reused_by_a_later_prompt_get_rows_of_their_own(shared):
    # The test agent numbers its calls per prompt (t-read again); a missing file on the way.
    moved = shared.workspace / "input.moved"
    (shared.workspace / "input.txt").rename(moved)
    try:
        state, events = shared.run("everything", "everything-again", answer=approve())
    finally:
        moved.rename(shared.workspace / "input.txt")
    assert state.status == "completed", state.error
    starts = [e.call_id for e in events if e.type == "tool_start"]
    assert len(starts) == len(set(starts))  # one start a call, the failed read included
    ends = {e.call_id: e for e in events if e.type == "tool_end"}
    assert {"t-read", "t-edit", "t-exec", "t-fail"} <= set(ends)
    assert not ends["t-read"].ok and "input.txt" in ends["t-read"].output


@pytest.mark.parametrize(("kinds", "allow", "remember", "chosen"), [
    (ALL_KINDS, True, False, "allow_once"),
    (ALL_KINDS, False, False, "reject_once"),
    ("allow_always,reject_always", False, False, "reject_always"),
    ("allow_always,reject_always", True, False, "cancelled"),  # never allow more than asked
    ("allow_always,reject_once", True, True, "allow_always"),
    ("allow_once,allow_always,reject_once", True, True, "allow_once"),  # grant kept by cockpit
])
def test_permission_answered_by_option_kind(shared, kinds, allow, remember, chosen):
    command = f"ls -{len(kinds)}{int(allow)}{int(remember)}"  # a fresh prefix: no grant applies
    state, events = shared.run(f"permission {kinds} {command}", "perm",
                               answer=approve(allow, remember))
    assert state.status == "completed"
    assert _end(events).result == f"selected {chosen}"
    requested = next(e for e in events if e.type == "approval_requested")
    assert requested.approval_id == requested.approval_id.strip() and requested.tool == "execute"
    assert requested.tier == 3 and requested.prefix == "ls"


def test_a_grant_answers_the_next_tasks_request(shared):
    conversation = SessionState()
    _, _first = shared.run(f"permission {ALL_KINDS} git status", "grant-1",
                          answer=approve(True, True), grants=conversation.grants)
    assert conversation.grants == [ApprovalGrant(tool="execute", prefix="git status", tier=3)]
    _, second = shared.run(f"permission {ALL_KINDS} git status", "grant-2",
                           grants=conversation.grants)
    assert "approval_requested" not in types(second)
    resolved = next(e for e in second if e.type == "approval_resolved")
    assert resolved.via == "grant" and resolved.allowed
    assert _end(second).result == "selected allow_once"
    # forward_always: the human's "always" reaches the agent as allow_always.
    shared.runner.connection.client.forward_always = True
    try:
        _, third = shared.run(f"permission {ALL_KINDS} git status", "grant-3",
                              grants=conversation.grants)
    finally:
        shared.runner.connection.client.forward_always = False
    assert _end(third).result == "selected allow_always"


def test_unattended_and_timeout_deny(shared):
    _, events = shared.run(f"permission {ALL_KINDS} make", "unattended", unattended=True)
    assert _end(events).result == "selected reject_once"
    assert next(e for e in events if e.type == "approval_resolved").via == "auto"
    _, events = shared.run(f"permission {ALL_KINDS} make", "timeout", approval_timeout=0)
    assert _end(events).result == "selected reject_once"


def test_destructive_command_is_tier_4_and_never_granted(shared):
    conversation = SessionState()
    _, events = shared.run(f"permission {ALL_KINDS} rm -rf build", "rm",
                           answer=approve(True, True), grants=conversation.grants)
    requested = next(e for e in events if e.type == "approval_requested")
    assert requested.tier == 4
    assert requested.reason.endswith("(destructive: recursive or forced removal)")
    assert conversation.grants == []
    assert _end(events).result == "selected allow_once"


def test_fs_confined_to_workspace_and_writes_gated(shared):
    # Ask mode: every write asks (accept-edits runs a plain edit: see test_acp_accept_edits).
    _state, events = shared.run("fs", "fs", answer=approve(), mode="ask")
    lines = _end(events).result.splitlines()
    assert lines[0] == "read ok: first line" and "line 2: second line" in lines
    assert "write ok" in lines
    assert (shared.workspace / "out" / "new.txt").read_text() == "written by agent\n"
    assert any(line.startswith("escape write error:") and "outside the workspace" in line
               for line in lines)
    assert any(line.startswith("escape read error:") for line in lines)
    assert not (shared.workspace.parent / "escape.txt").exists()
    write = next(e for e in events if e.type == "approval_requested")
    assert write.tool == "edit" and write.tool_input["path"] == "out/new.txt"
    assert "+written by agent" in write.tool_input["diff"]
    # Denied: the agent hears why, the file is not written.
    (shared.workspace / "out" / "new.txt").unlink()
    _, events = shared.run("fs", "fs-denied", answer=approve(False), mode="ask")
    assert "write error: the cockpit denied this" in _end(events).result
    assert not (shared.workspace / "out" / "new.txt").exists()


def test_terminal_commands_ask_and_report(shared):
    _, events = shared.run("terminal sh -c echo_out;exit_3", "terminal-denied",
                           answer=approve(False))
    assert "terminal error: the cockpit denied this" in _end(events).result
    _, events = shared.run("terminal printf hello", "terminal", answer=approve())
    assert _end(events).result == "exit 0: hello"
    end = next(e for e in events if e.type == "tool_end")
    assert end.ok and end.output == "hello" and end.exit_code == 0
    asked = next(e for e in events if e.type == "approval_requested")
    # The whole request is shown; whether its output limit leaves it grantable is the grant
    # rule's call (one rule, in one place), not this engine's.
    assert asked.tool_input == {"argv": ["printf", "hello"], "outputByteLimit": 4096}
    assert asked.prefix == grant_prefix("execute", asked.tool_input)


def test_cancel_while_streaming_is_graceful(shared):
    pid = shared.runner.connection.process.pid

    def cancel_on_first_chunk(session, event):
        if event.type == "model_update":
            session.cancel("stop please")

    state, events = shared.run("slow 1000 0.01", "cancel", answer=cancel_on_first_chunk)
    assert state.status == "cancelled"
    assert types(events)[-3:] == ["turn_end", "cancellation_observed", "agent_end"]
    assert events[-3].stop_reason == "cancelled"
    assert events[-2].reason == "stop please"
    assert "cancel" in [e["event"] for e in agent_log(shared.log)]
    # The agent stopped by itself, so it lives on for the next task.
    _, events = shared.run("hello", "after-cancel")
    assert shared.runner.connection.process.pid == pid and _end(events).status == "completed"


def test_cancel_answers_pending_permission_cancelled(shared):
    def cancel_on_request(session, event):
        if event.type == "approval_requested":
            session.cancel("escape")

    state, events = shared.run("wait-permission", "cancel-perm", answer=cancel_on_request)
    assert state.status == "cancelled"
    outcomes = [e for e in agent_log(shared.log) if e.get("call_id") == "wait-1"]
    assert outcomes[-1]["chosen"] == "cancelled"
    assert types(events)[-3:] == ["turn_end", "cancellation_observed", "agent_end"]


def test_json_rpc_error_fails_with_the_agents_words(shared):
    state, events = shared.run("error", "error")
    assert state.status == "failed"
    assert "-32603" in state.error and "the model backend is down" in state.error
    assert _end(events).error == state.error
    _, events = shared.run("refusal", "refusal")
    assert _end(events).status == "failed" and "refusal" in _end(events).error
    assert _end(events).result == "I won't."


# Scenarios that end the agent: each gets its own process. ----------------------------------

def _fresh(tmp_path: Path, *args: str, **kwargs) -> AcpRunner:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return AcpRunner(agent_argv("--log", tmp_path / "agent.jsonl", *args), cwd=workspace,
                     **kwargs)


def test_crash_mid_turn_fails_with_exit_and_stderr(tmp_path):
    async def main():
        async with _fresh(tmp_path) as runner:
            state, events = await drive(runner, "crash", tmp_path / "j.jsonl")
            pgid = runner.connection.process.pgid if runner.connection.process else None
            return state, events, pgid, runner.alive

    state, events, pgid, alive = asyncio.run(main())
    assert state.status == "failed" and not alive
    assert "exited with code 3 during session/prompt" in state.error
    assert "test agent: something broke" in state.error
    assert _end(events).stderr[-1] == "test agent: giving up"
    assert pgid is None or group_gone(pgid)


def test_hang_on_cancel_kills_the_whole_group(tmp_path):
    async def main():
        runner = _fresh(tmp_path, cancel_grace=0.3, stop_grace=0.2)
        holder = {}

        def cancel_when_hanging(session, event):
            if event.type == "model_update" and event.text == "hanging":
                holder["pgid"] = runner.connection.process.pgid
                session.cancel("escape escape")

        state, events = await drive(runner, "hang", tmp_path / "j.jsonl",
                                    answer=cancel_when_hanging)
        await runner.close()
        return state, events, holder["pgid"]

    state, events, pgid = asyncio.run(main())
    assert state.status == "cancelled"
    assert "killed" in events[-2].reason and events[-3].stop_reason == "killed"
    child = next(e["child"] for e in agent_log(tmp_path / "agent.jsonl") if e["event"] == "hang")
    assert group_gone(pgid)
    assert group_gone(child) or not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_garbage_on_stdout_fails_and_stops_the_agent(tmp_path):
    async def main():
        runner = _fresh(tmp_path)
        state, events = await drive(runner, "garbage", tmp_path / "j.jsonl")
        pgid = runner.connection.process.pgid if runner.connection.process else None
        await runner.close()
        return state, events, pgid

    state, _events, pgid = asyncio.run(main())
    assert state.status == "failed"
    assert "not JSON-RPC" in state.error and "this is not json-rpc" in state.error
    assert pgid is None or group_gone(pgid)


def test_authentication_error_reaches_the_user_verbatim(tmp_path, monkeypatch):
    monkeypatch.delenv("TEST_AGENT_KEY", raising=False)

    async def main(**kwargs):
        async with _fresh(tmp_path, "--mode", "auth", **kwargs) as runner:
            return await drive(runner, "hello", tmp_path / "j.jsonl")

    state, events = asyncio.run(main())
    assert state.status == "failed"
    assert "Authentication required" in state.error
    assert "no TEST_AGENT_KEY: log in first" in state.error
    assert "Use TEST_AGENT_KEY" in state.error  # the agent's auth methods, as a hint
    assert types(events) == ["agent_start", "agent_end"] and _end(events).error == state.error
    # With the key given explicitly, the runner authenticates and the task runs.
    state, _ = asyncio.run(main(env={"TEST_AGENT_KEY": "k"}))
    assert state.status == "completed"
    assert {"event": "authenticate", "method": "test-key"} in agent_log(tmp_path / "agent.jsonl")


def test_missing_program_fails_clearly(tmp_path):
    async def main():
        async with AcpRunner(["/nonexistent/agent-bin"], cwd=tmp_path) as runner:
            return await drive(runner, "hello", tmp_path / "j.jsonl")

    state, _events = asyncio.run(main())
    assert state.status == "failed"
    assert state.error == ("cannot start the agent: '/nonexistent/agent-bin' was not found (not "
                           "on PATH, or the file does not exist)")


COCKPIT_KILLED_MIDRUN = """
import asyncio, os, sys
sys.path[:0] = {paths!r}
from fakes.acp_agent.helpers import agent_argv
from engine_adapter import Session, TaskState
from engine_adapter.engines.acp import AcpRunner

async def main():
    runner = AcpRunner(agent_argv(), cwd={cwd!r})
    session = Session(runner, TaskState(task="slow 100000 0.01"))
    asyncio.ensure_future(session.run())
    async for event in session.events():
        if event.type == "model_update":
            print(runner.connection.process.pid, flush=True)
            os.kill(os.getpid(), 9)  # the cockpit dies without a chance to clean up

asyncio.run(main())
"""


def test_agent_dies_with_a_killed_cockpit(tmp_path):
    import subprocess
    import sys

    code = COCKPIT_KILLED_MIDRUN.format(paths=[str(TESTS), str(ROOT)],
                                        cwd=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == -9, done.stderr
    agent_pid = int(done.stdout.split()[0])
    assert wait_exited(agent_pid) and group_gone(agent_pid)


def test_eof_on_stdout_fails_and_stops_the_agent(tmp_path):
    async def main():
        runner = _fresh(tmp_path)
        # It never exits by itself: no use waiting the full two seconds.
        runner.connection.exit_wait = 0.1
        state, events = await drive(runner, "eof", tmp_path / "j.jsonl")
        pgid = runner.connection.process.pgid if runner.connection.process else None
        await runner.close()
        return state, events, pgid

    state, events, pgid = asyncio.run(main())
    assert state.status == "failed"
    assert "the agent closed its connection during session/prompt" in state.error
    assert "test agent: closing stdout but staying alive" in state.error
    assert _end(events).result == "closing my stdout"
    assert pgid is None or group_gone(pgid)


def test_an_agent_that_never_answers_times_out(tmp_path):
    async def main():
        runner = AcpRunner(["sleep", "30"], cwd=tmp_path, startup_timeout=0.3)
        state, events = await drive(runner, "hello", tmp_path / "j.jsonl")
        return state, events, runner.connection.process

    state, events, process = asyncio.run(main())
    assert state.status == "failed"
    assert state.error == "the agent did not answer initialize within 0.3 s"
    assert types(events) == ["agent_start", "agent_end"] and process is None
