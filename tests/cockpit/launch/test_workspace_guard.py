"""Which workspaces a run refuses (`/`, a home folder, a folder holding one — however named)
unless `--allow-home-workspace`, on every command that starts a run; and a run's journal inside
its workspace, kept from the run's own commands (real sandbox) and file tools."""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from fakes.openai_fake.server import FakeOpenAI, sample_fix_replies
from support.builtin_runs import run_steps, tool_ends
from support.event_loop import run
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.launch.factory import RunOptions, SessionFactory, SetupError, check_workspace
from cockpit.launch.factory import make_sandbox as sandbox_for
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.builtin import make_workspace
from engine_adapter.engines.builtin.process import run_process, shell_argv
from engine_adapter.sandbox import Sandbox, SandboxSettings

HERE = Sandbox(SandboxSettings(), workspace=os.path.dirname(__file__)).check()  # a neutral root
needs_bwrap = pytest.mark.skipif(not HERE.active, reason=f"no sandbox here ({HERE.problem})")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "users" / "me"
    (home / "project").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "to-home").symlink_to(home)
    (tmp_path / "to-root").symlink_to("/")
    (tmp_path / "to-project").symlink_to(home / "project")
    monkeypatch.setenv("HOME", str(home))
    return home


REFUSED = ["/", "/.", "//", "{home}", "{home}/", "{home}/.", "{home}/project/..",
           "{tmp}/to-home", "{tmp}/to-home/", "{tmp}/to-root", "{tmp}/users", "{tmp}",
           "{account}"]
ALLOWED = ["{home}/project", "{tmp}/elsewhere", "{tmp}/to-project", "{home}/project/."]


def named(template: str, home: Path) -> str:
    return template.format(home=home, tmp=home.parent.parent,
                           account=pwd.getpwuid(os.getuid()).pw_dir)


@pytest.mark.parametrize("template", REFUSED)
def test_a_home_or_the_root_is_refused_as_a_workspace(home, template) -> None:
    path = named(template, home)
    with pytest.raises(SetupError) as caught:
        check_workspace(path)
    message = str(caught.value)
    assert "--allow-home-workspace" in message and repr(path) in message
    check_workspace(path, allowed=True)  # said explicitly: allowed


@pytest.mark.parametrize("template", ALLOWED)
def test_a_project_folder_is_a_workspace(home, template) -> None:
    check_workspace(named(template, home))


def test_every_way_to_build_a_run_checks_it(home) -> None:
    for build in (lambda: sandbox_for(RunOptions(), home),
                  lambda: SessionFactory(lambda task, index: None, cwd=home)):
        with pytest.raises(SetupError):
            build()
    SessionFactory(lambda task, index: None, cwd=home,
                   options=RunOptions(allow_home_workspace=True))


@pytest.mark.parametrize("driver", [["--model", "gpt-4.1-mini"], ["--agent", "cat"],
                                    ["--engine", "os:getcwd"]])
def test_the_command_line_refuses_it_with_the_fix(home, driver) -> None:
    result = CliRunner().invoke(app, ["run", "t", *driver, "--cwd", str(home), "--headless"])
    assert result.exit_code == 2, result.output
    assert "your home folder" in result.output and "--allow-home-workspace" in result.output
    assert "Traceback" not in result.output


def test_resume_refuses_it_too(home) -> None:
    result = CliRunner().invoke(app, ["resume", "t", "--session", "s1", "--agent", "cat",
                                      "--cwd", "/", "--headless"])
    assert result.exit_code == 2 and "root of the file system" in result.output, result.output


def test_help_names_the_flag() -> None:
    for command in ("run", "resume"):
        result = CliRunner().invoke(app, [command, "--help"])
        assert "--allow-home-workspace" in result.output


@needs_bwrap
def test_a_run_allowed_in_a_home_completes_and_leaves_its_start_up_files_alone(
        tmp_path, monkeypatch) -> None:
    workspace = make_workspace(tmp_path)
    monkeypatch.setenv("HOME", str(workspace))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI(sample_fix_replies(sys.executable)) as fake:
        result = CliRunner().invoke(app, [
            "run", "Fix the failing test", "--model", "fake-model", "--base-url", fake.url,
            "--cwd", str(workspace), "--headless", "--auto-approve", "--allow-home-workspace"])
    assert result.exit_code == 0, result.output
    assert not (workspace / ".bash_login").exists()


