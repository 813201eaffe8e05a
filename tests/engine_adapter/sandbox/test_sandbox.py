"""The sandbox's parts that need no sandbox to test: settings and labels, the bubblewrap command
line (order is the policy), the Seatbelt profile text, telling a blocked command from its
output, the approval policy for commands without their sandbox, the fallback when `bwrap` is
missing or cannot make namespaces, config and CLI options, and the views."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.builtin_runs import of_type, run_steps, tool_ends
from support.event_loop import run
from support.steps import StepRunner
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.config import load_config
from cockpit.headless import format_event
from engine_adapter import ApprovalGrant, Session, TaskState, parse_event
from engine_adapter.engines.builtin.models.openai.schema import function_tools
from engine_adapter.engines.builtin.tools import TOOLS
from engine_adapter.events import ToolEnd, ToolStart
from engine_adapter.sandbox import (
    MODES,
    OFF,
    UNAVAILABLE,
    Sandbox,
    SandboxSettings,
    blocked_by_sandbox,
    default_settings,
    sandbox_label,
)
from engine_adapter.sandbox.bwrap import bwrap_argv
from engine_adapter.sandbox.seatbelt import seatbelt_argv, seatbelt_profile
from engine_adapter.view import RunFold

# -- settings and labels ----------------------------------------------------------------------


def test_settings_take_only_the_known_modes() -> None:
    assert [SandboxSettings(mode=m).mode for m in MODES] == list(MODES)
    for bad in ("", "workspace", "OFF", "none", "danger-full-access"):
        with pytest.raises(ValueError, match="workspace-write, read-only, off"):
            SandboxSettings(mode=bad)


@pytest.mark.parametrize(("state", "network", "label"), [
    ("workspace-write", False, "sandbox"),
    ("workspace-write", True, "sandbox +network"),
    ("read-only", False, "sandbox read-only"),
    ("off", None, "no sandbox (off)"),
    ("unavailable", None, "no sandbox (unavailable)"),
    ("bypassed", None, "no sandbox (approved)"),
    (None, None, ""),
    ("\x1b[2J evil \u202e", None, "no sandbox (unknown)"),  # a journal's words never echo
])
def test_labels(state, network, label) -> None:
    assert sandbox_label(state, network) == label


# -- the bubblewrap command line ----------------------------------------------------------------

def _index(args: list[str], *seq: str) -> int:
    for i in range(len(args) - len(seq) + 1):
        if args[i:i + len(seq)] == list(seq):
            return i
    raise AssertionError(f"{seq} not in {args}")


def test_bwrap_mounts_come_in_the_order_that_makes_the_policy() -> None:
    args = bwrap_argv("/usr/bin/bwrap", ["sh", "-c", "x"], mode="workspace-write",
                      network=False, workspace="/tmp/ws", cwd="/tmp/ws/sub",
                      tmpdir="/tmp/cockpit-sandbox-1", read_only=["/tmp/ws/.git/hooks"])
    root = _index(args, "--ro-bind", "/", "/")
    ws = _index(args, "--bind", "/tmp/ws", "/tmp/ws")
    hooks = _index(args, "--ro-bind", "/tmp/ws/.git/hooks", "/tmp/ws/.git/hooks")
    tmp = _index(args, "--bind", "/tmp/cockpit-sandbox-1", "/tmp/cockpit-sandbox-1")
    assert root < ws < hooks < tmp  # a later mount covers an earlier one
    assert args[-4:] == ["--", "sh", "-c", "x"] and _index(args, "--chdir", "/tmp/ws/sub")
    for flag in ("--cap-drop", "--unshare-pid", "--die-with-parent", "--unshare-net"):
        assert flag in args
    assert _index(args, "--cap-drop", "ALL") and _index(args, "--dev", "/dev")
    # Never a tmpfs (it hides a workspace under /tmp), never a new session (it escapes the
    # process group the runner kills).
    assert "--tmpfs" not in args and "--new-session" not in args


def test_bwrap_read_only_mode_binds_no_workspace_and_network_can_be_allowed() -> None:
    args = bwrap_argv("bwrap", ["true"], mode="read-only", network=True, workspace="/w",
                      cwd="/w", tmpdir="/t", read_only=["/w/.git/hooks"])
    assert "/w" not in args[:_index(args, "--chdir")] or args.count("/w") == 1
    assert "--unshare-net" not in args and "/w/.git/hooks" not in args


# -- macOS: the profile, as text -----------------------------------------------------------------

def test_seatbelt_profile_denies_writes_but_the_writable_places_and_the_network() -> None:
    text = seatbelt_profile(mode="workspace-write", network=False, workspace='/Users/a "b"\\c',
                            tmpdir="/private/tmp/x", read_only=["/Users/a/.git/hooks"])
    lines = text.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    assert '(subpath "/Users/a \\"b\\"\\\\c")' in text  # quotes and backslashes escaped
    assert '(subpath "/private/tmp/x")' in text
    assert text.index("(deny file-write*\n") > text.index("(allow file-write*")
    assert "(deny network*)" in text
    assert "(deny network*)" not in seatbelt_profile(mode="read-only", network=True,
                                                     workspace="/w", tmpdir="/t")
    assert '"/w"' not in seatbelt_profile(mode="read-only", network=False, workspace="/w",
                                          tmpdir="/t")


def test_seatbelt_keeps_in_step_no_unix_socket_and_masked_reads() -> None:
    masked = ["/Users/a/.ssh", "/Users/a/.netrc", "/w/.git"]
    for network in (False, True):
        text = seatbelt_profile(mode="workspace-write", network=network, workspace="/w",
                                tmpdir="/t", read_only=["/w/.git"], masked=masked)
        assert "(deny network* (remote unix-socket))" in text  # with the network on, too
        assert "(deny network-bind (local unix-socket))" in text
        deny = text.index("(deny file-read* file-write*")
        assert deny > text.index("(allow file-write*")  # later wins: the mask holds
        assert all(f'(subpath "{path}")' in text[deny:] for path in masked)
    argv = seatbelt_argv("/usr/bin/sandbox-exec", ["ls"], mode="workspace-write", network=False,
                         workspace="/w", tmpdir="/t", masked=masked)
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-1] == "ls"
    assert '(subpath "/Users/a/.ssh")' in argv[2]


# -- what the sandbox stopped ---------------------------------------------------------------------

WS = "/tmp/ws"


@pytest.mark.parametrize(("output", "network", "blocked"), [
    ("touch: cannot touch '/etc/x': Read-only file system", False, "write to /etc/x"),
    ("/bin/sh: 1: cannot create /etc/x: Read-only file system", False, "write to /etc/x"),
    ("mkdir: cannot create directory ‘/opt/new’: Read-only file system", False,
     "write to /opt/new"),
    ("OSError: [Errno 30] Read-only file system: '/usr/lib/x.pyc'", False,
     "write to /usr/lib/x.pyc"),
    ("error: unable to write file '../outside/pwned' mode 100644: Read-only file system", False,
     "write to /tmp/outside/pwned"),
    ("rm: cannot remove '/etc/hostname': Read-only file system", False,
     "delete /etc/hostname"),
    ("cp: cannot create regular file '~/.ssh/authorized_keys': Permission denied", False,
     f"write to {os.path.expanduser('~')}/.ssh/authorized_keys"),
    ("something: Read-only file system", False, "a write outside the writable places"),
    ("curl: (6) Could not resolve host: example.com", False, "network"),
    ("pip: Temporary failure in name resolution", False, "network"),
    ("Error: getaddrinfo ENOTFOUND registry.npmjs.org", False, "network"),
    ("connect: Network is unreachable", False, "network"),
    # not the sandbox's doing:
    ("curl: (6) Could not resolve host: example.com", True, None),
    ("touch: cannot touch 'mine.txt': Permission denied", False, None),
    (f"touch: cannot touch '{WS}/locked': Permission denied", False, None),
    ("FAILED (failures=1)", False, None),
    ("", False, None),
])
def test_blocked_by_sandbox(output, network, blocked) -> None:
    found = blocked_by_sandbox(f"some output\n{output}\nmore", cwd=WS,
                               writable=[WS, "/tmp/cockpit-sandbox-1"], network=network)
    assert found == blocked


@given(st.text(max_size=3000))
def test_blocked_by_sandbox_on_any_text_is_short_printable_or_none(text: str) -> None:
    found = blocked_by_sandbox(text + "\nRead-only file system", cwd=WS, writable=[WS],
                               network=False)
    assert found is not None and len(found) <= 320 and found.isprintable()


# -- the approval policy for a command without its sandbox ------------------------------------

def _policy(sandboxed, *, tier=3, grants=(), **session) -> tuple[bool, list[str]]:
    result: list[bool] = []

    async def step(r: StepRunner) -> None:
        result.append(await r.approval_controller.request_approval(
            "c1", "shell", "runs ls", {"command": "ls"}, tier=tier, sandboxed=sandboxed))

    s = Session(StepRunner(step), TaskState(task="t"), grants=list(grants), **session)
    run(s.run())
    return result[0], [e.type for e in s.history if e.type.startswith("approval")]


def test_a_command_without_its_sandbox_is_never_auto_approved_above_tier_2() -> None:
    auto = {"unattended": True, "auto_approve": True}
    assert _policy(True, **auto) == (True, ["approval_requested", "approval_resolved"])
    assert _policy(None, **auto)[0] is True
    assert _policy(False, **auto)[0] is False
    assert _policy(False, tier=2, **auto)[0] is True


def test_grants_do_not_cover_a_command_without_its_sandbox() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=3)
    assert _policy(True, grants=[grant], unattended=True) == (True, ["approval_resolved"])
    assert _policy(None, grants=[grant], unattended=True)[0] is True
    # Without it, the grant is not used: the ask is shown (and, unattended, denied).
    assert _policy(False, grants=[grant], unattended=True) == (
        False, ["approval_requested", "approval_resolved"])


def test_a_policys_allow_does_not_cover_a_command_without_its_sandbox_but_its_deny_does() -> None:
    def allow(_request):
        return "allow"

    def deny(_request):
        return "deny"

    asked = ["approval_requested", "approval_resolved"]
    unasked = ["approval_resolved"]
    assert _policy(True, approval_policy=allow, unattended=True) == (True, unasked)
    assert _policy(None, approval_policy=allow, unattended=True) == (True, unasked)
    # The allow was written for commands that run sandboxed: without it, the ask is shown.
    assert _policy(False, approval_policy=allow, unattended=True) == (False, asked)
    # A refusal still answers at once, sandbox or not.
    for sandboxed in (True, None, False):
        assert _policy(sandboxed, approval_policy=deny, unattended=True) == (False, unasked)


# -- no bwrap here, or one that cannot work --------------------------------------------------------

def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH like this one, without `bwrap`: every other program linked in one folder."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            link = folder / name
            if name != "bwrap" and not link.exists() and not link.is_symlink():
                link.symlink_to(os.path.join(directory, name))
    return str(folder)


def test_without_bwrap_the_sandbox_is_unavailable_and_says_how_to_fix_it(tmp_path) -> None:
    sandbox = Sandbox(SandboxSettings(), workspace=tmp_path, path=path_without_bwrap(tmp_path))
    assert sandbox.state == UNAVAILABLE and not sandbox.active
    assert "apt-get install bubblewrap" in sandbox.problem
    warning = sandbox.warning()
    assert "tiers 1-2" in warning and "--sandbox off" in warning and "bwrap" in warning
    assert sandbox.approval_flag() is False  # the policy learns it: never a silent downgrade
    wrapped = sandbox.wrap(["true"], cwd=tmp_path, env={"A": "1"})
    assert wrapped.argv == ["true"] and wrapped.state == UNAVAILABLE and not wrapped.sandboxed


def test_off_is_the_users_choice_not_a_downgrade(tmp_path) -> None:
    sandbox = Sandbox(SandboxSettings(mode="off"), workspace=tmp_path,
                      path=path_without_bwrap(tmp_path))
    assert sandbox.state == OFF and sandbox.approval_flag() is None and sandbox.warning() is None


def test_a_bwrap_that_cannot_make_namespaces_names_the_fix(tmp_path) -> None:
    folder = tmp_path / "fake"
    folder.mkdir()
    fake = folder / "bwrap"  # what bwrap says where user namespaces are not allowed
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\n"
                    "exit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "ws").mkdir()  # (a bwrap in the workspace itself would not even be tried)
    sandbox = Sandbox(SandboxSettings(), workspace=tmp_path / "ws", path=str(folder))
    assert sandbox.state == UNAVAILABLE
    assert "uid map" in sandbox.problem and "apparmor_restrict_unprivileged_userns" in \
        sandbox.problem


def test_without_bwrap_auto_approve_runs_no_command_and_asks_with_the_reason(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    ws = tmp_path / "ws"
    ws.mkdir()
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=3)
    session = run_steps(ws, [{"tool": "shell", "input": {"command": "ls"}},
                             {"finish": "done"}], auto_approve=True, grants=[grant],
                        engine={"sandbox": SandboxSettings()})
    (ask,) = of_type(session, "approval_requested")  # the grant for `ls` is not used
    assert "no sandbox on this machine" in ask.reason
    (answer,) = of_type(session, "approval_resolved")
    assert answer.via == "auto" and not answer.allowed and tool_ends(session) == []
    start = of_type(session, "agent_start")[0]
    assert start.sandbox == UNAVAILABLE and "bubblewrap" in start.sandbox_note


# -- config and command line ------------------------------------------------------------------

def test_config_sandbox_table(tmp_path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[sandbox]\nmode = "read-only"\nnetwork = true\n')
    config = load_config(path)
    assert (config.sandbox_mode, config.sandbox_network, config.problems) == (
        "read-only", True, [])
    path.write_text('[sandbox]\nmode = "yolo"\nnetwork = "yes"\nextra = 1\n')
    config = load_config(path)
    assert (config.sandbox_mode, config.sandbox_network) == (None, None)
    assert len(config.problems) == 3 and "workspace-write, read-only, off" in config.problems[1]


def test_a_bad_sandbox_mode_is_one_clear_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["demo", "--headless", "--sandbox", "yolo"])
    assert result.exit_code == 2
    assert "--sandbox 'yolo': use one of workspace-write, read-only, off" in result.output


def test_demo_with_sandbox_off_says_so_on_every_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["demo", "--headless", "--auto-approve", "--speed", "0",
                                      "--sandbox", "off"])
    shells = [line for line in result.output.splitlines()
              if line.startswith("tool ▶") and " shell " in line]
    assert shells and all("no sandbox (off)" in line for line in shells)
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("start"))
    assert lines[start + 1].strip().endswith("· no sandbox (off)")  # the line under the start


# -- the views ------------------------------------------------------------------------------

def test_sandbox_fields_survive_the_journal_and_reach_the_fold_and_headless() -> None:
    start = ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=3,
                      sandbox="workspace-write", sandbox_network=False)
    done = ToolEnd(call_id="c1", tool="shell", ok=False, error="exit 1; blocked by sandbox: "
                   "write to /etc/x", sandbox="workspace-write", sandbox_blocked="write to /etc/x")
    events = [parse_event(e.model_dump_json()) for e in (start, done)]
    assert events[1].sandbox_blocked == "write to /etc/x"
    fold = RunFold()
    for event in events:
        fold.apply(event)
    row = fold.view.tool_calls["c1"]
    assert (row.sandbox, row.sandbox_blocked) == ("workspace-write", "write to /etc/x")
    assert "[tier 3, sandbox]" in format_event(events[0])[1]
    old = parse_event({"type": "tool_start", "call_id": "c2", "tool": "shell"})  # old journal
    assert old.sandbox is None and "[tier 1]" in format_event(old)[1]


def test_tool_events_of_calls_that_run_no_command_carry_no_sandbox(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("x")
    session = run_steps(tmp_path, [{"tool": "read_file", "input": {"path": "a.txt"}},
                                   {"finish": "done"}])
    assert [e.sandbox for e in of_type(session, "tool_start")] == [None]


def test_the_sandbox_check_runs_off_the_event_loop(tmp_path) -> None:
    sandbox = Sandbox(SandboxSettings(), workspace=tmp_path, path=path_without_bwrap(tmp_path))
    assert asyncio.run(sandbox.acheck()) is sandbox and sandbox.state == UNAVAILABLE


def test_a_real_model_sees_the_sandbox_input_in_the_shell_tools_schema() -> None:
    shell = next(t for t in function_tools(TOOLS.values()) if t["function"]["name"] == "shell")
    assert shell["function"]["parameters"]["properties"]["sandbox"] == {"type": "boolean"}
    assert "sandbox: false" in shell["function"]["description"]


def test_a_sandbox_input_that_is_not_a_boolean_is_refused(tmp_path) -> None:
    session = run_steps(tmp_path, [{"tool": "shell", "input": {"command": "ls",
                                                              "sandbox": "no"}},
                                   {"finish": "done"}], auto_approve=True)
    (error,) = of_type(session, "decision_error")
    assert "sandbox" in error.error and not of_type(session, "approval_requested")


def test_the_run_context_passes_sandboxed_only_to_a_controller_that_takes_it() -> None:
    from engine_adapter.context import RunContext

    class Minimal:  # the CONTRACT's controller: no `sandboxed`
        def __init__(self) -> None:
            self.calls: list[dict] = []

        async def request_approval(self, approval_id, tool, reason, tool_input, *, tier=3):
            self.calls.append({"tier": tier})
            return True

    class Aware(Minimal):
        async def request_approval(self, approval_id, tool, reason, tool_input, *, tier=3,
                                   sandboxed=None):
            self.calls.append({"tier": tier, "sandboxed": sandboxed})
            return False

    class Token:
        cancelled, reason = False, None

    for controller, answer, seen in ((Minimal(), True, {"tier": 3}),
                                     (Aware(), False, {"tier": 3, "sandboxed": False})):
        ctx = RunContext(StepRunner(), controller, Token())
        assert run(ctx.request_approval("c", "shell", "r", {}, sandboxed=False)) is answer
        assert controller.calls == [seen]


def test_sandbox_options_with_a_users_engine_are_one_clear_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["run", "t", "--engine", "x:y", "--headless",
                                      "--sandbox", "off"])
    assert result.exit_code == 2 and "your --engine runs its own commands" in result.output


def test_status_line_and_row_show_the_sandbox_and_its_absence_stands_out() -> None:
    from textual.app import App

    from cockpit.widgets import StatusLine, Transcript
    from engine_adapter.events import AgentStart, stamped
    from engine_adapter.view import fold_events

    def view(engine: str, state: str):
        events = [AgentStart(task="t", engine=engine, sandbox=state),
                  ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=3,
                            sandbox=state)]
        return fold_events([stamped(e, "s", i, 1000.0 + i) for i, e in enumerate(events)])

    class Host(App):
        def compose(self):
            yield StatusLine(id="status")
            yield Transcript(id="transcript")

    async def shown(v) -> tuple[str, str]:
        app = Host()
        async with app.run_test(size=(160, 20)) as pilot:
            app.query_one(StatusLine).show(v)
            transcript = app.query_one(Transcript)
            transcript.show(v)
            await pilot.pause()
            row = "".join(seg.text for strip in transcript._strips(
                v.tool_calls["c1"].index) for seg in strip)
            return app.query_one(StatusLine).render().plain, row

    status, row = run(shown(view("builtin", "workspace-write")))
    assert "│  sandbox  │" in status and "shell T3 sandbox" in row
    status, row = run(shown(view("builtin", "off")))
    assert "⚠ no sandbox (off)" in status and "shell T3 no sandbox (off)" in row
    status, _ = run(shown(view("acp:x", "unavailable")))
    assert "⚠ terminals: no sandbox (unavailable)" in status


def test_a_missing_sandbox_is_said_with_its_fix_at_the_top_of_the_run_in_every_view() -> None:
    """The start warning printed before a TUI is hidden by it: the run itself says it too."""
    from textual.app import App

    from cockpit.widgets import Transcript
    from engine_adapter.events import AgentStart, stamped
    from engine_adapter.view import NoticeItem, describe, fold_events

    note = "bwrap (bubblewrap) not found on PATH; install bubblewrap: sudo apt-get install x"
    hostile = "\x1b[2J[red]boom[/red]\x07 " + "long " * 2_000
    for state, wanted in ((UNAVAILABLE, True), ("workspace-write", False), (OFF, False),
                          (None, False)):
        start = stamped(AgentStart(task="t", engine="builtin", sandbox=state,
                                   sandbox_note=note if state == UNAVAILABLE else None),
                        "s", 0, 1000.0)
        view = fold_events([parse_event(start.model_dump_json())])
        notices = [i for i in view.items if isinstance(i, NoticeItem) and i.kind == "sandbox"]
        details = describe(start).details
        assert bool(notices) == wanted and any("no sandbox:" in d for d in details) == wanted
        if wanted:
            (notice,) = notices
            assert notice.level == "warning" and notice.index == 1  # right under the task
            assert note in notice.text and "every command asks" in notice.text
            assert "--sandbox off" in notice.text
            assert any(note in d for d in details)  # headless prints it under the task

    class Host(App):
        def compose(self):
            yield Transcript(id="transcript")

    async def row_of(v) -> str:
        app = Host()
        async with app.run_test(size=(120, 20)) as pilot:
            transcript = app.query_one(Transcript)
            transcript.show(v)
            await pilot.pause()
            return "\n".join("".join(seg.text for seg in strip)
                             for strip in transcript._strips(1))

    start = stamped(AgentStart(task="t", engine="builtin", sandbox=UNAVAILABLE,
                               sandbox_note=hostile), "s", 0, 1000.0)
    row = run(row_of(fold_events([start])))
    assert "⚠ no sandbox:" in row and "[red]boom[/red]" in row  # markup shown, not applied
    assert "\x1b" not in row and "\x07" not in row and len(row) < 120 * 7


def test_cockpit_sandbox_names_the_mode_when_nothing_else_does(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_SANDBOX", "read-only")
    assert default_settings() == SandboxSettings(mode="read-only")
    assert Sandbox(workspace=tmp_path).settings.mode == "read-only"
    assert Sandbox(SandboxSettings(), workspace=tmp_path).settings.mode == "workspace-write"
    monkeypatch.setenv("COCKPIT_SANDBOX", "yolo")
    with pytest.raises(ValueError, match="COCKPIT_SANDBOX='yolo'"):
        default_settings()
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["demo", "--headless"])
    assert result.exit_code == 2 and "COCKPIT_SANDBOX='yolo': use one of" in result.output
    monkeypatch.setenv("COCKPIT_SANDBOX", "off")  # the flag wins over the variable
    result = CliRunner().invoke(app, ["demo", "--headless", "--speed", "0", "--auto-approve",
                                      "--sandbox", "yolo"])
    assert result.exit_code == 2 and "--sandbox 'yolo'" in result.output


def test_without_bwrap_the_demo_says_so_at_start_and_asks_for_every_command(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path))
    monkeypatch.delenv("COCKPIT_SANDBOX", raising=False)
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["demo", "--headless", "--auto-approve", "--speed", "0"])
    lines = result.output.splitlines()
    warning = next(line for line in lines if line.startswith("cockpit: warning: no sandbox"))
    assert "apt-get install bubblewrap" in warning and "--sandbox off" in warning
    in_run = [line for line in lines if "⚠ no sandbox: bwrap (bubblewrap) not found" in line]
    assert in_run and "apt-get install bubblewrap" in in_run[0]  # and in the run's own lines
    assert "but no command (there is no sandbox)" in result.output
    asks = [line for line in lines if line.startswith("ask ?") and " shell [tier" in line]
    assert asks and all("no sandbox on this" in line for line in asks)
    assert not [line for line in lines if line.startswith("tool ▶") and " shell [" in line]
    assert result.exit_code == 1  # no plan could be declared: the run ends failed, cleanly


def test_both_reports_say_where_each_command_ran(tmp_path) -> None:
    from cockpit.export import export_journal
    from engine_adapter import JsonlEventJournal
    from engine_adapter.events import AgentEnd, AgentStart, stamped

    events = [AgentStart(task="t", engine="builtin", sandbox="workspace-write"),
              ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=3,
                        sandbox="workspace-write"),
              ToolEnd(call_id="c1", tool="shell", ok=True, output="a\n",
                      sandbox="workspace-write"),
              ToolStart(call_id="c2", tool="shell", tool_input={"command": "x"}, tier=4,
                        sandbox="bypassed"),
              ToolEnd(call_id="c2", tool="shell", ok=True, sandbox="bypassed"),
              AgentEnd(status="completed", result="done")]
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path) as journal:
        for i, event in enumerate(events):
            journal.write(stamped(event, "s", i, 1000.0 + i))
    markdown = export_journal(path, "markdown").text
    assert "(tier 3, sandbox)" in markdown and "(tier 4, no sandbox (approved))" in markdown
    html = export_journal(path, "html").text
    assert "(tier 3, sandbox)" in html and "(tier 4, no sandbox (approved))" in html
