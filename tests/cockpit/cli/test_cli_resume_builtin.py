"""`cockpit resume JOURNAL [TASK]` of a built-in engine's run (issue 26): the conversation
rebuilt from the journal (its task, what the model said) and continued in the same workspace,
under the same session id, in a new journal that says what it continues. A demo whose
workspace is gone, a damaged, foreign, unended or failed journal: one line, exit 2, never a
traceback. The model's side is checked on the wire, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from fakes.openai_fake.helpers import run_against
from fakes.openai_fake.server import Stream, chunks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.launch import (
    RunOptions,
    SetupError,
    builtin_factory,
    is_builtin_journal,
    read_builtin_run,
)
from cockpit.paths import journal_dir
from engine_adapter import (
    AgentEnd,
    AgentStart,
    JsonlEventJournal,
    ModelUpdate,
    TaskState,
    read_journal,
)
from engine_adapter.engines.builtin.conversation import seed


@pytest.fixture(autouse=True)
def cockpit_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # demo workspaces go here


def cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line_error(result, *texts: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("cockpit: error: ")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for text in texts:
        assert text in lines[0], result.output


def _demo(*flags: str) -> tuple[Path, Path]:
    """A headless demo run; its workspace and journal."""
    result = cli("demo", "--speed", "0", "--auto-approve", *flags)
    assert result.exit_code == 0, result.output
    workspace = Path(result.output.splitlines()[0].removeprefix("demo workspace: "))
    [journal] = sorted(journal_dir().glob("*.jsonl"))
    return workspace, journal


def _write(path: Path, *events) -> Path:
    journal = JsonlEventJournal(path)
    for seq, event in enumerate(events):
        journal.write(event.model_copy(update={"seq": seq, "session_id": "s1", "ts": 1.0 + seq}))
    journal.close()
    return path


def test_a_kept_demo_is_continued_in_its_workspace_by_the_next_task(tmp_path):
    workspace, journal = _demo("--keep")
    earlier = list(read_journal(journal))
    result = cli("resume", journal, "now add a docstring", "--headless", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert f"resuming the built-in run of {journal} in {workspace}" in result.output
    later = sorted(set(journal_dir().glob("*.jsonl")) - {journal})
    # Named by its start and the conversation's id (`-2` when that falls in the same second).
    assert len(later) == 1 and later[0].stem.removesuffix("-2").endswith(earlier[0].session_id)
    events = list(read_journal(later[0]))
    start = events[0]
    assert (start.task, start.cwd, start.engine) == ("now add a docstring", str(workspace),
                                                    "builtin")
    assert (start.resumed, start.resumes) == ("journal", str(journal))
    assert start.session_id == earlier[0].session_id  # the same conversation
    assert events[-1].type == "agent_end" and events[-1].status == "completed"
    assert f"continues the conversation of {journal}" in result.output  # the headless lines


def test_without_a_task_the_conversation_is_opened_for_the_next_one(tmp_path):
    _workspace, journal = _demo("--keep")
    result = cli("resume", journal, "--headless")
    assert result.exit_code == 0, result.output
    [later] = sorted(set(journal_dir().glob("*.jsonl")) - {journal})
    end = list(read_journal(later))[-1]
    assert end.status == "completed" and "is open: send a task to continue it" in end.result


def test_a_demo_whose_workspace_is_gone_is_one_line(tmp_path):
    workspace, journal = _demo()
    assert not workspace.exists()
    one_line_error(cli("resume", journal, "more", "--headless"), "the workspace",
                   "is gone", "--cwd DIR")
    # --cwd names where to go on instead.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = cli("resume", journal, "more", "--headless", "--cwd", elsewhere, "--auto-approve")
    assert moved.exit_code == 0, moved.output
    assert f"in {elsewhere}" in moved.output


def test_journals_that_cannot_be_continued_are_one_line(tmp_path):
    start = AgentStart(task="t", engine="builtin", model="scripted-demo", cwd=str(tmp_path))
    failed = _write(tmp_path / "failed.jsonl", start,
                    AgentEnd(status="failed", error="no finish after 50 turns\nmore"))
    one_line_error(cli("resume", failed, "x", "--headless"), "ended failed",
                   "no finish after 50 turns", "cockpit run TASK")
    unended = _write(tmp_path / "unended.jsonl", start, ModelUpdate(text="half"))
    one_line_error(cli("resume", unended, "x", "--headless"), "ends without agent_end")
    damaged = _write(tmp_path / "damaged.jsonl", start, ModelUpdate(text="a"),
                     AgentEnd(status="completed"))
    lines = damaged.read_bytes().split(b"\n")
    damaged.write_bytes(b"\n".join([lines[0], b"{not json", *lines[1:]]))
    one_line_error(cli("resume", damaged, "x", "--headless"), "cannot be read", "line 2",
                   "cockpit verify")
    # Not in the journal folder: its workspace is not taken from it.
    fine = _write(tmp_path / "fine.jsonl", start, AgentEnd(status="completed"))
    one_line_error(cli("resume", fine, "x", "--headless"), "--cwd DIR")
    one_line_error(cli("resume", fine, "x", "--headless", "--agent", "codex"), "--agent")
    foreign = tmp_path / "claude.jsonl"
    foreign.write_text(json.dumps({"type": "user", "sessionId": "abc", "message": {
        "role": "user", "content": "hi"}}) + "\n")
    result = cli("resume", foreign, "x", "--headless")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


def test_the_conversation_is_rebuilt_from_the_journal(tmp_path):
    journal = _write(tmp_path / "run.jsonl",
                     AgentStart(task="fix the bug", engine="builtin", model="scripted-demo",
                                cwd=str(tmp_path)),
                     ModelUpdate(text="thinking…", channel="thought"),
                     ModelUpdate(text="I fixed "), ModelUpdate(text="it."),
                     AgentEnd(status="completed", result="fixed"))
    run = read_builtin_run(journal)
    assert (run.task.task, run.task.status, run.task.result, run.said) == (
        "fix the bug", "completed", "fixed", "I fixed it.")
    factory = builtin_factory(run, cwd=tmp_path, options=RunOptions(saved_grants=False))
    assert [t.task for t in factory.conversation.tasks] == ["fix the bug"]
    assert factory.session_id == "s1"
    with pytest.raises(SetupError, match="names no model"):
        builtin_factory(read_builtin_run(_write(
            tmp_path / "nomodel.jsonl", AgentStart(task="t", engine="builtin"),
            AgentEnd(status="completed"))), cwd=tmp_path, options=RunOptions())


def test_the_model_reads_the_earlier_conversation_before_the_next_task(tmp_path):
    finish = Stream(chunks("Done.", calls=[("finish", {"result": "all done"})]))
    earlier = (TaskState(task="fix the bug"), TaskState(task="and then?"))
    seed(earlier, [("fix the bug", "I fixed it."), ("and then?", "")], source="/j/run.jsonl")
    session, fake = run_against(tmp_path, [finish], task="add a test", earlier=earlier)
    said = [(m["role"], m["content"]) for m in fake.requests[0]["messages"][1:]]
    assert said == [("user", "fix the bug"), ("assistant", "I fixed it."),
                    ("user", "and then?"), ("user", "add a test")]
    start = session.history[0]
    assert (start.resumed, start.resumes) == ("journal", "/j/run.jsonl")
    assert session.state.status == "completed"


def test_a_resumed_run_brings_the_conversation_it_continued(tmp_path):
    folder = journal_dir()
    folder.mkdir(parents=True, exist_ok=True)
    first = _write(folder / "one.jsonl", AgentStart(task="fix the bug", engine="builtin",
                                                    model="scripted-demo", cwd=str(tmp_path)),
                   ModelUpdate(text="Fixed."), AgentEnd(status="completed"))
    second = _write(folder / "two.jsonl", AgentStart(
        task="add a test", engine="builtin", model="scripted-demo", cwd=str(tmp_path),
        resumed="journal", resumes=str(first)), ModelUpdate(text="Added."),
        AgentEnd(status="cancelled"))
    run = read_builtin_run(second)
    assert [t.task for t in run.tasks] == ["fix the bug", "add a test"]
    assert run.exchanges == [("fix the bug", "Fixed."), ("add a test", "Added.")]
    # A journal that names itself, or one outside the journal folder, is not followed.
    looped = _write(folder / "loop.jsonl", AgentStart(
        task="t", engine="builtin", resumes=str(folder / "loop.jsonl")),
        AgentEnd(status="completed"))
    assert [t.task for t in read_builtin_run(looped).tasks] == ["t"]
    outside = _write(folder / "out.jsonl", AgentStart(
        task="t", engine="builtin", resumes=str(_write(tmp_path / "x.jsonl", AgentStart(
            task="elsewhere", engine="builtin"), AgentEnd(status="completed")))),
        AgentEnd(status="completed"))
    assert [t.task for t in read_builtin_run(outside).tasks] == ["t"]


_LINES = st.one_of(
    st.binary(max_size=80),
    st.sampled_from([
        b'{"type":"agent_start","session_id":"s","seq":0,"ts":1,"task":"t","engine":"builtin"}',
        b'{"type":"model_update","session_id":"s","seq":1,"ts":1,"text":"hi"}',
        b'{"type":"agent_end","session_id":"s","seq":2,"ts":1,"status":"completed"}',
        b'{"type":"agent_end","session_id":"s","seq":2,"ts":1,"status":"failed"}',
        b'{"type":"agent_start","engine":7}', b'{"type":"nope"}', b"\xff\xfe", b"[]", b"",
    ]))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINES, max_size=6))
def test_any_file_is_read_or_refused_in_one_line(tmp_path, lines):
    path = tmp_path / "any.jsonl"
    path.write_bytes(b"\n".join(lines))
    is_builtin_journal(path)  # never raises
    try:
        run = read_builtin_run(path)
    except SetupError as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert run.task.status in ("completed", "cancelled") and run.tasks[-1] is run.task


def test_a_journal_path_is_never_one_that_exists(tmp_path):
    """Resumed in the second it was journaled, a conversation keeps its id: the new journal is
    the next free name, never the earlier run's file."""
    from cockpit.paths import new_journal_path

    first = new_journal_path("s1", now=1_000_000.0)
    first.parent.mkdir(parents=True, exist_ok=True)
    first.write_text("")
    second = new_journal_path("s1", now=1_000_000.0)
    assert second != first and second.name == f"{first.stem}-2.jsonl"
    second.symlink_to(tmp_path / "nowhere")  # a dangling link counts as taken
    assert new_journal_path("s1", now=1_000_000.0).name == f"{first.stem}-3.jsonl"
