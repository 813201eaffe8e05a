"""No unix socket is reachable from a sandboxed command (issue 24, A): real servers (a plain
unix socket in /tmp, one in a fake XDG_RUNTIME_DIR, an abstract one, one inside the workspace, a
real tmux server), real clients of several kinds, the real bwrap and seccomp filter. And what
must keep working: socketpair, asyncio, multiprocessing, inet sockets when the network is on."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.sandboxed import needs_sandbox, sandboxed

from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.sandbox.hidden import SOCKET_VARIABLES, socket_dirs, socket_variable
from engine_adapter.sandbox.seccomp import AUDIT_ARCHES, native_arch

pytestmark = needs_sandbox
SOCKET_NR = AUDIT_ARCHES[native_arch() or "x86_64"][1]


class UnixServer:
    """A real unix socket server on a thread: counts the connections it accepted."""

    def __init__(self, address: str | bytes) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(8)
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[UnixServer, str]]:
    path = str(tmp_path / "outside.sock")
    srv = UnixServer(path)
    yield srv, path
    srv.close()


def clients(path: str) -> list[str]:
    """Ways to connect to the unix socket at `path`, from several programs."""
    quoted = path.replace("'", "")
    found = [
        f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{quoted}')\"",
        f"python3 -c \"import socket; socket.socket(1, 1).connect('{quoted}')\"",  # by number
        f"python3 -c \"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)"
        f".sendto(b'x', '{quoted}')\"",
        f"python3 -c \"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)"
        f".connect('{quoted}')\"",
        f"python3 -c \"from multiprocessing.connection import Client; Client('{quoted}')\"",
        f"python3 -c \"import asyncio; asyncio.run(asyncio.open_unix_connection('{quoted}'))\"",
        # the domain in the high half of the argument: the kernel reads an int (AF_UNIX)
        "python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
        f"fd = libc.syscall({SOCKET_NR}, ctypes.c_long(0x100000001), 1, 0); "
        "sys.exit(1 if fd < 0 else 0)\"",
    ]
    if shutil.which("perl"):
        found.append(f"perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{quoted}\")"
                     f" or die \"connect: $!\"'")
    if shutil.which("curl"):
        found.append(f"curl -sS --unix-socket {quoted} http://localhost/")
    if shutil.which("node"):
        found.append(f"node -e \"require('net').connect('{quoted}')"
                     ".on('error', e => {{ console.error(e.message); process.exit(1) }})\"")
    return found


@pytest.mark.parametrize("which", range(len(clients("/x"))))
def test_a_unix_socket_outside_the_workspace_is_unreachable(ws, server, which) -> None:
    srv, path = server
    command = clients(path)[which]
    done = sandboxed(command, ws)
    assert done.exit_code != 0, (command, done.output)
    assert srv.accepted == 0
    # and without a sandbox the same client does connect (the test would catch a dead server)
    if which == 0:
        subprocess.run(["sh", "-c", command], check=True, capture_output=True)
        assert srv.accepted == 1


def test_a_blocked_connect_is_named_in_the_row(ws, server) -> None:
    _srv, path = server
    for command in clients(path):
        done = sandboxed(command, ws)
        if "ctypes" in command or "curl" in command:
            continue  # no words on its output say which call failed
        assert done.blocked and done.blocked.startswith("connect to"), (command, done.output)


def test_a_socket_in_a_runtime_dir_is_unreachable_and_its_variables_not_passed(
        tmp_path, ws, monkeypatch) -> None:
    runtime = tmp_path / "run-user-1000"
    runtime.mkdir(mode=0o700)
    bus = UnixServer(str(runtime / "bus"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={runtime}/bus")
        monkeypatch.setenv("SSH_AUTH_SOCK", str(runtime / "bus"))
        sandbox = Sandbox(SandboxSettings(), workspace=ws)
        done = sandboxed("env; ls " + str(runtime), ws, sandbox=sandbox)
        assert done.exit_code != 0 and "Permission denied" in done.output  # masked folder
        for name in ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK"):
            assert f"{name}=" not in done.output
        done = sandboxed(clients(str(runtime / "bus"))[0], ws, sandbox=sandbox)
        assert done.exit_code != 0 and bus.accepted == 0
        if shutil.which("ssh-add"):
            done = sandboxed("ssh-add -l", ws, sandbox=sandbox)
            assert done.exit_code != 0 and bus.accepted == 0
    finally:
        bus.close()


@pytest.mark.parametrize("network", [False, True])
def test_an_abstract_socket_is_unreachable_even_with_the_network(ws, network) -> None:
    name = f"\0cockpit-test-{os.getpid()}-{network}"
    srv = UnixServer(name.encode())
    try:
        command = ("python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                   f"s.connect(b'\\0{name[1:]}')\"")
        done = sandboxed(command, ws, network=network)
        assert done.exit_code != 0 and srv.accepted == 0, done.output
    finally:
        srv.close()


def test_a_socket_inside_the_workspace_is_unreachable_too(ws) -> None:
    """Decided: every unix socket, wherever it lies (a socket in the workspace may be the
    human's editor or dev server as well as the command's own)."""
    srv = UnixServer(str(ws / "dev.sock"))
    try:
        done = sandboxed(clients("dev.sock")[0], ws)
        assert done.exit_code != 0 and srv.accepted == 0
        done = sandboxed("python3 -c \"import socket; socket.socket(socket.AF_UNIX)"
                         ".bind('mine.sock')\"", ws)  # nor can a command listen on one
        assert done.exit_code != 0 and not (ws / "mine.sock").exists()
    finally:
        srv.close()


@pytest.mark.skipif(not shutil.which("tmux"), reason="needs tmux")
def test_a_real_tmux_server_cannot_be_driven_from_inside(tmp_path, ws, monkeypatch) -> None:
    sock = tmp_path / "tmux.sock"
    marker = tmp_path / "X"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "sleep 600"], check=True)
    try:
        monkeypatch.setenv("TMUX", f"{sock},1,0")
        monkeypatch.setenv("TMUX_PANE", "%0")
        sandbox = Sandbox(SandboxSettings(), workspace=ws)
        for command in (f"tmux -S {sock} run-shell 'touch {marker}'",
                        f"tmux run-shell 'touch {marker}'",  # through $TMUX
                        f"tmux -S {sock} new-window 'touch {marker}'",
                        f"tmux -S {sock} send-keys -t 0 'touch {marker}' Enter",
                        f"tmux -S {sock} respawn-pane -k 'touch {marker}'",
                        f"TMUX={sock},1,0 tmux run-shell 'touch {marker}'"):
            done = sandboxed(command, ws, sandbox=sandbox)
            assert done.exit_code != 0 and done.blocked, (command, done.output)
        assert not marker.exists()
        # the server is alive: outside the sandbox the same command works
        subprocess.run(["tmux", "-S", str(sock), "run-shell", f"touch {marker}"], check=True)
        assert marker.exists()
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], check=False)


# -- what keeps working --------------------------------------------------------------------------

WORKS = [
    "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))\"",
    "python3 -c \"import asyncio; asyncio.run(asyncio.sleep(0)); print('ok')\"",
    "python3 -c \"import multiprocessing as m; p = m.Pool(2); print(p.map(abs, [-1, -2]))\"",
    "python3 -c \"from multiprocessing import Pipe; a, b = Pipe(); a.send(1); print(b.recv())\"",
    "python3 -c \"import socket; socket.socket(socket.AF_INET); print('inet')\"",
    "python3 -c \"import socket; socket.socket(socket.AF_INET6); print('inet6')\"",
    "git init -q sub && git -C sub status --short && echo git",
    "node -e \"require('child_process').execFileSync('true'); console.log('node')\"",
]


@pytest.mark.parametrize("command", WORKS)
def test_what_does_not_need_a_unix_socket_still_works(ws, command) -> None:
    if command.startswith("node") and not shutil.which("node"):
        pytest.skip("needs node")
    done = sandboxed(command, ws)
    assert done.exit_code == 0, (command, done.output)


@pytest.mark.skipif(native_arch() != "x86_64", reason="x32 numbers exist on x86_64 only")
def test_io_uring_and_x32_calls_are_refused(ws) -> None:
    """io_uring opens sockets without passing through the filter; x32 numbers are the same
    calls under other numbers."""
    command = ("python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
               "params = ctypes.create_string_buffer(120); "
               "r1 = libc.syscall(425, 8, params); e1 = ctypes.get_errno(); "
               "r2 = libc.syscall(0x40000000 | 41, 1, 1, 0); e2 = ctypes.get_errno(); "
               "print(r1, e1, r2, e2)\"")
    done = sandboxed(command, ws)
    assert done.output.split() == ["-1", "1", "-1", "1"], done.output  # EPERM, EPERM


def test_only_the_standard_descriptors_reach_the_command(ws) -> None:
    done = sandboxed("ls /proc/self/fd", ws)
    assert done.output.split() == ["0", "1", "2", "3"]  # 3: ls's own listing


# -- the variables and the folders (no bwrap needed, but kept beside their class) ---------------

SOCKETY = [*sorted(SOCKET_VARIABLES), "MY_AGENT_SOCK", "FOO_SOCKET", "X_IPC_HOOK",
           "EDITOR_LISTEN_ADDRESS", "tmux", "Ssh_Auth_Sock", "VSCODE_IPC_HOOK_EXTHOST",
           "DBUS_STARTER_ADDRESS", "TMUX_TMPDIR", "KITTY_LISTEN_ON"]
PLAIN = ["PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "PWD", "LC_ALL", "EDITOR",
         "VIRTUAL_ENV", "PYTHONPATH", "SOCKS", "DISPLAYED", "SOCKETSERVER_OK"]


def test_socket_variables_are_recognised_and_plain_ones_are_not() -> None:
    assert [name for name in SOCKETY if not socket_variable(name)] == []
    assert [name for name in PLAIN if socket_variable(name)] == []


def test_wrap_leaves_every_socket_variable_out(ws) -> None:
    sandbox = Sandbox(SandboxSettings(), workspace=ws)
    env = {**{name: "/tmp/x" for name in SOCKETY}, **{name: "kept" for name in PLAIN}}
    wrapped = sandbox.wrap(["/bin/true"], cwd=ws, env=env)
    try:
        assert not [name for name in SOCKETY if name in wrapped.env]
        assert all(wrapped.env[name] == "kept" for name in PLAIN)
    finally:
        wrapped.close()


def test_socket_folders_named_by_variables_are_masked(tmp_path) -> None:
    per_user = tmp_path / "ssh-abc"
    per_user.mkdir()
    (per_user / "agent.1").touch()
    found = socket_dirs({"SSH_AUTH_SOCK": str(per_user / "agent.1"),
                         "XDG_RUNTIME_DIR": str(tmp_path / "rt"), "HOME": "/nowhere"})
    assert str(per_user) in found and str(tmp_path / "rt") in found
