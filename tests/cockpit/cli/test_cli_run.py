"""`cockpit demo` and `cockpit run --engine` from the command line (typer's CliRunner: stdout is
not a terminal, so the headless view is used and no human answers)."""

from __future__ import annotations

import sys
import tempfile
import textwrap

import pytest
from support.event_samples import AGENT_DIALOGUE, AGENT_SESSION_TYPES, MODE_TYPES
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import read_journal
from engine_adapter.events import EVENT_TYPES


@pytest.fixture(autouse=True)
def cockpit_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def journal_line(output: str) -> str:
    (line,) = [ln for ln in output.splitlines() if ln.startswith("journal: ")]
    return line.removeprefix("journal: ")


def one_line_error(result, text: str) -> None:
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith("cockpit: error: ") and text in result.output
    assert "Traceback" not in result.output


def test_demo_headless_auto_approve_completes(tmp_path) -> None:
    result = cli("demo", "--headless", "--auto-approve", "--speed", "0")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("demo workspace: ")
    assert "\nend       completed\n          reply:\n" in result.output
    journal = journal_line(result.output)
    assert journal.startswith(str(tmp_path / "home" / "data" / "journals"))
    types = {e.type for e in read_journal(journal)}
    assert types == set(EVENT_TYPES) - {"cancellation_observed", "model_retry",
                                        *AGENT_DIALOGUE, *AGENT_SESSION_TYPES,
                                        "workspace_rewound",  # only a rewind writes that
                                        *MODE_TYPES}  # the demo runs in the default mode


def test_demo_without_a_human_denies_and_fails(tmp_path) -> None:
    path = tmp_path / "mine.jsonl"
    result = cli("demo", "--speed", "0", "--journal", str(path))
    assert result.exit_code == 1
    assert "denied automatically" in result.output
    assert "\nend       failed: " in result.output
    assert journal_line(result.output) == str(path)
    assert list(read_journal(path))[-1].status == "failed"


def test_demo_errors_are_one_line_and_leave_nothing_behind(tmp_path) -> None:
    one_line_error(cli("demo", "--journal", str(tmp_path)), "is a directory")
    (tmp_path / "a-file").write_text("")
    one_line_error(cli("demo", "--journal", str(tmp_path / "a-file" / "x.jsonl")),
                   "is not a directory")
    one_line_error(cli("demo", "--speed", "-1"), "--speed")
    one_line_error(cli("demo", "--approval-timeout", "-1"), "--approval-timeout")
    assert not list(tmp_path.glob("cockpit-demo-*"))


ENGINE = '''
from engine_adapter import AgentEnd, AgentStart, ToolEnd, ToolStart


class Echo:
    def __init__(self, cwd, task, ending="completed"):
        self.cwd, self.task, self.ending = cwd, task, ending
        self.event_sink = self.approval_controller = self.cancel_token = None

    async def run(self, state):
        self.event_sink.emit(AgentStart(task=state.task, engine="echo", cwd=self.cwd))
        ok = await self.approval_controller.request_approval(
            "c1", "shell", "echo it", {"command": "echo hi"}, tier=3)
        if ok:
            self.event_sink.emit(ToolStart(call_id="c1", tool="shell",
                                           tool_input={"command": "echo hi"}, tier=3))
            self.event_sink.emit(ToolEnd(call_id="c1", tool="shell", ok=True, output="hi"))
        self.event_sink.emit(AgentEnd(status=self.ending, result=f"{self.task} in {self.cwd}"))
        return state


def make(cwd, task):
    return Echo(cwd, task)


def make_failing(cwd, task):
    return Echo(cwd, task, ending="failed")


def not_a_runner(cwd, task):
    return 42


def broken(cwd, task):
    raise RuntimeError("no engine today")
'''


@pytest.fixture
def engine_module(tmp_path, monkeypatch, request):
    name = f"engine_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(ENGINE))
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


def test_run_an_engine_from_module_and_factory(tmp_path, engine_module) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = cli("run", "say hi", "--engine", f"{engine_module}:make", "--cwd", str(work),
                 "--auto-approve")
    assert result.exit_code == 0, result.output
    assert f"end       completed\n          reply:\n          say hi in {work}\n" in result.output
    events = list(read_journal(journal_line(result.output)))
    # no turn_start from this engine: the run's end checkpoint only (`cockpit run` takes them)
    assert [e.type for e in events] == ["agent_start", "approval_requested", "approval_resolved",
                                        "tool_start", "tool_end", "checkpoint_taken", "agent_end"]
    assert events[2].allowed and events[2].via == "auto"


def test_run_exit_code_follows_the_status(engine_module) -> None:
    result = cli("run", "x", "--engine", f"{engine_module}:make_failing")
    assert result.exit_code == 1
    assert "tool ▶" not in result.output  # unattended: the ask was denied


def test_run_errors_are_one_line(tmp_path, engine_module) -> None:
    one_line_error(cli("run", "x"), "needs something to drive it")
    one_line_error(cli("run", "x", "--engine", "nocolon"), "expected module:factory")
    one_line_error(cli("run", "x", "--engine", "no_such_module_xyz:make"),
                   "no module named 'no_such_module_xyz'")
    one_line_error(cli("run", "x", "--engine", f"{engine_module}:missing"),
                   "has no attribute 'missing'")
    one_line_error(cli("run", "x", "--engine", f"{engine_module}:not_a_runner"),
                   "not an AgentRunner")
    one_line_error(cli("run", "x", "--engine", f"{engine_module}:broken"),
                   "RuntimeError: no engine today")
    one_line_error(cli("run", "x", "--engine", f"{engine_module}:make", "--cwd",
                       str(tmp_path / "nowhere")), "is not a directory")
    one_line_error(cli("run", "x", "--engine", f"{engine_module}:make", "--journal",
                       str(tmp_path)), "is a directory")


def test_an_engine_whose_import_fails_is_one_line(tmp_path, monkeypatch) -> None:
    (tmp_path / "bad_import_engine.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    result = cli("run", "x", "--engine", "bad_import_engine:make")
    one_line_error(result, "importing bad_import_engine failed")
    sys.modules.pop("bad_import_engine", None)