# -- B3: the run's journal in its workspace --------------------------------------------------

def _factory(ws: Path, journal: Path) -> SessionFactory:
    options = RunOptions(journal=journal, sandbox=SandboxSettings())
    factory = SessionFactory(lambda task, index: None, cwd=ws, options=options,
                             sandbox=sandbox_for(options, ws))
    factory("t")
    return factory


SHELL_ATTACKS = {
    "logs/run.jsonl": ["echo forged >> logs/run.jsonl", "rm -f logs/run.jsonl",
                       "mv logs logs-old && mkdir logs && echo forged > logs/run.jsonl",
                       "mv logs/run.jsonl x && echo forged > logs/run.jsonl",
                       "touch logs/run-2.jsonl", "ln -s ../x logs/run-2.jsonl",
                       "rm -rf logs"],
    "a/b/run.jsonl": ["mv a a-old && mkdir -p a/b && touch a/b/run.jsonl",
                      "mv a/b a/c && mkdir a/b && touch a/b/run.jsonl",
                      "echo forged >> a/b/run.jsonl"],
    "run.jsonl": ["echo forged >> run.jsonl", "mv run.jsonl x && touch run.jsonl",
                  "rm -f run.jsonl", "ln -sf x run.jsonl"],
}


@needs_bwrap
@pytest.mark.parametrize(("where", "command"), [(where, command)
                                                for where, commands in SHELL_ATTACKS.items()
                                                for command in commands])
def test_a_journal_in_the_workspace_cannot_be_rewritten_or_replaced(tmp_path, where,
                                                                     command) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    journal = ws / where
    factory = _factory(ws, journal)
    before = journal.read_bytes()
    done = run(run_process(shell_argv(command), cwd=ws, timeout=30, output_cap=4000,
                           sandbox=factory.sandbox))
    assert done.exit_code != 0, done.output
    assert journal.read_bytes() == before and not journal.is_symlink()
    assert not (journal.parent / "run-2.jsonl").exists()
    factory.sessions[0].journal.close()


@needs_bwrap
def test_the_rest_of_the_workspace_stays_writable_beside_a_journal(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    factory = _factory(ws, ws / "a" / "b" / "run.jsonl")
    done = run(run_process(shell_argv("touch a/made && touch made && echo ok"), cwd=ws,
                           timeout=30, output_cap=4000, sandbox=factory.sandbox))
    assert done.output == "ok\n"


@pytest.mark.parametrize("target", ["logs/run.jsonl", "logs/run-2.jsonl", "./logs/../logs/x"])
def test_the_built_in_file_tools_refuse_the_journals_folder(tmp_path, target) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    factory = _factory(ws, ws / "logs" / "run.jsonl")
    steps = [{"tool": "switch_to_editing", "input": {"reason": "r"}},
             {"tool": "declare_verification",
              "input": {"checks": [{"name": "passes", "command": "true"}]}},
             {"tool": "write_file", "input": {"path": target, "content": "forged\n"}},
             {"finish": "done"}]
    session = run_steps(ws, steps, engine={"sandbox": factory.sandbox}, auto_approve=True)
    writes = [e for e in tool_ends(session) if e.tool == "write_file"]
    assert writes and not writes[0].ok and "read-only" in (writes[0].error or "")
    assert (ws / "logs/run.jsonl").read_text().count("forged") == 0
    factory.sessions[0].journal.close()


def test_an_acp_agent_cannot_write_the_journal_either(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    factory = _factory(ws, ws / "logs" / "run.jsonl")
    runner = AcpRunner(agent_argv(), cwd=ws, sandbox=factory.sandbox)

    async def main():
        try:
            return await drive(runner, "write logs/run.jsonl", tmp_path / "acp.jsonl",
                               answer=approve(True))
        finally:
            await runner.close()

    state, _events = run(main())
    assert "write error" in (state.result or "") and "read-only" in (state.result or "")
    assert b"written" not in (ws / "logs/run.jsonl").read_bytes()
    factory.sessions[0].journal.close()
