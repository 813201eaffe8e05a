"""A real host process over its real socket: runs started detached, listed, answered, stopped;
the host killed with -9 and started again; a peer of another uid refused."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys

import pytest
from support.host import HostHome, detach_demo, follow, until, wait_gone

from cockpit.host import HostClient, HostError
from engine_adapter import read_journal

PS_KEYS = {"id", "task", "engine", "status", "waiting", "started", "journal", "host"}
"""The issue's fixed shape, and `host` (added: which host of the fleet lists the run)."""


_demo = detach_demo


def _ps(home: HostHome) -> list[dict]:
    done = home.cockpit("ps", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _answer_all(home: HostHome, run: str, *, allow: bool = True) -> dict:
    """Answer every ask of `run` until it ends; its `agent_end`."""
    with home.client() as watcher, home.client() as control:
        for event in follow(watcher, run):
            if event["type"] == "approval_requested":
                control.request("resolve_approval", run=run, approval_id=event["approval_id"],
                                allow=allow)
            if event["type"] == "agent_end":
                return event
    raise AssertionError("no agent_end")


def test_a_detached_demo_starts_the_host_waits_for_a_client_and_is_listed(host_home) -> None:
    assert host_home.cockpit("host", "status").stdout.strip() == "no host running"
    run = _demo(host_home)
    with host_home.client() as client:
        asked = until(follow(client, run), lambda e: e["type"] == "approval_requested")
    assert asked["seq"] > 0
    # Nobody answered: the ask waits (a detached run is attended), and ps says so.
    [row] = _ps(host_home)
    assert set(row) == PS_KEYS
    assert row["id"] == run and row["engine"] == "demo" and row["status"] == "running"
    assert row["waiting"] == {"approvals": 1, "questions": 0}
    assert row["journal"].endswith(f"{run}.jsonl") and os.path.isabs(row["journal"])
    assert row["started"].endswith("Z")
    status = host_home.cockpit("host", "status")
    assert status.returncode == 0 and "host running (pid" in status.stdout and run in status.stdout
    end = _answer_all(host_home, run)
    assert end["status"] == "completed"
    [row] = _ps(host_home)
    assert row["status"] == "completed" and row["waiting"] == {"approvals": 0, "questions": 0}
    events = list(read_journal(row["journal"]))
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[-1].type == "agent_end"


def test_two_clients_on_one_run_see_the_same_run_and_one_answer_closes_the_ask(
        host_home) -> None:
    host_home.start()
    run = _demo(host_home)
    with host_home.client() as one, host_home.client() as two, host_home.client() as control:
        first, second = follow(one, run), follow(two, run)
        asked_one = until(first, lambda e: e["type"] == "approval_requested")
        asked_two = until(second, lambda e: e["type"] == "approval_requested")
        assert asked_one == asked_two
        control.request("resolve_approval", run=run, approval_id=asked_one["approval_id"],
                        allow=False, reason="not now")
        for stream in (first, second):
            resolved = until(stream, lambda e: e["type"] == "approval_resolved")
            assert resolved["approval_id"] == asked_one["approval_id"]
            assert resolved["allowed"] is False and resolved["via"] == "human"
        # A second answer to the same ask (another client's stale key) answers nothing.
        control.request("resolve_approval", run=run, approval_id=asked_one["approval_id"],
                        allow=True)
    assert _answer_all(host_home, run)["type"] == "agent_end"


def test_a_client_killed_mid_ask_never_stops_the_run_and_a_reattach_misses_nothing(
        host_home) -> None:
    host_home.start()
    run = _demo(host_home)
    seen: list[dict] = []
    # A client in its own process follows to the ask, then is killed with -9.
    script = ("import sys, json\nfrom support.host import follow\n"
              "from cockpit.host import HostClient\n"
              "c = HostClient.connect(sys.argv[1])\n"
              "for e in follow(c, sys.argv[2]):\n"
              "    print(json.dumps(e), flush=True)\n"
              "    if e['type'] == 'approval_requested':\n"
              "        import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n")
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", script, str(host_home.socket), run],
                          env=host_home.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == -9
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    assert seen[-1]["type"] == "approval_requested"
    [row] = _ps(host_home)
    assert row["status"] == "running" and row["waiting"]["approvals"] == 1
    # Re-attached from its cursor: the next event is the one after the last it saw, none twice.
    with host_home.client() as client, host_home.client() as control:
        stream = follow(client, run, cursor=seen[-1]["seq"] + 1)
        control.request("resolve_approval", run=run, approval_id=seen[-1]["approval_id"],
                        allow=True)
        after = next(stream)
        assert after["seq"] == seen[-1]["seq"] + 1
        assert after["type"] == "approval_resolved"
    # From 0 again: the whole run, gapless, the same events as the first client saw.
    with host_home.client() as client:
        again = []
        for event in follow(client, run):
            again.append(event)
            if event["seq"] == seen[-1]["seq"]:
                break
    assert again == seen
    _answer_all(host_home, run)


def test_host_stop_cancels_every_live_run_and_leaves_no_process(host_home) -> None:
    runs = [_demo(host_home), _demo(host_home)]
    pid = host_home.host_pid()
    assert pid is not None
    stopped = host_home.cockpit("host", "stop")
    assert stopped.returncode == 0 and f"host stopped (pid {pid})" in stopped.stdout
    assert wait_gone(pid)
    assert not host_home.socket.exists()
    for run in runs:
        [journal] = (host_home.home / "data" / "journals").glob(f"*{run}.jsonl")
        events = list(read_journal(journal))
        assert events[-1].type == "agent_end" and events[-1].status == "cancelled"
        assert events[-1].error == "the host was stopped"
        workspace = events[0].cwd
        assert workspace and not os.path.exists(workspace)  # the demo's went with the host
    assert host_home.cockpit("host", "status").stdout.strip() == "no host running"
    assert host_home.cockpit("ps").stdout.strip() == "no host running"
    assert json.loads(host_home.cockpit("ps", "--json").stdout) == []
    assert host_home.cockpit("host", "stop").stdout.strip() == "no host running"


def test_a_host_killed_with_9_is_discharged_by_the_next_one(host_home) -> None:
    host_home.start()
    run = _demo(host_home)
    with host_home.client() as client:
        until(follow(client, run), lambda e: e["type"] == "approval_requested")
    [row] = _ps(host_home)
    host_home.kill9()
    before = list(read_journal(row["journal"]))
    assert before[-1].type != "agent_end"
    host_home.start()
    [lost] = _ps(host_home)
    assert lost["id"] == run and lost["status"] == "lost"
    after = list(read_journal(row["journal"]))  # strict: the journal reads whole
    assert after[:-1] == before
    end = after[-1]
    assert end.type == "agent_end" and end.status == "failed" and end.error == "the host died"
    assert end.seq == before[-1].seq + 1
    verified = host_home.cockpit("verify", row["journal"])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # A third host finds nothing more to discharge.
    host_home.stop()
    host_home.start()
    assert _ps(host_home) == []


def test_a_second_host_is_refused_while_one_runs(host_home) -> None:
    host_home.start()
    pid = host_home.host_pid()
    second = host_home.cockpit("host")
    assert second.returncode == 1
    assert f"a host is already running (pid {pid})" in second.stderr


def test_the_socket_is_the_users_alone(host_home) -> None:
    host_home.start()
    assert stat.S_IMODE(host_home.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(host_home.socket.parent.stat().st_mode) == 0o700


def _connect_as_nobody(path: str) -> str:
    """Connect to `path` from a forked child running as `nobody`; what it got."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: drop to nobody, connect, say what happened
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            sock = socket.socket(socket.AF_UNIX)
            try:
                sock.connect(path)
                # (the host speaks first to a stranger: its refusal, before any greeting)
                said = sock.makefile("rb").readline().decode()
            except OSError as exc:
                said = type(exc).__name__
            os.write(write_end, said.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as got:
        said = got.read().decode()
    os.waitpid(child, 0)
    return said


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to become another user")
def test_a_peer_of_another_uid_is_refused(host_home) -> None:
    host_home.start()
    host_home.home.chmod(0o755)  # (mkdtemp made it 0700: the host's own folder is the test)
    # The folder and the socket keep every other user out ...
    assert _connect_as_nobody(str(host_home.socket)) == "PermissionError"
    # ... and if they were opened up, the host still checks the peer's uid (SO_PEERCRED).
    host_home.socket.parent.chmod(0o777)
    host_home.socket.chmod(0o777)
    said = _connect_as_nobody(str(host_home.socket))
    assert json.loads(said) == {"error": f"refused: this host serves uid {os.getuid()} only"}
    with host_home.client() as client:  # the user's own clients still get in
        assert client.request("ps")["runs"] == []


def test_requests_the_host_cannot_answer_are_errors_not_crashes(host_home) -> None:
    host_home.start()
    with host_home.client() as client:
        for op, fields, wanted in [
            ("launch", {}, "unknown request 'launch'"),
            ("follow", {"run": "nope"}, "no run 'nope'"),
            ("cancel", {"run": ""}, "no run ''"),
            ("start", {"command": "rm"}, "start needs a command"),
            ("start", {"command": "run", "params": {"task": "x"}}, "needs something to drive"),
            ("start", {"command": "run", "params": {"task": "x", "engine": "nosuch:make",
                                                    "cwd": str(host_home.home)}},
             "no module named 'nosuch'"),
        ]:
            with pytest.raises(HostError, match=wanted):
                client.request(op, **fields)
        assert client.request("ps")["runs"] == []  # the connection is still good
    with HostClient.connect(host_home.socket) as client:
        client.send({"op": "follow", "id": 1, "run": "x", "cursor": -1})
        assert "no run" in client.read()["error"]


@pytest.mark.parametrize("args", [["ps"], ["host", "status"], ["host"], ["demo", "--detach"]])
def test_a_home_too_long_for_a_socket_is_one_clear_line(host_home, args) -> None:
    host_home.env["COCKPIT_HOME"] = "/tmp/" + "y" * 110
    done = host_home.cockpit(*args)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "longer than 107 bytes" in done.stderr and "set COCKPIT_HOME" in done.stderr


def _processes_with(marker: str) -> list[int]:
    """The pids whose command line holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _detach_agent(home: HostHome) -> tuple[str, str]:
    """A detached run of the test ACP agent that asks and waits; its id and its log's path
    (unique: it marks the agent's processes)."""
    import shlex

    from fakes.acp_agent.helpers import agent_argv

    workspace = home.home / "ws"
    workspace.mkdir(exist_ok=True)
    marker = str(workspace / "agent-log.jsonl")  # (in the workspace: the sandbox lets it write)
    done = home.cockpit("run", "wait-permission", "--agent",
                        shlex.join(agent_argv("--log", marker)), "--cwd", str(workspace),
                        "--detach")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), marker


@pytest.mark.parametrize("how", ["kill -9", "host stop"])
def test_an_agents_run_in_the_host_leaves_no_agent_when_the_host_goes(host_home, how) -> None:
    host_home.start()
    run, marker = _detach_agent(host_home)
    with host_home.client() as client:
        until(follow(client, run), lambda e: e["type"] == "approval_requested")
    [row] = _ps(host_home)
    assert row["engine"].startswith(sys.executable) and row["waiting"]["approvals"] == 1
    agents = _processes_with(marker)
    assert agents  # the agent runs, in the host's scope
    if how == "kill -9":
        host_home.kill9()
    else:
        assert host_home.cockpit("host", "stop").returncode == 0
    assert all(wait_gone(pid) for pid in agents)  # nothing of the agent outlives its host
    if how == "kill -9":
        host_home.start()
        [lost] = _ps(host_home)
        assert lost["status"] == "lost"
        end = list(read_journal(row["journal"]))[-1]
        assert (end.status, end.error) == ("failed", "the host died")
    else:
        end = list(read_journal(row["journal"]))[-1]
        assert end.status == "cancelled"
