"""Real commands in the real sandbox (bubblewrap): what it stops, what it lets through, that the
process handling is unchanged, and that the classifier's known holes do no harm when
auto-approved. Skipped, with the reason, on a machine without a working `bwrap`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from fakes.openai_fake.server import FakeOpenAI, sample_fix_replies
from support.builtin_runs import end, of_type, run_steps, scenario, tool_ends
from support.event_loop import run
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import Session, TaskState
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.builtin import (
    BuiltinRunner,
    RawDecision,
    ScriptedModel,
    Usage,
    make_workspace,
)
from engine_adapter.engines.builtin import load_scenario as load
from engine_adapter.engines.builtin.process import ProcessResult, run_process, shell_argv
from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.sandbox.bwrap import bwrap_argv
from engine_adapter.session.cancel import SessionCancelToken

HERE = Sandbox(SandboxSettings(), workspace=Path(__file__).parent).check()
pytestmark = pytest.mark.skipif(
    not HERE.active, reason=f"no sandbox on this machine ({HERE.problem}): install bubblewrap "
    "(`apt-get install bubblewrap`) to run the sandbox tests")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace under /tmp (as tmp_path is: a tmpfs over /tmp would hide it) with a
    directory beside it holding a file that must survive."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    return workspace


def intact(ws: Path) -> bool:
    outside = ws.parent / "outside"
    return sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and \
        (outside / "secret.txt").read_text() == "outside\n"


def sandboxed(command: str, cwd: Path, *, timeout: float = 30, token: Any = None,
              workspace: Path | None = None, **settings: Any) -> ProcessResult:
    sandbox = Sandbox(SandboxSettings(**settings), workspace=workspace or cwd)
    return run(run_process(shell_argv(command), cwd=cwd, timeout=timeout, output_cap=20_000,
                           cancel_token=token, sandbox=sandbox))


def events_of(events: list, kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


def marked(token: str) -> list[int]:
    """Host pids whose command line holds `token` (inside, `$$` is another namespace's pid)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


async def none_left(token: str) -> bool:
    for _ in range(400):  # a bound against hangs, not a timing: killed processes go at once
        if not marked(token):
            return True
        await asyncio.sleep(0.01)
    return False


# -- what it stops, what it lets through ---------------------------------------------------------

OUTSIDE_WRITES = [
    "echo x > ../outside/secret.txt",
    "echo x >> ../outside/secret.txt",
    "rm -f ../outside/secret.txt",
    "mv ../outside/secret.txt ../outside/moved",
    "cp notes.txt ../outside/",
    "mkdir ../outside/d",
    "ln -s notes.txt ../outside/link",
    "chmod 777 ../outside/secret.txt",
    "truncate -s 0 ../outside/secret.txt",
    "python3 -c \"open('../outside/new', 'w')\"",
    f"touch {os.path.realpath('/etc')}/cockpit-sandbox-test",
    "cd .. && touch outside/cd-away",
]


@pytest.mark.parametrize("command", OUTSIDE_WRITES)
def test_a_write_outside_the_workspace_fails_and_says_so(ws, command) -> None:
    done = sandboxed(command, ws)
    assert done.exit_code != 0 and done.sandbox == "workspace-write"
    assert done.blocked and done.blocked.split()[0] in ("write", "delete", "a")
    assert "blocked by sandbox" in done.describe()
    assert intact(ws) and not Path("/etc/cockpit-sandbox-test").exists()


def test_the_workspace_is_writable(ws) -> None:
    done = sandboxed("echo made > made.txt && mkdir -p d/e && mv made.txt d/e/ && "
                     "rm notes.txt && cat d/e/made.txt", ws)
    assert done.exit_code == 0 and done.output == "made\n" and done.blocked is None
    assert (ws / "d/e/made.txt").exists() and not (ws / "notes.txt").exists()


def test_read_only_mode_keeps_the_workspace_read_only_too(ws) -> None:
    done = sandboxed("touch made.txt", ws, mode="read-only")
    assert done.exit_code != 0 and done.blocked == f"write to {os.path.realpath(ws)}/made.txt"
    assert sandboxed('touch "$TMPDIR/x" && echo ok', ws, mode="read-only").output == "ok\n"


def test_ssh_keys_are_not_writable_even_with_home_as_the_workspace(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_text("mine\n")
    (home / "project").mkdir()
    monkeypatch.setenv("HOME", str(home))
    for workspace in (home / "project", home):
        done = sandboxed("echo evil >> ~/.ssh/authorized_keys", workspace)
        assert done.exit_code != 0 and done.blocked, done.output
    assert (home / ".ssh" / "authorized_keys").read_text() == "mine\n"
    assert sandboxed("touch ~/project/made && echo ok", home).output == "ok\n"  # the rest
    assert sandboxed("touch ~/made", home).exit_code != 0  # a new name in home: maybe an rc file


def test_git_hooks_and_config_stay_read_only_in_the_workspace(ws) -> None:
    done = sandboxed("git init -q . && echo ok", ws)  # no .git of its own making at the top
    assert done.exit_code != 0 and done.blocked and not (ws / ".git").exists(), done.output
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for command in ("echo 'rm -rf ~' > .git/hooks/pre-commit", "echo '[core] x=1' >> "
                    ".git/config", "git config core.fsmonitor 'touch ../outside/pwned'"):
        done = sandboxed(command, ws)
        assert done.exit_code != 0 and done.blocked, command
    assert not (ws / ".git/hooks/pre-commit").exists() and intact(ws)
    assert sandboxed("git status --short && echo ok", ws).output == "?? notes.txt\nok\n"
    done = sandboxed("git add notes.txt", ws)  # the whole git dir is read-only: ask to commit
    assert done.exit_code != 0 and done.blocked and ".git" in done.blocked, done.output


def test_the_cockpits_own_files_stay_read_only(ws) -> None:
    journal = ws / "run.jsonl"
    journal.write_text("{}\n")
    sandbox = Sandbox(workspace=ws, read_only=[ws / "settings"])
    sandbox.protect(journal)
    (ws / "settings").mkdir()
    done = run(run_process(shell_argv("echo forged >> run.jsonl; touch settings/x"), cwd=ws,
                           timeout=30, output_cap=1000, sandbox=sandbox))
    assert done.blocked and journal.read_text() == "{}\n" and not (ws / "settings/x").exists()


def test_saved_grants_cannot_be_planted_even_before_their_folder_exists(ws, monkeypatch) -> None:
    """A cockpit home inside the workspace, no config folder yet: a command must not be able
    to make one holding a grant the next run would trust."""
    from cockpit.launch.factory import RunOptions, make_sandbox

    monkeypatch.setenv("COCKPIT_HOME", str(ws / "home"))
    sandbox = make_sandbox(RunOptions(sandbox=SandboxSettings()), ws)
    grants = ws / "home" / "config" / "grants"
    assert grants.is_dir() and not any(grants.iterdir())
    for command in ("mkdir -p home/config/grants && echo '[x]' > home/config/grants/user.toml",
                    "echo '[x]' > home/config/grants/user.toml",
                    "mkdir home/config/grants/projects",
                    "mv home/config home/old && mkdir -p home/config/grants",
                    "echo 'mode = \"off\"' > home/config/config.toml",
                    "touch home/data/journals"):
        done = run(run_process(shell_argv(command), cwd=ws, timeout=30, output_cap=1000,
                               sandbox=sandbox))
        assert done.exit_code != 0 and done.blocked, command
    assert not any(grants.iterdir()) and not (ws / "home/config/config.toml").exists()
    assert sorted(p.name for p in (ws / "home").iterdir()) == ["config", "data"]


def test_tmp_is_read_only_and_tmpdir_is_private_to_the_call(ws) -> None:
    done = sandboxed('touch /tmp/cockpit-sandbox-test; echo "$TMPDIR"; touch "$TMPDIR/x" && '
                     "ls notes.txt", ws)
    private = done.output.split("\n")[1]
    assert "Read-only file system" in done.output and not Path("/tmp/cockpit-sandbox-test").exists()
    assert "notes.txt" in done.output  # a workspace under /tmp is still there
    assert private.startswith("/") and not Path(private).exists()  # removed after the call


def test_dev_shm_works_for_multiprocessing(ws) -> None:
    done = sandboxed("python3 -c 'import multiprocessing; multiprocessing.Lock(); print(1)'", ws)
    assert done.output == "1\n", done.output


def test_no_privileges_even_as_root(ws) -> None:
    done = sandboxed("grep CapEff /proc/self/status; mount -o remount,rw / && "
                     "touch /cockpit-remount-test", ws)
    assert "CapEff:\t0000000000000000" in done.output
    assert done.exit_code != 0 and not Path("/cockpit-remount-test").exists()
    assert sandboxed("mount -t tmpfs none /mnt", ws).exit_code != 0


class _Server:
    """A TCP server on the host's 127.0.0.1 that answers "hello"."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello")


def test_the_network_is_unreachable_unless_allowed(ws) -> None:
    server = _Server()
    try:
        fetch = (f"python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', "
                 f"{server.port}), 5); print(s.recv(5).decode())\"")
        done = sandboxed(fetch, ws)
        assert done.exit_code != 0 and done.blocked == "network", done.output
        assert sandboxed("getent hosts pypi.org", ws).exit_code != 0
        allowed = sandboxed(fetch, ws, network=True)
        assert allowed.output == "hello\n", allowed.output
    finally:
        server.sock.close()


# -- process handling is unchanged -------------------------------------------------------------

def test_nothing_started_in_the_sandbox_outlives_the_call(ws) -> None:
    done = sandboxed("sleep 987.001 >/dev/null 2>&1 & (setsid sleep 987.002 >/dev/null 2>&1 &);"
                     " nohup sleep 987.003 >/dev/null 2>&1 & echo started", ws)
    assert done.output == "started\n"
    assert run(none_left("987.00"))


def test_a_timeout_kills_everything_in_the_sandbox(ws) -> None:
    done = sandboxed("sleep 987.011 & setsid sleep 987.012 & sleep 987.013", ws, timeout=0.5)
    assert done.timed_out and done.exit_code is None
    assert run(none_left("987.01"))


def test_a_cancel_kills_everything_in_the_sandbox(ws) -> None:
    async def main() -> ProcessResult:
        token = SessionCancelToken()
        sandbox = Sandbox(workspace=ws)
        task = asyncio.ensure_future(run_process(
            shell_argv("touch started; sleep 987.021 & setsid sleep 987.022 & wait"), cwd=ws,
            timeout=60, output_cap=100, cancel_token=token, sandbox=sandbox))
        for _ in range(2000):
            if (ws / "started").exists() and len(marked("987.02")) >= 2:
                break
            await asyncio.sleep(0.005)
        token.trip("stop")
        return await task

    done = run(main())
    assert done.cancelled and run(none_left("987.02"))


# -- through the built-in engine ---------------------------------------------------------------

HOLES = {
    "heredoc substitution": "cat <<EOF > notes.txt\n$(rm -rf ../outside; touch ../pwned)\nEOF",
    "find -exec rm": "find ../outside -name secret.txt -exec rm {} \\;",
    "git apply --unsafe-paths": "printf 'diff --git a/../outside/pwned b/../outside/pwned\\n"
                                "new file mode 100644\\n--- /dev/null\\n+++ b/../outside/pwned\\n"
                                "@@ -0,0 +1 @@\\n+pwned\\n' > p.diff && "
                                "git apply --unsafe-paths p.diff",
}


@pytest.mark.parametrize("hole", sorted(HOLES))
def test_the_classifiers_known_holes_do_no_harm_when_auto_approved(ws, hole) -> None:
    command = HOLES[hole]
    done = sandboxed(command, ws)  # the sandbox alone stops it...
    assert intact(ws) and not (ws.parent / "pwned").exists(), done.output
    # ...and so when auto-approved: as it is (the classifier may call it tier 4 by now), and
    # from a script the model wrote (a classifier cannot read that: tier 3, it runs).
    (ws / "hole.sh").write_text(command + "\n")
    for line in (command, "sh hole.sh"):
        session = run_steps(ws, [{"tool": "shell", "input": {"command": line}},
                                 {"finish": "done"}], auto_approve=True)
        assert intact(ws) and not (ws.parent / "pwned").exists()
        for start in of_type(session, "tool_start"):  # what ran, ran in the sandbox
            assert start.sandbox == "workspace-write"
    (ran,) = tool_ends(session)  # (find exits 0 when what it ran failed: no verdict then)
    assert "Read-only file system" in ran.output and (ran.ok or ran.sandbox_blocked)


WRITE_OUTSIDE = "sh write.sh"  # tier 3: what a script does, no classifier can tell


class Recorder:
    """A model that runs `decisions` in turn and records what it was told."""

    name = "recorder"

    def __init__(self, *decisions: dict[str, Any]) -> None:
        self.decisions = list(decisions)
        self.requests: list[Any] = []

    async def respond(self, request: Any) -> Any:
        self.requests.append(request)
        yield Usage(1, 1)
        yield RawDecision(self.decisions.pop(0))


def test_a_blocked_command_is_shown_and_the_model_is_told_how_to_ask(ws) -> None:
    (ws / "write.sh").write_text("touch ../outside/new\n")
    model = Recorder({"action": "tool", "tool": "shell",  # tier 3: the classifier sees no path
                      "input": {"command": WRITE_OUTSIDE}},
                     {"action": "finish", "result": "done"})
    session = Session(BuiltinRunner(model, cwd=ws), TaskState(task="t"), unattended=True,
                      auto_approve=True)
    run(session.run())
    (start,) = of_type(session, "tool_start")
    (done,) = tool_ends(session)
    where = f"{os.path.realpath(ws.parent)}/outside/new"
    assert (start.sandbox, start.sandbox_network) == ("workspace-write", False)
    assert done.sandbox_blocked == f"write to {where}"
    assert f"blocked by sandbox: write to {where}" in done.error
    told = model.requests[1].transcript[-1]
    assert f"blocked by sandbox: write to {where}" in told.error
    assert '"sandbox": false' in told.error and "asked every time" in told.error
    shell = next(t for t in model.requests[0].tools if t.name == "shell")
    assert shell.optional["sandbox"] is bool and "`sandbox: false`" in shell.description


def _outside_run(ws: Path, allow: bool) -> Session:
    steps = [{"tool": "shell", "input": {"command": "touch ../outside/made", "sandbox": False}},
             {"finish": "done"}]
    runner = BuiltinRunner(ScriptedModel(load(scenario(steps)), speed=0), cwd=ws)
    session = Session(runner, TaskState(task="t"))

    async def main() -> None:
        async def answer() -> None:
            async for event in session.events():
                if event.type == "approval_requested":
                    session.resolve_approval(event.approval_id, allow=allow)
        watcher = asyncio.ensure_future(answer())
        await session.run()
        await watcher

    run(main())
    return session


def test_a_run_outside_the_sandbox_is_a_tier_4_ask_showing_the_command(ws) -> None:
    session = run_steps(ws, [{"tool": "shell", "input": {"command": "touch ../outside/made",
                                                         "sandbox": False}},
                             {"finish": "done"}], auto_approve=True)
    (ask,) = of_type(session, "approval_requested")
    assert ask.tier == 4 and "OUTSIDE the sandbox" in ask.reason
    assert ask.tool_input == {"command": "touch ../outside/made", "sandbox": False}
    assert not of_type(session, "approval_resolved")[0].allowed and intact(ws)
    session = _outside_run(ws, allow=True)  # a human says yes: it runs outside
    (start,) = of_type(session, "tool_start")
    assert start.sandbox == "bypassed" and (ws.parent / "outside" / "made").exists()
    assert of_type(session, "approval_resolved")[0].remember is False


def test_checks_run_in_the_sandbox_too(ws) -> None:
    (ws / "write.sh").write_text("touch ../outside/new\n")
    steps = [{"tool": "switch_to_editing", "input": {"reason": "fix"}},
             {"tool": "declare_verification", "input": {"checks": [
                 {"name": "inside", "command": "touch made"},
                 {"name": "outside", "command": WRITE_OUTSIDE}]}},
             {"finish": "done"}]
    session = run_steps(ws, steps, auto_approve=True)
    starts, ends = of_type(session, "verification_start"), of_type(session, "verification_end")
    assert [s.sandbox for s in starts] == ["workspace-write"] * 2
    assert [e.passed for e in ends] == [True, False]
    assert ends[1].sandbox_blocked and "blocked by sandbox" in ends[1].output
    assert end(session).status == "failed" and intact(ws)


def test_an_auto_approved_demo_runs_its_commands_in_the_sandbox(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["demo", "--headless", "--auto-approve", "--speed", "0"])
    shells = [line for line in result.output.splitlines()
              if line.startswith("tool ▶") and " shell " in line]
    assert shells and all("[tier 3, sandbox]" in line for line in shells), result.output
    assert "warning" not in result.output


# -- ACP terminals -------------------------------------------------------------------------------

def _acp(ws: Path, request: dict[str, Any], *, allow: bool = True) -> tuple[str, list]:
    runner = AcpRunner(agent_argv(), cwd=ws)

    async def main() -> tuple[Any, list]:
        try:
            return await drive(runner, f"terminal-json {json.dumps(request)}",
                               ws.parent / "acp.jsonl", answer=approve(allow))
        finally:
            await runner.close()

    state, events = run(main())
    return state.result or "", events


def test_an_acp_terminal_runs_in_the_sandbox_and_the_agent_is_told(ws) -> None:
    reply, events = _acp(ws, {"command": "sh", "args": ["-c", "touch made && touch "
                                                        "../outside/new"]})
    start = next(e for e in events_of(events, "tool_start") if e.tool == "terminal")
    done = next(e for e in events_of(events, "tool_end") if e.tool == "terminal")
    assert start.sandbox == "workspace-write" and done.sandbox_blocked.startswith("write to")
    assert "blocked by sandbox" in done.error and "COCKPIT_SANDBOX=off" in reply
    assert (ws / "made").exists() and intact(ws)
    # Where its terminals run is told once the agent answered (its `agent_ready`).
    assert events_of(events, "agent_ready")[0].sandbox == "workspace-write"


def test_an_acp_terminal_outside_the_sandbox_is_a_tier_4_ask(ws) -> None:
    request = {"command": "touch", "args": ["../outside/made"],
               "env": [{"name": "COCKPIT_SANDBOX", "value": "off"}]}
    _reply, events = _acp(ws, request, allow=False)
    (ask,) = events_of(events, "approval_requested")
    assert ask.tier == 4 and "OUTSIDE the sandbox" in ask.reason and intact(ws)
    _reply, events = _acp(ws, request, allow=True)
    start = next(e for e in events_of(events, "tool_start") if e.tool == "terminal")
    assert start.sandbox == "bypassed" and (ws.parent / "outside" / "made").exists()


def test_an_auto_approved_model_run_runs_its_commands_in_the_sandbox(tmp_path,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    workspace = make_workspace(tmp_path)
    with FakeOpenAI(sample_fix_replies(sys.executable)) as fake:
        result = CliRunner().invoke(app, [
            "run", "Fix the failing test", "--model", "fake-model", "--base-url", fake.url,
            "--cwd", str(workspace), "--headless", "--auto-approve"])
    assert result.exit_code == 0, result.output
    shells = [line for line in result.output.splitlines()
              if line.startswith("tool ▶") and " shell " in line]
    assert shells and all("[tier 3, sandbox]" in line for line in shells)
    assert "check ✔   unit tests" in result.output  # the checks pass in the sandbox


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the sandbox as another user")
def test_the_same_command_line_works_unprivileged_in_a_user_namespace() -> None:
    base = Path(tempfile.mkdtemp(prefix="cockpit-unprivileged-"))
    try:
        ws, tmp = base / "ws", base / "tmp"
        for folder in (base, ws, tmp):
            folder.mkdir(exist_ok=True)
            folder.chmod(0o777)
        args = bwrap_argv(HERE.backend, ["sh", "-c", "touch made && id -u && touch /etc/x"],
                          mode="workspace-write", network=False, workspace=str(ws),
                          cwd=str(ws), tmpdir=str(tmp))
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               *args], capture_output=True, text=True, timeout=60, check=False)
        assert (ws / "made").exists() and done.stdout.strip() == "65534", done.stderr
        assert done.returncode != 0 and "Read-only file system" in done.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
