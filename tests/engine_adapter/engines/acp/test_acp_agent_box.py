"""The agent process itself in the sandbox (issue 25 §1), against the SDK test agent acting on
its own (`self OP ARG`: as an agent that runs its tools itself) in real bubblewrap: writes
outside the workspace, reads of credential places in a fake HOME, unix sockets in a
`/run/user`-like folder and in /tmp, a grandchild left behind — all stopped, and the run says
where the agent ran; its state folder is writable over the masks; with the sandbox off it runs
outside, visibly; `--auto-approve` answers its own execute only when it is contained."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive, none_left, ready
from support.sandboxed import needs_sandbox

from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.agent import AgentBox
from engine_adapter.sandbox import Sandbox, SandboxSettings

pytestmark = needs_sandbox


class Box:
    """One contained test agent over a fake HOME, driven task by task on its own loop."""

    def __init__(self, root: Path, *, mode: str = "workspace-write") -> None:
        self.root = root
        self.home = root / "home"
        self.workspace = root / "ws"
        self.state = self.home / ".agent-state"
        self.marker = str(self.workspace / "agent.jsonl")  # in its command line: found by it
        sandbox = Sandbox(SandboxSettings(mode=mode), workspace=self.workspace).check()
        self.runner = AcpRunner(agent_argv("--log", self.marker), cwd=self.workspace,
                                sandbox=sandbox,
                                box=AgentBox(contain=True, state=(str(self.state),)))
        self.loop = asyncio.new_event_loop()
        self.count = 0

    def run(self, task: str, **kwargs: object) -> tuple[str, list]:
        self.count += 1
        journal = self.root / f"task-{self.count}.jsonl"
        _state, events = self.loop.run_until_complete(asyncio.wait_for(
            drive(self.runner, task, journal, answer=kwargs.pop("answer", approve()),
                  **kwargs), 60))
        return events[-1].result or "", events

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.close())
        self.loop.close()


def _fake_home(root: Path) -> None:
    home = root / "home"
    for name, text in ((".ssh/id_ed25519", "PRIVATE KEY"), (".aws/credentials", "aws"),
                       (".netrc", "machine x password y"), (".config/gh/hosts.yml", "token"),
                       (".env", "KEY=1"), (".bashrc", "# rc")):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    (root / ".env").write_text("PARENT=1")  # a parent of the workspace's: masked too
    (root / "ws").mkdir()
    (root / "outside.txt").write_text("outside")


@pytest.fixture(scope="module")
def box(tmp_path_factory) -> Iterator[Box]:
    root = tmp_path_factory.mktemp("agentbox")
    _fake_home(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(root / "home"))
        patch.setenv("SSH_AUTH_SOCK", str(root / "agent.sock"))
        made = Box(root)
        try:
            yield made
        finally:
            made.close()
    assert none_left(made.marker)


def _listening(path: Path) -> socket.socket:
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    return server


def test_the_run_says_the_agent_runs_in_the_sandbox(box):
    reply, events = box.run("hello")
    assert "pid 2" in reply  # its own PID namespace: the holder and the host are not seen
    assert events[0].type == "agent_start" and ready(events).agent_sandbox == "workspace-write"
    assert box.runner.connection.client.agent_sandboxed


@pytest.mark.parametrize("where", [
    "/etc/cockpit-agent-x", "/usr/local/cockpit-x", "{home}/x", "{home}/.bashrc",
    "{home}/.ssh/authorized_keys", "{root}/x", "{root}/outside.txt", "/tmp/cockpit-agent-x",
    "/var/tmp/cockpit-agent-x", "{ws}/../escape",
])
def test_writes_outside_the_workspace_fail(box, where):
    path = where.format(home=box.home, root=box.root, ws=box.workspace)
    reply, _ = box.run(f"self write {path}")
    assert reply.startswith("error: E"), reply  # EROFS, or EACCES under a mask
    assert not Path(path).exists() or Path(path).read_text() != "written by the agent itself\n"


@pytest.mark.parametrize("where", [
    "{home}/.ssh/id_ed25519", "{home}/.aws/credentials", "{home}/.netrc",
    "{home}/.config/gh/hosts.yml", "{home}/.env", "{root}/.env",
])
def test_credential_places_cannot_be_read(box, where):
    reply, _ = box.run(f"self read {where.format(home=box.home, root=box.root)}")
    assert reply in ("error: EACCES", "error: ENOENT", "error: ENOTDIR"), reply


@pytest.mark.parametrize("where", ["run/user/0/bus", "tmp-sockets/docker.sock", "agent.sock"])
def test_unix_sockets_cannot_be_reached(box, where):
    server = _listening(box.root / where)
    try:
        reply, _ = box.run(f"self connect {box.root / where}")
    finally:
        server.close()
    assert reply == "error: EPERM", reply  # no AF_UNIX socket can be made at all


def test_socket_variables_are_left_out(box):
    reply, _ = box.run("self env SSH_AUTH_SOCK")
    assert reply == "ok (unset)"


def test_the_workspace_and_its_own_state_are_writable(box):
    assert box.run("self write made.txt")[0] == "ok written"
    assert (box.workspace / "made.txt").exists()
    assert box.run(f"self write {box.state}/login.json")[0] == "ok written"
    assert (box.state / "login.json").read_text() == "written by the agent itself\n"


def test_the_network_is_on_for_its_model_api(box):
    server = socket.create_server(("127.0.0.1", 0))
    accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepted.start()
    try:
        reply, _ = box.run(f"self tcp 127.0.0.1:{server.getsockname()[1]}")
    finally:
        accepted.join(10)
        server.close()
    assert reply == "ok connected"


def test_a_grandchild_dies_with_the_agent(box, tmp_path):
    reply, _ = box.run(f"self orphan {box.workspace}/orphan.pid")
    assert reply == "ok orphaned"
    assert (box.workspace / "orphan.pid").read_text().strip()  # it lives, for now
    box.loop.run_until_complete(box.runner.close())
    assert none_left(box.marker)  # double fork + setsid + its parent gone: killed all the same
    assert box.run("hello")[0].startswith("Hello")  # a fresh agent for the next tests


def test_auto_approve_answers_a_contained_agents_own_execute(box):
    reply, events = box.run("permission allow_once,reject_once make build", unattended=True,
                            auto_approve=True)
    assert "allow_once" in reply
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert resolved and resolved[0].allowed and resolved[0].via == "auto"
    rows = [e for e in events if e.type == "tool_start"]
    assert rows and all(row.agent_sandbox == "workspace-write" for row in rows)


# -- the state folder wins over a mask; off runs it outside, visibly --------------------------
def test_a_state_folder_wins_over_its_mask(tmp_path, monkeypatch):
    _fake_home(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    sandbox = Sandbox(SandboxSettings(), workspace=tmp_path / "ws").check()
    aws = str(tmp_path / "home" / ".aws")
    wrapped = sandbox.wrap(["true"], cwd=tmp_path / "ws", env={}, state=[aws])
    try:
        argv = wrapped.argv
        assert aws not in wrapped.masked  # its own: readable and writable
        assert str(tmp_path / "home" / ".ssh") in wrapped.masked  # the others stay masked
        assert argv[argv.index(aws) - 1] == "--bind"  # writable
        assert wrapped.network is False  # commands keep the settings' network
    finally:
        wrapped.close()
    config = str(tmp_path / "home" / ".config")
    inner = str(tmp_path / "home" / ".config" / "gh")
    agent = sandbox.wrap(["true"], cwd=tmp_path / "ws", env={}, network=True, state=[config])
    try:  # a mask inside a state folder stays, bound after it
        assert inner in agent.masked and agent.network
        assert agent.argv.index(config) < agent.argv.index(inner)
    finally:
        agent.close()
    Path(inner, "sub").mkdir()
    gh = sandbox.wrap(["true"], cwd=tmp_path / "ws", env={}, state=[inner + "/sub"])
    try:  # a mask holding a state folder: only the entries around it stay masked
        assert inner not in gh.masked
        assert str(tmp_path / "home" / ".config" / "gh" / "hosts.yml") in gh.masked
    finally:
        gh.close()


def test_with_the_sandbox_off_the_agent_runs_outside_and_is_never_auto_approved(tmp_path,
                                                                                monkeypatch):
    _fake_home(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    made = Box(tmp_path, mode="off")
    try:
        reply, events = made.run(f"self write {tmp_path}/x")
        assert reply == "ok written"  # outside: nothing contains it, and the run says so
        assert ready(events).agent_sandbox == "off"
        reply, events = made.run("permission allow_once,reject_once make build",
                                 unattended=True, auto_approve=True)
        assert "reject_once" in reply or "cancelled" in reply, reply
        assert [e.allowed for e in events if e.type == "approval_resolved"] == [False]
        assert {e.agent_sandbox for e in events if e.type == "tool_start"} == {"off"}
    finally:
        made.close()
    assert none_left(made.marker)
