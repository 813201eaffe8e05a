"""Command-line hygiene (issue 13): options checked before anything is created, the demo's
workspace removed unless kept, output that never fails on an encoding, replay into a pipe,
crashed journals, themes, numbers, and the exit codes of `run --agent`.

CliRunner's stdout is not a terminal, so `demo`/`run` use the headless view and `replay` prints
lines; the encoding and pipe checks run the real `cockpit` process."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.cli.preflight import theme_names
from cockpit.journals import CRASHED, STALE_AFTER, open_status, summarize
from engine_adapter import AgentEnd, AgentStart, JsonlEventJournal, ToolEnd, ToolStart
from engine_adapter.journal import writer_alive


@pytest.fixture(autouse=True)
def cockpit_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # demo workspaces go here


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line_error(result, *texts: str, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith("cockpit: error: "), result.output
    assert "Traceback" not in result.output
    for text in texts:
        assert text in result.output, result.output


def nothing_created(tmp_path: Path) -> None:
    assert not list(tmp_path.glob("cockpit-demo-*")), "a demo workspace was left"
    assert not (tmp_path / "home" / "data").exists(), "a journal was written"


def write_journal(path: Path, *, ended: bool) -> None:
    events = [AgentStart(task="fix it", engine="e", cwd="/w"),
              ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=1),
              ToolEnd(call_id="c1", tool="shell", ok=True, output="a\nb")]
    if ended:
        events.append(AgentEnd(status="completed", result="fixed"))
    with JsonlEventJournal(path, fsync="never") as journal:
        for event in events:
            journal.write(event)


# -- every option checked before any side effect ------------------------------------------------

@pytest.mark.parametrize("args, text", [
    (["--theme", "no-such-theme"], "--theme 'no-such-theme': no such theme; available: "),
    (["--speed", "nan"], "--speed nan: give a finite number"),
    (["--speed", "inf"], "--speed inf"),
    (["--speed", "-inf"], "--speed -inf"),
    (["--speed", "-0.5"], "--speed -0.5"),
    (["--approval-timeout", "nan"], "--approval-timeout nan"),
    (["--approval-timeout", "inf"], "leave it out to wait for an answer"),
    (["--approval-timeout", "-1"], "--approval-timeout -1"),
])
def test_demo_rejects_a_bad_option_and_creates_nothing(tmp_path, args, text) -> None:
    one_line_error(cli("demo", "--headless", *args), text)
    nothing_created(tmp_path)


def test_a_bad_theme_is_rejected_headless_too_and_with_a_journal(tmp_path) -> None:
    journal = tmp_path / "j.jsonl"
    one_line_error(cli("demo", "--theme", "nope", "--journal", str(journal)), "--theme 'nope'")
    one_line_error(cli("run", "task", "--engine", "x:y", "--theme", "nope",
                       "--journal", str(journal)), "--theme 'nope'")
    assert not journal.exists()
    nothing_created(tmp_path)


def test_journal_that_is_a_directory_or_under_a_file(tmp_path) -> None:
    (tmp_path / "a-file").write_text("keep me")
    one_line_error(cli("demo", "--journal", str(tmp_path)), "is a directory",
                   f"--journal {os.path.join(str(tmp_path), 'run.jsonl')}")
    for under in ("a-file/x.jsonl", "a-file/deeper/still/x.jsonl"):
        one_line_error(cli("demo", "--journal", str(tmp_path / under)),
                       f"{str(tmp_path / 'a-file')!r} is not a directory")
        one_line_error(cli("run", "t", "--agent", "true", "--journal", str(tmp_path / under)),
                       "is not a directory")
    assert (tmp_path / "a-file").read_text() == "keep me"
    nothing_created(tmp_path)


def test_journal_that_is_some_other_file_is_not_appended_to(tmp_path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, no newline at the end")
    one_line_error(cli("demo", "--journal", str(notes)), "is not a cockpit journal")
    assert notes.read_text() == "my notes, no newline at the end"
    nothing_created(tmp_path)


def test_journal_in_missing_folders_says_it_created_them(tmp_path) -> None:
    path = tmp_path / "new" / "deeper" / "run.jsonl"
    result = cli("demo", "--speed", "0", "--journal", str(path))
    assert result.exit_code == 1, result.output  # no human: denied, failed
    assert path.is_file()
    assert f"cockpit: created the folder {str(tmp_path / 'new')!r} for --journal" in result.output
    # An existing folder: nothing to say.
    again = cli("demo", "--speed", "0", "--journal", str(tmp_path / "new" / "second.jsonl"))
    assert "created the folder" not in again.output


def test_an_empty_journal_file_may_be_named(tmp_path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")  # `touch run.jsonl`, mktemp: nothing in it to mix a run into
    result = cli("demo", "--speed", "0", "--journal", str(empty))
    assert result.exit_code == 1, result.output  # no human: denied, failed
    assert empty.stat().st_size > 0


def test_a_file_that_is_no_journal_is_refused(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    for other in (b"# notes\n{}", b"[1, 2]\n", b'{"no": "type"}\n', b"\xff\xfe binary"):
        path.write_bytes(other)
        one_line_error(cli("demo", "--journal", str(path)), "is not a cockpit journal")
        assert path.read_bytes() == other


def test_every_theme_the_palette_offers_is_accepted(tmp_path) -> None:
    names = theme_names()
    assert {"cockpit-dark", "cockpit-light", "textual-dark", "nord"} <= set(names)
    for name in ("cockpit-high-contrast", "textual-light", "nord", "dracula"):
        result = cli("demo", "--headless", "--speed", "0", "--theme", name)
        assert result.exit_code == 1, (name, result.output)  # ran (no human: failed)


def test_the_palette_offers_exactly_theme_names() -> None:
    """The names `--theme` accepts are the ones the command palette can switch to."""
    from cockpit.base_app import ThemedApp

    themed = ThemedApp(remember_theme=False)
    assert set(themed.available_themes) == set(theme_names())


def test_replay_rejects_a_bad_theme_before_anything(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    write_journal(path, ended=True)
    one_line_error(cli("replay", str(path), "--theme", "nope"), "--theme 'nope'")


# -- journals --limit ---------------------------------------------------------------------------

def test_journals_limit(tmp_path) -> None:
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    for name in ("a", "b", "c"):
        write_journal(folder / f"{name}.jsonl", ended=True)
    one_line_error(cli("journals", "--limit", "-1"), "--limit -1: give 0 or more")
    every = cli("journals", "--limit", "0")
    assert every.exit_code == 0
    assert "no journals" not in every.output
    assert every.output.count("completed") == 3
    assert cli("journals", "--limit", "2").output.count("completed") == 2


# -- the demo's workspace -------------------------------------------------------------------------

def test_demo_removes_its_workspace_unless_kept(tmp_path) -> None:
    result = cli("demo", "--speed", "0", "--auto-approve")
    assert result.exit_code == 0, result.output
    workspace = Path(result.output.splitlines()[0].removeprefix("demo workspace: "))
    assert workspace.parent == tmp_path and not workspace.exists()
    assert "kept" not in result.output

    kept = cli("demo", "--speed", "0", "--keep")
    workspace = Path(kept.output.splitlines()[0].removeprefix("demo workspace: "))
    assert f"demo workspace kept: {workspace}" in kept.output
    assert (workspace / "stats" / "core.py").is_file()


# -- run --agent: exit 2 before the agent starts, the run's code after -------------------------

def test_an_agent_that_cannot_start_is_a_setup_error(tmp_path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")  # not executable
    cases = [
        (str(script), "is not an executable program"),
        (f"{script} --acp", "is not an executable program"),
        (str(tmp_path), "is not an executable program"),
        (str(tmp_path / "missing"), "does not exist"),
        ("no-such-agent-program-xyz --acp", "is not a program on PATH"),
        ("no-such-agent-program-xyz", "not a program on PATH"),
    ]
    for agent, text in cases:
        one_line_error(cli("run", "task", "--agent", agent, "--cwd", str(tmp_path)), text)
    assert not (tmp_path / "home" / "data").exists()


def test_a_relative_agent_path_is_found_from_cwd(tmp_path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    agent = work / "agent.sh"
    agent.write_text("#!/bin/sh\nexit 3\n")
    agent.chmod(0o755)
    result = cli("run", "task", "--agent", "./agent.sh", "--cwd", str(work))
    # It starts, then fails: the run's code (1), not a setup error.
    assert result.exit_code == 1, result.output
    assert "\nend       failed: " in result.output


# -- output that cannot be encoded ---------------------------------------------------------------

def cockpit(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cockpit", *args], capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=120, **kw)


def test_ascii_output_replaces_what_it_cannot_show(tmp_path) -> None:
    env = {"PYTHONIOENCODING": "ascii", "COCKPIT_HOME": str(tmp_path / "home"),
           "TMPDIR": str(tmp_path)}
    run = cockpit("demo", "--speed", "0", "--auto-approve", env=env)
    assert run.returncode == 0, run.stderr.decode()
    assert b"Traceback" not in run.stderr and b"UnicodeEncodeError" not in run.stderr
    assert run.stdout.isascii() and b"?" in run.stdout  # the demo's "·", "—" and "✔"
    journal = [ln for ln in run.stdout.decode().splitlines() if ln.startswith("journal: ")]
    path = journal[0].removeprefix("journal: ")
    for args in (["replay", path], ["export", path], ["journals"],
                 ["demo", "--theme", "b\u00e4d"]):
        done = cockpit(*args, env=env)
        assert b"Traceback" not in done.stderr, (args, done.stderr.decode())
        assert done.returncode in (0, 2), (args, done.stderr.decode())


# -- replay into a pipe -------------------------------------------------------------------------

def test_replay_into_a_pipe_prints_lines(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    write_journal(path, ended=True)
    result = cli("replay", str(path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("start") and "fix it" in lines[0]
    assert any(line.startswith("tool") and "shell" in line for line in lines)
    assert lines[-3:] == ["end       completed", "          reply:", "          fixed"]


def test_replay_into_a_real_pipe_does_not_start_the_tui(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    write_journal(path, ended=True)
    done = cockpit("replay", str(path), env={"COCKPIT_HOME": str(tmp_path / "home")},
                   stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()
    assert b"\x1b[" not in done.stdout  # no terminal control: not the TUI, no colour
    assert "end       completed" in done.stdout.decode().splitlines()


def test_replay_without_a_path_or_a_terminal_lists_journals(tmp_path) -> None:
    from cockpit.paths import journal_dir

    journal_dir().mkdir(parents=True)
    write_journal(journal_dir() / "a.jsonl", ended=True)
    result = cli("replay")
    assert result.exit_code == 0
    assert "no terminal for the picker" in result.output and "a.jsonl" in result.output


# -- a journal nobody writes any more ------------------------------------------------------------

def test_a_journal_left_without_agent_end_is_crashed(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    write_journal(path, ended=False)  # written, then closed: its writer is gone
    assert writer_alive(path) is False
    assert summarize(path).status == CRASHED
    result = cli("replay", str(path))
    assert result.output.splitlines()[-1].endswith("ended without a final event (crashed?)")


def test_a_journal_being_written_is_running(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path, fsync="never") as journal:
        journal.write(AgentStart(task="fix it", engine="e", cwd="/w"))
        assert writer_alive(path) is True
        assert summarize(path).status == "running"
        result = cli("replay", str(path))
        assert "a run is still writing it" in result.output.splitlines()[-1]
    assert summarize(path).status == CRASHED


def test_a_journal_written_by_another_process_is_running_until_it_dies(tmp_path) -> None:
    """A real writer process holds the lock; once it is killed (no agent_end), the journal is
    crashed."""
    path = tmp_path / "run.jsonl"
    code = ("import sys\nfrom engine_adapter import AgentStart, JsonlEventJournal\n"
            "j = JsonlEventJournal(sys.argv[1])\n"
            "j.write(AgentStart(task='t', engine='e', cwd='/'))\n"
            "print('ready', flush=True)\nsys.stdin.read()\n")
    writer = subprocess.Popen([sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
        assert writer_alive(path) is True
        assert summarize(path).status == "running"
    finally:
        writer.kill()
        writer.wait()
    assert summarize(path).status == CRASHED


def test_without_locks_an_unchanged_journal_is_crashed_after_a_while(tmp_path,
                                                                     monkeypatch) -> None:
    import cockpit.journals as journals

    path = tmp_path / "run.jsonl"
    write_journal(path, ended=False)
    monkeypatch.setattr(journals, "writer_alive", lambda _path: None)  # cannot be told
    mtime = path.stat().st_mtime
    assert open_status(path, now=mtime + 1) == "running?"
    assert open_status(path, now=mtime + STALE_AFTER + 1) == CRASHED
    os.utime(path, (mtime - STALE_AFTER - 10, mtime - STALE_AFTER - 10))
    assert summarize(path).status == CRASHED


def test_writer_alive_cannot_tell_for_a_missing_file_or_a_device(tmp_path) -> None:
    assert writer_alive(tmp_path / "missing.jsonl") is None
    assert writer_alive("/dev/null") is None


def test_the_viewer_says_a_crashed_journal_ended_without_a_final_event(tmp_path) -> None:
    import asyncio

    from cockpit.replay import ReplayApp

    path = tmp_path / "run.jsonl"
    write_journal(path, ended=False)

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.replay_screen
            for _ in range(2000):
                if screen.complete and "crashed" in screen.timeline.state.problems:
                    break
                await pilot.pause()
            assert screen.crashed and not screen.navigator.follow
            assert "ended without a final event (crashed?)" in screen.timeline.state.problems
            assert not screen.timeline.state.following
            # At its last event the status line says so too; earlier, the run was running.
            status = screen.display_widget.status_line

            async def shows(text: str) -> bool:
                for _ in range(2000):
                    if text in status.render().plain:
                        return True
                    await pilot.pause()
                return False

            await pilot.press("end")
            assert await shows("⚠ crashed?")
            await pilot.press("home")
            assert await shows("● running")
            assert "crashed?" not in status.render().plain

    asyncio.run(main())
